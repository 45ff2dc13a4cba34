"""torch.nn.modules.fold: Fold / Unfold (F.fold / F.unfold), with torch's attributes and
reprs."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """F.fold: columns of sliding blocks summed back into (N, C, *output_size).

    >>> import eagergrad as torch
    >>> torch.nn.Fold((4, 5), 2)
    Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)
    """
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
