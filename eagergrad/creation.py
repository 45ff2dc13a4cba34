"""Tensor creation: tensor, zeros, ones, full, arange, linspace, eye, *_like, random."""
import functools
import math
import operator
import os
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes as D
from . import _layouts, _settings
from ._cache import EXECUTABLES, keyed, put_bounded
from .device import _jax_devices, default as _default_device, device as _device
from ._mode import CAPTURING, COMPILING, FUNC
from ._storage import contiguous_strides
from .tensor import _NO_CUDA_LIBRARY, Tensor, _make


def _finish(arr, dtype, device, requires_grad):
    return _requiring_grad(_make(_put(arr, device)), requires_grad)


def _dev(device):
    """The device a factory puts its tensor on: `device`, else the default device (None:
    jax's default)."""
    return device if device is not None else _default_device()


def _requiring_grad(t, requires_grad):
    """A factory's requires_grad=True, with the factories' wording of the dtype error
    (every factory ends here: a torch.func trace notes the tensors made inside it)."""
    if CAPTURING.n and FUNC.capture is not None:
        FUNC.capture.made(t._storage)
    if requires_grad:
        if not t.dtype.is_differentiable:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


def _infer_dtype(a, data):
    if a.dtype == np.bool_:
        return D.bool_
    if np.issubdtype(a.dtype, np.integer):
        return D.int64
    if np.issubdtype(a.dtype, np.complexfloating):
        return D.default_complex()
    return D.get_default_dtype()


def _to_numpy(data):
    if isinstance(data, Tensor):
        return np.asarray(data._value)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
        return np.array(_untensor(data))
    return np.asarray(data)


def _python_values(data, a, dtype):
    """Python data numpy could not type as torch does (an object, string or uint64 array:
    None, a str, an int beyond int64): torch's errors, or the values as floats when the
    data (or the dtype asked for) is floating; torch never wraps an int that overflows."""
    leaves = list(_flat(data)) if isinstance(data, (list, tuple)) else [data]
    for x in leaves:
        if isinstance(x, str):
            raise TypeError("new(): invalid data type 'str'")
        if x is None or not isinstance(x, (bool, int, float, complex, np.generic, Tensor)):
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
    kind = "c" if any(isinstance(x, complex) for x in leaves) else \
        "f" if any(isinstance(x, float) for x in leaves) else "i"
    if dtype is not None:
        dt = D.as_dtype(dtype)
        kind = "c" if dt.is_complex else "f" if dt.is_floating_point else "i"
    if kind == "i":
        if any(isinstance(x, int) and not -2**63 <= x < 2**63 for x in leaves):
            raise ValueError("Overflow when unpacking long long")
        return np.asarray(data, dtype=np.int64)
    return np.asarray(_untensor(data), dtype=np.complex128 if kind == "c" else np.float64)


def _flat(data):
    for x in data:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _untensor(data):
    if isinstance(data, Tensor):
        return data.item() if data.numel() == 1 and data.ndim == 0 else data.tolist()
    if isinstance(data, (list, tuple)):
        return [_untensor(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """torch.tensor: a new tensor copying `data` (nested lists, numbers, numpy or jax).

    >>> import eagergrad as torch
    >>> torch.tensor([1, 2]).dtype, torch.tensor([1.5]).dtype
    (torch.int64, torch.float32)
    """
    if isinstance(data, jax.Array) and not isinstance(data, np.ndarray):
        dt = D.as_dtype(dtype) if dtype is not None else D.FROM_NP[np.dtype(data.dtype)]
        return _finish(jnp.array(data, dtype=dt.np, copy=True), dt, device, requires_grad)
    a = _to_numpy(data)
    if a.dtype.kind in "OUSu" and not isinstance(data, (np.ndarray, np.generic, Tensor)):
        a = _python_values(data, a, dtype)
    if dtype is not None:
        dt = D.as_dtype(dtype)
    elif isinstance(data, (np.ndarray, np.generic, Tensor)):
        dt = D.FROM_NP[a.dtype] if not isinstance(data, Tensor) else data.dtype
    else:
        dt = _infer_dtype(a, data)
    return _finish(_from_host(a, dt.np), dt, device, requires_grad)


def _from_host(a, np_dt):
    """A device array of numpy array `a` as `np_dt`, copied. Same dtype or a float
    rounded to another float (round to nearest even on both sides; ml_dtypes rounds
    as XLA): a host copy put on the device, no compile (jnp.asarray compiles a kernel
    per new shape: a DataLoader's batches of every length). Other conversions (floats
    to integers, from bool) keep XLA's."""
    if a.dtype == np_dt or (a.dtype.kind == "f" and np.dtype(np_dt).kind in "fV"):
        return jax.device_put(np.array(a, dtype=np_dt, copy=True, order="C"))
    return jnp.asarray(a, dtype=np_dt)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, jax.Array) and dtype is None and device is None:
        return _requiring_grad(_make(data), False)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """torch.from_numpy (jax arrays are immutable, so this copies once)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _requiring_grad(_make(_from_host(ndarray, ndarray.dtype)), False)


def from_jax(array, requires_grad=False):
    """A tensor over a jax array, without a copy."""
    t = _make(array if isinstance(array, jax.Array) or hasattr(array, "aval")
              else jnp.asarray(array))
    return _requiring_grad(t, requires_grad)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    out = tuple(int(s) for s in size)
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(out)}")
    return out


def _dt(dtype, default=None):
    return D.as_dtype(dtype) if dtype is not None else (default or D.get_default_dtype())


def _filled(fill, size, dtype, device, requires_grad):
    dt = _dt(dtype)
    device = _dev(device)
    key = ("full", size, type(fill), keyed(fill), dt, device)
    arr = _consts.get(key) if not COMPILING.n else None
    if arr is None:
        # (a constant under a jax trace too: a torch.func transform's trace sees every
        # tensor a factory makes start from a concrete value, cached or not)
        host = _host_full(size, fill, dt.np)
        with jax.ensure_compile_time_eval():  # (device_put too is traced under a trace)
            arr = jax.device_put(host) if host is not None else jnp.full(size, fill, dt.np)
        arr = _const(key, _put(arr, device), math.prod(size))
    return _requiring_grad(_make(arr), requires_grad)


def _host_full(size, fill, np_dt):
    """np.full where it is bitwise jnp.full (floats, and integers in range), else None:
    made on the host and put on the device, a constant costs no compile (jnp.full
    compiles a kernel per shape: two per nn.Linear made)."""
    if jnp.issubdtype(np_dt, jnp.complexfloating) or (
            jnp.issubdtype(np_dt, jnp.floating) and not isinstance(fill, complex)):
        return np.full(size, fill, np_dt)  # (bfloat16 too: ml_dtypes rounds as XLA)
    if np_dt == np.bool_ and isinstance(fill, (bool, int, float)):
        return np.full(size, fill, np_dt)
    if jnp.issubdtype(np_dt, jnp.integer) and isinstance(fill, (bool, int, float)) and \
            math.isfinite(fill) and np.iinfo(np_dt).min <= fill <= np.iinfo(np_dt).max:
        return np.full(size, fill, np_dt)  # (a float truncates toward zero in both)
    return None


def _put(arr, device):
    """A new array on `device`. On jax's default device it stays uncommitted, as every
    other array eagergrad makes: a kernel given a committed and an uncommitted array of
    the same shapes compiles a second executable (nn.RNN's `zeros(..., device=x.device)`
    state made each LSTM step compile twice)."""
    device = _dev(device)
    if device is None:
        return arr
    d = _device(device).jax
    return arr if d == jax.devices()[0] else jax.device_put(arr, d)


# Small constants (the implicit ones of backward(), x[arange(n), y]'s arange, zeros for
# a buffer) are rebuilt every step; a jax array is immutable, so tensors may share one
# (each still gets its own Storage). This skips jnp's un-jitted creation path (~30 us)
# and, for an index, the wait for its values behind queued work in the bounds check. Not
# while a compiled call is traced: its constants must be its own (an array another tensor
# holds is a tensor the call read, _dynamo/_step.py).
_consts = {}
_CONST_MAX = 1 << 14


def _const(key, arr, numel):
    if numel <= _CONST_MAX and not isinstance(arr, jax.core.Tracer) and not COMPILING.n:
        if len(_consts) >= 64:
            _consts.clear()
        _consts[key] = arr
    return arr


def _strided(layout):
    if layout is not None and layout is not _layouts.strided:
        raise NotImplementedError(f"eagergrad's tensors are strided: layout={layout} is not "
                                  "supported")


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    _strided(layout)
    return _filled(0, _size(size), dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    _strided(layout)
    return _filled(1, _size(size), dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None, pin_memory=False):
    _strided(layout)
    return _filled(_uninitialized(_dt(dtype)), _size(size), dtype, device, requires_grad)


def _uninitialized(dt):
    """What `empty` holds: zeros, or with deterministic algorithms on, torch's fill of
    uninitialized memory (NaN, the largest integer, True)."""
    if not _settings.fill_uninitialized():
        return 0
    if dt.is_differentiable:
        return math.nan
    return True if dt is D.bool_ else int(np.iinfo(dt.np).max)


CHECKED_FILL = [None]  # ops/fill.py's checked_fill (torch's checked_convert), set there


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None):
    _strided(layout)
    if dtype is None:
        dtype = D.scalar_dtype(fill_value)
        if dtype is D.float64:
            dtype = D.get_default_dtype()
        elif dtype is D.complex128:
            dtype = D.default_complex()
    if fill_value.__class__ is int or (isinstance(fill_value, (int, float, complex))
                                       and _dt(dtype)._kind == 1):
        fill_value = CHECKED_FILL[0](fill_value, _dt(dtype))  # (never a wrapped int)
    return _filled(fill_value, _size((size,) if isinstance(size, int) else tuple(size)), dtype,
                   device, requires_grad)


def _like(fn):
    def f(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
          layout=None):
        _strided(layout)
        return fn(input._shape, dtype=dtype or input.dtype, device=device,
                  requires_grad=requires_grad)
    return f


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(input._shape, fill_value, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           layout=None, out=None):
    """Values in [start, end) by step, computed as torch does (start + i * step in double;
    integral results from the truncated start and step, in int64).

    >>> arange(3)
    tensor([0, 1, 2])
    """
    _strided(layout)
    if end is None:
        start, end = 0, start
    vals = (start, end, step)
    if dtype is None and out is not None:
        dtype = out.dtype
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) for v in vals) else D.int64
    dt = D.as_dtype(dtype)
    n = _arange_size(start, end, step, dt)
    if out is not None:
        raise NotImplementedError("eagergrad does not implement torch.arange(out=...) yet")
    device = _dev(device)
    key = ("arange", *((type(v), v) for v in vals), dt, device)
    arr = _consts.get(key) if not COMPILING.n else None
    if arr is None:
        if dt.is_differentiable:
            host = start + step * np.arange(n, dtype=np.float64)
        else:  # (int64 arithmetic wraps into the narrower types, as torch's cast does)
            host = int(start) + int(step) * np.arange(n, dtype=np.int64)
        arr = _const(key, _put(jnp.asarray(host.astype(dt.np)), device), n)
    return _requiring_grad(_make(arr), requires_grad)


def _arange_size(start, end, step, dt):
    """torch's arange_check_bounds and compute_arange_size (RangeUtils.h): the checks in
    double, the length in int64 from the truncated numbers for an int64 result."""
    if dt is D.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    ds, de, dst = float(start), float(end), float(step)
    if dst == 0 or dst != dst:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(ds) and math.isfinite(de)):
        raise RuntimeError(f"unsupported range: {ds:g} -> {de:g}")
    if not (dst > 0 and de >= ds or dst < 0 and de <= ds):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt is D.int64:
        xs, xe, xst = int(start), int(end), int(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        return (xe - xs + xst - (1 if xst > 0 else -1)) // xst
    n = math.ceil((de - ds) / dst)
    if n > 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return n


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False,
             layout=None):
    _strided(layout)
    steps = _check_steps("linspace", start, end, steps, "")
    start, end = _scalars("linspace", start, end)
    dt = _dt(dtype)
    return _finish(_linspace(start, end, steps, dt), dt, device, requires_grad)


def _check_steps(name, start, end, steps, base):
    """torch's binding of linspace/logspace: `steps` an int (not a bool or a float), as
    an int."""
    if isinstance(steps, bool) or not hasattr(type(steps), "__index__"):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                        for v in (start, end, steps))
        rest = (f"int steps, {base}*, Tensor out = None, torch.dtype dtype = None, "
                "torch.layout layout = None, torch.device device = None, bool pin_memory = "
                "False, bool requires_grad = False)")
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n" + "".join(
                            f" * ({a} start, {b} end, {rest}\n" for a, b in (
                                ("Tensor", "Tensor"), ("Number", "Tensor"),
                                ("Tensor", "Number"), ("Number", "Number"))))
    steps = steps.__index__()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _scalars(name, start, end):
    """torch's Tensor overloads of linspace/logspace: 0-d start and end, read as numbers."""
    out = []
    for what, v in (("start", start), ("end", end)):
        if hasattr(v, "_shape"):
            if v.ndim:
                raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, "
                                   f"but got {what} with {v.ndim} dimension(s).")
            v = v.item()
        out.append(v)
    return out


def _linspace(start, end, steps, dt):
    """ATen's linspace: the first half counts up from start, the second half down from
    end, in the output's precision (double steps for integral outputs)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    work = dt.np if dt.is_differentiable else np.dtype(np.float64)
    i = np.arange(steps)
    if steps == 1:
        return jnp.full((1,), start, dt.np)
    s, e = work.type(start), work.type(end)
    step = (e - s) / work.type(steps - 1)
    with np.errstate(all="ignore"):
        up = s + step * i.astype(work)
        down = e - step * (steps - i - 1).astype(work)
    vals = np.where(i < steps // 2, up, down)
    return jnp.asarray(vals.astype(dt.np) if dt.is_differentiable else np.trunc(vals).astype(dt.np))


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False,
             layout=None):
    _strided(layout)
    steps = _check_steps("logspace", start, end, steps, "float base = 10.0, ")
    start, end = _scalars("logspace", start, end)
    dt = _dt(dtype)
    return _finish((base ** jnp.linspace(start, end, steps, dtype=jnp.float64)).astype(dt.np),
                   dt, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, layout=None):
    _strided(layout)
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _dt(dtype)
    with jax.ensure_compile_time_eval():
        arr = jnp.eye(n, m, dtype=dt.np)
    return _finish(arr, dt, device, requires_grad)


# ---- torch.range (deprecated), frombuffer, and the window functions ------------------------
_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).")


def torch_range(start, end, step=1, *, dtype=None, device=None, requires_grad=False,
                layout=None):
    """torch.range (deprecated, warns): values from start to end *inclusive* by step, in
    the default dtype unless given, computed as ATen's range_cpu (start + i * step in
    double; in float for half types, in int64 for integral ones).

    >>> import warnings, eagergrad as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    import warnings
    warnings.warn(_RANGE_WARNING, UserWarning, stacklevel=2)
    _strided(layout)
    dt = _dt(dtype)
    if dt is D.bool_ or dt.is_complex:
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{dt.scalar_name}'")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    acc = np.int64 if dt._kind == 1 else np.float32 if dt.itemsize < 4 else np.float64
    xs, xe, xst = (acc(int(v) if acc is np.int64 else v) for v in (start, end, step))
    if xst == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(float(xs)) and math.isfinite(float(xe))):
        raise RuntimeError(f"unsupported range: {float(xs):g} -> {float(xe):g}")
    if not (xst > 0 and xe >= xs or xst < 0 and xe <= xs):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    with np.errstate(all="ignore"):
        n = int((xe - xs) // xst if acc is np.int64 else (xe - xs) / xst) + 1
        host = xs + np.arange(n, dtype=acc) * xst
    return _finish(jax.device_put(host.astype(dt.np)), dt, device, requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """torch.frombuffer: a 1-D tensor of the bytes of a buffer-protocol object read as
    `dtype` (`count` items from byte `offset`; -1: all). A copy: jax arrays cannot share
    the buffer's memory, so later writes to the buffer do not reach the tensor.

    >>> import eagergrad as torch
    >>> torch.frombuffer(bytearray(b"\\x01\\x02\\x03\\x04"), dtype=torch.int16, offset=2)
    tensor([1027], dtype=torch.int16)
    """
    dt = D.as_dtype(dtype)
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if not view.contiguous:
        raise RuntimeError("could not retrieve buffer from object")
    raw = view.cast("B") if view.ndim else view.tobytes()
    length, size = len(raw), dt.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    data = np.frombuffer(raw, np.uint8, count * size, offset)
    host = data != 0 if dt is D.bool_ else data.view(dt.np)
    return _finish(jax.device_put(np.array(host)), dt, None, requires_grad)


# ---- empty_strided, empty_permuted, new_empty_strided, from_file -------------------------
def _int_tuple(value, fn, arg, pos):
    """torch's parsing of an int-list argument (a tuple, list or Size of ints), with its
    TypeErrors."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, (bool, float)) or not hasattr(type(v), "__index__"):
            raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                            f"but found element of type {type(v).__name__} at pos {i}")
        out.append(operator.index(v))
    return tuple(out)


def _no_pinning(pin_memory):
    if pin_memory and not _jax_devices("gpu"):
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")


def _check_sizes(size, shown=None):
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size if shown is None else shown)}")


def _storage_numel(size, stride, itemsize):
    """c10's computeStorageNbytes, in elements, with its overflow error: its unsigned
    arithmetic makes a negative stride on a dim of more than one element overflow."""
    if 0 in size:
        return 0
    n = 1 + sum((k - 1) * (s % 2 ** 64) for k, s in zip(size, stride))
    if n * itemsize > 2 ** 63 - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    return n


def _set_strides(size, stride):
    """TensorImpl::set_sizes_and_strides: a negative stride left (a dim of one element)
    becomes the contiguous stride over the dims after it."""
    out = list(stride)
    for d in range(len(size) - 1, -1, -1):
        if out[d] < 0:
            out[d] = 1 if d == len(size) - 1 else max(size[d + 1], 1) * out[d + 1]
    return tuple(out)


def _dense(size, stride):
    """Whether (size, stride) covers numel() consecutive elements of memory, each once
    (torch's is_non_overlapping_and_dense)."""
    expected = 1
    for s, k in sorted((s, k) for k, s in zip(size, stride) if k != 1):
        if s != expected:
            return False
        expected *= k
    return True


def _strided_read(a, size, stride):
    idx = jnp.zeros((), jnp.int64)
    for n, s in zip(size, stride):
        idx = idx[..., None] + jnp.arange(n, dtype=jnp.int64) * s
    return a[idx]


@functools.lru_cache(maxsize=64)
def _strided_reader(size, stride):
    """The view-chain function reading (size, stride) out of a 1-D storage array (one per
    layout, so that the writes through it, keyed by it, are compiled once)."""
    return EXECUTABLES.track(jax.jit(functools.partial(_strided_read, size=size,
                                                       stride=stride)))


def _empty_strided(size, stride, dtype, device, requires_grad):
    """An uninitialized tensor of `size` whose stride() is `stride` (NOTE [strided
    empty])."""
    dt = _dt(dtype)
    n = _storage_numel(size, stride, dt.itemsize)
    stride = _set_strides(size, stride)
    fill = _uninitialized(dt)
    if n == 0 or _dense(size, stride):
        t = _filled(fill, size, dt, device, requires_grad)
        if stride != contiguous_strides(size):
            t._stride = stride
        return t
    t = _filled(fill, (n,), dt, device, False)
    t._vchain = ((_strided_reader(size, stride), None),)
    t._arr, t._gen = None, -1  # (read through the chain when first needed)
    t._shape, t._stride = size, stride
    return _requiring_grad(t, requires_grad)


# NOTE [strided empty]: torch's empty_strided / empty_permuted / new_empty_strided give a
# tensor the strides asked for. Strides that lay numel() elements out densely (a
# permutation of contiguous strides: channels-last, column-major) make a base tensor whose
# array is in its logical shape, as every eagergrad base, with those strides as its
# stride() (ops/resize.py's relayout and LAPACK's column-major results keep theirs the
# same way). Strides with gaps or overlaps make a storage of torch's size, 1-D, and a
# tensor (not a view: no _base, as in torch) that reads it through a one-element view
# chain, so that writes to an overlapping element reach every index that shares it, and
# the in-place ops see the overlap (stride 0) and refuse it as torch does.
def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """torch.empty_strided: an uninitialized tensor of `size` with strides `stride`.

    >>> import eagergrad as torch
    >>> torch.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    size, stride = _strided_args("empty_strided", size, stride, layout, pin_memory)
    return _empty_strided(size, stride, dtype, device, requires_grad)


def _strided_args(name, size, stride, layout, pin_memory):
    """(size, stride) of empty_strided / new_empty_strided, with torch's checks."""
    size = _int_tuple(size, name, "size", 1)
    stride = _int_tuple(stride, name, "stride", 2)
    _strided(layout)
    _no_pinning(pin_memory)
    _check_sizes(size)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    return size, stride


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """torch.empty_permuted: an uninitialized dense tensor of `size` whose dims lie in
    memory in the order `physical_layout` (outermost first).

    >>> import eagergrad as torch
    >>> torch.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1)).stride()
    (105, 1, 21, 3)
    """
    size = _int_tuple(size, "empty_permuted", "size", 1)
    perm = _int_tuple(physical_layout, "empty_permuted", "physical_layout", 2)
    _strided(layout)
    _no_pinning(pin_memory)
    n = len(size)
    if len(perm) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(perm)}")
    seen = set()
    for i, d in enumerate(perm):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               "supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    physical = tuple(size[d] for d in perm)
    _check_sizes(physical)
    stride = [0] * n
    for d, s in zip(perm, contiguous_strides(physical)):
        stride[d] = s
    return _empty_strided(size, tuple(stride), dtype, device, requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=False, requires_grad=False):
    """Tensor.new_empty_strided: empty_strided with self's dtype and device by default.

    >>> import eagergrad as torch
    >>> torch.zeros(1, dtype=torch.float64).new_empty_strided((2, 3), (1, 2)).dtype
    torch.float64
    """
    size, stride = _strided_args("new_empty_strided", size, stride, layout, pin_memory)
    return _empty_strided(size, stride, dtype or self.dtype,
                          device if device is not None else self.device, requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """torch.from_file: a 1-D tensor of `size` elements of `dtype` read from the file's
    first bytes. A copy: shared=True (torch writes the tensor's changes back to the
    file) raises NotImplementedError, as a jax array cannot map a file.

    >>> import eagergrad as torch
    >>> torch.from_file("/nonexistent", size=0)
    tensor([])
    """
    if isinstance(filename, bytes):
        filename = os.fsdecode(filename)
    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not "
                        f"{type(filename).__name__}")
    if shared is not None and not isinstance(shared, bool):
        raise TypeError(f"from_file(): argument 'shared' (position 2) must be bool, not "
                        f"{type(shared).__name__}")
    if isinstance(size, (bool, float)) or not hasattr(type(size), "__index__"):
        raise TypeError(f"from_file(): argument 'size' must be int, not {type(size).__name__}")
    size = operator.index(size)
    _strided(layout)
    dt = _dt(dtype)
    if pin_memory:
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    if shared:
        raise NotImplementedError("eagergrad does not implement torch.from_file(shared=True): "
                                  "a tensor's storage is a jax array, which cannot write its "
                                  "changes back to the file")
    nbytes = size * dt.itemsize
    raw = b""
    if size:
        try:
            with open(filename, "rb") as f:
                if nbytes < 0:
                    raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: "
                                       "Cannot allocate memory (12)")
                have = os.fstat(f.fileno()).st_size
                if have < nbytes:
                    raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the "
                                       f"required mapping size <{nbytes}>")
                raw = f.read(nbytes)
        except IsADirectoryError:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: No such "
                               "device (19)") from None
        except OSError as e:
            raise RuntimeError(f"unable to open file <{filename}> in read-only mode: "
                               f"{os.strerror(e.errno)} ({e.errno})") from None
    data = np.frombuffer(raw, np.uint8)
    host = data != 0 if dt is D.bool_ else data.view(dt.np)
    return _finish(jax.device_put(np.array(host)), dt, device, requires_grad)


def _window_args(name, window_length, periodic, dtype, layout, device, overloads):
    """The checks of torch's window functions (window_function_checks), in its order:
    the arguments' types, the layout, a floating dtype, a non-negative length."""
    if isinstance(window_length, bool) or not hasattr(type(window_length), "__index__") or (
            isinstance(window_length, Tensor) and window_length.dtype._kind != 1):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    n = window_length.__index__()
    if not isinstance(periodic, bool):
        got = ", ".join(type(v).__name__ for v in (window_length, periodic))
        opts = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device "
                "= None, bool pin_memory = False, bool requires_grad = False")
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n" + "".join(
                            f" * (int window_length{o}, *, {opts})\n" for o in overloads))
    dt = _dt(dtype)
    if layout is _layouts.sparse_coo or not dt.is_differentiable:
        default = " (default)" if dtype is None and name == "hann_window" else ""
        lay = "Strided (default)" if layout is None else \
            "Strided" if layout is _layouts.strided else "Sparse"
        options = (f"TensorOptions(dtype={dt.cpp_name}{default}, device=cpu, layout={lay}, "
                   "requires_grad=false (default), pinned_memory=false, "
                   "memory_format=(nullopt))")
        if layout is _layouts.sparse_coo:
            raise RuntimeError(f"{name} is not implemented for sparse types, got: {options}")
        raise RuntimeError(f"{name} expects floating point dtypes, got: {options}")
    _strided(layout)
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if n > 1 and dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dt.scalar_name}'")
    return n, dt


def _window(values, n, periodic, dt, device, requires_grad):
    """A window of n values: empty, [1], or values(N) (an opmath array function of the
    positions 0..N-1, N = n + 1 for a periodic window, whose last value is dropped)."""
    if n <= 1:
        host = np.ones(n, dt.np)
    else:
        big = n + 1 if periodic else n
        host = values(big)[:n] if periodic else values(big)
    return _finish(jax.device_put(np.asarray(host, dt.np)), dt, device, requires_grad)


def _opmath(dt):
    """ATen's per-op arithmetic for a window: each op computed in float (double for
    float64) and rounded to dt; its scalar operand is rounded to dt first (as ATen's window
    functions' in-place ops with a C++ Scalar do)."""
    op = np.float64 if dt is D.float64 else np.float32

    def r(x):
        return np.asarray(x, op).astype(dt.np).astype(op)

    def c(v):
        return op(np.asarray(v, op).astype(dt.np))
    return c, r


def _positions(big, dt):
    """arange(big) in dt, in its op precision."""
    op = np.float64 if dt is D.float64 else np.float32
    return np.arange(big, dtype=np.float64).astype(dt.np).astype(op)


_TWO = ("", ", bool periodic")


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """torch.hann_window: 0.5 - 0.5 cos(2 pi n / (N - 1)); periodic windows (the default)
    are the first window_length values of the window one longer.

    >>> import eagergrad as torch
    >>> torch.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    n, dt = _window_args("hann_window", window_length, periodic, dtype, layout, device, _TWO)
    return _window(_hamming(dt, 0.5, 0.5), n, periodic, dt, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """torch.hamming_window: alpha - beta cos(2 pi n / (N - 1)).

    >>> import eagergrad as torch
    >>> torch.hamming_window(3, False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    n, dt = _window_args("hamming_window", window_length, periodic, dtype, layout, device,
                         _TWO + (", bool periodic, float alpha",
                                 ", bool periodic, float alpha, float beta"))
    return _window(_hamming(dt, float(alpha), float(beta)), n, periodic, dt, device,
                   requires_grad)


def _hamming(dt, alpha, beta):
    op, r = _opmath(dt)

    def values(big):
        w = r(_positions(big, dt) * op(2 * math.pi / (big - 1)))
        return r(r(r(np.cos(w)) * op(-beta)) + op(alpha))
    return values


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """torch.bartlett_window: the triangle 1 - |2n / (N - 1) - 1|.

    >>> import eagergrad as torch
    >>> torch.bartlett_window(5, False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    n, dt = _window_args("bartlett_window", window_length, periodic, dtype, layout, device,
                         _TWO)
    op, r = _opmath(dt)

    def values(big):
        w = r(_positions(big, dt) * op(2.0 / (big - 1)))
        half = ((big - 1) >> 1) + 1
        w[half:] = r(r(w[half:] * op(-1)) + op(2))
        return w
    return _window(values, n, periodic, dt, device, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """torch.blackman_window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).

    >>> import eagergrad as torch
    >>> torch.blackman_window(5, periodic=False, dtype=torch.float64).argmax()
    tensor(2)
    """
    n, dt = _window_args("blackman_window", window_length, periodic, dtype, layout, device,
                         _TWO)
    op, r = _opmath(dt)

    def values(big):
        w = r(_positions(big, dt) * op(math.pi / (big - 1)))
        four = r(r(np.cos(r(w * op(4)))) * op(0.08))
        two = r(r(np.cos(r(w * op(2)))) * op(0.5))
        return r(r(four - two) + op(0.42))
    return _window(values, n, periodic, dt, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """torch.kaiser_window: I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2.

    >>> import eagergrad as torch
    >>> torch.kaiser_window(3, False, 0.0)
    tensor([1., 1., 1.])
    """
    n, dt = _window_args("kaiser_window", window_length, periodic, dtype, layout, device,
                         _TWO + (", bool periodic, float beta",))
    beta = float(beta)

    def values(big):
        a = (big - 1) / 2.0
        k = np.arange(big, dtype=np.float64).astype(dt.np).astype(np.float64)
        return np.i0(beta * np.sqrt(np.abs(1 - ((k - a) / a) ** 2))) / np.i0(beta)
    return _window(values, n, periodic, dt, device, requires_grad)


for _f in (torch_range, frombuffer, hann_window, hamming_window, bartlett_window,
           blackman_window, kaiser_window):
    _f.__module__ = "eagergrad"
torch_range.__name__ = torch_range.__qualname__ = "range"
del _f


# ---- random numbers: jax keys, split on every draw ----------------------------------------
class Generator:
    """torch.Generator: a random stream of its own (a jax key), for `generator=` of the
    random functions. Seeds give reproducible streams, not torch's numbers.

    >>> import eagergrad as torch
    >>> g = torch.Generator().manual_seed(3)
    >>> a = torch.rand(2, generator=g)
    >>> bool((a == torch.rand(2, generator=torch.Generator().manual_seed(3))).all())
    True
    """

    def __init__(self, device="cpu"):
        self.device = _device(device)
        if self.device.type == "cuda" and not _jax_devices("gpu"):
            raise RuntimeError("Cannot get CUDA generator without ATen_cuda library. "
                               + _NO_CUDA_LIBRARY.split(". ", 1)[1])
        self._seed = 67280421310721  # torch's default seed of a new Generator
        self._key = None

    def manual_seed(self, seed):
        self._seed = int(seed)
        with jax.ensure_compile_time_eval():
            self._key = jax.random.PRNGKey(self._seed & 0xFFFFFFFFFFFFFFFF)
        return self

    def seed(self):
        """Seed from the operating system's randomness; returns the seed."""
        import secrets
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The stream's state as a uint8 tensor (set_state takes it back)."""
        return tensor(np.frombuffer(np.asarray(self._next_state()).tobytes(), np.uint8).copy())

    def set_state(self, new_state):
        self._key = _key_of_state(new_state)
        return self

    def _next_state(self):
        if self._key is None:
            with jax.ensure_compile_time_eval():
                self._key = jax.random.PRNGKey(self._seed)
        return self._key

    def _split(self):
        if COMPILING.rec is not None:  # (a compiled call: the key is state, traced)
            self._key, sub = jax.random.split(self._next_state())
            return sub
        with jax.ensure_compile_time_eval():  # (under a jax trace too: no tracer kept)
            self._key, sub = jax.random.split(self._next_state())
        return sub


class _Rng(threading.local):
    key = None
    seed = None  # a DataLoader worker thread's own seed (its stream is its own)


_rng = _Rng()
_global_seed = [0]


def manual_seed(seed):
    """Seed the global generator (jax keys; the streams differ from torch's)."""
    if _rng.seed is not None:  # in a DataLoader worker: its own generator, as a process's
        return seed_thread(seed)
    _global_seed[0] = int(seed)
    with jax.ensure_compile_time_eval():
        _rng.key = jax.random.PRNGKey(int(seed))
    return _global_seed[0]


def seed():
    """torch.seed: seed the global generator from the operating system's randomness;
    returns the seed."""
    import secrets
    return manual_seed(secrets.randbits(63))


def seed_thread(seed):
    """Give the calling thread a generator of its own seeded with `seed` (DataLoader workers
    are threads standing in for torch's worker processes)."""
    _rng.seed = int(seed)
    with jax.ensure_compile_time_eval():
        _rng.key = jax.random.PRNGKey(int(seed) & 0xFFFFFFFFFFFFFFFF)
    return _rng.seed


def initial_seed():
    return _global_seed[0] if _rng.seed is None else _rng.seed


def get_rng_state():
    """The global generator's state as a uint8 tensor."""
    if _rng.key is None:
        _rng.key = jax.random.PRNGKey(_global_seed[0])
    return tensor(np.frombuffer(np.asarray(_rng.key).tobytes(), np.uint8).copy())


def set_rng_state(new_state):
    _rng.key = _key_of_state(new_state)


class _DefaultGenerator(Generator):
    """torch.default_generator: the global stream (manual_seed, get_rng_state, ...) as a
    Generator, for the `generator=` arguments and its own methods.

    >>> import eagergrad as torch
    >>> a = torch.rand(2, generator=torch.default_generator.manual_seed(4))
    >>> bool((a == torch.rand(2, generator=torch.Generator().manual_seed(4))).all())
    True
    """

    def __init__(self):
        self.device = _device("cpu")

    def manual_seed(self, seed):
        manual_seed(seed)
        return self

    def seed(self):
        return seed()

    def initial_seed(self):
        return initial_seed()

    def get_state(self):
        return get_rng_state()

    def set_state(self, new_state):
        set_rng_state(new_state)
        return self

    def _split(self):
        return _draw_key(None)


default_generator = _DefaultGenerator()


def _key_of_state(state):
    """A jax key from a state tensor of get_state / get_rng_state, with torch's errors."""
    if not isinstance(state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {type(state).__name__}")
    if state.dtype is not D.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    raw = np.asarray(state.numpy(), np.uint8).tobytes()
    if len(raw) != 8:
        raise RuntimeError("RNG state is wrong size")
    return jnp.asarray(np.frombuffer(raw, np.uint32).copy())


def _next_key(generator=None):
    key = _draw_key(generator)
    for level in FUNC.levels:  # torch.func.vmap's randomness modes
        key = level.key(key)
    return key


def _draw_key(generator):
    if generator is not None:
        return generator._split()
    # a draw under a jax trace (jaxify, crosscheck) still advances the stream with
    # concrete keys: a traced key kept in the global state would leak the tracer. A
    # compiled call's trace is the exception: there the key is state, an input and an
    # output of the program (_dynamo/_step.py)
    if COMPILING.rec is not None and _rng.key is not None:
        _rng.key, sub = jax.random.split(_rng.key)
        return sub
    with jax.ensure_compile_time_eval():
        if _rng.key is None:
            _rng.key = jax.random.PRNGKey(_global_seed[0])
        _rng.key, sub = jax.random.split(_rng.key)
    return sub


# NOTE [sampling buckets]: compiling a jax sampler (threefry and the transform after it)
# takes ~300 ms whatever its size, and an executable serves one shape: a program that
# draws 20 shapes (the layers of a model at init) would spend seconds compiling samplers.
# jax's threefry in its partitionable mode (jax_threefry_partitionable, the default)
# makes element i of a draw from counter i of the flattened shape, so a sampler's draw is
# *prefix-consistent*: fn(key, (M,))[:N] == fn(key, (N,)) bitwise for M >= N, and
# fn(key, shape) is fn(key, (prod(shape),)).reshape(shape). So a sampler is compiled
# once per size bucket (_bucket: at least 4096 numbers, else the count rounded up to 8
# steps per power of two, at most 12.5% more), and the first N numbers of its flat draw
# are the draw of any N-element shape, bitwise what the shape's own sampler gives (the
# keys and the streams are unchanged: tests/test_random_buckets.py checks them against
# plain jax.random calls). Verified for the samplers in _BUCKETED, for every dtype and
# their dynamic arguments (bounds, p); not for permutation (a sort: randperm keeps its
# own executables per n).
#
# The first N numbers reach their shape without a compile the first time a (bucket,
# shape) is drawn: through the host (the bucket's numbers, their prefix copied and put
# back on the device: one sync, no kernel); from the second draw of that shape on (a
# shape drawn every step, as randn_like in a training loop) by a small slice-and-reshape
# kernel (~20 ms to compile, async), an executable in _PREFIXES. Under a jax trace, or
# off the CPU, always the kernel. The bucket samplers are _SAMPLERS entries: both count
# against the executable bound (NOTE [executable cache]).
_SAMPLERS = EXECUTABLES.owner({})
_PREFIXES = EXECUTABLES.owner({})
_seen = {}          # (bucket, dtype, shape, post) drawn once, through the host
_SEEN_MAX = 1024
_MIN_BUCKET = 4096
_BUCKETED = frozenset([jax.random.uniform, jax.random.normal, jax.random.randint,
                       jax.random.bernoulli, jax.random.truncated_normal,
                       jax.random.exponential])


def _bucket(n):
    """The length a bucketed sampler draws for `n` numbers.

    >>> _bucket(3), _bucket(4096), _bucket(4097), _bucket(70000)
    (4096, 4096, 4608, 73728)
    """
    if n <= _MIN_BUCKET:
        return _MIN_BUCKET
    step = 1 << (n.bit_length() - 4)  # an eighth of the power of two below n
    return -(-n // step) * step


def _prefix_consistent(key):
    """Whether jax's samplers draw prefix-consistently with `key` (NOTE [sampling
    buckets]): threefry keys (raw uint32) in its partitionable mode."""
    return (jax.config.jax_threefry_partitionable
            and jax.config.jax_default_prng_impl == "threefry2x32"
            and getattr(key, "dtype", None) == np.uint32)


def sample(fn, key, static, post=None, **dynamic):
    """`fn(key, **static, **dynamic)` for a jax.random sampler, as an executable of
    eagergrad's own per static arguments (shape, dtype, ...): jax's own jitted samplers
    keep one per shape they ever saw (NOTE [executable cache]). `dynamic` arguments are
    traced, one executable for all their values. A sampler of _BUCKETED compiles once per
    size bucket, not per shape (NOTE [sampling buckets]). `post`: a finishing step on the
    drawn array, ("complex", dtype) (the last axis of 2 as real and imaginary parts) or
    ("astype", dtype).

    >>> sample(jax.random.normal, jax.random.PRNGKey(0), {"shape": (2,)}).shape
    (2,)
    """
    shape = static.get("shape")
    if (fn in _BUCKETED and shape is not None and _prefix_consistent(key)
            and min(shape, default=0) >= 0  # (else jax's error, as before)
            and all(np.ndim(v) == 0 for v in dynamic.values())):  # (scalar bounds, p)
        shape = tuple(shape)
        n = int(math.prod(shape))
        b = _bucket(n)
        k = (fn, b, *[(name, keyed(v)) for name, v in static.items() if name != "shape"])
        f = EXECUTABLES.get(_SAMPLERS, k, lambda: jax.jit(functools.partial(
            fn, **{**static, "shape": (b,)})))
        return _prefix(f(key, **dynamic), n, shape, post)
    k = (fn, *[(name, keyed(v)) for name, v in static.items()])
    f = EXECUTABLES.get(_SAMPLERS, k, lambda: jax.jit(functools.partial(fn, **static)))
    out = f(key, **dynamic)
    return out if post is None else _finish_draw(jnp, out, post)


def _finish_draw(xp, x, post):
    """The `post` step of `sample`, with numpy or jax.numpy (bitwise the same)."""
    if post[0] == "complex":
        if xp is jnp:
            return jax.lax.complex(x[..., 0], x[..., 1])
        out = np.empty(x.shape[:-1], post[1])
        out.real, out.imag = x[..., 0], x[..., 1]
        return out
    return x.astype(post[1])


def _prefix(flat, n, shape, post):
    """The first `n` numbers of a bucket's draw `flat` as an array of `shape`, finished by
    `post`: through the host the first time (no compile), else by a kernel per shape."""
    k = (flat.shape[0], flat.dtype, shape, post)
    if (k not in _PREFIXES and k not in _seen and not isinstance(flat, jax.core.Tracer)
            and flat.device.platform == "cpu" and _on_host(post)):
        put_bounded(_seen, k, True, _SEEN_MAX)
        host = np.asarray(flat)[:n].reshape(shape)
        # (a copy: the result must not keep the whole bucket's buffer alive)
        host = np.array(host) if post is None else _finish_draw(np, host, post)
        return jax.device_put(host)
    return EXECUTABLES.get(_PREFIXES, k, lambda: jax.jit(functools.partial(
        _take, n=n, shape=shape, post=post)))(flat)


def _on_host(post):
    """Whether numpy finishes `post` bitwise as jax does: casts of int64 to the real
    dtypes were checked (to complex: not)."""
    return post is None or post[0] == "complex" or np.dtype(post[1]).kind != "c"


def _take(flat, n, shape, post):
    x = jax.lax.slice(flat, (0,), (n,)).reshape(shape)
    return x if post is None else _finish_draw(jnp, x, post)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _dt(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{dt.scalar_name}'")
    return _finish(_uniform(_next_key(generator), _size(size), dt, 0.0, 1.0), dt, device,
                   requires_grad)


def _uniform(key, shape, dt, low, high):
    """Uniform in [low, high); for a complex dtype the real and imaginary parts each are
    (torch's rand and uniform_ on complex tensors)."""
    if not dt.is_complex:
        return sample(jax.random.uniform, key, {"shape": shape, "dtype": dt.np},
                      minval=low, maxval=high)
    return sample(jax.random.uniform, key, {"shape": shape + (2,), "dtype": dt.to_real().np},
                  ("complex", dt.np), minval=low, maxval=high)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _dt(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{dt.scalar_name}'")
    return _finish(sample(jax.random.normal, _next_key(generator),
                          {"shape": _size(size), "dtype": dt.np}), dt, device, requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=size)
        low, high = 0, low
    dt = _dt(dtype, D.int64)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    post = None if dt.np == np.int64 else ("astype", dt.np)
    return _finish(sample(jax.random.randint, _next_key(generator),
                          {"shape": tuple(size), "dtype": jnp.int64}, post, minval=low,
                          maxval=high), dt, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dt = _dt(dtype, D.int64)
    _size((n,))  # (torch's negative dimension error)
    return _finish(jax.random.permutation(_next_key(generator), n).astype(dt.np), dt, device,
                   requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input._shape, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input._shape, dtype=dtype or input.dtype, device=device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:  # randint_like(input, high)
        low, high = 0, low
    return randint(low, high, input._shape, dtype=dtype or input.dtype, device=device,
                   requires_grad=requires_grad)


def _legacy_new(cls, *args, **kwargs):
    """The legacy constructor torch.Tensor(data) / torch.Tensor(*sizes): default dtype."""
    return _legacy(D.get_default_dtype(), args, kwargs, any_tensor=True)


def _legacy(dt, args, kwargs, any_tensor=False):
    """torch's legacy constructors (torch.Tensor, torch.FloatTensor, ...): () an empty
    tensor; sizes an uninitialized (here zero-filled) one; a tensor of the dtype an alias of
    it; else data, as torch.tensor(data, dtype=dt)."""
    device = kwargs.pop("device", None)
    if kwargs:
        names = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__module__}."
                                                             f"{type(v).__name__}"
                                                             for k, v in kwargs.items()])
        raise TypeError(f"new() received an invalid combination of arguments - got ({names})")
    if device is not None and _device(device).type != "cpu":
        raise RuntimeError("legacy constructor expects device type: cpu but device type: "
                           f"{_device(device).type} was passed")
    if not args:
        return empty(0, dtype=dt, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if a.dtype is not dt and not any_tensor:  # (torch.Tensor(t) keeps t's dtype)
                raise TypeError(f"expected {_options(dt)} (got {_options(a.dtype)})")
            return a.view(a._shape) if a.requires_grad else a.detach()
        if type(a).__name__ == "Size" or (isinstance(a, int) and not isinstance(a, bool)):
            return empty(*((a,) if isinstance(a, int) else a), dtype=dt, device=device)
        if isinstance(a, str):
            raise TypeError("new(): invalid data type 'str'")
        if not isinstance(a, (list, tuple, np.ndarray)) and not hasattr(a, "__array__"):
            raise TypeError(f"new(): data must be a sequence (got {_qual(a)})")
        return tensor(a, dtype=dt, device=device)
    for i, a in enumerate(args):
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(a).__name__}\"")
    return empty(*args, dtype=dt, device=device)


def _qual(x):
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _options(dt):
    return (f"TensorOptions(dtype={dt.cpp_name}, device=cpu, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


class tensortype(type):
    """The metaclass of the legacy tensor types: `FloatTensor(...)` constructs a float32
    tensor, and `isinstance(t, FloatTensor)` asks for t's dtype and device, as in torch.

    >>> import eagergrad as torch
    >>> t = torch.LongTensor([1, 2])
    >>> t.dtype, isinstance(t, torch.LongTensor), isinstance(t, torch.FloatTensor)
    (torch.int64, True, False)
    """

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and (obj.device.type == "cuda") == cls.is_cuda)

    def __call__(cls, *args, **kwargs):
        if cls.is_cuda:
            from . import cuda
            if not cuda.is_available():
                raise TypeError(f"type torch.cuda.{cls.__name__} not available. "
                                "Torch not compiled with CUDA enabled.")
            return _legacy(cls.dtype, args, {}).to(kwargs.pop("device", "cuda"))
        return _legacy(cls.dtype, args, kwargs)


def _legacy_types(is_cuda):
    return {f"{d.scalar_name}Tensor": tensortype(
        f"{d.scalar_name}Tensor", (), {"dtype": d, "is_cuda": is_cuda, "is_sparse": False,
                                       "__module__": "eagergrad.cuda" if is_cuda else "eagergrad"})
        for d in D.ALL if not d.is_complex}


LEGACY_TYPES = _legacy_types(False)
CUDA_LEGACY_TYPES = _legacy_types(True)


def _reduce_ex(self, proto):
    return (tensor, (np.asarray(self._value),), None)


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
        space = CUDA_LEGACY_TYPES if parts[1:2] == ["cuda"] else LEGACY_TYPES
        if parts[-1] not in space:
            raise AttributeError(f"module '{'.'.join(parts[:-1])}' has no attribute "
                                 f"'{parts[-1]}'")
        t = space[parts[-1]]
    if t not in LEGACY_TYPES.values() and t not in CUDA_LEGACY_TYPES.values():
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    from . import cuda
    if t.is_cuda and not cuda.is_available():
        raise TypeError(f"type torch.cuda.{t.__name__} not available. Torch not compiled with "
                        "CUDA enabled.")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(t.dtype)


# (torch's reports "torch"; its doctest runs as eagergrad's, in the package's namespace)
set_default_tensor_type.__module__ = "eagergrad"
