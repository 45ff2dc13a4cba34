"""eagergrad: PyTorch's eager autograd semantics on JAX.

`import eagergrad as torch` gives the torch surface eagergrad covers: tensors over jax
arrays, ops recorded into a graph of torch-named nodes, and PyTorch's engine.
eagergrad turns on `jax_enable_x64` at import (float64/int64 need it) and passes
explicit dtypes everywhere, so the default dtype stays float32 as in torch.
"""
import jax

jax.config.update("jax_enable_x64", True)

from . import _dtypes, _torch_names  # noqa: E402
from ._dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: E402,F401
                      bfloat16, float32, float64, complex64, complex128, dtype,
                      get_default_dtype, set_default_dtype, promote_types)
from .tensor import Tensor  # noqa: E402
from .size import Size  # noqa: E402,F401
from .device import device  # noqa: E402,F401
from . import ops as _ops  # noqa: E402
from .creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty,  # noqa: E402,F401
                       full, arange, linspace, logspace, eye, zeros_like, ones_like,
                       empty_like, full_like, rand, randn, randint, randperm, rand_like,
                       randn_like, randint_like, manual_seed, seed, initial_seed, Generator,
                       get_rng_state, set_rng_state)
from .engine.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: E402,F401
                               inference_mode, is_grad_enabled, is_inference_mode_enabled)
from . import autograd, backends, cuda, linalg, testing, viz  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from .engine.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402,F401
from .interop import from_jax, jaxify  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from . import optim, utils  # noqa: E402,F401

float = float32
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32
short = int16

_ops.bind_methods(Tensor)
globals().update({k: v for k, v in _ops.FUNCTIONS.items()
                  if k not in globals() and k in _torch_names.TORCH_NAMES})
Tensor.normal_ = lambda self, mean=0.0, std=1.0, *, generator=None: _normal(self, mean, std,
                                                                            generator)
Tensor.uniform_ = lambda self, a=0.0, b=1.0, *, generator=None: _uniform(self, a, b, generator)


def _normal(t, mean, std, generator):
    from .creation import randn
    with no_grad():
        return t.copy_(randn(t._shape, dtype=t.dtype, generator=generator) * std + mean)


def _uniform(t, a, b, generator):
    from .creation import _next_key, _uniform as draw, from_jax
    with no_grad():
        return t.copy_(from_jax(draw(_next_key(generator), t._shape, t.dtype, a, b)))


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def result_type(a, b):
    from .ops._args import as_t, promote
    return promote(as_t(a), as_t(b))


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def _inplace_function(name):
    method = getattr(Tensor, name)

    def f(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    f.__name__ = name
    f.__doc__ = f"torch.{name}(input, ...): input.{name}(...)."
    return f


# torch.relu_(x) etc.: every module-level in-place function of torch whose method we have
globals().update({n: _inplace_function(n) for n in _torch_names.INPLACE_FUNCTIONS
                  if n not in globals() and hasattr(Tensor, n)})
_torch_names.mark_missing_tensor_attributes(Tensor)
__getattr__ = _torch_names.module_getattr("eagergrad", "torch")


__version__ = "0.1.0"
