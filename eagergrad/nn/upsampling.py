"""torch.nn: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (F.interpolate), Fold /
Unfold (F.fold / F.unfold), PixelShuffle / PixelUnshuffle, with torch's attributes and
reprs."""
from . import functional as F
from .module import Module

__all__ = ["Fold", "PixelShuffle", "PixelUnshuffle", "Unfold", "Upsample",
           "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resizes (N, C, *) input to `size` or by `scale_factor` with F.interpolate's modes.

    >>> import eagergrad as torch
    >>> m = torch.nn.Upsample(scale_factor=2)
    >>> m
    Upsample(scale_factor=2.0, mode='nearest')
    >>> m(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """
    __module__ = "eagergrad.nn.modules.upsampling"
    __constants__ = ("size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor")

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Upsample with mode 'nearest'.

    >>> import eagergrad as torch
    >>> torch.nn.UpsamplingNearest2d(size=(2, 3))
    UpsamplingNearest2d(size=(2, 3), mode='nearest')
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode 'bilinear', align_corners=True.

    >>> import eagergrad as torch
    >>> torch.nn.UpsamplingBilinear2d(scale_factor=2)(torch.tensor([[[[0.0, 3.0]]]]))
    tensor([[[[0., 1., 2., 3.],
              [0., 1., 2., 3.]]]])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    """F.fold: columns of sliding blocks summed back into (N, C, *output_size).

    >>> import eagergrad as torch
    >>> torch.nn.Fold((4, 5), 2)
    Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)
    """
    __module__ = "eagergrad.nn.modules.fold"
    __constants__ = ("output_size", "kernel_size", "dilation", "padding", "stride")

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """F.unfold: sliding local blocks as columns (N, C*kh*kw, L).

    >>> import eagergrad as torch
    >>> torch.nn.Unfold(2, padding=1)(torch.ones(1, 3, 4, 4)).shape
    torch.Size([1, 12, 25])
    """
    __module__ = "eagergrad.nn.modules.fold"
    __constants__ = ("kernel_size", "dilation", "padding", "stride")

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r).

    >>> import eagergrad as torch
    >>> torch.nn.PixelShuffle(2)(torch.ones(1, 8, 2, 3)).shape
    torch.Size([1, 2, 4, 6])
    """
    __module__ = "eagergrad.nn.modules.pixelshuffle"
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
    __module__ = "eagergrad.nn.modules.pixelshuffle"
    __constants__ = ("downscale_factor",)

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
