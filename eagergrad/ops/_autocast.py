"""Autocast (torch.amp): torch's per-op cast policies and the autocast state functions
(torch.is_autocast_enabled, set_autocast_dtype, ... ; torch.amp.autocast sets them).

NOTE [autocast]: torch's autocast is a dispatch key above autograd: its kernel for a listed
op casts the op's floating inputs (`arg.to(dtype)`, recorded as ToCopyBackward0) and calls
the op with that device's autocast excluded, so the ops a composite op is made of are not
cast again. Here the cast happens at the level of torch's op, the public function
(`@autocast_op("linear")` on nn.functional.linear): casting inside call_op would cast the
kernels a composite decomposes into (linear's addmm would cast `weight.t()`, a
ToCopyBackward0 below TBackward0 where torch has it above), and the public functions'
dtype checks (mm's "expected m1 and m2 to have the same dtype") would fail before a cast.
`autocast_inputs` does the same cast inline, where a function does torch's Python-side
work (reduction arguments, broadcasting) before the op torch lists.

Disabled cost: one read of a plain attribute (`AUTOCAST.n`, the threads with autocast on)
per covered call; the thread-local is read only when some thread has autocast on. Which
ops are covered, and how, are torch's CPU tables (aten/src/ATen/autocast_mode.cpp):
"lower" casts floating inputs to the autocast dtype, "fp32" to float32, "promote" to the
widest floating input type; only floating, non-float64 tensors of the autocast's device
are cast; every other op runs unchanged. In-place ops are never cast (torch registers
out-of-place ops only; ops/inplace.py runs them with autocast excluded), and a node's
backward under autocast runs its formulas eagerly (ops/_table.py), never a cached traced
vjp, so that no compiled backward keeps casts made under autocast.
"""
import functools
import threading
import warnings
import weakref

from .. import _dtypes as D
from .._mode import AUTOCAST, STATE
from ..device import _jax_devices, device as _device
from ..engine.graph import GRAD_OPS
from ..tensor import Tensor

LOWER, FP32, PROMOTE = "lower_precision_fp", "fp32", "promote"

# torch 2.13's AutocastCPU registrations (aten/src/ATen/autocast_mode.cpp)
_CPU_LOWER = (
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm",
    "_addmm_activation", "addbmm", "linear", "_convolution", "matmul", "conv_tbc",
    "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
    "scaled_dot_product_attention", "_native_multi_head_attention")
_CPU_FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback",
    "grid_sampler_3d", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
    "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
    "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq",
    "linalg_inv_ex")
_CPU_PROMOTE = ("stack", "cat", "index_copy")

POLICIES = {"cpu": {**dict.fromkeys(_CPU_LOWER, LOWER), **dict.fromkeys(_CPU_FP32, FP32),
                    **dict.fromkeys(_CPU_PROMOTE, PROMOTE)}}

# the device types torch has autocast for (torch.amp.is_autocast_available)
AVAILABLE = ("cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia", "privateuseone")

@functools.cache
def _accelerators():
    """Which accelerators jax has (every tensor is on the CPU without one); asked on first
    use, as importing starts no jax backend."""
    return {"cuda": bool(_jax_devices("gpu")), "xla": bool(_jax_devices("tpu"))}


@functools.cache
def _cpu_only():
    return not any(_accelerators().values())


def _device_type(t):
    return "cpu" if _cpu_only() else t.device.type


def _eligible(t, dev):
    """torch's is_eligible: a floating tensor of the autocast's device, not float64."""
    dt = t.dtype
    return dt.is_floating_point and dt is not D.float64 and _device_type(t) == dev


# ---- the weight cache (torch's cached_casts) --------------------------------------------
# lower-precision casts of float32 leaves requiring grad (the weights), made with grad mode
# on (torch 2.13 neither caches nor uses the cache under no_grad), kept until the
# outermost autocast region exits: id(tensor) -> (weakref to it, its cast). Process-wide
# as torch's (one map under a mutex), cleared by clear_autocast_cache.
_CACHE = {}
_CACHE_LOCK = threading.Lock()


def clear_autocast_cache():
    with _CACHE_LOCK:
        _CACHE.clear()


def _cast(t, to, dev, lower):
    """torch's cached_cast: an eligible tensor of another dtype, cast (a float32 leaf that
    requires grad, to the lower dtype: through the cache)."""
    if t.__class__ is not Tensor and not isinstance(t, Tensor):
        return t
    if t.dtype is to or not _eligible(t, dev):
        return t
    _to = GRAD_OPS.to  # (shape.to: shape.py itself uses autocast_op)
    if (to is lower and t.dtype is D.float32 and t._requires_grad and t._grad_fn is None
            and t._base is None and AUTOCAST.tl.cache_enabled and STATE.grad):
        with _CACHE_LOCK:
            hit = _CACHE.get(id(t))
            if hit is not None and hit[0]() is t:
                return hit[1]
            out = _to(t, to)
            _CACHE[id(t)] = (weakref.ref(t), out)
            return out
    return _to(t, to)


def _cast_arg(a, to, dev, lower):
    if isinstance(a, Tensor):
        return _cast(a, to, dev, lower)
    if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
        return [_cast(x, to, dev, lower) for x in a]  # (a TensorList)
    return a


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    yield x


def _promote_type(lower, dev, tensors):
    """torch's promote_type: float32 if an eligible input is float32, else the lower dtype
    (float64 inputs are ignored; another floating type is torch's error)."""
    cur = lower
    for t in tensors:
        if not (t.dtype.is_floating_point and _device_type(t) == dev):
            continue
        nxt = t.dtype
        if nxt is D.float64:
            continue
        if cur is D.float32 or nxt is D.float32:
            cur = D.float32
        elif not (cur is lower and nxt is lower):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return cur


def _policy(name, active, tensors):
    """(device type, target dtype, lower dtype) for op `name` on `tensors`, or None when
    the op runs uncast."""
    t = next(iter(tensors), None)
    if t is None:
        return None
    dev = _device_type(t)
    lower = active.get(dev)
    if lower is None:
        return None
    table = POLICIES.get(dev)
    if table is None:
        raise NotImplementedError(f"eagergrad does not implement autocast's op lists for "
                                  f"device type '{dev}' yet")
    kind = table.get(name)
    if kind is None:
        return None
    if kind is LOWER:
        return dev, lower, lower
    if kind is FP32:
        return dev, D.float32, lower
    return dev, _promote_type(lower, dev, tensors), lower


def autocast_op(name):
    """Decorate the public function of torch's op `name` (its aten name): under autocast
    its tensor arguments are cast by that op's policy and it runs with the device's
    autocast excluded, as torch's autocast kernel does."""
    def deco(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if AUTOCAST.n:
                active = AUTOCAST.tl.active
                if active:
                    return _run(name, fn, active, args, kwargs)
            return fn(*args, **kwargs)
        return op
    return deco


def _run(name, fn, active, args, kwargs):
    p = _policy(name, active, list(_tensors((*args, *kwargs.values()))))
    if p is None:
        return fn(*args, **kwargs)
    dev, to, lower = p
    args = [_cast_arg(a, to, dev, lower) for a in args]
    kwargs = {k: _cast_arg(v, to, dev, lower) for k, v in kwargs.items()}
    tl = AUTOCAST.tl
    prev = tl.active
    tl.active = {k: v for k, v in prev.items() if k != dev}
    try:
        return fn(*args, **kwargs)
    finally:
        tl.active = prev


def autocast_inputs(name, *tensors):
    """The tensors (None allowed) cast as autocast casts op `name`'s inputs, for a caller
    that reaches torch's op after Python-side work of its own; call it when `AUTOCAST.n`."""
    active = AUTOCAST.tl.active
    p = active and _policy(name, active, [t for t in tensors if t is not None])
    if not p:
        return tensors
    dev, to, lower = p
    return tuple(None if t is None else _cast(t, to, dev, lower) for t in tensors)


# ---- the state functions (torch.is_autocast_enabled, ...) -----------------------------------
def _type_of(device_type, fn, pos=1):
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position {pos}) must be str, not "
                        f"{type(device_type).__name__}")
    return _device(device_type).type


def _keyed(dev):
    """The device type as torch's get_autocast_dispatch_key_from_device_type accepts it."""
    if dev not in AVAILABLE:
        raise RuntimeError("unknown device type for autocast in "
                           "get_autocast_dispatch_key_from_device_type")
    return dev


def is_autocast_available(device_type):
    """Whether torch has autocast for `device_type` (cpu, cuda, xla, ...).

    >>> import eagergrad as torch
    >>> torch.amp.is_autocast_available("cpu"), torch.amp.is_autocast_available("meta")
    (True, False)
    """
    return _type_of(device_type, "_is_autocast_available") in AVAILABLE


def is_autocast_enabled(*args, **kwargs):
    """is_autocast_enabled(device_type) for that device type; without one, CUDA's.

    >>> import eagergrad as torch
    >>> with torch.autocast("cpu"):
    ...     torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled()
    (True, False)
    """
    if len(args) + len(kwargs) > 1 or (kwargs and "device_type" not in kwargs):
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"is_autocast_enabled() received an invalid combination of arguments "
                        f"- got ({got}), but expected one of:\n * (str device_type)\n * ()\n")
    if not args and not kwargs:
        return "cuda" in AUTOCAST.tl.active
    dev = _keyed(_type_of(args[0] if args else kwargs["device_type"], "is_autocast_enabled"))
    return dev in AUTOCAST.tl.active


def _check_bool(v, fn, name, pos):
    if not isinstance(v, bool):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be bool, not "
                        f"{type(v).__name__}")


def set_autocast_enabled(*args, **kwargs):
    """set_autocast_enabled(device_type, enabled); set_autocast_enabled(enabled) for CUDA."""
    if len(args) + len(kwargs) == 1:
        enabled = args[0] if args else kwargs.get("enabled")
        _check_bool(enabled, "set_autocast_enabled", "enabled", 1)
        dev = "cuda"
    else:
        names = ("device_type", "enabled")
        vals = dict(zip(names, args), **kwargs)
        dev = _type_of(vals["device_type"], "set_autocast_enabled")
        enabled = vals["enabled"]
        _check_bool(enabled, "set_autocast_enabled", "enabled", 2)
    _enable(_keyed(dev), enabled)


def _enable(dev, enabled):
    if enabled and _accelerators().get(dev):
        # tensors can be there, and only the CPU's op lists are implemented
        raise NotImplementedError(f"eagergrad does not implement autocast on '{dev}' "
                                  "devices yet (torch's op lists for it)")
    AUTOCAST.set_enabled(dev, enabled)


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast uses on `device_type`.

    >>> import eagergrad as torch
    >>> torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda")
    (torch.bfloat16, torch.float16)
    """
    dt = AUTOCAST.tl.dtype.get(_type_of(device_type, "get_autocast_dtype"))
    if dt is None:
        raise RuntimeError("unsupported scalarType")
    return dt


def set_autocast_dtype(device_type, dtype):
    dev = _type_of(device_type, "set_autocast_dtype")
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    AUTOCAST.tl.dtype[dev] = dtype
    AUTOCAST.refresh()


def is_autocast_cache_enabled():
    return AUTOCAST.tl.cache_enabled


def set_autocast_cache_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    AUTOCAST.tl.cache_enabled = enabled


def autocast_increment_nesting():
    tl = AUTOCAST.tl
    tl.nesting += 1
    return tl.nesting


def autocast_decrement_nesting():
    tl = AUTOCAST.tl
    tl.nesting -= 1
    return tl.nesting


# the deprecated per-device forms (torch warns, naming the current form)
def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def _per_device(dev, label):
    def is_enabled():
        _deprecated(f"is_autocast_{label}_enabled()", f"is_autocast_enabled('{dev}')")
        return dev in AUTOCAST.tl.active

    def set_enabled(enabled):
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
        _deprecated(f"set_autocast_{label}_enabled(enabled)",
                    f"set_autocast_enabled('{dev}', enabled)")
        _enable(dev, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{label}_dtype()", f"get_autocast_dtype('{dev}')")
        return get_autocast_dtype(dev)

    def set_dtype(dtype):
        if not isinstance(dtype, D.dtype):
            raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")
        _deprecated(f"set_autocast_{label}_dtype(dtype)", f"set_autocast_dtype('{dev}', dtype)")
        set_autocast_dtype(dev, dtype)

    for f, n in ((is_enabled, f"is_autocast_{label}_enabled"),
                 (set_enabled, f"set_autocast_{label}_enabled"),
                 (get_dtype, f"get_autocast_{label}_dtype"),
                 (set_dtype, f"set_autocast_{label}_dtype")):
        f.__name__ = f.__qualname__ = n
    return is_enabled, set_enabled, get_dtype, set_dtype


(is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
 set_autocast_cpu_dtype) = _per_device("cpu", "cpu")
_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype = _per_device("cuda", "gpu")
(is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype,
 set_autocast_xla_dtype) = _per_device("xla", "xla")
(is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype,
 set_autocast_ipu_dtype) = _per_device("ipu", "ipu")
