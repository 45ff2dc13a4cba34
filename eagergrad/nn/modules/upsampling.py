"""torch.nn.modules.upsampling: Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
(F.interpolate), with torch's attributes and reprs."""
from .. import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resizes (N, C, *) input to `size` or by `scale_factor` with F.interpolate's modes.

    >>> import eagergrad as torch
    >>> m = torch.nn.Upsample(scale_factor=2)
    >>> m
    Upsample(scale_factor=2.0, mode='nearest')
    >>> m(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """
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
