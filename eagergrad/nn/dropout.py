"""Dropout: zeroes elements with probability p while training (eagergrad's generator)."""
from . import functional as F
from .module import Module


class Dropout(Module):
    """In training, each element is zeroed with probability p and the others scaled by
    1 / (1 - p); in eval mode the input passes through unchanged.

    >>> import eagergrad as torch
    >>> m = torch.nn.Dropout(0.2)
    >>> m
    Dropout(p=0.2, inplace=False)
    >>> x = torch.ones(3)
    >>> m.eval()(x) is x
    True
    """

    __module__ = "eagergrad.nn.modules.dropout"
    __constants__ = ("p", "inplace")

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
