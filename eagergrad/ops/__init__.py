"""The op table and the torch functions/methods built on it.

Every differentiable op is one `defop` entry (see _table.py); the functions here are
the torch-named entry points (FUNCTIONS), and the method-only ones (reflected operators,
casts, new_*, in-place methods) that _tensor_methods.py puts on Tensor.
"""
from . import pointwise as P, unary as U, compare as C
from . import reduce as R, linalg as L, einsum as E, decomp as DC, shape as S
from . import scatter as IS, masks as IM, index as I
from . import sorting as O, loss as X, distance as XD, margin as XM, ctc as XC
from . import norm as N, conv as V
from . import activation as A, batchnorm as B, rnn as RN, attention as AT
from . import spatial as SP
from . import pooling as PO
from . import scan as SC, search as SE
from . import sampling as RS
from . import tensor_ops as TO, products as PR
from . import special as SF
from . import linalg_decomp as LD, linalg_solvers as LS, linalg_compose as LC
from . import copies as CP
from . import resize as RZ
from . import segment as SG
from . import inplace_views as IV, callbacks as CB
from .fill import ZERO, FILL, FILL_T, COPY, _zero, _fill, _copy  # noqa: F401
from ..engine.graph import GRAD_OPS
from ._table import OPS as OPS, defop as defop, call_op as call_op
from ._args import as_t, wrapped as wrapped
from . import inplace as _IP
from .inplace import inplace

S._register_view_writers()

# the dim-taking ops that take a 0-d tensor's dim 0 / -1 as torch does (OpDef.scalar_as_vector)
# (the reductions over a tuple of dims reduce over none: reduce.py's _dims)
for _name in ("prod_dim", "max_dim", "min_dim", "softmax", "log_softmax", "_safe_softmax",
              "cumsum", "cumsum_backward",  # (gather/scatter's kernels see 0-d as torch's)
              "index_select", "index_add", "index_copy", "index_fill", "sort", "sort_stable",
              "argsort", "topk", "kthvalue", "median_dim"):
    OPS[_name].scalar_as_vector()

# what the engine needs on gradients (engine/graph.py: GRAD_OPS; it never imports ops)
GRAD_OPS.add = P.add
GRAD_OPS.add_ = lambda t, other: inplace(t, P.add, other)
GRAD_OPS.copy_ = lambda t, src: inplace(t, _copy, src)
GRAD_OPS.sum_to_size = S._sum_to_size
GRAD_OPS.real = S.real
GRAD_OPS.to = S.to
GRAD_OPS.clone = S.clone

FUNCTIONS = {}
for _mod in (P, U, C, R, L, E, DC, S, IS, IM, I, O, X, XD, XM, XC, N, V, A, B, RN, AT, SP, SC, SE,
             RS, TO, PR, SF, LD, LS, LC, PO, CP, RZ, IV, CB, SG):
    for _k, _v in vars(_mod).items():
        if callable(_v) and not _k.startswith("_") and not _k.isupper() and \
                getattr(_v, "__module__", "").startswith("eagergrad.ops"):
            FUNCTIONS[_k] = _v
FUNCTIONS.update(norm=LC.norm, round=U._round, complex=U._complex)
for _k in ("defop", "call_op", "as_t", "wrapped", "inplace", "promote", "float_of", "where"):
    FUNCTIONS.pop(_k, None)
FUNCTIONS["where"] = P.where


def _rdiv(self, other):
    return U.reciprocal(self) * other


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
        from ..creation import _uninitialized, full
        size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
        dt = dtype or self.dtype
        return full(tuple(size), _uninitialized(dt) if fill is None else fill, dtype=dt,
                    device=device, requires_grad=requires_grad)
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


# the ops with an in-place method `<name>_` (_tensor_methods.py binds them)
INPLACE = ("add", "sub", "mul", "div", "pow", "neg", "exp", "exp2", "expm1", "log", "log2",
           "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan",
           "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "abs", "sign", "sgn", "floor",
           "ceil", "round", "trunc", "frac", "reciprocal", "clamp", "clamp_min", "clamp_max",
           "atan2", "maximum", "minimum", "remainder", "floor_divide", "clip", "scatter",
           "scatter_add", "logical_not", "bitwise_not", "masked_fill", "index_add", "index_copy",
           "index_fill", "index_put", "nan_to_num", "tril", "triu")
# (ops/scan.py, search.py, scatter.py, reduce.py, masks.py)
INPLACE += ("cumprod", "cumsum", "scatter_reduce", "index_reduce", "put", "renorm",
            "masked_scatter")
# (ops/special.py's; acosh_, polygamma_, heaviside_, float_power_ are functions there)
INPLACE += ("square", "erfc", "erfinv", "lgamma", "digamma", "mvlgamma", "i0", "sinc", "logit",
            "xlogy", "hypot", "fmod", "copysign", "nextafter", "ldexp", "lerp", "addcmul",
            "addcdiv", "true_divide", "gcd", "lcm", "deg2rad", "rad2deg", "negative", "fix",
            "arccos", "arcsin", "arctan", "arctan2", "absolute", "igamma", "igammac",
            "multiply", "subtract", "divide", "bitwise_left_shift", "bitwise_right_shift",
            "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
            "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
            "not_equal")


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



# torch.ops.<namespace>: the operators torch.library defines (eagergrad.library sets the hook)
OP_NAMESPACE = [None]


def __getattr__(name):
    if name.startswith("__") or OP_NAMESPACE[0] is None:
        raise AttributeError(f"module 'eagergrad.ops' has no attribute '{name}'")
    return OP_NAMESPACE[0](name)
