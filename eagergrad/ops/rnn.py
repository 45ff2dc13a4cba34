"""Recurrent layers as op-table entries (MkldnnRnnLayerBackward0: one node per LSTM layer, as torch records on CPU)."""
