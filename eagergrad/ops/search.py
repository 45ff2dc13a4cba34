"""Searching and counting: searchsorted, bucketize, isin, histc, histogram, histogramdd
(static shapes, one kernel each); unique, unique_consecutive, bincount (data-dependent
shapes: computed on the host, as nonzero is, NOTE [masks]); quantile and nanquantile
(torch's composite of sort, gather and lerp); nansum and nanmean."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._mode import COMPILING
from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from ..tensor import Tensor, _make
from ._args import as_t, promote
from ._autocast import autocast_op
from ._table import call_op, defop
from .masks import _out
from .reduce import _dims, _restore
from .rnn import TRANSPOSE1
from .scatter import _grad_edges_only, gather
from .shape import SQUEEZE4
from .sorting import sort

_TRACED = ("{} has a data-dependent output shape and cannot run on jax tracers (inside a "
           "torch.func transform or jaxify)")


def _return_type(name, fields):
    """torch.return_types.<name>: a tuple with named fields."""
    class R(tuple):
        __slots__ = ()

        def __repr__(self):
            body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
            return f"eagergrad.return_types.{name}(\n{body})"
    for i, f in enumerate(fields):
        setattr(R, f, property(lambda self, i=i: self[i]))
    R.__name__ = R.__qualname__ = name
    R.__module__ = "eagergrad.return_types"
    return R


_Histogram = _return_type("histogram", ("hist", "bin_edges"))


def _host(t, name):
    """The values of a concrete tensor as numpy; NotImplementedError on a tracer."""
    v = t._value
    if isinstance(v, jax.core.Tracer):
        if COMPILING.rec is None:
            raise NotImplementedError(_TRACED.format(name))
        return t._host(name)  # (a compiled call's trace: read, then checked)
    return np.asarray(v)


def _concrete(t):
    return not isinstance(t._value, jax.core.Tracer)


def _const(a):
    return _make(jax.device_put(a))


def _nyi(name):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return formula


def _no_kernel(*arrays, **attrs):
    raise NotImplementedError("this op has a data-dependent output shape: no jvp")


# ---- searchsorted / bucketize: torch's binary search, NaN comparisons included --------------
def _bsearch(bd, v, right):
    """Per row of bd (rows, n) and of v (rows, m): torch's cus_lower_bound /
    cus_upper_bound (`!(mid >= val)`, `!(mid > val)` go right), step for step."""
    n = bd.shape[-1]
    start = jnp.zeros(v.shape, jnp.int64)
    end = jnp.full(v.shape, n, jnp.int64)
    if n == 0:
        return start
    for _ in range(n.bit_length() + 1):  # (a binary search over n takes at most this)
        active = start < end
        mid = start + ((end - start) >> 1)
        at = jnp.take_along_axis(bd, jnp.minimum(mid, n - 1), axis=-1)
        go = ~(at > v) if right else ~(at >= v)
        start = jnp.where(active & go, mid + 1, start)
        end = jnp.where(active & ~go, mid, end)
    return start


def _searchsorted_k(sorted_sequence, self, right, out_int32, dtype):
    bd, v = sorted_sequence.astype(dtype.np), self.astype(dtype.np)
    rows = bd.reshape(-1, bd.shape[-1]) if bd.ndim > 1 else bd[None]
    i = _bsearch(rows, v.reshape(rows.shape[0], -1), right)
    return i.reshape(v.shape).astype(jnp.int32 if out_int32 else jnp.int64)


SEARCHSORTED = defop("searchsorted", _searchsorted_k, inputs=("sorted_sequence", "self"),
                     attrs=("right", "out_int32", "dtype"))


def _search(bd, values, right, out_int32):
    v = values if isinstance(values, Tensor) else as_t(values)
    dt = promote(bd, v)
    if dt.is_complex or dt is D.bool_:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for "
                                  f"'{dt.scalar_name}'")
    return call_op(SEARCHSORTED, (bd, v), (bool(right), bool(out_int32), dt))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """torch.searchsorted: for each value, the index where it would be inserted in the
    last dim of `sorted_sequence` to keep it sorted (right/side="right": after equals).

    >>> import eagergrad as torch
    >>> torch.searchsorted(torch.tensor([1.0, 2.0, 2.0, 3.0]), torch.tensor([2.0, 5.0]))
    tensor([1, 4])
    """
    bd = sorted_sequence
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if side == "left" and right:
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if sorter is not None:
        if sorter._shape != bd._shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {list(bd._shape)}and got sorter "
                               f"tensor {list(sorter._shape)}")
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype "
                               f"but got dtype {sorter.dtype.scalar_name}")
        if sorter.numel() and _concrete(sorter):
            s = np.asarray(sorter._value)
            if s.min() < 0 or s.max() >= sorter._shape[-1]:
                raise RuntimeError("torch.searchsorted(): sorter index out of range")
    vdim = input.ndim if isinstance(input, Tensor) else 0
    vnumel = input.numel() if isinstance(input, Tensor) else 1
    if not (vdim > 0 or (vnumel == 1 and bd.ndim == 1)):
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({bd.ndim}) and input value's dim({vdim}) numel({vnumel})")
    if bd.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if bd.ndim != 1 and (vdim != bd.ndim or input._shape[:-1] != bd._shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(bd._shape)} "
                           f"and input value tensor {list(input._shape)}")
    if sorter is not None:
        bd = gather(bd.detach(), -1, sorter)
    return _search(bd, input, right, out_int32)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """torch.bucketize: the index of the bucket of `boundaries` (1-D, sorted) each value
    falls in (right=True: boundaries[i-1] <= x < boundaries[i]).

    >>> import eagergrad as torch
    >>> torch.bucketize(torch.tensor([0.5, 2.0, 9.0]), torch.tensor([1.0, 2.0, 3.0]))
    tensor([0, 1, 3])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries.ndim})")
    return _search(boundaries, input, right, out_int32)


# ---- isin: torch's two algorithms (static shapes) -------------------------------------------
def _isin_k(elements, test_elements, assume_unique, invert, sorting, dtype):
    e, t = elements.astype(dtype.np).reshape(-1), test_elements.astype(dtype.np).reshape(-1)
    if not sorting:  # (isin_default_kernel: any equal test element)
        found = (e[:, None] == t[None, :]).any(-1) if e.size * t.size <= 1 << 22 else \
            _isin_sorted(e, t)
    elif not assume_unique:  # (isin_sorting on unique values: the same membership)
        found = _isin_sorted(e, t)
    else:  # isin_sorting step by step: stable sort, neighbours equal, back in order
        s_all = jnp.concatenate([e, t])
        order = jnp.argsort(s_all, stable=True)
        s = s_all[order]
        dup = jnp.concatenate([(s[1:] != s[:-1]) if invert else (s[1:] == s[:-1]),
                               jnp.full(1, invert)])
        return jnp.zeros(s.shape, bool).at[order].set(dup)[:e.size].reshape(elements.shape)
    return (found != invert).reshape(elements.shape)


def _isin_sorted(e, t):
    st = jnp.sort(t)
    i = jnp.clip(jnp.searchsorted(st, e), 0, st.size - 1)
    return st[i] == e


ISIN = defop("isin", _isin_k, inputs=("elements", "test_elements"),
             attrs=("assume_unique", "invert", "sorting", "dtype"))


def _isin_dtype(x):
    """torch's check of each argument (a Python number: by its ScalarType)."""
    if isinstance(x, Tensor):
        name = x.dtype.scalar_name if x.dtype is D.bool_ or x.dtype.is_complex else None
    else:
        name = "Bool" if isinstance(x, bool) else "ComplexDouble" if isinstance(x, complex) \
            else None
    if name is not None:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {name}")


_ISIN_OVERLOADS = "".join(
    f" * ({args}, *, bool assume_unique = False, bool invert = False, Tensor out = None)\n"
    for args in ("Tensor elements, Tensor test_elements", "Number element, Tensor test_elements",
                 "Tensor elements, Number test_element"))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """torch.isin: whether each element of `elements` is in `test_elements` (== as the
    comparison: NaN never is); one of them may be a number.

    >>> import eagergrad as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]))
    tensor([False,  True, False])
    """
    e_t, t_t = isinstance(elements, Tensor), isinstance(test_elements, Tensor)
    if not e_t and not t_t:
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        f"expected one of:\n{_ISIN_OVERLOADS}")
    _isin_dtype(elements)
    _isin_dtype(test_elements)
    if not t_t:  # (isin.Tensor_Scalar: eq / ne)
        return elements.ne(test_elements) if invert else elements.eq(test_elements)
    elements = as_t(elements)
    n, m = elements.numel(), test_elements.numel()
    sorting = n > 0 and m >= int(10.0 * n ** 0.145)  # (torch's heuristic, numpy's)
    if sorting:  # (a cat of the flattened tensors: no 0-dim or wrapped-number rule)
        dt = D.result_type([elements.dtype, test_elements.dtype], [], [])
    else:
        dt = promote(elements, test_elements)
    return call_op(ISIN, (elements, test_elements),
                   (bool(assume_unique) and sorting, bool(invert), sorting, dt))


# ---- unique, unique_consecutive: on the host ------------------------------------------------
UNIQUE2 = defop("_unique2", _no_kernel, node="Unique2Backward0", self=_nyi("_unique2"))
UNIQUE_DIM = defop("unique_dim", _no_kernel, node="UniqueDimBackward0",
                   self=_nyi("unique_dim"))
UNIQUE_CONSECUTIVE = defop("unique_consecutive", _no_kernel,
                           node="UniqueConsecutiveBackward0", self=_nyi("unique_consecutive"))


def _runs(keys_differ, n):
    """Run ids (0, 1, ...) of n sorted items from `keys_differ[i]` (item i+1 starts a run)."""
    return np.concatenate([[0], np.cumsum(keys_differ)]).astype(np.int64) if n else \
        np.zeros(0, np.int64)


def _unique_flat(a, consecutive):
    """(values, inverse, counts) of a 1-D numpy array: torch's, NaNs never equal."""
    order = np.arange(a.size) if consecutive else np.argsort(a, kind="stable")
    s = a[order]
    run = _runs(s[1:] != s[:-1], a.size)
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]])) if a.size else \
        np.zeros(0, np.int64)
    inverse = np.empty(a.size, np.int64)
    inverse[order] = run
    counts = np.bincount(run, minlength=len(starts)).astype(np.int64)
    return s[starts], inverse, counts


def _unique_rows(a, consecutive):
    """The same over the rows of a 2-D array (torch's unique_dim: rows compared with ==)."""
    n = a.shape[0]
    if consecutive or a.shape[1] == 0:
        order = np.arange(n)
    else:
        order = np.lexsort(a.T[::-1]) if n else np.zeros(0, np.int64)
    s = a[order]
    differ = np.any(s[1:] != s[:-1], axis=1) if a.shape[1] else np.zeros(max(n - 1, 0), bool)
    run = _runs(differ, n)
    starts = np.flatnonzero(np.concatenate([[True], differ])) if n else np.zeros(0, np.int64)
    inverse = np.empty(n, np.int64)
    inverse[order] = run
    counts = np.bincount(run, minlength=len(starts)).astype(np.int64)
    return s[starts], inverse, counts


def _unique(input, dim, consecutive, return_inverse, return_counts, name):
    if input.dtype.is_complex:
        kernel = "unique_dim" if dim is not None and not consecutive else "unique"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    a = _host(input, name)
    if dim is None:
        vals, inv, counts = _unique_flat(a.reshape(-1), consecutive)
        inv = inv.reshape(a.shape)
        op = UNIQUE_CONSECUTIVE if consecutive else UNIQUE2
        out = _out(op, (input,), (), jax.device_put(vals), (input,))
    else:
        d = _wrap_dim(dim, input.ndim)
        if input.ndim == 0:
            rows = a.reshape(1, 1)
        else:
            moved = np.moveaxis(a, d, 0)
            if moved.size == 0 and moved.shape[0] != 0 and not consecutive:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                                   "unique cannot be applied")
            rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
        vals, inv, counts = _unique_rows(rows, consecutive)
        if input.ndim:
            shape = (vals.shape[0],) + tuple(np.delete(np.array(a.shape, dtype=np.int64), d))
            vals = np.ascontiguousarray(np.moveaxis(vals.reshape(shape), 0, d))
        else:
            vals = vals.reshape(-1)
        op = UNIQUE_CONSECUTIVE if consecutive else UNIQUE_DIM
        out = _out(op, (input,), (), jax.device_put(vals), (input,))
        if input.ndim and d and out.numel():  # torch's output is moved from dim 0
            out._stride = _moved_strides(out._shape, d)
    res = [out]
    if return_inverse:
        res.append(_const(inv))
    if return_counts:
        res.append(_const(counts))
    return res[0] if len(res) == 1 else tuple(res)


def _moved_strides(shape, d):
    """The strides of a contiguous tensor of shape (shape[d], *rest) moved to dim d."""
    first = (shape[d],) + shape[:d] + shape[d + 1:]
    st, acc = [0] * len(first), 1
    for i in range(len(first) - 1, -1, -1):
        st[i] = acc
        acc *= first[i]
    rest = st[1:]
    return tuple(rest[:d]) + (st[0],) + tuple(rest[d:])


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: the distinct values (or slices along `dim`), sorted, with the inverse
    indices and counts if asked for. Computed on the host (a data-dependent shape).

    >>> import eagergrad as torch
    >>> torch.unique(torch.tensor([3, 1, 3]))
    tensor([1, 3])
    """
    return _unique(input, dim, False, return_inverse, return_counts, "unique")


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: each run of equal consecutive values (or slices) once.

    >>> import eagergrad as torch
    >>> torch.unique_consecutive(torch.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique(input, dim, True, return_inverse, return_counts, "unique_consecutive")


# ---- bincount: on the host; histc, histogram: static shapes ----------------------------------
def _bincount_not_implemented(grad):
    raise RuntimeError("derivative for aten::bincount is not implemented")


BINCOUNT = defop("bincount", _no_kernel, inputs=("self", "weights"), node="NotImplemented",
                 weights=_bincount_not_implemented)


def bincount(input, weights=None, minlength=0):
    """torch.bincount: how often each value of a 1-D non-negative integer tensor occurs
    (or the sum of its weights). Computed on the host (a data-dependent length).

    >>> import eagergrad as torch
    >>> torch.bincount(torch.tensor([1, 1, 3]))
    tensor([0, 2, 0, 1])
    """
    if input.dtype._kind != 1 or input.dtype is D.bool_:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim == 1 and input.numel() == 0:  # (torch: int64 zeros, weights or not)
        return _const(np.zeros(minlength, np.int64))
    a = _host(input, "bincount")
    if input.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights._shape[0] != a.size):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = max(int(a.max()) + 1 if a.size else 0, minlength)
    if weights is None:
        return _const(np.bincount(a, minlength=n).astype(np.int64))
    if weights.dtype is not D.float32 and weights.dtype is not D.float64:
        weights = weights.to(D.float64)
    w = _host(weights, "bincount")
    out = np.zeros(n, w.dtype)
    np.add.at(out, a, w)  # (in the weights' precision, element by element, as torch)
    return _out(BINCOUNT, (input, weights), (), jax.device_put(out), (weights,))


def _linspace(lo, hi, steps, dt):
    """ATen's linspace in dtype dt (lo, hi may be traced): up from lo, then down to hi."""
    lo, hi = jnp.asarray(lo, dt), jnp.asarray(hi, dt)
    i = jnp.arange(steps)
    step = (hi - lo) / jnp.asarray(steps - 1, dt)
    return jnp.where(i < steps // 2, lo + step * i.astype(dt), hi - step * (steps - 1 - i)
                     .astype(dt))


def _bin_positions(x, lo, hi, bins, edges=None):
    """torch's bin of each element (LINEAR_INTERPOLATION, or its local search among
    `edges`), the rightmost bin closed; -1 where outside [lo, hi] or NaN."""
    pos = ((x - lo) * jnp.asarray(bins, x.dtype) / (hi - lo))
    pos = jnp.where(jnp.isfinite(pos), pos, 0).astype(jnp.int64)
    if edges is not None:
        first = jnp.maximum(pos - 1, 0)
        last = jnp.minimum(pos + 2, bins + 1)
        below = sum(((first + k < last) & (edges[jnp.minimum(first + k, bins)] <= x))
                    .astype(jnp.int64) for k in range(3))
        pos = first + below - 1
    pos = jnp.where(pos == bins, bins - 1, pos)
    return jnp.where((x >= lo) & (x <= hi), pos, -1)


def _count(pos, bins, w, dt):
    return jnp.zeros(bins, dt).at[jnp.where(pos < 0, bins, pos)].add(w, mode="drop")


def _histc_k(self, bins, min, max):
    x = self.reshape(-1)
    dt = x.dtype
    if min == max and x.size:
        lo, hi = jnp.min(x), jnp.max(x)
    else:
        lo, hi = jnp.asarray(min, dt), jnp.asarray(max, dt)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    return _count(_bin_positions(x, lo, hi, bins), bins, jnp.ones(x.shape, dt), dt)


HISTC = defop("histc", _histc_k, attrs=("bins", "min", "max"))


def _fmt(v):
    """A double as C++ streams it (torch's messages)."""
    if np.isnan(v):
        return "-nan" if np.signbit(v) else "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def histc(input, bins=100, min=0, max=0):
    """torch.histc: counts of `bins` equal bins over [min, max] (the data's range when
    min == max); values outside are ignored.

    >>> import eagergrad as torch
    >>> torch.histc(torch.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel() and _concrete(input):
        a = np.asarray(input._value)
        lo, hi = float(a.min()), float(a.max())
        if np.isnan(lo) or np.isnan(hi):  # (torch's vectorized aminmax gives -nan)
            lo = hi = -np.nan
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return call_op(HISTC, (input,), (int(bins), float(min), float(max)))


def _hist_not_implemented(grad):
    raise RuntimeError("derivative for aten::histogram is not implemented")


def _histogram_k(self, weight, bins, range, density):
    x = self.reshape(-1)
    dt = x.dtype
    if range is not None:
        lo, hi = jnp.asarray(range[0], jnp.float64), jnp.asarray(range[1], jnp.float64)
    elif x.size:
        lo, hi = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
    else:
        lo, hi = jnp.asarray(0.0, jnp.float64), jnp.asarray(1.0, jnp.float64)
    same = lo == hi
    lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
    edges = _linspace(lo.astype(dt), hi.astype(dt), bins + 1, dt)
    pos = _bin_positions(x, edges[0], edges[-1], bins, edges)
    return _weighted(pos, bins, weight, x, dt, density, edges)


def _weighted(pos, bins, weight, x, dt, density, edges):
    w = weight.reshape(-1) if weight.size == x.size and weight.size else jnp.ones(x.shape, dt)
    hist = _count(pos, bins, w, dt)
    if density:
        hist = hist / hist.sum() / (edges[1:] - edges[:-1])
    return hist, edges


def _histogram_bins_k(self, bins, weight, density):
    x = self.reshape(-1)
    n = bins.shape[0] - 1
    pos = _bsearch(bins[None], x[None], True)[0] - 1
    pos = jnp.where(pos == n, n - 1, pos)
    pos = jnp.where((x >= bins[0]) & (x <= bins[-1]), pos, -1)
    return _weighted(pos, n, weight, x, x.dtype, density, bins)


HISTOGRAM = defop("histogram", _histogram_k, inputs=("self", "weight"),
                  attrs=("bins", "range", "density"), outputs=("hist", "bin_edges"),
                  node="NotImplemented", self=_hist_not_implemented,
                  weight=_hist_not_implemented)
HISTOGRAM_BINS = defop("histogram_bins", _histogram_bins_k, inputs=("self", "bins", "weight"),
                       attrs=("density",), outputs=("hist", "bin_edges"), node="NotImplemented",
                       self=_hist_not_implemented, weight=_hist_not_implemented)


_C_NAME = {D.float32: "float", D.float64: "double", D.float16: "c10::Half",
           D.int64: "long int", D.int32: "int"}


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """torch.histogram: (hist, bin_edges) of the input's values, `bins` equal bins over
    `range` (default: the data's) or the given bin edges.

    >>> import eagergrad as torch
    >>> torch.histogram(torch.tensor([1.0, 2.0, 1.0]), bins=2).hist
    tensor([2., 1.])
    """
    if input.dtype is not D.float32 and input.dtype is not D.float64:
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got input("
                           f"{_C_NAME[input.dtype]}), and weight({_C_NAME.get(weight.dtype)})")
    if weight is not None and weight._shape != input._shape:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                           f"the same shape as the input tensor excluding its innermost "
                           f"dimension, but got input with shape {list(input._shape) + [1]} "
                           f"and weight with shape {list(weight._shape)}")
    w = weight if weight is not None else _const(np.zeros(0, input.dtype.np))
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype "
                               f"{_C_NAME[input.dtype]} and bins for dimension 0 with dtype "
                               f"{_C_NAME.get(bins.dtype)}")
        if bins.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               "but got 0 elements in the bins tensor for dimension 0")
        return _Histogram(_grad_edges_only(call_op(HISTOGRAM_BINS, (input, bins, w),
                                                   (bool(density),))))
    if bins <= 0:
        raise RuntimeError(f"torch.histogramdd: bins must be > 0, but got {bins} for "
                           "dimension 0")
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        range = (lo, hi)
    elif input.numel() and _concrete(input):
        a = np.asarray(input._value)
        lo, hi = float(a.min()), float(a.max())
    else:
        lo, hi = 0.0, 1.0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_fmt(lo)}, {_fmt(hi)}] "
                           "is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{_fmt(lo)} max {_fmt(hi)} for dimension 0")
    return _Histogram(_grad_edges_only(call_op(HISTOGRAM, (input, w),
                                               (int(bins), range, bool(density)))))


# ---- histogramdd: torch's _histogramdd_bin_edges, _histogramdd_from_bin_cts / _tensors -------
_Histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))


def _hdd_edges(x, bins, range):
    """The linspace edges of each dim of x (M, N): over `range`, else the dim's min and max
    (0 and 1 when empty), widened by 0.5 each way when they are equal."""
    dt, out = x.dtype, []
    for d, b in enumerate(bins):
        if range is not None:
            lo, hi = (jnp.asarray(v, jnp.float64) for v in range[2 * d:2 * d + 2])
        elif x.shape[0]:
            lo, hi = jnp.min(x[:, d]).astype(jnp.float64), jnp.max(x[:, d]).astype(jnp.float64)
        else:
            lo, hi = jnp.asarray(0.0, jnp.float64), jnp.asarray(1.0, jnp.float64)
        same = lo == hi
        lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
        out.append(_linspace(lo.astype(dt), hi.astype(dt), b + 1, dt) if b > 0 else
                   lo.astype(dt)[None][:b + 1])
    return out


def _hdd_count(x, weight, edges, density, linear):
    """torch's histogramdd_cpu_contiguous: each row's bin in every dim (linear: by
    interpolation with the local search, else the binary search), weights summed."""
    m, n = x.shape
    shape = tuple(e.shape[0] - 1 for e in edges)
    total = math.prod(shape)
    if n == 0:
        return jnp.zeros((), x.dtype)
    flat, out = jnp.zeros(m, jnp.int64), jnp.zeros(m, bool)
    for d, e in enumerate(edges):
        k, col = shape[d], x[:, d]
        if linear:
            pos = _bin_positions(col, e[0], e[-1], k, e)
        else:
            pos = _bsearch(e[None], col[None], True)[0] - 1
            pos = jnp.where((col >= e[0]) & (col <= e[-1]), jnp.where(pos == k, k - 1, pos), -1)
        out = out | (pos < 0)
        flat = flat * k + pos
    w = weight.reshape(-1) if weight.size == m and weight.size else jnp.ones(m, x.dtype)
    hist = jnp.zeros(total, x.dtype).at[jnp.where(out, total, flat)].add(w, mode="drop")
    hist = hist.reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            hist = hist / (e[1:] - e[:-1]).reshape(tuple(-1 if i == d else 1 for i in range(n)))
    return hist


def _hdd_rows(self):
    return self.reshape(math.prod(self.shape[:-1]), self.shape[-1])


def _hdd_not_implemented(name):
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return formula


# (one output per dimension of the histogram)
HISTOGRAMDD_BIN_EDGES = defop(
    "_histogramdd_bin_edges", lambda self, weight, bins, range:
    tuple(_hdd_edges(_hdd_rows(self), bins, range)), inputs=("self", "weight"),
    attrs=("bins", "range"), outputs=("bin_edges", "more"), node="NotImplemented",
    self=_hdd_not_implemented("_histogramdd_bin_edges"),
    weight=_hdd_not_implemented("_histogramdd_bin_edges"))
HISTOGRAMDD_FROM_BIN_CTS = defop(
    "_histogramdd_from_bin_cts", lambda self, weight, bins, range, density:
    _hdd_count(_hdd_rows(self), weight, _hdd_edges(_hdd_rows(self), bins, range), density,
               True), inputs=("self", "weight"), attrs=("bins", "range", "density"),
    node="NotImplemented", self=_hdd_not_implemented("_histogramdd_from_bin_cts"),
    weight=_hdd_not_implemented("_histogramdd_from_bin_cts"))
HISTOGRAMDD_FROM_BIN_TENSORS = defop(
    "_histogramdd_from_bin_tensors", lambda self, weight, *bins, density:
    _hdd_count(_hdd_rows(self), weight, bins, density, False),
    inputs=("self", "weight", "*bins"), attrs=("density",), node="NotImplemented",
    **dict.fromkeys(("self", "weight", "bins"),
                    _hdd_not_implemented("_histogramdd_from_bin_tensors")))


def _hdd_edges_in_order(out, n_bins):
    """The NotImplemented node's edges in torch's order (self, bins..., weight), only
    those of the inputs that require grad."""
    fn = out._grad_fn
    if fn is not None and len(fn._next) == 2 + n_bins:
        nxt = fn._next
        fn._next = (nxt[0],) + tuple(nxt[2:]) + (nxt[1],)
    return _grad_edges_only(out)


def _hdd_check_weight(input, weight):
    if weight is None:
        return
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got input("
                           f"{_C_NAME.get(input.dtype)}), and weight({_C_NAME.get(weight.dtype)})")
    if tuple(weight._shape or (1,)) != tuple(input._shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                           f"the same shape as the input tensor excluding its innermost "
                           f"dimension, but got input with shape {list(input._shape)} and "
                           f"weight with shape {list(weight._shape)}")


def _hdd_check_kernel(input):
    if input.dtype not in (D.float32, D.float64, D.float16, D.bfloat16):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")


def _hdd_outer(input, n, range):
    """torch's select_outer_bin_edges checks, on the host (the data's extremes only when
    they are concrete); `range` as a tuple of floats."""
    if range is not None:
        range = tuple(float(v) for v in range)
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range "
                               f"should have {2 * n} elements, but got {len(range)}")
        lo, hi = range[0::2], range[1::2]
    elif input.numel():
        if input.dtype not in (D.float32, D.float64):
            raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                      f"'{input.dtype.scalar_name}'")
        if not _concrete(input):
            return range
        a = np.asarray(input._value).reshape(-1, n)
        lo, hi = a.min(0).tolist(), a.max(0).tolist()
    else:
        lo, hi = [0.0] * n, [1.0] * n
    for d, (lo_d, hi_d) in enumerate(zip(lo, hi)):
        if not (np.isfinite(lo_d) and np.isfinite(hi_d)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo_d)}, "
                               f"{_fmt(hi_d)}] is not finite")
        if lo_d > hi_d:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo_d)} max {_fmt(hi_d)} for dimension {d}")
    return range


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """torch.histogramdd: the histogram of the rows of `input` (..., N) as points in N
    dimensions: `bins` an int or N ints (equal bins over `range`, default the data's) or
    N tensors of bin edges. Forward only (torch has no derivative either).

    >>> import eagergrad as torch
    >>> torch.histogramdd(torch.tensor([[0.0, 1.0], [1.0, 1.0]]), bins=2).hist
    tensor([[0., 1.],
            [0., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = input._shape[-1]
    w = weight if weight is not None else _const(np.zeros(0, input.dtype.np))
    if isinstance(bins, (list, tuple)) and any(isinstance(b, Tensor) for b in bins):
        if not all(isinstance(b, Tensor) for b in bins):
            raise TypeError("histogramdd(): argument 'bins' must be tuple of ints or a list "
                            "of tensors")
        if len(bins) != n:
            raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a "
                               f"{n}-dimensional histogram but got {len(bins)}")
        for d, b in enumerate(bins):
            if b.dtype is not input.dtype:
                raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should "
                                   f"have the same dtype, but got input with dtype "
                                   f"{_C_NAME.get(input.dtype)} and bins for dimension {d} "
                                   f"with dtype {_C_NAME.get(b.dtype)}")
            if b.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, "
                                   f"but got {b.ndim} dimensions in the bins tensor for "
                                   f"dimension {d}")
            if b.numel() == 0:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 "
                                   f"element, but got 0 elements in the bins tensor for "
                                   f"dimension {d}")
        _hdd_check_weight(input, weight)
        for d, b in enumerate(bins):
            if b.numel() < 2:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got "
                                   f"{b.numel() - 1} for dimension {d}")
        _hdd_check_kernel(input)
        hist = call_op(HISTOGRAMDD_FROM_BIN_TENSORS, (input, w, *bins), (bool(density),))
        return _Histogramdd((_hdd_edges_in_order(hist, len(bins)), tuple(bins)))
    if isinstance(bins, int) and not isinstance(bins, bool):
        bins = (bins,) * n
    elif not (isinstance(bins, (list, tuple)) and
              all(isinstance(b, int) and not isinstance(b, bool) for b in bins)):
        raise TypeError(f"histogramdd() received an invalid combination of arguments - got "
                        f"(Tensor, {type(bins).__name__}), but expected one of:\n" + "".join(
                            f" * (Tensor input, {b} bins, tuple of floats range = None, Tensor "
                            f"weight = None, bool density = False)\n"
                            for b in ("int", "tuple of ints", "tuple of Tensors")))
    bins = tuple(int(b) for b in bins)
    range = _hdd_outer(input, n, range)
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    for d, b in enumerate(bins):
        if b + 1 < 0:
            raise RuntimeError("number of steps must be non-negative")
        if b + 1 == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 "
                               f"element, but got 0 elements in the bins tensor for "
                               f"dimension {d}")
    _hdd_check_weight(input, weight)
    for d, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {d}")
    _hdd_check_kernel(input)
    edges = call_op(HISTOGRAMDD_BIN_EDGES, (input, w), (bins, range))
    hist = call_op(HISTOGRAMDD_FROM_BIN_CTS, (input, w), (bins, range, bool(density)))
    return _Histogramdd((_grad_edges_only(hist), _grad_edges_only(edges)))


# ---- quantile, nanquantile: torch's composite ------------------------------------------------
UNSQUEEZE1 = defop("unsqueeze_fresh", lambda self, dim: jnp.expand_dims(self, dim),
                   attrs=("dim",), node="UnsqueezeBackward1",
                   self=lambda grad, dim: grad.squeeze(dim))
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _inplace(new, old):
    """`new` as the result of an in-place op of ATen's composite on `old` (its version)."""
    new._version_counter.version = old._version_counter.version + 1
    return new


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    scalar_q = not isinstance(q, Tensor)
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if interpolation not in _MODES:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if scalar_q:
        q = _const(np.asarray(q, input.dtype.np))
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype is not D.float32 and input.dtype is not D.float64:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    d = _wrap_dim(0 if dim is None else dim, input.ndim)
    if dim is not None and input.ndim:
        out_shape = list(input._shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    else:
        out_shape = [1] * input.ndim if keepdim else []
    if not scalar_q and _concrete(q):
        a = np.asarray(q._value)
        if not ((a >= 0) & (a <= 1)).all():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        s = sort(input.flatten()).values
    elif d == input.ndim - 1:
        s = sort(input).values
    else:
        s = sort(input.unsqueeze(-1).transpose(d, -1)).values
    n = s._shape[-1]
    s = s.view(out_shape + [n])
    if n > 1 << 24:
        raise RuntimeError("quantile() input tensor is too large")
    if ignore_nan:
        ranks = q * (s.isnan().logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = n - 1
        nan = s.isnan().any(-1, True)
        ranks = (q * last).expand(np.broadcast_shapes(q._shape, nan._shape)) \
            .masked_fill(nan, last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(D.int64)
    out = gather(s, -1, below)
    if interpolation in ("linear", "midpoint"):
        from .special import lerp
        weights = ranks.new_full(ranks._shape, 0.5) if interpolation == "midpoint" else \
            ranks - below
        out = _inplace(lerp(out, gather(s, -1, ranks.ceil().to(D.int64)), weights), out)
    if scalar_q:
        return _inplace(call_op(SQUEEZE4, (out,), ((out.ndim - 1,), out._shape)), out)
    out = _inplace(call_op(UNSQUEEZE1, (out,), (0,)), out)
    out = _inplace(call_op(TRANSPOSE1, (out,), (0, out.ndim - 1)), out)
    shape = out._shape
    out = _inplace(call_op(SQUEEZE4, (out,), ((out.ndim - 1,), shape)), out)
    out._stride = _quantile_strides(shape)
    return out


def _quantile_strides(shape):
    """The strides after unsqueeze_(0).transpose_(0, -1).squeeze_(-1) of a contiguous
    tensor (shape: after the transpose)."""
    orig = (1,) + shape[1:-1] + (shape[0],)  # (before the transpose)
    st, acc = [0] * len(orig), 1
    for i in range(len(orig) - 1, -1, -1):
        st[i] = acc
        acc *= orig[i]
    st[0], st[-1] = st[-1], st[0]
    return tuple(st[:-1])


@autocast_op("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.quantile: the q-th quantiles along `dim` (of all elements if None), between
    sorted neighbours as `interpolation` says; NaN where there is a NaN.

    >>> import eagergrad as torch
    >>> torch.quantile(torch.tensor([1.0, 2.0, 4.0, 8.0]), 0.5)
    tensor(3.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


@autocast_op("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.nanquantile: quantile ignoring NaNs (NaN where all are NaN).

    >>> import eagergrad as torch
    >>> torch.nanquantile(torch.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)


# ---- nansum, nanmean ----------------------------------------------------------------------
def _nansum_back(grad, self, dim, keepdim):
    dims = tuple(range(self.ndim)) if dim is None else dim
    return _restore(grad, dims, keepdim).expand(self._shape) * self.isnan().logical_not()


NANSUM = defop("nansum", lambda self, dim, keepdim, dtype:
               jnp.nansum(self, axis=dim, keepdims=keepdim, dtype=dtype.np),
               attrs=("dim", "keepdim", "dtype"),
               complex_error=(RuntimeError, "nansum on CPU does not support complex inputs"),
               self=_nansum_back)


def _nan_dims(input, dim):
    if dim is None or dim == () or dim == []:
        return None
    return _dims(dim, input.ndim)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nansum: the sum with NaNs counted as zero.

    >>> import eagergrad as torch
    >>> torch.nansum(torch.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    from .reduce import _sum_dtype, sum as _sum
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not input.dtype.is_differentiable:  # (integers have no NaN: torch's sum)
        dims = _nan_dims(input, dim)
        return _sum(input, tuple(range(input.ndim)) if dims is None else dims, keepdim,
                    dtype=dtype)
    return call_op(NANSUM, (input,), (_nan_dims(input, dim), keepdim,
                                      _sum_dtype(input.dtype, dtype)))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean: the mean of the non-NaN elements.

    >>> import eagergrad as torch
    >>> torch.nanmean(torch.tensor([1.0, float("nan"), 3.0]))
    tensor(2.)
    """
    if not input.dtype.is_differentiable:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.scalar_name}")
    dims = _nan_dims(input, dim)
    factor = input.isnan().logical_not().sum(tuple(range(input.ndim)) if dims is None else dims,
                                             keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(factor)
