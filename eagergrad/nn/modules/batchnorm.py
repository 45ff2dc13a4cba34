"""torch.nn.modules.batchnorm: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from ..batchnorm import _BatchNorm, _NormBase  # noqa: F401

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]
