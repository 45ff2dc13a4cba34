"""LayerNorm, RMSNorm and GroupNorm (torch's parameters (ones/zeros), repr and forward),
LocalResponseNorm and CrossMapLRN2d (no parameters)."""
import numbers

from ...creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


class LocalResponseNorm(Module):
    """Each value divided by (k + alpha * mean of squares over `size` neighbouring
    channels) ** beta (F.local_response_norm).

    >>> import eagergrad as torch
    >>> torch.nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    __constants__ = ("size", "alpha", "beta", "k")

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel LRN of (N, C, H, W) input (a Function of its own,
    CrossMapLRN2dBackward).

    >>> import eagergrad as torch
    >>> torch.nn.CrossMapLRN2d(3)
    CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (normalized_shape,)
    return tuple(normalized_shape)


def _affine_parameters(module, affine, bias, shape, factory_kwargs):
    """weight and bias Parameters of `shape` (None where not affine / no bias), then
    reset_parameters, as torch's norm layers do."""
    module.register_parameter("weight", Parameter(empty(shape, **factory_kwargs))
                              if affine else None)
    module.register_parameter("bias", Parameter(empty(shape, **factory_kwargs))
                              if affine and bias else None)
    module.reset_parameters()


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims (mean 0, variance 1), then
    scale by `weight` (ones) and shift by `bias` (zeros).

    >>> import eagergrad as torch
    >>> m = torch.nn.LayerNorm(2)
    >>> m
    LayerNorm((2,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> m(torch.tensor([[1.0, 3.0]]))
    tensor([[-1.0000,  1.0000]], grad_fn=<NativeLayerNormBackward0>)
    """

    __constants__ = ("normalized_shape", "eps", "elementwise_affine")

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, bias, self.normalized_shape,
                           factory_kwargs)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x ** 2) + eps) over the trailing `normalized_shape` dims, times
    `weight` (ones); eps None is the input dtype's machine epsilon.

    >>> import eagergrad as torch
    >>> m = torch.nn.RMSNorm(2)
    >>> m
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> m(torch.tensor([[3.0, 4.0]])).shape
    torch.Size([1, 2])
    """

    __constants__ = ("normalized_shape", "eps", "elementwise_affine")

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Normalize each of `num_groups` groups of channels per sample, then scale by
    `weight` (ones) and shift by `bias` (zeros) per channel.

    >>> import eagergrad as torch
    >>> m = torch.nn.GroupNorm(1, 2, eps=0.0)
    >>> m
    GroupNorm(1, 2, eps=0.0, affine=True, bias=True)
    >>> m(torch.tensor([[1.0, 3.0]]))
    tensor([[-1.,  1.]], grad_fn=<NativeGroupNormBackward0>)
    """

    __constants__ = ("num_groups", "num_channels", "eps", "affine")

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, bias, num_channels, factory_kwargs)

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
