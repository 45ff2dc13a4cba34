"""torch.nn.modules.conv: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from ..conv import _ConvNd  # noqa: F401
from ..lazy import LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d"]
