"""eagergrad: PyTorch's eager autograd semantics on JAX.

`import eagergrad as torch` gives the torch surface eagergrad covers: tensors over jax
arrays, ops recorded into a graph of torch-named nodes, and PyTorch's engine.
eagergrad turns on `jax_enable_x64` at import (float64/int64 need it) and passes
explicit dtypes everywhere, so the default dtype stays float32 as in torch.
"""
import jax

jax.config.update("jax_enable_x64", True)
__version__ = "0.1.0"
from ._compile_cache import set_compilation_cache  # noqa: E402,F401  (on by default)

from . import _torch_names  # noqa: E402
from ._dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: E402,F401
                      bfloat16, float32, float64, complex64, complex128, dtype,
                      get_default_dtype, set_default_dtype, promote_types)
from .tensor import Tensor  # noqa: E402
from .size import Size  # noqa: E402,F401
from .device import device, get_default_device, set_default_device  # noqa: E402,F401
from . import ops as _ops  # noqa: E402
from .creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty,  # noqa: E402,F401
                       full, arange, linspace, logspace, eye, zeros_like, ones_like,
                       empty_like, full_like, rand, randn, randint, randperm, rand_like,
                       randn_like, randint_like, manual_seed, seed, initial_seed, Generator,
                       get_rng_state, set_rng_state, LEGACY_TYPES as _LEGACY_TYPES,
                       CUDA_LEGACY_TYPES as _CUDA_LEGACY_TYPES)
from .engine.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: E402,F401
                               inference_mode, is_grad_enabled, is_inference_mode_enabled)
from . import accelerator, autograd, backends, cuda, func, linalg, testing, viz  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from .engine.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402,F401
from .interop import from_jax, jaxify  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from .serialization import save, load  # noqa: E402,F401
from . import optim, utils  # noqa: E402,F401

# the legacy tensor types: torch.FloatTensor(2, 3), isinstance(t, torch.LongTensor), ...
globals().update(_LEGACY_TYPES)
for _k, _v in _CUDA_LEGACY_TYPES.items():
    setattr(cuda, _k, _v)
del _k, _v

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
    from .creation import randn as _randn
    with no_grad():
        return t.copy_(_randn(t._shape, dtype=t.dtype, generator=generator) * std + mean)


def _uniform(t, a, b, generator):
    from .creation import _next_key, _uniform as draw, from_jax as _from_jax
    with no_grad():
        return t.copy_(_from_jax(draw(_next_key(generator), t._shape, t.dtype, a, b)))


_warned_tensor_type = []


def set_default_tensor_type(t, /):
    """Deprecated in torch 2.1: set the default dtype from a legacy floating tensor type
    (class or name).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     set_default_tensor_type("torch.DoubleTensor")
    >>> get_default_dtype()
    torch.float64
    >>> set_default_dtype(float32)
    """
    if not _warned_tensor_type:  # (torch warns once)
        _warned_tensor_type.append(True)
        import warnings
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        parts = t.split(".")
        if parts[0] not in ("torch", "eagergrad"):
            raise ModuleNotFoundError(f"No module named '{parts[0]}'")
        space = _CUDA_LEGACY_TYPES if parts[1:2] == ["cuda"] else _LEGACY_TYPES
        if parts[-1] not in space:
            raise AttributeError(f"module '{'.'.join(parts[:-1])}' has no attribute "
                                 f"'{parts[-1]}'")
        t = space[parts[-1]]
    if t not in _LEGACY_TYPES.values() and t not in _CUDA_LEGACY_TYPES.values():
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if t.is_cuda and not cuda.is_available():
        raise TypeError(f"type torch.cuda.{t.__name__} not available. Torch not compiled with "
                        "CUDA enabled.")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(t.dtype)


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

