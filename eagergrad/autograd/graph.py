"""torch.autograd.graph: the Node interface."""
from ..engine.graph import Node, AccumulateGrad, GraphRoot  # noqa: F401
