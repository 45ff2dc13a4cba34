"""torch.nn.modules.conv: Conv1d/2d/3d, ConvTranspose1d/2d/3d and their lazy forms
(LazyConv*d, LazyConvTranspose*d): torch's parameters, initialisation, repr, forward."""
import math

from ...creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


_MODES = ("zeros", "reflect", "replicate", "circular")


def _int_tuple(v, n):
    """An int repeated n times, else tuple(v) (utils._ntuple would repeat any non-iterable)."""
    if isinstance(v, int):
        return (v,) * n
    return tuple(v)


class _ConvNd(Module):
    __constants__ = ("stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size")

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                # a set, formatted as torch formats it (its order is the hash's)
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{ {'same', 'valid'} }")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _MODES:
            modes = {"zeros", "reflect", "replicate", "circular"}  # torch's literal: its order
            raise ValueError(f"padding_mode must be one of {modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order (last dimension first) for a non-zeros padding_mode, as torch's
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = tuple(p for p in reversed(padding)
                                                          for _ in range(2))
        shape = ((in_channels, out_channels // groups) if transposed else
                 (out_channels, in_channels // groups)) + tuple(kernel_size)
        self.weight = Parameter(empty(shape, **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_channels, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as torch's
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
            f"stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _n = 0
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        n = self._n
        super().__init__(in_channels, out_channels, _int_tuple(kernel_size, n),
                         _int_tuple(stride, n),
                         padding if isinstance(padding, str) else _int_tuple(padding, n),
                         _int_tuple(dilation, n), False, (0,) * n, groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input):
        if self.padding_mode != "zeros":
            return type(self)._fn(F.pad(input, self._reversed_padding_repeated_twice,
                                        mode=self.padding_mode), self.weight, self.bias,
                                  self.stride, (0,) * self._n, self.dilation, self.groups)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              self.dilation, self.groups)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) input.

    >>> import eagergrad as torch
    >>> torch.nn.Conv1d(2, 4, 3)
    Conv1d(2, 4, kernel_size=(3,), stride=(1,))
    """
    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) input.

    >>> import eagergrad as torch
    >>> m = torch.nn.Conv2d(3, 4, 3, padding=1)
    >>> m(torch.ones(2, 3, 5, 5)).shape
    torch.Size([2, 4, 5, 5])
    """
    _n = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) input.

    >>> import eagergrad as torch
    >>> torch.nn.Conv3d(1, 2, 2)(torch.ones(1, 1, 3, 3, 3)).shape
    torch.Size([1, 2, 2, 2, 2])
    """
    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _n = 0
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        n = self._n
        super().__init__(in_channels, out_channels, _int_tuple(kernel_size, n),
                         _int_tuple(stride, n), _int_tuple(padding, n), _int_tuple(dilation, n),
                         True, _int_tuple(output_padding, n), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._n
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got "
                             f"{len(output_size)})")
        mins = [(input.size(d + non_spatial) - 1) * self.stride[d] - 2 * self.padding[d] +
                self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        maxs = [m + s - 1 for m, s in zip(mins, self.stride)]
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {mins} to {maxs} (for an input of "
                                 f"{input.size()[2:]})")
        return tuple(s - m for s, m in zip(output_size, mins))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution; weight (in_channels, out_channels/groups, k).

    >>> import eagergrad as torch
    >>> torch.nn.ConvTranspose1d(2, 3, 3, stride=2)(torch.ones(1, 2, 4)).shape
    torch.Size([1, 3, 9])
    """
    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution; weight (in_channels, out_channels/groups, kH, kW).

    >>> import eagergrad as torch
    >>> torch.nn.ConvTranspose2d(2, 3, 2, stride=2)(torch.ones(1, 2, 3, 3)).shape
    torch.Size([1, 3, 6, 6])
    """
    _n = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-d convolution; weight (in_channels, out_channels/groups, kD, kH, kW).

    >>> import eagergrad as torch
    >>> torch.nn.ConvTranspose3d(2, 3, 2, stride=2)(torch.ones(1, 2, 2, 2, 2)).shape
    torch.Size([1, 3, 4, 4, 4])
    """
    _n = 3
    _fn = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    _n = 0

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                         *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                         *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        no_batch = self._n + 1
        batch = no_batch + 1
        if input.dim() not in (no_batch, batch):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {batch}D (batched) input "
                               f"to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == batch else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._n


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        # bias False: no tensor that would be overwritten at once, as torch
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConv1d(4, 3)(torch.ones(2, 5, 7)).shape
    torch.Size([2, 4, 5])
    """

    cls_to_become = Conv1d
    _n = 1


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> m = torch.nn.LazyConv2d(4, 3)
    >>> m(torch.ones(1, 2, 5, 5)).shape, m
    (torch.Size([1, 4, 3, 3]), Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    cls_to_become = Conv2d
    _n = 2


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConv3d(2, 2)(torch.ones(1, 3, 3, 3, 3)).shape
    torch.Size([1, 2, 2, 2, 2])
    """

    cls_to_become = Conv3d
    _n = 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConvTranspose1d(4, 3)(torch.ones(2, 5, 7)).shape
    torch.Size([2, 4, 9])
    """

    cls_to_become = ConvTranspose1d
    _n = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConvTranspose2d(4, 3)(torch.ones(1, 2, 5, 5)).shape
    torch.Size([1, 4, 7, 7])
    """

    cls_to_become = ConvTranspose2d
    _n = 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConvTranspose3d(4, 2)(torch.ones(1, 2, 3, 3, 3)).shape
    torch.Size([1, 4, 4, 4, 4])
    """

    cls_to_become = ConvTranspose3d
    _n = 3
