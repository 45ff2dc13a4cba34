"""The op table and the torch functions/methods built on it.

Every differentiable op is one `defop` entry (see _table.py); the functions here are
the torch-named entry points, and `bind_methods` puts them on Tensor as methods and
Python operators.
"""
from . import pointwise as P, reduce as R, linalg as L, shape as S, index as I
from . import sorting as O, loss as X, norm as N, conv as V
from . import activation as A, batchnorm as B, rnn as RN, attention as AT
from . import spatial as SP
from .fill import ZERO, FILL, FILL_T, COPY, _zero, _fill, _copy  # noqa: F401
from ..engine.graph import GRAD_OPS
from ._table import OPS as OPS, defop as defop, call_op as call_op
from ._args import as_t, wrapped as wrapped
from . import inplace as _IP
from .inplace import inplace
from .. import _dtypes as D
from .._torch_names import TENSOR_ATTRIBUTES

S._register_view_writers()

# what the engine needs on gradients (engine/graph.py: GRAD_OPS; it never imports ops)
GRAD_OPS.add = P.add
GRAD_OPS.add_ = lambda t, other: inplace(t, P.add, other)
GRAD_OPS.copy_ = lambda t, src: inplace(t, _copy, src)
GRAD_OPS.sum_to_size = S._sum_to_size
GRAD_OPS.real = S.real
GRAD_OPS.to = S.to
GRAD_OPS.clone = S.clone

FUNCTIONS = {}
for _mod in (P, R, L, S, I, O, X, N, V, A, B, RN, AT, SP):
    for _k, _v in vars(_mod).items():
        if callable(_v) and not _k.startswith("_") and not _k.isupper() and \
                getattr(_v, "__module__", "").startswith("eagergrad.ops"):
            FUNCTIONS[_k] = _v
FUNCTIONS.update(norm=R.norm, round=P._round, complex=P._complex)
for _k in ("defop", "call_op", "as_t", "wrapped", "inplace", "promote", "float_of", "where"):
    FUNCTIONS.pop(_k, None)
FUNCTIONS["where"] = P.where


def _rdiv(self, other):
    return P.reciprocal(self) * other


def _rfloordiv(self, other):
    return P.floor_divide(as_t(other), self)


def _rmod(self, other):
    return P.remainder(as_t(other), self)


def _rpow(self, other):
    return P.pow(other, self)


def _rmatmul(self, other):
    return L.matmul(as_t(other), self)


def _method_where(self, condition, other):
    return P.where(condition, self, other)


def _new(fill):
    def f(self, *size, dtype=None, device=None, requires_grad=False):
        from ..creation import full
        size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        return full(tuple(size), fill, dtype=dtype or self.dtype, device=device,
                    requires_grad=requires_grad)
    return f


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from ..creation import full
    return full(size, fill_value, dtype=dtype or self.dtype, device=device,
                requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from ..creation import tensor
    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def _cast(dt):
    def f(self, memory_format=None):
        return S.to(self, dt)
    return f


def _real(self):
    return S.real(self)


def _imag(self):
    return S.imag(self)


INPLACE = ("add", "sub", "mul", "div", "pow", "neg", "exp", "exp2", "expm1", "log", "log2",
           "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "abs", "sign", "sgn", "floor",
           "ceil", "round", "trunc", "frac", "reciprocal", "clamp", "clamp_min", "clamp_max",
           "atan2", "maximum", "minimum", "remainder", "floor_divide", "clip", "scatter",
           "scatter_add", "logical_not", "bitwise_not", "masked_fill", "index_add", "index_copy",
           "index_fill", "index_put", "nan_to_num", "tril", "triu")


# in-place ops whose kernel may reuse the tensor's buffer (ops/inplace.py _donatable)
_IP.DONATE_FNS = frozenset(FUNCTIONS[n] for n in (
    "add", "sub", "mul", "div", "neg", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "sigmoid", "relu", "erf", "abs", "reciprocal"))


def _inplace_method(fn):
    def m(self, *args, **kwargs):
        return inplace(self, fn, *args, **kwargs)
    m.__name__ = fn.__name__ + "_"
    return m


def bind_methods(Tensor):
    """Put the op functions on Tensor as methods and Python operators."""
    skip = {"cat", "concat", "concatenate", "stack", "nonzero_static"}
    for name, fn in FUNCTIONS.items():
        if name not in skip and name in TENSOR_ATTRIBUTES and not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    for name in INPLACE:
        if name + "_" in TENSOR_ATTRIBUTES:
            setattr(Tensor, name + "_", _inplace_method(FUNCTIONS[name]))
    Tensor.zero_ = _inplace_method(_zero)
    Tensor.fill_ = _inplace_method(_fill)
    Tensor.copy_ = lambda self, src, non_blocking=False: inplace(self, _copy, src)
    Tensor.sum_to_size = S._sum_to_size
    Tensor.where = _method_where
    Tensor.T = property(S._T)
    Tensor.mT = property(S._mT)
    Tensor.mH = property(S.adjoint)
    Tensor.real = property(_real)
    Tensor.imag = property(_imag)
    Tensor.new_zeros = _new(0)
    Tensor.new_ones = _new(1)
    Tensor.new_empty = _new(0)
    Tensor.new_full = _new_full
    Tensor.new_tensor = _new_tensor
    for name, dt in (("float", D.float32), ("double", D.float64), ("half", D.float16),
                     ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32),
                     ("short", D.int16), ("bool", D.bool_), ("byte", D.uint8),
                     ("cfloat", D.complex64), ("cdouble", D.complex128)):
        setattr(Tensor, name, _cast(dt))
    ops = dict(
        __add__=P.add, __radd__=P.add, __iadd__=Tensor.add_,
        __sub__=P.sub, __rsub__=P.rsub, __isub__=Tensor.sub_,
        __mul__=P.mul, __rmul__=P.mul, __imul__=Tensor.mul_,
        __truediv__=P.div, __rtruediv__=_rdiv, __itruediv__=Tensor.div_,
        __floordiv__=P.floor_divide, __rfloordiv__=_rfloordiv, __ifloordiv__=Tensor.floor_divide_,
        __mod__=P.remainder, __rmod__=_rmod, __imod__=Tensor.remainder_,
        __pow__=P.pow, __rpow__=_rpow, __ipow__=Tensor.pow_,
        __matmul__=L.matmul, __rmatmul__=_rmatmul,
        __neg__=P.neg, __abs__=P.abs, __invert__=P.bitwise_not, __pos__=lambda s: s,
        __and__=P.bitwise_and, __rand__=P.bitwise_and, __or__=P.bitwise_or,
        __ror__=P.bitwise_or, __xor__=P.bitwise_xor, __rxor__=P.bitwise_xor,
        __eq__=P.eq, __ne__=P.ne, __lt__=P.lt, __le__=P.le, __gt__=P.gt, __ge__=P.ge,
        __getitem__=I.getitem, __setitem__=I.setitem,
    )
    for k, v in ops.items():
        setattr(Tensor, k, v)
