"""Reductions: sum/mean/prod/amax/amin/max/min/aminmax/var/std/std_mean/var_mean/norm/
renorm/logsumexp/softmax/count_nonzero, and torch's composites cov and corrcoef.
Formulas follow torch's FunctionsManual (ties split evenly for amax/max(), the
value-selecting rule for max(dim), norm's gradient 0 at 0)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import from_jax
from .._shapes import wrap_dim as _wrap_dim
from ..tensor import Tensor
from ._table import defop, call_op
from ._autocast import autocast_op
from ._args import no_out
from .scatter import zeros_scatter
from .pointwise import maximum, minimum, where


def _dims(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
    return out if ndim else ()  # (a 0-d tensor's dim 0 / -1: a reduction over nothing)


def _restore(g, dim, keepdim):
    """Unsqueeze reduced dims (sorted) back so g broadcasts against the input."""
    if not keepdim:
        for d in dim:
            g = g.unsqueeze(d)
    return g


def _sum_dtype(dt, dtype):
    if dtype is not None:
        return D.as_dtype(dtype)
    return D.int64 if not dt.is_differentiable else dt


CUMSUM = defop("cumsum", lambda self, dim, dtype: jnp.cumsum(self.astype(dtype.np), axis=dim)
               if self.ndim else self.astype(dtype.np),
               attrs=("dim", "dtype"),
               self=lambda grad, dim: call_op(CUMSUM_BACKWARD, (grad,), (dim,)))
# torch's cumsum_backward: the cumulative sum from the end (its own backward is cumsum)
CUMSUM_BACKWARD = defop("cumsum_backward", lambda grad, dim: jnp.flip(
                        jnp.cumsum(jnp.flip(grad, dim), axis=dim), dim) if grad.ndim else grad,
                        inputs=("grad",), attrs=("dim",),
                        grad=lambda grad, dim: call_op(CUMSUM, (grad,), (dim, grad.dtype)))


def cumsum(input, dim, *, dtype=None):
    """torch.cumsum along `dim` (integers sum in int64, as torch's sum).

    >>> import eagergrad as torch
    >>> torch.tensor([1.0, 2.0, 3.0]).cumsum(0)
    tensor([1., 3., 6.])
    """
    d = _wrap_dim(dim, input.ndim or 1)  # (a 0-dim tensor takes dim 0 or -1)
    return call_op(CUMSUM, (input,), (d, _sum_dtype(input.dtype, dtype)))


SUM0 = defop("sum", lambda self, dtype, self_sym_sizes: jnp.sum(self, dtype=dtype.np),
             attrs=("dtype", "self_sym_sizes"), node="SumBackward0",
             self=lambda grad, self_sym_sizes: grad.expand(self_sym_sizes))
SUM1 = defop("sum_dim", lambda self, dim, keepdim, dtype, self_sym_sizes:
             jnp.sum(self, axis=dim, keepdims=keepdim, dtype=dtype.np),
             attrs=("dim", "keepdim", "dtype", "self_sym_sizes"), node="SumBackward1",
             self=lambda grad, dim, keepdim, self_sym_sizes:
             _restore(grad, dim, keepdim).expand(self_sym_sizes))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sum, over all elements or over `dim` (int or tuple)."""
    dt = _sum_dtype(input.dtype, dtype)
    if dim is None:
        return call_op(SUM0, (input,), (dt, input._shape))
    return call_op(SUM1, (input,), (_dims(dim, input.ndim), keepdim, dt, input._shape))


def _numel(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _div_exact(s, n):
    """s / n, a true division: XLA turns a division by a broadcast scalar into a
    multiplication by its reciprocal, which rounds twice (five 0.3s sum to 1.5; 1.5 * 0.2
    is 0.30000000000000004, torch's 1.5 / 5 is 0.3). An optimization barrier on the
    divisor as a full array hides it (one on the scalar does not)."""
    return s / jax.lax.optimization_barrier(jnp.full(s.shape, n, s.dtype))


def _acc_dtype(dtype):
    """The dtype torch accumulates a mean or variance of `dtype` in."""
    return jnp.float32 if dtype in (jnp.float16, jnp.bfloat16) else dtype


def _mean_k(x, axis=None, keepdims=False):
    """torch's mean: the sum divided by the count (in float32 for half types); jnp.mean's
    division by a constant count is a multiplication by its reciprocal (_div_exact)."""
    axis = (axis,) if isinstance(axis, int) else axis
    n = x.size if axis is None else math.prod(x.shape[d] for d in axis)
    s = jnp.sum(x, axis=axis, keepdims=keepdims, dtype=_acc_dtype(x.dtype))
    return _div_exact(s, n).astype(x.dtype)


MEAN0 = defop("mean", lambda self, self_sym_sizes, self_sym_numel: _mean_k(self),
              attrs=("self_sym_sizes", "self_sym_numel"),
              self=lambda grad, self_sym_sizes, self_sym_numel:
              grad.expand(self_sym_sizes) / self_sym_numel)
MEAN1 = defop("mean_dim", lambda self, dim, keepdim, self_sym_sizes, self_sym_numel:
              _mean_k(self, dim, keepdim),
              attrs=("dim", "keepdim", "self_sym_sizes", "self_sym_numel"), node="MeanBackward1",
              self=lambda grad, dim, keepdim, self_sym_sizes, self_sym_numel:
              _restore(grad, dim, keepdim).expand(self_sym_sizes) /
              _numel(self_sym_sizes, dim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_differentiable:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {input.dtype.name.capitalize()}")
    if dim is None:
        return call_op(MEAN0, (input,), (input._shape, input.numel()))
    return call_op(MEAN1, (input,), (_dims(dim, input.ndim), keepdim, input._shape, input.numel()))


def _prod_others(self, dim, result):
    """Product of all other elements along dim (all when dim is None), zero-safe and
    with torch's second derivatives: written as (product of the other non-zero
    entries) * (product of the other zero entries), the latter spelled so that its
    derivative w.r.t. each zero entry is right (zs is their sum, value 0). Without
    zeros the first factor's product is `result` (keepdim form), as torch uses it."""
    nz = self == 0
    keep = dim is not None
    cnt = nz.sum(dim, keepdim=True) if keep else nz.sum()
    safe = where(nz, 1.0, self)
    p = where(cnt == 0, result, safe.prod(dim, keepdim=True) if keep else safe.prod())
    z = where(nz, self, 0.0)
    zs = z.sum(dim, keepdim=True) if keep else z.sum()
    # cnt 0: 1; cnt 1: the zero (zs) for non-zero entries, 1 for the zero; cnt 2: the
    # other zero for the zeros, 0 (a product of two zeros) for the rest; cnt > 2: 0
    zeros = where(cnt == 0, 1.0, where(cnt == 1, where(nz, 1.0, zs),
                                       where(cnt == 2, where(nz, zs - z, 0.0), 0.0)))
    return p / safe * zeros


PROD0 = defop("prod", lambda self, dtype: jnp.prod(self, dtype=dtype.np), attrs=("dtype",),
              self=lambda grad, self, result:
              grad if not self.ndim else grad * _prod_others(self, None, result).conj())
PROD1 = defop("prod_dim", lambda self, dim, keepdim, dtype:
              jnp.prod(self, axis=dim, keepdims=keepdim, dtype=dtype.np),
              attrs=("dim", "keepdim", "dtype"), node="ProdBackward1",
              self=lambda grad, self, result, dim, keepdim: grad if not self.ndim else
              _restore(grad, (dim,), keepdim) *
              _prod_others(self, dim, _restore(result, (dim,), keepdim)).conj())


@autocast_op("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    dt = _sum_dtype(input.dtype, dtype)
    if dim is None:
        return call_op(PROD0, (input,), (dt,))
    return call_op(PROD1, (input,), (_wrap_dim(dim, input.ndim), keepdim, dt))


def _even(grad, self, dim, keepdim, result):
    # ties share the gradient evenly (torch's amax/amin backward: grad / count * mask)
    mask = self == _restore(result, dim, keepdim)
    return _restore(grad, dim, keepdim) / mask.sum(dim, keepdim=True) * mask


def _check_nonempty(input, name, dims):
    for d in dims if input.ndim else ():
        if input._shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _cpu_kernel(kernel):
    return NotImplementedError, f"\"{kernel}\" not implemented for '{{}}'"


AMAX = defop("amax", lambda self, dim, keepdim: jnp.max(self, axis=dim, keepdims=keepdim),
             attrs=("dim", "keepdim"), complex_error=_cpu_kernel("max_values_cpu"), self=_even)
AMIN = defop("amin", lambda self, dim, keepdim: jnp.min(self, axis=dim, keepdims=keepdim),
             attrs=("dim", "keepdim"), complex_error=_cpu_kernel("min_values_cpu"), self=_even)


def _extremum(op, name, input, dim, keepdim, out):
    every = not isinstance(dim, int) and len(dim) == 0  # (dim=() or []: every dim)
    if every and input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    dims = _dims(None if every else dim, input.ndim)
    _check_nonempty(input, name, dims)
    if out is not None and out.dtype is not input.dtype:
        raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                           f"{input.dtype.scalar_name} for input's dtype and "
                           f"{out.dtype.scalar_name} for out's dtype.")
    no_out(out, name)
    return call_op(op, (input,), (dims, keepdim))


def amax(input, dim=(), keepdim=False, *, out=None):
    return _extremum(AMAX, "amax", input, dim, keepdim, out)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _extremum(AMIN, "amin", input, dim, keepdim, out)


def _evenly(grad, self, result):
    mask = where(result.isnan(), self.isnan(), self == result)
    return mask * (grad / mask.sum())


MAX_ALL = defop("max", jnp.max, node="MaxBackward1", complex_error=_cpu_kernel("max_all"),
                self=_evenly)
MIN_ALL = defop("min", jnp.min, node="MinBackward1", complex_error=_cpu_kernel("min_all"),
                self=_evenly)


def _select_back(grad, indices, dim, keepdim, self_sym_sizes):
    g = _restore(grad, (dim,), keepdim)
    i = _restore(indices, (dim,), keepdim)
    return zeros_scatter(g, dim, i, self_sym_sizes)


def _arg_reduce(fn, argfn):
    def k(self, dim, keepdim, self_sym_sizes):
        return (fn(self, axis=dim, keepdims=keepdim),
                argfn(self, axis=dim, keepdims=keepdim).astype(jnp.int64))
    return k


MAX_DIM = defop("max_dim", _arg_reduce(jnp.max, jnp.argmax), attrs=("dim", "keepdim",
                "self_sym_sizes"), outputs=("values", "indices"), nondiff=(1,),
                node="MaxBackward0", self=_select_back,
                complex_error=(RuntimeError, "max(): does not support complex input"))
MIN_DIM = defop("min_dim", _arg_reduce(jnp.min, jnp.argmin), attrs=("dim", "keepdim",
                "self_sym_sizes"), outputs=("values", "indices"), nondiff=(1,),
                node="MinBackward0", self=_select_back,
                complex_error=(RuntimeError, "min(): does not support complex input"))


def _return_type(name):
    """torch.return_types.<name>: a (values, indices) tuple with names."""
    class R(tuple):
        __slots__ = ()

        @property
        def values(self):
            return self[0]

        @property
        def indices(self):
            return self[1]

        def __repr__(self):
            return f"eagergrad.return_types.{name}(\nvalues={self[0]!r},\nindices={self[1]!r})"
    R.__name__ = R.__qualname__ = name
    R.__module__ = "eagergrad.return_types"
    return R


def _minmax(op_all, op_dim, cmp, name):
    result = _return_type(name)

    def f(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return cmp(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            return call_op(op_all, (input,))
        d = _wrap_dim(dim, input.ndim)
        _check_nonempty(input, name, (d,))
        return result(call_op(op_dim, (input,), (d, keepdim, input._shape)))
    f.__name__ = name
    return f


def _cmp_max(a, b):
    return maximum(a, b)


def _cmp_min(a, b):
    return minimum(a, b)


max = _minmax(MAX_ALL, MAX_DIM, _cmp_max, "max")
min = _minmax(MIN_ALL, MIN_DIM, _cmp_min, "min")


def _argfn(fn, name):
    def f(input, dim=None, keepdim=False):
        if input.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        a = input._value
        if dim is None or not input.ndim:
            _wrap_dim(0 if dim is None else dim, input.ndim)
            return from_jax(fn(a.reshape(-1)).astype(jnp.int64))
        return from_jax(fn(a, axis=_wrap_dim(dim, input.ndim), keepdims=keepdim)
                        .astype(jnp.int64))
    return f


argmax = _argfn(jnp.argmax, "argmax")
argmin = _argfn(jnp.argmin, "argmin")


def _var_back(grad, self, dim, correction, keepdim):
    full = dim is None  # no dim given (torch's node keeps dim=None)
    dim = tuple(range(self.ndim)) if full else dim
    dof = _numel(self._shape, dim) - correction
    if dof > 0:
        return (2.0 / dof) * _restore(grad, dim, keepdim) * (self - self.mean(dim, keepdim=True))
    # no degrees of freedom left (torch's var_backward): 2 / 0 is inf, times (self - mean);
    # over all elements torch gives grad * inf wherever self != mean, whatever its sign
    centered = self - self.mean(dim, keepdim=True)
    if full:
        return where(centered == 0, math.nan, grad * math.inf)
    return math.inf * _restore(grad, dim, keepdim) * centered


def _var_k(self, dim, correction, keepdim):
    """torch's two passes: the mean (sum / count, _mean_k), then the sum of squared
    deviations over n - correction, both true divisions. A constant whose sum is exact
    has a variance of exactly 0, as in torch (jnp.var's mean by a reciprocal is an ulp off
    there: a variance of ~1e-33 and, under std, a gradient of O(1) where torch's is 0)."""
    axes = tuple(range(self.ndim)) if dim is None else tuple(dim)
    n = math.prod(self.shape[d] for d in axes)
    if n == 0:
        return jnp.var(self, axis=dim, ddof=correction, keepdims=keepdim)  # (NaN)
    x = self.astype(_acc_dtype(self.dtype))  # (no copy when it is that dtype)
    c = x - _mean_k(x, axes, keepdims=True)
    sq = c.real * c.real + c.imag * c.imag if jnp.iscomplexobj(c) else c * c
    ss = jnp.sum(sq, axis=axes, keepdims=keepdim)
    # torch divides by max(0, n - correction): inf, or NaN for a zero sum of squares
    v = _div_exact(ss, n - correction) if n - correction > 0 else ss / 0.0
    return v.astype(jnp.finfo(self.dtype).dtype)


VAR = defop("var", _var_k, attrs=("dim", "correction", "keepdim"), self=_var_back)
STD = defop("std", lambda self, dim, correction, keepdim:
            jnp.sqrt(_var_k(self, dim, correction, keepdim)),
            attrs=("dim", "correction", "keepdim"),
            self=lambda grad, self, result, dim, correction, keepdim:
            _var_back(where(result == 0, 0.0, grad / (result * 2)), self, dim, correction,
                      keepdim))


def _var_args(input, dim, unbiased, correction):
    if isinstance(dim, bool):  # the var(input, unbiased) overload: var(x, False)
        if unbiased is not None:
            raise TypeError("received an invalid combination of arguments - got (Tensor, "
                            "bool, bool)")
        dim, unbiased = None, dim
    elif unbiased is not None and not isinstance(unbiased, bool):  # var(x, 0) means dim 0
        dim, unbiased = unbiased, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    return None if dim is None else _dims(dim, input.ndim), correction


def _check_dof(input, dims, c, name):
    n = input.numel() if dims is None else _numel(input._shape, dims)
    if n - c <= 0:
        import warnings
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, c = _var_args(input, dim, unbiased, correction)
    _check_dof(input, dims, c, "var")
    return call_op(VAR, (input,), (dims, c, keepdim))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dims, c = _var_args(input, dim, unbiased, correction)
    _check_dof(input, dims, c, "std")
    return call_op(STD, (input,), (dims, c, keepdim))


# ---- cov, corrcoef: torch's composites (Correlation.cpp), op for op ---------------------------
def _host_bool(t):
    """A 0-dim bool tensor's value, None under a jax trace (torch's data-dependent checks
    are skipped there)."""
    import jax
    return None if isinstance(t._value, jax.core.Tracer) else bool(t._value)


def _cov_weights(w, name, n, ok, kind):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if not ok:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and _host_bool(w.min().ge(0)) is False:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov: the covariance matrix of the variables in the rows of `input` (columns:
    observations), with frequency and observation weights; as torch composes it.

    >>> import eagergrad as torch
    >>> torch.cov(torch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    import warnings
    from ..creation import tensor
    from .pointwise import _mul_s
    if isinstance(correction, bool) or not isinstance(correction, int):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__}")
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x._shape[1]
    w = None
    if fweights is not None:
        _cov_weights(fweights, "fweights", n, fweights.dtype._kind == 1 and
                     fweights.dtype is not D.bool_, "integral")
        w = fweights
    if aweights is not None:
        _cov_weights(aweights, "aweights", n, aweights.dtype.is_floating_point,
                     "floating point")
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else tensor(n, dtype=D.int64)
    if w is not None and _host_bool(w_sum.ne(0)) is False:
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is None:
        norm_factor = tensor(n - correction, dtype=D.int64)
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm_factor = tensor(0, dtype=D.int64)
    else:
        norm_factor = w_sum - _mul_s((w * aweights).sum(), correction) / w_sum
    non_positive = _host_bool(norm_factor.le(0))
    if non_positive:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor.zero_()
    elif non_positive is None:
        norm_factor = norm_factor.masked_fill(norm_factor.le(0), 0)
    if n == 1 and (fweights is None) != (aweights is None):
        x.zero_()  # (torch's corner case: it zeroes the input itself, in place)
        if not x.dtype.is_differentiable:
            x = x.to(D.float32)
    else:
        x = x - avg.unsqueeze(1)
    c = x.mm((x * w if w is not None else x).t().conj())
    if c.dtype.is_complex and 1 in x._shape:  # (torch zeroes the imaginary part there)
        from ..creation import zeros_like
        from .unary import _complex
        c = _complex(c.real, zeros_like(c.real))
    return c.true_divide(norm_factor).squeeze()


def corrcoef(input):
    """torch.corrcoef: the Pearson correlation coefficients of the rows of `input`
    (cov normalized by the standard deviations, clipped to [-1, 1]).

    >>> import eagergrad as torch
    >>> torch.corrcoef(torch.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    from .unary import _complex
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:  # (one variable: NaN where the variance is 0, NaN or inf; else 1)
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.dtype.is_complex:
        return _complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def _vnorm_k(self, ord, dim, keepdim, dtype):
    a = jnp.abs(self)
    if ord == math.inf:
        r = jnp.max(a, axis=dim, keepdims=keepdim)
    elif ord == -math.inf:
        r = jnp.min(a, axis=dim, keepdims=keepdim)
    elif ord == 0:
        r = jnp.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = jnp.sum(a, axis=dim, keepdims=keepdim)
    elif ord == 2:
        r = jnp.sqrt(jnp.sum(a * a, axis=dim, keepdims=keepdim))
    else:
        r = jnp.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)
    return r.astype(dtype.np)


def _vnorm_back(grad, self, result, ord, dim, keepdim):
    if dim is None:
        dim = tuple(range(self.ndim))
    g = _restore(grad, dim, keepdim)
    r = _restore(result, dim, keepdim)
    # torch's norm_backward, branch by branch (its masks decide the values at zeros)
    if ord == 0:
        return None  # torch: an undefined gradient (the input counts as unused)
    if ord == 1:
        return self.sgn() * g
    if ord == 2:
        return g * where(r == 0, 0.0, self / r)
    if math.isinf(ord):  # amax of |self|, NaNs selected too
        a = self.abs()
        mask = (a == r) | a.isnan()
        return self.sgn() * (g / mask.sum(dim, keepdim=True) * mask)
    if ord < 1:
        scaled = self.sgn() * where(self == 0, 0.0, self.abs().pow(ord - 1))
        return scaled * g * r.pow(1 - ord)
    scaled = self.sgn() * self.abs().pow(ord - 1) if ord < 2 else \
        self * self.abs().pow(ord - 2)
    return scaled * where(r == 0, 0.0, g / r.pow(ord - 1))


VNORM = defop("linalg_vector_norm", _vnorm_k, attrs=("ord", "dim", "keepdim", "dtype"),
              self=_vnorm_back)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not input.dtype.is_differentiable:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {input.dtype.scalar_name}")
    out = D.as_dtype(dtype) if dtype is not None else input.dtype.to_real()
    # ord and dim as torch's node keeps them: an int ord stays an int, no dim is None
    ord = ord if type(ord) in (int, float) else float(ord)
    return call_op(VNORM, (input,), (ord, None if dim is None else _dims(dim, input.ndim),
                                 keepdim, out))


def _lse_k(self, dim, keepdim):
    from jax.scipy.special import logsumexp as lse
    if not jnp.issubdtype(self.dtype, jnp.inexact):
        self = self.astype(jnp.float32)
    return lse(self, axis=dim, keepdims=keepdim)


LSE = defop("logsumexp", _lse_k, attrs=("dim", "keepdim"),
            self=lambda grad, self, result, dim, keepdim:
            _restore(grad, dim, keepdim) * (self - _restore(result, dim, keepdim)).exp().conj())


def logsumexp(input, dim, keepdim=False):
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    if dim in ((), []):  # (all dims; torch 2.13 then fails to write the unkept result)
        if input.ndim and not keepdim:
            raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                               f"{[1] * input.ndim}")
        dim = None
    return call_op(LSE, (input,), (_dims(dim, input.ndim), keepdim))


def _softmax_k(self, dim, dtype):
    import jax
    return jax.nn.softmax(self.astype(dtype.np), axis=dim)


def _log_softmax_k(self, dim, dtype):
    import jax
    return jax.nn.log_softmax(self.astype(dtype.np), axis=dim)


SOFTMAX = defop("softmax", _softmax_k, attrs=("dim", "dtype"), node="SoftmaxBackward0",
                self=lambda grad, result, dim:
                result * (grad - (grad * result).sum(dim, keepdim=True)))
LOG_SOFTMAX = defop("log_softmax", _log_softmax_k, attrs=("dim", "dtype"),
                    node="LogSoftmaxBackward0",
                    self=lambda grad, result, dim:
                    grad - result.exp() * grad.sum(dim, keepdim=True))


def _sm(op, name):
    def f(input, dim=None, dtype=None, _stacklevel=3):
        if dim is None:
            raise NotImplementedError("eagergrad does not implement softmax without dim; "
                                      "pass dim explicitly")
        dt = D.as_dtype(dtype) if dtype is not None else (
            input.dtype if input.dtype.is_differentiable else D.get_default_dtype())
        d = _wrap_dim(dim, input.ndim)
        if dt.is_complex:
            kernel = f"{name}_lastdim" if d >= input.ndim - 1 else name
            raise NotImplementedError(f"\"{kernel}_kernel_impl\" not implemented for "
                                      f"'{dt.scalar_name}'")
        return call_op(op, (input,), (d, dt))
    return f


softmax = _sm(SOFTMAX, "softmax")
log_softmax = _sm(LOG_SOFTMAX, "log_softmax")


def _bool_reduce(fn, name):
    op = defop(name, lambda self, dim, keepdim: fn(self, axis=dim, keepdims=keepdim),
               attrs=("dim", "keepdim"))

    def f(input, dim=None, keepdim=False):
        return call_op(op, (input,), (None if dim is None else _dims(dim, input.ndim), keepdim))
    f.__name__ = name
    return f


all = _bool_reduce(jnp.all, "all")
any = _bool_reduce(jnp.any, "any")


# ---- aminmax, count_nonzero, std_mean / var_mean, renorm ---------------------------------------
def _aminmax_k(self, dim, keepdim):
    return (jnp.min(self, axis=dim, keepdims=keepdim), jnp.max(self, axis=dim, keepdims=keepdim))


def _aminmax_back(grads, self, min, max, dim, keepdim):
    """torch's aminmax_backward: each output's gradient split evenly among its ties."""
    dims = tuple(range(self.ndim)) if dim is None else (dim,)
    g_min, g_max = grads
    return _even(g_min, self, dims, keepdim, min) + _even(g_max, self, dims, keepdim, max)


AMINMAX = defop("aminmax", _aminmax_k, attrs=("dim", "keepdim"), outputs=("min", "max"),
                complex_error=_cpu_kernel("aminmax_cpu"), self=_aminmax_back)


def _aminmax_type():
    class R(tuple):
        __slots__ = ()
        min = property(lambda self: self[0])
        max = property(lambda self: self[1])

        def __repr__(self):
            return f"eagergrad.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"
    R.__name__ = R.__qualname__ = "aminmax"
    R.__module__ = "eagergrad.return_types"
    return R


_Aminmax = _aminmax_type()


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """torch.aminmax: (min, max) over all elements or along `dim`.

    >>> import eagergrad as torch
    >>> torch.aminmax(torch.tensor([3.0, 1.0, 2.0]))
    eagergrad.return_types.aminmax(
    min=tensor(1.),
    max=tensor(3.))
    """
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        d = None
    else:
        d = _wrap_dim(dim, input.ndim)
        if input.ndim and input._shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        if input.ndim == 0:
            d = None
    no_out(out, "aminmax", input.dtype)
    return _Aminmax(call_op(AMINMAX, (input,), (d, keepdim)))


COUNT_NONZERO = defop("count_nonzero", lambda self, dim:
                      jnp.count_nonzero(self, axis=dim).astype(jnp.int64), attrs=("dim",))


def count_nonzero(input, dim=None):
    """torch.count_nonzero: how many elements are not zero, in all or along `dim`.

    >>> import eagergrad as torch
    >>> torch.count_nonzero(torch.tensor([[1.0, 0.0], [2.0, 3.0]]), dim=1)
    tensor([1, 2])
    """
    return call_op(COUNT_NONZERO, (input,), (None if dim is None else _dims(dim, input.ndim),))


def _stat_mean_k(stat):
    def k(self, dim, correction, keepdim):
        v = _var_k(self, dim, correction, keepdim)
        return (jnp.sqrt(v) if stat == "std" else v), _mean_k(self, dim, keepdim)
    return k


def _mean_back(grad, self, dim, keepdim):
    dims = tuple(range(self.ndim)) if dim is None else dim
    return _restore(grad, dims, keepdim).expand(self._shape) / _numel(self._shape, dims)


def _var_mean_back(grads, self, dim, correction, keepdim):
    return _var_back(grads[0], self, dim, correction, keepdim) + \
        _mean_back(grads[1], self, dim, keepdim)


def _std_mean_back(grads, self, result0, dim, correction, keepdim):
    g = where(result0 == 0, 0.0, grads[0] / (result0 * 2))
    return _var_back(g, self, dim, correction, keepdim) + _mean_back(grads[1], self, dim, keepdim)


STD_MEAN = defop("std_mean", _stat_mean_k("std"), attrs=("dim", "correction", "keepdim"),
                 outputs=("result0", "result1"), self=_std_mean_back)
VAR_MEAN = defop("var_mean", _stat_mean_k("var"), attrs=("dim", "correction", "keepdim"),
                 outputs=("result0", "result1"), self=_var_mean_back)


def _stat_mean(op, name):
    def f(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # (std_mean(x, False): the unbiased overload)
            dim, unbiased = None, dim
        if not input.dtype.is_differentiable:
            raise RuntimeError(f"{name} only support floating point and complex dtypes")
        dims, c = _var_args(input, dim, unbiased, correction)
        _check_dof(input, dims, c, name)
        return call_op(op, (input,), (dims, c, keepdim))
    f.__name__ = name
    f.__doc__ = f"""torch.{name}: ({name[:3]}, mean) over all elements or along `dim`, with
    Bessel's correction unless `correction` (or `unbiased`) says otherwise.

    >>> import eagergrad as torch
    >>> torch.{name}(torch.tensor([1.0, 2.0, 3.0]))[1]
    tensor(2.)
    """
    return f


std_mean = _stat_mean(STD_MEAN, "std_mean")
var_mean = _stat_mean(VAR_MEAN, "var_mean")


def _renorm_k(self, p, dim, maxnorm):
    dims = tuple(i for i in range(self.ndim) if i != dim)
    norm = _vnorm_k(self, p, dims, True, D.FROM_NP[np.dtype(jnp.real(self).dtype)])
    eps, top = jnp.asarray(1e-7, norm.dtype), jnp.asarray(maxnorm, norm.dtype)
    factor = jnp.where(norm > top, top / (norm + eps), jnp.ones((), norm.dtype))
    return self * factor.astype(self.dtype)


def _renorm_back(grad, self, p, dim, maxnorm):
    """torch's renorm_backward, in the CPU accumulate type (float64 for float32)."""
    dims = tuple(i for i in range(self.ndim) if i != dim)
    acc = D.float64
    norm = vector_norm(self, p, dims, True, dtype=acc)
    g = self.conj() * grad
    if g.dtype.is_complex:
        g = g.real
    g = g.sum(dims, keepdim=True, dtype=acc)
    nb = _vnorm_back(g, self, norm, p, dims, True)
    inv = (norm + 1e-7).reciprocal()
    grad_norm = maxnorm * inv * (grad - inv * nb)
    return where(norm > maxnorm, grad_norm.to(grad.dtype), grad)


RENORM = defop("renorm", _renorm_k, attrs=("p", "dim", "maxnorm"), self=_renorm_back)


def renorm(input, p, dim, maxnorm):
    """torch.renorm: each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to
    it (maxnorm / (norm + 1e-7)).

    >>> import eagergrad as torch
    >>> torch.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if not input.dtype.is_differentiable:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {input.dtype.scalar_name}")
    ord = p if type(p) in (int, float) else float(p)
    return call_op(RENORM, (input,), (ord, _wrap_dim(dim, input.ndim), maxnorm))
