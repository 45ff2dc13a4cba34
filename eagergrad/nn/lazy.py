"""torch.nn: LazyModuleMixin and the lazy layers (LazyLinear, LazyConv*d,
LazyConvTranspose*d), whose parameters take their shapes from the first input; then the
module becomes its `cls_to_become` (Linear, Conv2d, ...)."""
import itertools

from ..engine.grad_mode import no_grad
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from .linear import Linear
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyLinear", "UninitializedBuffer",
           "UninitializedParameter"]


class LazyModuleMixin:
    """A module whose parameters are materialized by `initialize_parameters` on the first
    forward (a forward pre-hook), or by loading a state dict with initialized values."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(
            lambda module, *a: module._lazy_load_hook(*a))
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                input_param = state_dict[key]
                if not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                       self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose in_features is the last dimension of the first input.

    >>> import eagergrad as torch
    >>> m = torch.nn.LazyLinear(3)
    >>> m(torch.ones(2, 5)).shape, m
    (torch.Size([2, 3]), Linear(in_features=5, out_features=3, bias=True))
    """

    __module__ = "eagergrad.nn.modules.linear"
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: "
                                     f"{input.shape[-1]} is not equal to in_features from "
                                     f"self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


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

    __module__ = "eagergrad.nn.modules.conv"
    cls_to_become = Conv1d
    _n = 1


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> m = torch.nn.LazyConv2d(4, 3)
    >>> m(torch.ones(1, 2, 5, 5)).shape, m
    (torch.Size([1, 4, 3, 3]), Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1)))
    """

    __module__ = "eagergrad.nn.modules.conv"
    cls_to_become = Conv2d
    _n = 2


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConv3d(2, 2)(torch.ones(1, 3, 3, 3, 3)).shape
    torch.Size([1, 2, 2, 2, 2])
    """

    __module__ = "eagergrad.nn.modules.conv"
    cls_to_become = Conv3d
    _n = 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConvTranspose1d(4, 3)(torch.ones(2, 5, 7)).shape
    torch.Size([2, 4, 9])
    """

    __module__ = "eagergrad.nn.modules.conv"
    cls_to_become = ConvTranspose1d
    _n = 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels comes from the first input.

    >>> import eagergrad as torch
    >>> torch.nn.LazyConvTranspose2d(4, 3)(torch.ones(1, 2, 5, 5)).shape
    torch.Size([1, 4, 7, 7])
    """

    __module__ = "eagergrad.nn.modules.conv"
    cls_to_become = ConvTranspose2d
    _n = 2
