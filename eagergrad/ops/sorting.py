"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

NOTE [ties]: the indices torch returns at ties decide where the gradient goes, so the
kernels reproduce torch CPU's choice, not just some valid one:
- sort is stable (NaN largest: last ascending, first descending), as torch's
  std::stable_sort, and as its std::sort for up to 16 elements per row (an insertion
  sort); its unstable sort of longer rows with ties is not reproduced.
- median(dim) takes the ((n - 1) // 2)-th element of the stable order, or the first NaN;
  nanmedian(dim) the ((n - nans - 1) // 2)-th of the non-NaN ones, and in an all-NaN row
  the index std::nth_element leaves first among n equivalent elements (_nth_all_equal).
- mode sorts (value, index) pairs by value with std::sort (an insertion sort up to 16
  elements, so ties keep their order; NaNs compare false) and takes the last index of
  the first longest run.
- kthvalue runs torch's own quickselect (_quick_select), swap for swap.
- topk runs what torch's topk_impl_loop runs, as libstdc++ implements it: std::partial_sort
  (a heap) when k * 64 <= n, else std::nth_element (introselect) and std::sort of the
  first k - 1 elements (introsort). Not reproduced: the heap fallbacks of introselect
  and introsort at their depth limits (adversarial inputs only).
"""
import jax
import jax.numpy as jnp
from jax import lax

from .. import _dtypes as D
from .._shapes import wrap_dim as _wrap_dim
from ._table import call_op, defop
from .reduce import _evenly, _select_back, _return_type

_UNSET = object()


_Sort, _Topk, _Kthvalue, _Median = (_return_type(n)
                                    for n in ("sort", "topk", "kthvalue", "median"))


def _select(grad, indices, dim, keepdim, self_sym_sizes):
    """value_selecting_reduction_backward (a 0-dim input scatters as a 1-element one)."""
    if not self_sym_sizes:
        return _select_back(grad.reshape(1), indices.reshape(1), 0, True, (1,)).reshape(())
    return _select_back(grad, indices, dim, keepdim, self_sym_sizes)


def _rows(a, dim):
    """a with `dim` moved last and the other dims flattened: (rows, n)."""
    a = jnp.moveaxis(a, dim, -1)
    return a.reshape(-1, a.shape[-1]), a.shape[:-1]


def _unrows(r, lead, dim):
    return jnp.moveaxis(r.reshape(*lead, r.shape[-1]), -1, dim)


def _isnan(a):
    return jnp.isnan(a) if jnp.issubdtype(a.dtype, jnp.inexact) else jnp.zeros(a.shape, bool)


def _gt(a, b):
    """torch's `gt_or_nan`: NaN above everything."""
    return (_isnan(a) & ~_isnan(b)) | (a > b)


def _swap(v, a, b):
    return v.at[a].set(v[b]).at[b].set(v[a])


def _swap2(v, ix, a, b, cond=True):
    b = jnp.where(cond, b, a)  # swapping a with itself does nothing
    return _swap(v, a, b), _swap(ix, a, b)


# ---- sort -------------------------------------------------------------------------------
def _sort_k(self, dim, descending, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    i = jnp.argsort(self, axis=dim, stable=True, descending=descending)
    return jnp.take_along_axis(self, i, axis=dim), i.astype(jnp.int64)


def _sort_back(grad, indices, dim, self_sym_sizes):
    return _select(grad, indices, dim, True, self_sym_sizes)


SORT = defop("sort", _sort_k, attrs=("dim", "descending", "self_sym_sizes"),
             outputs=("values", "indices"), nondiff=(1,), node="SortBackward0", self=_sort_back)
SORT_STABLE = defop("sort_stable", _sort_k, attrs=("dim", "descending", "self_sym_sizes"),
                    outputs=("values", "indices"), nondiff=(1,), node="SortBackward1",
                    self=_sort_back)
ARGSORT = defop("argsort", lambda self, dim, descending: _sort_k(self, dim, descending, None)[1],
                attrs=("dim", "descending"))


def _no_complex(input, msg):
    if input.dtype.is_complex:
        raise RuntimeError(msg)


def sort(input, dim=-1, descending=False, *, stable=_UNSET):
    """torch.sort: (values, indices) along `dim`; ties keep their order (stable).

    >>> import eagergrad as torch
    >>> torch.sort(torch.tensor([3.0, 1.0, 2.0]))
    eagergrad.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
    """
    _no_complex(input, " Sort does not support complex dtypes on CPU")
    d = _wrap_dim(dim, input.ndim)
    op = SORT if stable is _UNSET else SORT_STABLE  # torch's sort.stable overload
    return _Sort(call_op(op, (input,), (d, bool(descending), input._shape)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """torch.argsort: the indices that sort `input` along `dim` (stable at ties).

    >>> import eagergrad as torch
    >>> torch.argsort(torch.tensor([3.0, 1.0, 2.0]))
    tensor([1, 2, 0])
    """
    _no_complex(input, " Sort does not support complex dtypes on CPU")
    return call_op(ARGSORT, (input,), (_wrap_dim(dim, input.ndim), bool(descending)))


def msort(input):
    """torch.msort: sort(input, dim=0).values.

    >>> import eagergrad as torch
    >>> torch.msort(torch.tensor([[2.0, 1.0], [1.0, 3.0]]))
    tensor([[1., 1.],
            [2., 3.]])
    """
    return sort(input, 0).values


# ---- topk: libstdc++'s nth_element and sort, step for step --------------------------------
def _insertion_sort(v, ix, first, last, comp):
    """std::__insertion_sort on [first, last): stable."""
    def outer(s):
        v, ix, i = s
        x, xi = v[i], ix[i]

        def inner(t):
            v, ix, j = t
            return v.at[j].set(v[j - 1]), ix.at[j].set(ix[j - 1]), j - 1
        v, ix, j = lax.while_loop(lambda t: (t[2] > first) & comp(x, t[0][t[2] - 1]),
                                  inner, (v, ix, i))
        return v.at[j].set(x), ix.at[j].set(xi), i + 1
    v, ix, _ = lax.while_loop(lambda s: s[2] < last, outer, (v, ix, first + 1))
    return v, ix


def _partition_pivot(v, ix, first, last, comp):
    """std::__unguarded_partition_pivot: median of three moved to `first`, then Hoare."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    ab, bc, ac = comp(v[a], v[b]), comp(v[b], v[c]), comp(v[a], v[c])
    m = jnp.where(ab, jnp.where(bc, b, jnp.where(ac, c, a)),
                  jnp.where(ac, a, jnp.where(bc, c, b)))
    v, ix = _swap2(v, ix, first, m)
    piv = v[first]
    hi = last - 1

    def step(s):
        v, ix, lo, hi, _ = s
        lo = lax.while_loop(lambda i: (i < last - 1) & comp(v[i], piv), lambda i: i + 1, lo)
        hi = lax.while_loop(lambda j: (j > first) & comp(piv, v[j]), lambda j: j - 1, hi - 1)
        go = lo < hi
        v, ix = _swap2(v, ix, lo, hi, go)
        return v, ix, jnp.where(go, lo + 1, lo), hi, go
    v, ix, lo, _, _ = lax.while_loop(lambda s: s[4], step, (v, ix, first + 1, hi + 1, True))
    return v, ix, lo


def _nth_element(v, ix, nth, comp):
    """std::nth_element (libstdc++'s introselect) on a row; the depth-limit fallback to a
    heap select (quadratic-pivot inputs only) is not reproduced."""
    n = v.shape[0]

    def step(s):
        v, ix, first, last = s
        v, ix, cut = _partition_pivot(v, ix, first, last, comp)
        return v, ix, jnp.where(cut <= nth, cut, first), jnp.where(cut <= nth, last, cut)
    v, ix, first, last = lax.while_loop(lambda s: s[3] - s[2] > 3, step,
                                        (v, ix, jnp.int64(0), jnp.int64(n)))
    return _insertion_sort(v, ix, first, last, comp)


def _adjust_heap(v, ix, hole, n, x, xi, comp):
    """std::__adjust_heap: the hole sinks to a leaf along larger children, then (x, xi)
    rises from there (std::__push_heap); n, the heap's length, may be traced."""
    top = hole

    def down(s):
        v, ix, hole = s
        c = 2 * (hole + 1)
        c = jnp.where(comp(v[c], v[c - 1]), c - 1, c)
        return v.at[hole].set(v[c]), ix.at[hole].set(ix[c]), c
    v, ix, hole = lax.while_loop(lambda s: s[2] < (n - 1) // 2, down, (v, ix, hole))
    tail = (n % 2 == 0) & (hole == (n - 2) // 2)
    c = jnp.where(tail, 2 * hole + 1, hole)
    v, ix, hole = v.at[hole].set(v[c]), ix.at[hole].set(ix[c]), c

    def up(s):
        v, ix, hole = s
        p = (hole - 1) // 2
        return v.at[hole].set(v[p]), ix.at[hole].set(ix[p]), p
    v, ix, hole = lax.while_loop(lambda s: (s[2] > top) & comp(s[0][(s[2] - 1) // 2], x),
                                 up, (v, ix, hole))
    return v.at[hole].set(x), ix.at[hole].set(xi)


def _partial_sort(v, ix, k, comp):
    """std::partial_sort (libstdc++): a heap of the first k, each later element that
    beats its top replaces it, then the heap is sorted."""
    def make(j, s):
        p = (k - 2) // 2 - j
        return _adjust_heap(*s, p, k, s[0][p], s[1][p], comp)
    v, ix = lax.fori_loop(0, k // 2, make, (v, ix))  # (k // 2 parents, from the last)

    def select(i, s):
        v, ix = s
        x, xi = v[i], ix[i]
        v2, ix2 = _adjust_heap(v.at[i].set(v[0]), ix.at[i].set(ix[0]), 0, k, x, xi, comp)
        take = comp(x, v[0])
        return jnp.where(take, v2, v), jnp.where(take, ix2, ix)
    v, ix = lax.fori_loop(k, v.shape[0], select, (v, ix))

    def pop(j, s):
        v, ix = s
        last = k - 1 - j
        return _adjust_heap(v.at[last].set(v[0]), ix.at[last].set(ix[0]), 0, last,
                            v[last], ix[last], comp)
    return lax.fori_loop(0, k - 1, pop, (v, ix))


def _std_sort(v, ix, n, comp, final=None):
    """std::sort (libstdc++'s introsort) of v[:n]: partitions down to ranges of at most 16,
    then one insertion sort. The ranges are disjoint, so an explicit stack may take them
    in any order; the heapsort fallback at the depth limit is not reproduced."""
    if n > 16:
        cap = 2 * n.bit_length() + 4
        depth = 2 * (n.bit_length() - 1)

        def step(s):
            v, ix, fs, ls, ds, sp = s
            f, l, d = fs[sp - 1], ls[sp - 1], ds[sp - 1]
            go = (l - f > 16) & (d > 0)
            v2, ix2, cut = _partition_pivot(v, ix, f, l, comp)
            v, ix = jnp.where(go, v2, v), jnp.where(go, ix2, ix)
            # pop (f, l); push (cut, l) and (f, cut) when it was partitioned
            fs = fs.at[sp - 1].set(cut).at[sp].set(f)
            ls = ls.at[sp].set(cut)
            ds = ds.at[sp - 1].set(d - 1).at[sp].set(d - 1)
            return v, ix, fs, ls, ds, jnp.where(go, sp + 1, sp - 1)
        z = jnp.zeros(cap, jnp.int64)
        v, ix, *_ = lax.while_loop(lambda s: s[5] > 0, step,
                                   (v, ix, z, z.at[0].set(n), z.at[0].set(depth), 1))
    if final is not None:  # (libstdc++'s own final insertion sort: _final_insertion_sort)
        return final(v, ix, n, comp)
    return _insertion_sort(v, ix, 0, n, comp)


def _topk_row(v, k, largest, sorted):
    n = v.shape[0]
    ix = jnp.arange(n, dtype=jnp.int64)
    comp = _gt if largest else (lambda a, b: (~_isnan(a) & _isnan(b)) | (a < b))
    if k * 64 <= n:
        return _partial_sort(v, ix, k, comp)[1][:k]
    v, ix = _nth_element(v, ix, k - 1, comp)
    if sorted and k > 1:
        v, ix = _std_sort(v, ix, k - 1, comp)
    return ix[:k]


def _topk_k(self, k, dim, largest, sorted, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    if k == 0:
        shape = list(self.shape)
        shape[dim] = 0
        return jnp.zeros(shape, self.dtype), jnp.zeros(shape, jnp.int64)
    r, lead = _rows(self, dim)
    # indices from loops jax cannot differentiate; values gathered, as jax can
    i = jax.vmap(lambda row: _topk_row(row, k, largest, sorted))(lax.stop_gradient(r))
    return _unrows(jnp.take_along_axis(r, i, axis=1), lead, dim), _unrows(i, lead, dim)


TOPK = defop("topk", _topk_k, attrs=("k", "dim", "largest", "sorted", "self_sym_sizes"),
             outputs=("values", "indices"), nondiff=(1,),
             self=lambda grad, indices, dim, self_sym_sizes:
             _select(grad, indices, dim, True, self_sym_sizes))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk: the k largest (or smallest) elements along `dim` and their indices.

    >>> import eagergrad as torch
    >>> torch.topk(torch.tensor([1.0, 3.0, 2.0]), 2)
    eagergrad.return_types.topk(
    values=tensor([3., 2.]),
    indices=tensor([1, 2]))
    """
    _no_complex(input, " topk does not support complex dtypes on CPU")
    if input.dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"topk(): argument 'k' (position 2) must be int, not "
                        f"{type(k).__name__}")
    d = _wrap_dim(dim, input.ndim)
    if not 0 <= k <= (input._shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return _Topk(call_op(TOPK, (input,), (k, d, bool(largest), bool(sorted), input._shape)))


# ---- kthvalue: torch's quickselect, swap for swap; median ----------------------------------
def _quick_select(v, k):
    """The original index of the k-th smallest element (0-based) of row v, found by
    torch's quick_select_template (Sorting.cpp), whose swaps decide the index at ties."""
    ix = jnp.arange(v.shape[0], dtype=jnp.int64)

    def part(s):
        v, ix, L, R, _ = s
        two = R == L + 1
        # two elements: order them; more: median of three, then partition around v[L]
        v, ix = _swap2(v, ix, (L + R) >> 1, L + 1, ~two)
        v, ix = _swap2(v, ix, L + 1, R, ~two & _gt(v[L + 1], v[R]))
        v, ix = _swap2(v, ix, L, R, _gt(v[L], v[R]))
        v, ix = _swap2(v, ix, L + 1, L, ~two & _gt(v[L + 1], v[L]))
        piv = v[L]

        def step(t):
            v, ix, i, j, _ = t
            i = lax.while_loop(lambda i: (i < R) & _gt(piv, v[i]), lambda i: i + 1, i + 1)
            j = lax.while_loop(lambda j: (j > L) & _gt(v[j], piv), lambda j: j - 1, j - 1)
            go = j >= i
            v, ix = _swap2(v, ix, i, j, go)
            return v, ix, i, j, go
        v2, ix2, i, j, _ = lax.while_loop(lambda t: t[4], step, (v, ix, L + 1, R, ~two))
        v2, ix2 = _swap2(v2, ix2, L, j)
        v, ix = jnp.where(two, v, v2), jnp.where(two, ix, ix2)
        L2 = jnp.where(j <= k, i, L)
        R2 = jnp.where(j >= k, j - 1, R)
        return v, ix, L2, R2, ~two
    _, ix, _, _, _ = lax.while_loop(lambda s: s[4] & (s[3] > s[2]), part,
                                    (v, ix, jnp.int64(0), jnp.int64(v.shape[0] - 1), True))
    return ix[k]


def _by_index(self, i, dim, keepdim):
    i = jnp.expand_dims(i, dim)
    v = jnp.take_along_axis(self, i, axis=dim)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def _kthvalue_k(self, k, dim, keepdim, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    r, lead = _rows(self, dim)
    i = jax.vmap(lambda row: _quick_select(row, k - 1))(lax.stop_gradient(r)).reshape(lead)
    return _by_index(self, i, dim, keepdim)


def _median_dim_k(self, dim, keepdim, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    n = self.shape[dim]
    # the ((n - 1) // 2)-th of the stable order (torch's nth_element compares (value,
    # index)), or the first NaN
    i = lax.index_in_dim(jnp.argsort(self, axis=dim, stable=True), (n - 1) // 2, dim, False)
    nan = _isnan(self)
    i = jnp.where(nan.any(axis=dim), jnp.argmax(nan, axis=dim), i)
    return _by_index(self, i.astype(jnp.int64), dim, keepdim)


def _median_k(self):
    flat = jnp.sort(self.reshape(-1))
    if flat.shape[0] == 0:  # torch: NaN
        return jnp.array(jnp.nan, self.dtype)
    m = flat[(flat.shape[0] - 1) // 2]
    return jnp.where(_isnan(flat).any(), jnp.nan, m) if jnp.issubdtype(m.dtype, jnp.inexact) \
        else m


KTHVALUE = defop("kthvalue", _kthvalue_k, attrs=("k", "dim", "keepdim", "self_sym_sizes"),
                 outputs=("values", "indices"), nondiff=(1,), self=_select)
MEDIAN_DIM = defop("median_dim", _median_dim_k, attrs=("dim", "keepdim", "self_sym_sizes"),
                   outputs=("values", "indices"), nondiff=(1,), node="MedianBackward1",
                   self=_select)
MEDIAN = defop("median", _median_k, node="MedianBackward0", self=_evenly)


def _not_impl(input, kernel):
    if input.dtype.is_complex or input.dtype is D.bool_:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{input.dtype.scalar_name}\'')


def _reduce_dim(input, dim, name):
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input._shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return d


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """torch.kthvalue: the k-th smallest element along `dim` (k from 1) and its index.

    >>> import eagergrad as torch
    >>> torch.kthvalue(torch.tensor([3.0, 1.0, 2.0]), 2)
    eagergrad.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    _not_impl(input, "kthvalue_cpu")
    d = _reduce_dim(input, dim, "kthvalue")
    if not 0 < k <= (input._shape[d] if input.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if out is not None:
        if out[0].dtype is not input.dtype:
            raise RuntimeError("output values must be of same type as input")
        if out[1].dtype is not D.int64:
            raise RuntimeError("output indices must be of scalar type Long")
        raise NotImplementedError("eagergrad does not implement torch.kthvalue(out=...) yet")
    return _Kthvalue(call_op(KTHVALUE, (input,), (k, d, keepdim, input._shape)))


def median(input, dim=_UNSET, keepdim=False):
    """torch.median: the lower median of all elements, or (values, indices) along `dim`.
    NaN if there is a NaN (the first NaN's index along `dim`).

    >>> import eagergrad as torch
    >>> torch.median(torch.tensor([3.0, 1.0, 2.0, 4.0]))
    tensor(2.)
    """
    if dim is _UNSET:
        _not_impl(input, "median_cpu")
        return call_op(MEDIAN, (input,))
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"median(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}")
    _not_impl(input, "median_out")
    d = _reduce_dim(input, dim, "median")
    return _Median(call_op(MEDIAN_DIM, (input,), (d, keepdim, input._shape)))


# ---- nanmedian, mode ---------------------------------------------------------------------
_Nanmedian, _Mode = _return_type("nanmedian"), _return_type("mode")


def _nth_all_equal(n):
    """The original index libstdc++'s std::nth_element leaves at position 0 of n
    equivalent elements (its introselect's median-of-three and Hoare partitions, with
    every comparison false): torch's nanmedian index in an all-NaN row."""
    idx = list(range(n))
    first, last = 0, n
    while last - first > 3:
        mid = first + (last - first) // 2
        idx[first], idx[mid] = idx[mid], idx[first]
        lo, hi = first + 1, last
        while True:
            hi -= 1
            if not lo < hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
            lo += 1
        if lo <= 0:
            first = lo
        else:
            last = lo
    return idx[0]


def _nanmedian_dim_k(self, dim, keepdim, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    n = self.shape[dim]
    nan = _isnan(self)
    count = n - jnp.sum(nan, axis=dim, keepdims=True)
    k = jnp.maximum(count - 1, 0) // 2
    order = jnp.argsort(self, axis=dim, stable=True)  # (NaN last)
    i = jnp.take_along_axis(order, k, axis=dim).squeeze(dim)
    i = jnp.where(count.squeeze(dim) == 0, _nth_all_equal(n), i)
    return _by_index(self, i.astype(jnp.int64), dim, keepdim)


def _nanmedian_k(self):
    flat = jnp.sort(self.reshape(-1))
    if flat.shape[0] == 0:
        return jnp.array(jnp.nan, self.dtype)
    count = flat.shape[0] - jnp.sum(_isnan(flat))
    return flat[jnp.maximum(count - 1, 0) // 2]


NANMEDIAN = defop("nanmedian", _nanmedian_k, node="NanmedianBackward0", self=_evenly)
NANMEDIAN_DIM = defop("nanmedian_dim", _nanmedian_dim_k,
                      attrs=("dim", "keepdim", "self_sym_sizes"), outputs=("values", "indices"),
                      nondiff=(1,), node="NanmedianBackward1", self=_select)


def nanmedian(input, dim=_UNSET, keepdim=False):
    """torch.nanmedian: median ignoring NaNs (NaN only when all are).

    >>> import eagergrad as torch
    >>> torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0, 2.0]))
    tensor(2.)
    """
    if dim is _UNSET:
        _not_impl(input, "median_cpu")
        return call_op(NANMEDIAN, (input,))
    _not_impl(input, "median_out")
    d = _reduce_dim(input, dim, "median")
    return _Nanmedian(call_op(NANMEDIAN_DIM, (input,), (d, keepdim, input._shape)))


def _front_insertion(v, ix, first, last, comp):
    """libstdc++'s __insertion_sort: an element below the first goes to the front at
    once, others move left while below their neighbour (the same for a strict weak order;
    not with NaNs, which compare false)."""
    pos = jnp.arange(v.shape[0])

    def outer(i, s):
        v, ix = s
        x, xi = v[i], ix[i]
        shift = (pos > first) & (pos <= i)
        fv = jnp.where(shift, v[jnp.maximum(pos - 1, 0)], v).at[first].set(x)
        fix = jnp.where(shift, ix[jnp.maximum(pos - 1, 0)], ix).at[first].set(xi)

        def inner(t):
            v, ix, j = t
            return v.at[j].set(v[j - 1]), ix.at[j].set(ix[j - 1]), j - 1
        lv, lix, j = lax.while_loop(lambda t: (t[2] > first) & comp(x, t[0][t[2] - 1]),
                                    inner, (v, ix, i))
        lv, lix = lv.at[j].set(x), lix.at[j].set(xi)
        front = comp(x, v[first])
        return jnp.where(front, fv, lv), jnp.where(front, fix, lix)
    return lax.fori_loop(first + 1, last, outer, (v, ix))


def _final_insertion(v, ix, n, comp):
    """libstdc++'s __final_insertion_sort: the first 16 as __insertion_sort, the rest
    moved left while below their neighbour."""
    v, ix = _front_insertion(v, ix, 0, min(n, 16), comp)

    def outer(i, s):
        v, ix = s
        x, xi = v[i], ix[i]

        def inner(t):
            v, ix, j = t
            return v.at[j].set(v[j - 1]), ix.at[j].set(ix[j - 1]), j - 1
        v, ix, j = lax.while_loop(lambda t: (t[2] > 0) & comp(x, t[0][t[2] - 1]), inner,
                                  (v, ix, i))
        return v.at[j].set(x), ix.at[j].set(xi)
    return lax.fori_loop(16, n, outer, (v, ix)) if n > 16 else (v, ix)


def _mode_row(v):
    n = v.shape[0]
    ix = jnp.arange(n, dtype=jnp.int64)
    v, ix = _std_sort(v, ix, n, lambda a, b: a < b, final=_final_insertion)
    differ = v[1:] != v[:-1]  # (NaN differs from everything)
    start = jnp.concatenate([jnp.ones(1, bool), differ])
    end = jnp.concatenate([differ, jnp.ones(1, bool)])
    pos = jnp.arange(n)
    run_start = lax.cummax(jnp.where(start, pos, 0))
    best = jnp.argmax(jnp.where(end, pos - run_start + 1, 0))  # (the first longest run)
    return ix[best]


def _mode_k(self, dim, keepdim, self_sym_sizes):
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    if self.size == 0:
        shape = self.shape[:dim] + ((1,) if keepdim else ()) + self.shape[dim + 1:]
        return jnp.zeros(shape, self.dtype), jnp.zeros(shape, jnp.int64)
    r, lead = _rows(self, dim)
    i = jax.vmap(_mode_row)(lax.stop_gradient(r)).reshape(lead)
    return _by_index(self, i, dim, keepdim)


MODE = defop("mode", _mode_k, attrs=("dim", "keepdim", "self_sym_sizes"),
             outputs=("values", "indices"), nondiff=(1,), self=_select,
             complex_error=(NotImplementedError, "\"mode_cpu\" not implemented for '{}'"))


def mode(input, dim=-1, keepdim=False):
    """torch.mode: the most frequent value along `dim` (the smallest at a tie) and an
    index of it (the last one, for rows of up to 16 elements).

    >>> import eagergrad as torch
    >>> torch.mode(torch.tensor([1.0, 2.0, 2.0, 3.0]))
    eagergrad.return_types.mode(
    values=tensor(2.),
    indices=tensor(2))
    """
    d = _reduce_dim(input, dim, "mode")
    return _Mode(call_op(MODE, (input,), (d, keepdim, input._shape)))
