"""torch.nn.modules.instancenorm: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..batchnorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from ..batchnorm import _InstanceNorm  # noqa: F401

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
