"""The autograd core: nodes and edges, the engine that runs a backward (node by node or in
fused segments), grad mode, saved tensors, custom Functions, anomaly mode (docs/design.md
§6-7). Small and op-agnostic: nothing here imports an op."""
