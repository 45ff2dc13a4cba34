"""Torch's dtypes on top of numpy/jax dtypes, and torch's type-promotion rules."""
import math

import jax.numpy as jnp
import numpy as np

from ._settings import warn_once


class dtype:
    """A tensor element type, printed and compared as torch's.

    >>> import eagergrad as torch
    >>> torch.tensor([1.0]).dtype
    torch.float32
    """

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_kind",
                 "is_differentiable", "scalar_name", "cpp_name")

    def __init__(self, name, np_dtype, kind, scalar_name, cpp_name):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._kind = kind  # 0 bool, 1 integral, 2 floating, 3 complex
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self.is_differentiable = kind >= 2  # floating or complex: may require grad
        self.is_signed = name not in ("uint8", "bool")
        self.itemsize = self.np.itemsize
        self.scalar_name = scalar_name  # torch's ScalarType name: "Float" (FloatTensor)
        self.cpp_name = cpp_name        # the C++ type some kernel messages name: "float"

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return _TO_REAL.get(self, self)

    def to_complex(self):
        return _TO_COMPLEX.get(self, self)


def _by_name(name):
    return _NAMES[name]


bool_ = dtype("bool", np.bool_, 0, "Bool", "bool")
uint8 = dtype("uint8", np.uint8, 1, "Byte", "unsigned char")
int8 = dtype("int8", np.int8, 1, "Char", "signed char")
int16 = dtype("int16", np.int16, 1, "Short", "short int")
int32 = dtype("int32", np.int32, 1, "Int", "int")
int64 = dtype("int64", np.int64, 1, "Long", "long int")
float16 = dtype("float16", jnp.float16, 2, "Half", "c10::Half")
bfloat16 = dtype("bfloat16", jnp.bfloat16, 2, "BFloat16", "c10::BFloat16")
float32 = dtype("float32", np.float32, 2, "Float", "float")
float64 = dtype("float64", np.float64, 2, "Double", "double")
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloat", "c10::complex<float>")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDouble", "c10::complex<double>")

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
       complex64, complex128)
_NAMES = {d.name: d for d in ALL}
FROM_NP = {d.np: d for d in ALL}
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float16: complex64, bfloat16: complex64, float32: complex64,
               float64: complex128}
ALIASES = dict(float=float32, double=float64, half=float16, cfloat=complex64,
               cdouble=complex128, long=int64, int=int32, short=int16, bool=bool_)

_default = [float32]


def get_default_dtype():
    """The dtype of tensors made from Python floats (float32 unless changed).

    >>> import eagergrad as torch
    >>> torch.get_default_dtype()
    torch.float32
    """
    return _default[0]


def set_default_dtype(d):
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_complex():
    return complex128 if _default[0] is float64 else complex64


def as_dtype(d):
    """Our dtype for a dtype-like (our dtype, numpy dtype, jax dtype, string name)."""
    if isinstance(d, dtype):
        return d
    if d is None:
        return None
    if d is float:
        return _default[0]
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return default_complex()
    if isinstance(d, str) and d in ALIASES:
        return ALIASES[d]
    return FROM_NP[np.dtype(d)]


_promote_cache = {}


def promote_types(a, b):
    """torch.promote_types: the smallest dtype both a and b convert to."""
    key = (a, b)
    r = _promote_cache.get(key)
    if r is None:
        r = _promote_cache[key] = FROM_NP[np.dtype(jnp.promote_types(a.np, b.np))]
    return r


def _combine(higher, lower):
    # c10's combine_categories: a higher-priority group wins unless the lower is of a
    # higher category (bool < integral < floating < complex).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind == 3:
        return higher
    if lower._kind == 3:
        return higher.to_complex() if higher._kind == 2 else lower
    if higher._kind == 2:
        return higher
    if higher is bool_ or lower._kind == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(v):
    """The dtype torch gives a Python scalar as a wrapped number."""
    if isinstance(v, bool):
        return bool_
    if isinstance(v, int):
        return int64
    if isinstance(v, float):
        return float64
    if isinstance(v, complex):
        return complex128
    raise TypeError(f"unsupported scalar type {type(v).__name__}")


def result_type(dims, zeros, wrapped):
    """torch.result_type over three groups of dtypes: tensors with dim > 0, 0-dim
    tensors, and wrapped Python numbers (which only contribute their category)."""
    r = [None, None, None]
    for i, group in enumerate((dims, zeros)):
        for d in group:
            r[i] = d if r[i] is None else promote_types(r[i], d)
    for d in wrapped:
        if d._kind == 3:
            d = default_complex()
        elif d._kind == 2:
            d = _default[0]
        r[2] = d if r[2] is None else promote_types(r[2], d)
    return _combine(r[0], _combine(r[1], r[2]))


_warned_imag = set()


def warn_if_discarding_imag(src, dst):
    """torch's UserWarning (once per process, as TORCH_WARN_ONCE) for a cast or copy of
    complex values to a real dtype."""
    if src.is_complex and not dst.is_complex and warn_once(_warned_imag, "imag"):
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=3)


def astype(a, np_dtype):
    """A jax array cast to np_dtype; complex to real keeps the real part (as torch)."""
    if jnp.iscomplexobj(a) and not jnp.issubdtype(np_dtype, jnp.complexfloating):
        a = jnp.real(a)
    return a.astype(np_dtype)


# ---- torch.finfo, torch.iinfo, torch.can_cast ----------------------------------------------
_PY_TYPES = {float: float64, int: int64, bool: bool_, complex: complex128}


def dtype_arg(v, fn, arg, pos):
    """A dtype argument as torch's argument parser reads it: a dtype, or a Python type
    (float is float64, int int64, as in `torch.finfo(float)`)."""
    if isinstance(v, dtype):
        return v
    if isinstance(v, type) and v in _PY_TYPES:
        return _PY_TYPES[v]
    raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be torch.dtype, not "
                    f"{type(v).__name__}")


_NO_TYPE = object()  # (finfo's argument left out; None is refused, as torch)


class finfo:
    """torch.finfo: the machine limits of a floating-point dtype (of the real part of a
    complex one; the default dtype when none is given).

    >>> import eagergrad as torch
    >>> torch.finfo(torch.float16).eps, torch.finfo().dtype
    (0.0009765625, 'float32')
    """

    def __init__(self, type=_NO_TYPE):
        d = get_default_dtype() if type is _NO_TYPE else dtype_arg(type, "finfo", "type", 1)
        if d._kind < 2:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        d = d.to_real()
        info = jnp.finfo(d.np)  # (ml_dtypes' finfo for bfloat16)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        # 10 ** -digits10 of the C++ numeric_limits, as torch
        self.resolution = 10.0 ** -math.floor(int(info.nmant) * math.log10(2))
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None  # (unhashable, as torch's)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the limits of an integer dtype.

    >>> import eagergrad as torch
    >>> torch.iinfo(torch.uint8).max, torch.iinfo(torch.int16).min
    (255, -32768)
    """

    def __init__(self, type):
        d = dtype_arg(type, "iinfo", "type", 1)
        if d is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d._kind != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.min, self.max, self.dtype = int(info.bits), int(info.min), \
            int(info.max), d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


def can_cast(from_, to):
    """torch.can_cast: whether torch's casting rules allow `from_` to `to` (no complex to
    real, no floating to integral, nothing but bool to bool).

    >>> import eagergrad as torch
    >>> torch.can_cast(torch.int32, torch.float32), torch.can_cast(torch.float32, torch.int32)
    (True, False)
    """
    a = dtype_arg(from_, "can_cast", "from_", 1)
    b = dtype_arg(to, "can_cast", "to", 2)
    if a.is_complex and not b.is_complex:
        return False
    if a.is_floating_point and b._kind == 1:
        return False
    return not (a is not bool_ and b is bool_)


for _c in (finfo, iinfo, can_cast):
    _c.__module__ = "eagergrad"  # (torch's say "torch")
del _c
