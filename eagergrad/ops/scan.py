"""Scans and finite differences: cumprod, cummax, cummin, logcumsumexp (cumsum is in
reduce.py), and torch's composites over them: diff, trapezoid, trapz,
cumulative_trapezoid, gradient."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from ..engine.grad_mode import STATE
from ..tensor import Tensor, _make
from ._table import call_op, defop
from .pointwise import _div_s, _mul_s
from .pointwise import where
from .reduce import _return_type, _sum_dtype
from .scatter import index_select, scatter_add
from .shape import _slice, cat, movedim

_Cummax, _Cummin = _return_type("cummax"), _return_type("cummin")


def _dim0(input, dim):
    """dim wrapped as torch's cumulative ops wrap it (a 0-dim tensor takes 0 or -1)."""
    return _wrap_dim(dim, input.ndim)


def _const(a):
    """A host-made constant tensor (no kernel, nothing to compile per call)."""
    return _make(jax.device_put(a))


def _flip(t, dim):
    """t reversed along dim, as an index_select (differentiable to any order)."""
    n = t._shape[dim]
    return index_select(t, dim, _const(np.arange(n - 1, -1, -1, dtype=np.int64)))


# ---- cumprod: torch's cumprod_backward ---------------------------------------------------
def _rev_cumsum(a, dim):
    return jnp.flip(jnp.cumsum(jnp.flip(a, dim), axis=dim), dim)


def _cumprod_backward_k(grad, self, result, dim):
    """torch's O(n) cumprod_backward (grad mode off): sum_{j >= k} grad_j y_j / x_k
    before the first zero, the first zero's own derivative at it, zeros after."""
    x, out = jnp.conj(self), jnp.conj(result)
    w = out * grad
    zero = self == 0
    cs = jnp.cumsum(zero, axis=dim)
    before = cs == 0
    res = jnp.where(before, _rev_cumsum(jnp.where(before, w, 0), dim) /
                    jnp.where(before, x, 1), 0)
    one = cs == 1
    first = one & zero
    prods = jnp.cumprod(jnp.where(one & ~zero, x, 1), axis=dim)
    at_zero = jnp.sum(prods * jnp.where(one, grad, 0), axis=dim, keepdims=True)
    z1 = jnp.argmax(one, axis=dim, keepdims=True)
    prev = jnp.take_along_axis(out, jnp.maximum(z1 - 1, 0), axis=dim)
    return jnp.where(first, at_zero * jnp.where(z1 == 0, 1, prev), res)


def _cumprod_omitted(grad, self, dim):
    """torch's cumprod_backward under grad mode (a double backward): sum over j >= k of
    grad_j * prod_{i <= j, i != k} x_i, all products written out (n x n per slice), so
    that its own derivative is cumprod's second derivative, zeros included."""
    n = self._shape[dim]
    x = movedim(self.conj(), dim, -1).unsqueeze(-2)              # (..., 1, n)
    eye = _const(np.eye(n, dtype=bool))
    omitted = where(eye, 1.0, x).cumprod(-1)                      # [k, j]
    upper = _const(np.triu(np.ones((n, n), dtype=bool)))         # j >= k
    g = movedim(grad, dim, -1).unsqueeze(-2)
    return movedim(where(upper, omitted * g, 0.0).sum(-1), -1, dim)


def _cumprod_grad(grad, self, result, dim):
    if grad.dtype is not self.dtype:
        grad = grad.to(self.dtype)
    if self.numel() <= 1 or self._shape[dim] == 1:
        return grad
    if STATE.grad:
        return _cumprod_omitted(grad, self, dim)
    return call_op(CUMPROD_BACKWARD, (grad, self, result), (dim,))


CUMPROD = defop("cumprod", lambda self, dim, dtype: jnp.cumprod(self.astype(dtype.np), axis=dim)
                if self.ndim else self.astype(dtype.np),
                attrs=("dim", "dtype"), self=_cumprod_grad)
CUMPROD_BACKWARD = defop("cumprod_backward", _cumprod_backward_k,
                         inputs=("grad", "self", "result"), attrs=("dim",))


def cumprod(input, dim, *, dtype=None):
    """torch.cumprod along `dim` (integers multiply in int64); its gradient is torch's,
    zeros included.

    >>> import eagergrad as torch
    >>> torch.tensor([1.0, 2.0, 3.0]).cumprod(0)
    tensor([1., 2., 6.])
    """
    return call_op(CUMPROD, (input,), (_dim0(input, dim), _sum_dtype(input.dtype, dtype)))


# ---- cummax / cummin ---------------------------------------------------------------------
def _cum_extreme(greater):
    def k(self, dim):
        if self.ndim == 0 or self.size == 0:
            return self, jnp.zeros(self.shape, jnp.int64)
        shape = [1] * self.ndim
        shape[dim] = self.shape[dim]
        idx = jnp.broadcast_to(jnp.arange(self.shape[dim], dtype=jnp.int64).reshape(shape),
                               self.shape)
        inexact = jnp.issubdtype(self.dtype, jnp.inexact)

        def combine(a, b):
            # torch's scan: a later element wins if it is NaN, or if no NaN came before and
            # it is >= (<=) the running value: ties take the last index
            (av, ai), (bv, bi) = a, b
            take = bv >= av if greater else bv <= av
            if inexact:
                take = jnp.isnan(bv) | (~jnp.isnan(av) & take)
            return jnp.where(take, bv, av), jnp.where(take, bi, ai)
        return lax.associative_scan(combine, (self, idx), axis=dim)
    return k


def _cummaxmin_back(grad, self, indices, dim):
    """torch's cummaxmin_backward: zeros with grad scatter-added at the indices."""
    if self.ndim == 0 or self.numel() == 0:
        return grad
    return scatter_add(self.new_zeros(self._shape).to(grad.dtype), dim, indices, grad)


def _cpu(kernel):
    return NotImplementedError, f"\"{kernel}\" not implemented for '{{}}'"


CUMMAX = defop("cummax", _cum_extreme(True), attrs=("dim",), outputs=("values", "indices"),
               nondiff=(1,), complex_error=_cpu("cummax_cpu"), self=_cummaxmin_back)
CUMMIN = defop("cummin", _cum_extreme(False), attrs=("dim",), outputs=("values", "indices"),
               nondiff=(1,), complex_error=_cpu("cummin_cpu"), self=_cummaxmin_back)


def cummax(input, dim):
    """torch.cummax: (values, indices) of the running maximum along `dim` (ties: the last
    index; after a NaN, NaN).

    >>> import eagergrad as torch
    >>> torch.tensor([1.0, 3.0, 2.0, 3.0]).cummax(0).indices
    tensor([0, 1, 1, 3])
    """
    return _Cummax(call_op(CUMMAX, (input,), (_dim0(input, dim),)))


def cummin(input, dim):
    """torch.cummin: (values, indices) of the running minimum along `dim`.

    >>> import eagergrad as torch
    >>> torch.tensor([2.0, 1.0, 3.0]).cummin(0).values
    tensor([2., 1., 1.])
    """
    return _Cummin(call_op(CUMMIN, (input,), (_dim0(input, dim),)))


# ---- logcumsumexp --------------------------------------------------------------------------
def _log_add_exp_complex(a, b):
    """torch's _log_add_exp_helper for complex numbers (ordered by real part)."""
    swap = jnp.real(a) > jnp.real(b)
    lo, hi = jnp.where(swap, b, a), jnp.where(swap, a, b)
    lo_r, hi_r = jnp.real(lo), jnp.real(hi)
    nan = jnp.isnan(lo_r) | jnp.isnan(jnp.imag(lo))
    both_inf = jnp.isinf(lo_r) & (lo_r == hi_r)
    usual = jnp.log1p(jnp.exp(lo - jnp.where(both_inf, 0, hi))) + hi
    inf_case = jnp.where(lo_r < 0, lo, jnp.log(jnp.exp(lo) + jnp.exp(hi)))
    out = jnp.where(both_inf, inf_case, usual)
    return jnp.where(nan, jnp.array(complex(np.nan, np.nan), a.dtype), out)


def _logcumsumexp_k(self, dim):
    if self.ndim == 0:
        return self
    if jnp.iscomplexobj(self):
        # torch's scan starts from -inf + 0j: the first element meets it first
        init = jnp.full(self.shape[:dim] + (1,) + self.shape[dim + 1:], -np.inf, self.dtype)
        head = _log_add_exp_complex(init, lax.slice_in_dim(self, 0, 1, axis=dim))
        self = lax.dynamic_update_slice_in_dim(self, head, 0, axis=dim)
        return lax.associative_scan(_log_add_exp_complex, self, axis=dim)
    return lax.cumlogsumexp(self, axis=dim)


def _logcumsumexp_back(grad, self, result, dim):
    """torch's logcumsumexp_backward: a reversed logcumsumexp of log|grad| - result, the
    positive and negative parts of a real grad apart."""
    if grad.ndim == 0 or grad.numel() == 0:
        return grad

    def rev(t):
        return _flip(call_op(LOGCUMSUMEXP, (_flip(t, dim),), (dim,)), dim)
    if grad.dtype.is_complex:
        return (rev(grad.conj().log() - result) + self).exp().conj()
    lowest = float(np.finfo(grad.dtype.np).min)
    log_abs = grad.abs().log()
    pos = where(grad > 0, log_abs, lowest)
    neg = where(grad < 0, log_abs, lowest)
    return (rev(pos - result) + self).exp() - (rev(neg - result) + self).exp()


LOGCUMSUMEXP = defop("logcumsumexp", _logcumsumexp_k, attrs=("dim",),
                     self=_logcumsumexp_back)


def logcumsumexp(input, dim):
    """torch.logcumsumexp: log(cumsum(exp(input))) along `dim`, computed stably.

    >>> import eagergrad as torch
    >>> torch.tensor([0.0, 0.0]).logcumsumexp(0)
    tensor([0.0000, 0.6931])
    """
    if not input.dtype.is_differentiable:
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return call_op(LOGCUMSUMEXP, (input,), (_dim0(input, dim),))


# ---- diff, trapezoid, cumulative_trapezoid: torch's composites ----------------------------
def _diff_check(input, n, dim, prepend, append):
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is None:
            continue
        d = _wrap_dim(dim, input.ndim)
        if other.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for i in range(other.ndim):
            if i != d and other._shape[i] != input._shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    "input except along the differencing dimension; input.size("
                    f"{i}) = {input._shape[i]}, but got tensor.size({i}) = {other._shape[i]}")


def _diff_helper(t, n, dim):
    if n == 0:
        from ..creation import zeros_like
        out = zeros_like(t)
        out.copy_(t)
        return out
    length = t._shape[dim] - 1
    boolean = t.dtype is D.bool_
    for _ in range(min(n, t._shape[dim])):
        hi, lo = t.narrow(dim, 1, length), t.narrow(dim, 0, length)
        t = hi.logical_xor(lo) if boolean else hi - lo
        length -= 1
    return t


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: the n-th forward difference along `dim` (bool: xor), after
    concatenating `prepend` and `append`.

    >>> import eagergrad as torch
    >>> torch.diff(torch.tensor([1, 2, 4, 7]))
    tensor([1, 2, 3])
    """
    _diff_check(input, n, dim, prepend, append)
    d = _wrap_dim(dim, input.ndim)
    if (prepend is None and append is None) or n == 0:
        return _diff_helper(input, n, d)
    parts = [p for p in (prepend, input, append) if p is not None]
    return _diff_helper(cat(parts, d), n, d)


def _smul(t, v):
    """t * v as ATen's `tensor * double` records it (MulBackward1); integers promote."""
    return _mul_s(t, v) if t.dtype.is_differentiable else t * v


def _sdiv(t, v):
    return _div_s(t, v) if t.dtype.is_differentiable else t / v


def _size_at(y, dim):
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, y.ndim)


def _x_viewed(y, x, dim, name):
    if x.ndim == 1:
        if x._shape[0] != y._shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x._shape[0]
        return x.view(shape)
    if x.ndim < y.ndim:
        return x.view((1,) * (y.ndim - x.ndim) + tuple(x._shape))
    return x


def _pairs(t, dim, combine):
    """combine(t[1:], t[:-1]) along dim (torch's slices; empty for fewer than 2)."""
    n = t._shape[dim]
    m = max(n - 1, 0)
    return combine(t.narrow(dim, min(1, n), m), t.narrow(dim, 0, m))


def _dx_of(x, dim):
    return _pairs(x, dim, lambda right, left: right - left)


def _scalar_dx(dx, name):
    if isinstance(dx, (bool, complex)) or (isinstance(dx, Tensor) and
                                            (dx.dtype.is_complex or dx.dtype is D.bool_)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _bad_x(name, x, overloads):
    raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                    f"{type(x).__name__}), but expected one of:\n{overloads}")


_TRAPEZOID = (" * (Tensor y, Tensor x, *, int dim = -1)\n"
              " * (Tensor y, *, Number dx = 1, int dim = -1)\n")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapezoid: the trapezoid rule along `dim`, with sample points `x` or a
    constant spacing `dx`.

    >>> import eagergrad as torch
    >>> torch.trapezoid(torch.tensor([1.0, 2.0, 4.0]))
    tensor(4.5000)
    """
    if x is not None and not isinstance(x, Tensor):
        _bad_x("trapezoid", x, _TRAPEZOID)
    d = _size_at(y, dim)
    if y._shape[d] == 0:
        from ..creation import zeros
        return zeros(y._shape[:d] + y._shape[d + 1:], dtype=y.dtype)
    if x is None:
        if y.dtype is D.bool_:
            raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not "
                               "supported")
        step = _scalar_dx(1.0 if dx is None else dx, "trapezoid")
        return _smul(y.sum(d) - _smul(y.select(d, 0) + y.select(d, -1), 0.5), step)
    if y.dtype is D.bool_ or x.dtype is D.bool_:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    dxs = _dx_of(_x_viewed(y, x, d, "trapezoid"), d)
    return _sdiv((_pairs(y, d, lambda right, left: left + right) * dxs).sum(d), 2.0)


def trapz(y, x=None, *, dx=1.0, dim=-1):
    """torch.trapz: trapezoid's older name (dx a float).

    >>> import eagergrad as torch
    >>> torch.trapz(torch.tensor([1.0, 2.0, 4.0]), dx=2.0)
    tensor(9.)
    """
    if x is not None and not isinstance(x, Tensor):
        _bad_x("trapz", x, " * (Tensor y, *, float dx = 1, int dim = -1)\n"
                           " * (Tensor y, Tensor x, *, int dim = -1)\n")
    if x is None:
        return trapezoid(y, dx=dx, dim=dim)
    return trapezoid(y, x, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid: the running trapezoid rule along `dim`.

    >>> import eagergrad as torch
    >>> torch.cumulative_trapezoid(torch.tensor([1.0, 2.0, 4.0]))
    tensor([1.5000, 4.5000])
    """
    if x is not None and not isinstance(x, Tensor):
        _bad_x("cumulative_trapezoid", x, _TRAPEZOID)
    name = "cumulative_trapezoid"
    if x is None:
        if y.dtype is D.bool_:
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not "
                               "supported")
        step = _scalar_dx(1.0 if dx is None else dx, name)
    elif y.dtype is D.bool_ or x.dtype is D.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, y.ndim)
    pairs = _pairs(y, d, lambda right, left: left + right)
    if x is None:
        return _smul(pairs, step / 2.0).cumsum(d)
    dxs = _dx_of(_x_viewed(y, x, d, name), d)
    return _sdiv((pairs * dxs).cumsum(d), 2.0)


# ---- gradient: torch's composite (ReduceOps.cpp), slices and arithmetic ----------------------
def _gradient_check(input, n_spacing, dims, edge_order):
    """torch's pre_check_gradient (n_spacing, dims: None when not given)."""
    if input.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if n_spacing is not None and dims is None and n_spacing != input.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', since dim "
                           f"argument was not given, but got a list of length {n_spacing}")
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {n_spacing} and a dim argument of "
                           f"length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        seen = set()
        for d in dims:  # (dim_list_to_bitset)
            if input.ndim == 0:
                raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
            w = _wrap_dim(d, input.ndim)
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    for d in dims if dims is not None else range(input.ndim):
        if input._shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")


def _gradient_uniform(input, h, d, edge_order):
    """One partial derivative, spacing the number h (gradient_helper_float)."""
    def sl(start, end=None):
        return _slice(input, d, start, end)

    def by(t, v):  # (ATen's `tensor * scalar`; a complex scalar as a tensor)
        return t * v if isinstance(v, complex) else _smul(t, v)

    def over(t, v):
        return t / v if isinstance(v, complex) else _sdiv(t, v)

    center = over(sl(2) - sl(0, -2), h)
    if edge_order == 1:
        prepend = over(sl(1, 2) - sl(0, 1), h)
        append = over(sl(-1) - sl(-2, -1), h)
    else:
        prepend = over(by(sl(0, 1), -1.5) + by(sl(1, 2), 2) - by(sl(2, 3), 0.5), h)
        append = over(by(sl(-3, -2), 0.5) - by(sl(-2, -1), 2) + by(sl(-1), 1.5), h)
    return cat([prepend, _sdiv(center, 2), append], d)


def _gradient_coordinates(input, x, d, edge_order):
    """One partial derivative at the coordinates x (a 1-D tensor; gradient_helper)."""
    if x.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {x.ndim} dimensions!")
    shape = [1] * input.ndim
    shape[d] = -1

    def sl(start, end=None):
        return _slice(input, d, start, end)

    dx = x.diff(1, 0)
    dx1, dx2 = _slice(dx, 0, 0, -1), _slice(dx, 0, 1, None)
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * sl(0, -2) + b * sl(1, -1) + c * sl(2)
    if edge_order == 1:
        prepend = (sl(1, 2) - sl(0, 1)) / dx[0]
        append = (sl(-1) - sl(-2, -1)) / dx[-1]
    else:  # (each dx[i] a select of its own, as ATen's ax_dx[i] reads are)
        a = -(_smul(dx[0], 2.0) + dx[1]) / (dx[0] * (dx[0] + dx[1]))
        b = (dx[0] + dx[1]) / (dx[0] * dx[1])
        c = (-dx[0]) / (dx[1] * (dx[0] + dx[1]))
        prepend = a * sl(0, 1) + b * sl(1, 2) + c * sl(2, 3)
        a = dx[-1] / (dx[-2] * (dx[-1] + dx[-2]))
        b = -(dx[-1] + dx[-2]) / (dx[-1] * dx[-2])
        c = (_smul(dx[-1], 2) + dx[-2]) / (dx[-1] * (dx[-1] + dx[-2]))
        append = a * sl(-3, -2) + b * sl(-2, -1) + c * sl(-1)
    return cat([prepend, center, append], d)


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """torch.gradient: the partial derivatives of a function sampled in `input`, by
    second-order central differences inside and first or second-order ones at the edges;
    `spacing` a number, one number per dim, or the coordinates of each dim (1-D tensors).

    >>> import eagergrad as torch
    >>> torch.gradient(torch.tensor([1.0, 2.0, 4.0, 8.0]))
    (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    dims = None if dim is None else [dim] if isinstance(dim, int) else list(dim)
    todo = dims if dims is not None else list(range(input.ndim))
    if isinstance(spacing, (list, tuple)):
        tensors = [isinstance(s, Tensor) for s in spacing]
        if any(tensors) and not all(tensors):
            k = tensors.index(False)
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(spacing[k]).__name__}")
        _gradient_check(input, len(spacing), dims, edge_order)
        if any(tensors):
            return tuple(_gradient_coordinates(input, x, _wrap_dim(d, input.ndim), edge_order)
                         for x, d in zip(spacing, todo))
        hs = list(spacing)
    else:
        h = 1.0 if spacing is None else spacing
        if isinstance(h, Tensor):  # (a 0-dim tensor as a Scalar)
            h = h.item()
        _gradient_check(input, None if spacing is None and not isinstance(dim, (list, tuple))
                        else len(todo), dims, edge_order)
        hs = [h] * len(todo)
    return tuple(_gradient_uniform(input, h, _wrap_dim(d, input.ndim), edge_order)
                 for h, d in zip(hs, todo))
