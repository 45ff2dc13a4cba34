"""torch.nn.modules.pixelshuffle: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
