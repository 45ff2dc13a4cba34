"""torch.nn.modules.linear: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..layers import Identity
from ..lazy import LazyLinear
from ..linear import Bilinear, Linear
from ..transformer import NonDynamicallyQuantizableLinear  # noqa: F401

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
