"""torch.nn.modules.pixelshuffle: PixelShuffle / PixelUnshuffle (F.pixel_shuffle /
F.pixel_unshuffle), with torch's attributes and reprs."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r).

    >>> import eagergrad as torch
    >>> torch.nn.PixelShuffle(2)(torch.ones(1, 8, 2, 3)).shape
    torch.Size([1, 2, 4, 6])
    """
    __constants__ = ("upscale_factor",)

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W).

    >>> import eagergrad as torch
    >>> torch.nn.PixelUnshuffle(3)
    PixelUnshuffle(downscale_factor=3)
    """
    __constants__ = ("downscale_factor",)

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
