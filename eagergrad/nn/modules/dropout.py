"""Dropout modules: zero elements (Dropout), whole channels (Dropout1d/2d/3d) or set them
to SELU's negative saturation (AlphaDropout, FeatureAlphaDropout) with probability p
while training (masks from eagergrad's generator); identity in eval mode."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ("p", "inplace")

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
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

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability p, scaling the
    rest by 1 / (1 - p).

    >>> import eagergrad as torch
    >>> torch.nn.Dropout1d(0.0)(torch.ones(2, 3))
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) inputs with probability p.

    >>> import eagergrad as torch
    >>> torch.nn.Dropout2d(0.3, inplace=True)
    Dropout2d(p=0.3, inplace=True)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p.

    >>> import eagergrad as torch
    >>> torch.nn.Dropout3d(1.0)(torch.ones(1, 2, 1, 1, 1)).sum()
    tensor(0.)
    """

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks: dropped elements take SELU's negative saturation, then
    an affine map keeps mean and variance.

    >>> import eagergrad as torch
    >>> x = torch.ones(2)
    >>> torch.nn.AlphaDropout(0.5).eval()(x) is x
    True
    """

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels.

    >>> import eagergrad as torch
    >>> torch.nn.FeatureAlphaDropout(0.2)
    FeatureAlphaDropout(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
