"""Samples for the scan, search, count and reduce-into ops (eagergrad/ops/scan.py,
search.py, the scatter_reduce/index_reduce/put entries of scatter.py, aminmax /
count_nonzero / std_mean / var_mean / renorm of reduce.py, mode / nanmedian of sorting.py),
merged into _samples.SAMPLES; same format as _samples.py.

torch's composites without an op of their own (diff, trapezoid, cumulative_trapezoid,
quantile, nanquantile, nanmean) sit under the ops their graphs are made of. SPECIAL holds
samples at ties, zeros, NaNs and infinities, where the formulas have special cases;
SMOOTH says why the other ops need none.
"""
import math

from _samples import C, F, I, S, T, V

NAN, INF = math.nan, math.inf
_IDX = I([[0, 1, 0, 1], [2, 2, 0, 3], [1, 1, 1, 1]])  # (duplicates along dim 1)
_SORTED = V([-1.5, -0.5, 0.0, 0.25, 1.0, 1.75])


def _inplace(name):
    """A call of the in-place method `name` on a copy of its first argument."""
    def call(m, x, *args, **kw):
        return getattr(x * 1, name)(*args, **kw)
    return call


SAMPLES = {
    # ---- scans (scan.py) ----------------------------------------------------------------
    "cumprod": [
        S(lambda m, x: x.cumprod(1), F(3, 4)),
        S(lambda m, x: m.cumprod(x, 0), C(4, 2), name="complex"),
        S(lambda m, x: x.cumprod(0), F(), name="0-dim"),
        S(lambda m, x: x.cumprod(-1, dtype=m.float64), T("float32", 2, 3), name="dtype"),
        S(lambda m, x: x.cumprod(0), T("int32", 4, lo=-3, hi=3), nondiff=True,
          name="int -> int64"),
        S(lambda m, x: (x * m.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0]],
                                     dtype=x.dtype)).cumprod(1), F(2, 4), name="with zeros"),
        S(lambda m, x: (x * 1).cumprod_(0), F(3, 2), name="in-place"),
        S(lambda m, x: x.cumprod(0), F(1, 3), name="one-element dim"),
    ],
    "cumprod_backward": [S(lambda m, x: x.cumprod(0), F(4, 2), name="first-order backward")],
    "cummax": [
        S(lambda m, x: x.cummax(1), F(3, 4)),
        S(lambda m, x: m.cummax(x, 0).values, F(4, 3), name="values, dim 0"),
        S(lambda m, x: x.cummax(0), F(), name="0-dim"),
        S(lambda m, x: x.cummax(-1), T("int64", 2, 5, lo=-3, hi=3), nondiff=True, name="int"),
        S(lambda m, x: x.cummax(0), T("bool", 5), nondiff=True, name="bool"),
    ],
    "cummin": [
        S(lambda m, x: x.cummin(1), F(3, 4)),
        S(lambda m, x: m.cummin(x, 0).indices, F(4, 3), nondiff=True, name="indices"),
        S(lambda m, x: x.cummin(-1), T("int32", 2, 5, lo=-3, hi=3), nondiff=True, name="int"),
    ],
    "logcumsumexp": [
        S(lambda m, x: x.logcumsumexp(1), F(3, 4)),
        S(lambda m, x: m.logcumsumexp(x, 0), C(4, 2), name="complex"),
        S(lambda m, x: x.logcumsumexp(0), F(), name="0-dim"),
        S(lambda m, x: x.logcumsumexp(-2), F(2, 3, 2), name="middle dim"),
    ],
    # diff: narrow (SliceBackward0), sub / logical_xor, cat for prepend and append
    "sub": [
        S(lambda m, x: m.diff(x), F(3, 4), name="diff"),
        S(lambda m, x, p, a: x.diff(2, 0, p, a), F(3, 2), F(1, 2), F(2, 2),
          name="diff n=2 dim 0 prepend append"),
        S(lambda m, x: m.diff(x, n=5), F(4), name="diff n past the length"),
        S(lambda m, x: m.diff(x), C(5), name="diff complex"),
        S(lambda m, x: m.diff(x, append=m.tensor([1.5])), T("int64", 4), nondiff=True,
          name="diff int, float append"),
        S(lambda m, x: m.diff(x > 0), F(5), nondiff=True, name="diff bool: xor"),
    ],
    "copy": [S(lambda m, x: m.diff(x, n=0), F(2, 3), name="diff n=0")],
    # trapezoid with a constant dx: (sum - (first + last) * 0.5) * dx
    "mul_scalar": [
        S(lambda m, y: m.trapezoid(y), F(3, 4), name="trapezoid"),
        S(lambda m, y: m.trapezoid(y, dx=0.5, dim=0), F(3, 4), name="trapezoid dx dim 0"),
        S(lambda m, y: m.trapz(y, dx=2), C(2, 3), name="trapz complex"),
        S(lambda m, y: m.trapezoid(y), T("int64", 4), nondiff=True, name="trapezoid int"),
        S(lambda m, y: m.cumulative_trapezoid(y, dx=3.0), F(2, 4), name="cumulative_trapezoid dx"),
    ],
    # trapezoid at sample points: ((left + right) * dx).sum / 2
    "div_scalar": [
        S(lambda m, y, x: m.trapezoid(y, x), F(3, 4), F(4), name="trapezoid x"),
        S(lambda m, y, x: m.trapezoid(y, x, dim=0), F(3, 4), F(3, 1), name="trapezoid x dim 0"),
        S(lambda m, y, x: m.trapz(y, x), F(2, 3), F(2, 3), name="trapz x same shape"),
        S(lambda m, y, x: m.cumulative_trapezoid(y, x), F(2, 4), F(4),
          name="cumulative_trapezoid x"),
    ],
    "cumsum": [S(lambda m, y: m.cumulative_trapezoid(y, dim=0), F(3, 2),
                 name="cumulative_trapezoid")],
    # ---- searching and counting (search.py) ---------------------------------------------------
    "searchsorted": [
        S(lambda m, s, v: m.searchsorted(s, v), _SORTED, F(3, 4), nondiff=True),
        S(lambda m, s, v: m.searchsorted(s, v, right=True), _SORTED, F(7), nondiff=True,
          name="right"),
        S(lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True), _SORTED, F(5),
          nondiff=True, name="side right, int32"),
        S(lambda m, s, v: m.searchsorted(s, v), V([[0.0, 1.0, 1.0, 2.0], [-1.0, 0.5, 0.5, 0.5]]),
          V([[1.0, 0.5, 3.0], [0.5, -2.0, 0.25]]), nondiff=True, name="rows, ties"),
        S(lambda m, s, v: m.searchsorted(s, v, right=True),
          V([[0.0, 1.0, 1.0, 2.0], [-1.0, 0.5, 0.5, 0.5]]),
          V([[1.0, 0.5, 3.0], [0.5, -2.0, 0.25]]), nondiff=True, name="rows, ties, right"),
        S(lambda m, s, v, i: m.searchsorted(s, v, sorter=i), V([1.0, -1.0, 0.5, 0.0]), F(6),
          I([1, 3, 2, 0]), nondiff=True, name="sorter"),
        S(lambda m, s: m.searchsorted(s, 0.3), _SORTED, nondiff=True, name="scalar value"),
        S(lambda m, s, v: m.searchsorted(s, v), I([-2, -1, 0, 1, 3]), F(4),
          nondiff=True, name="int boundaries, float values"),
        S(lambda m, v, b: m.bucketize(v, b), F(3, 4), _SORTED, nondiff=True, name="bucketize"),
        S(lambda m, v, b: m.bucketize(v, b, right=True, out_int32=True),
          V([-1.5, 0.0, 0.1, 1.75, 9.0]), _SORTED, nondiff=True,
          name="bucketize right int32, at the boundaries"),
        S(lambda m, s, v: m.searchsorted(s, v), V([0.0, NAN, 2.0]), V([NAN, 1.0, -1.0]),
          nondiff=True, name="NaNs"),
    ],
    "_unique2": [
        S(lambda m, x: m.unique(x), V([3.0, 1.0, 2.0, 1.0, 3.0]),
          backward_error="derivative for '_unique2'"),
        S(lambda m, x: x.unique(return_inverse=True, return_counts=True),
          V([[2.0, 1.0, 2.0], [NAN, 1.0, NAN]]), backward_error="derivative for '_unique2'",
          name="inverse counts NaNs"),
        S(lambda m, x: m.unique(x, sorted=False, return_counts=True),
          T("int64", 12, lo=0, hi=4), nondiff=True, name="int"),
        S(lambda m, x: m.unique(x, return_inverse=True), T("bool", 6), nondiff=True,
          name="bool"),
        S(lambda m, x: m.unique(x, return_inverse=True), F(), backward_error="_unique2",
          name="0-dim"),
    ],
    "unique_dim": [
        S(lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True),
          V([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]]), backward_error="unique_dim"),
        S(lambda m, x: m.unique(x, dim=1, return_counts=True),
          T("int64", 2, 6, lo=0, hi=2), nondiff=True, name="dim 1: not contiguous"),
    ],
    "unique_consecutive": [
        S(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True),
          V([1.0, 1.0, 2.0, 2.0, 1.0, NAN, NAN]), backward_error="unique_consecutive"),
        S(lambda m, x: x.unique_consecutive(dim=0, return_counts=True),
          V([[1.0, 1.0], [1.0, 1.0], [2.0, 0.0], [1.0, 1.0]]), backward_error="unique_",
          name="dim 0"),
        S(lambda m, x: m.unique_consecutive(x, return_inverse=True),
          T("int64", 9, lo=0, hi=2), nondiff=True, name="int"),
    ],
    "bincount": [
        S(lambda m, x: m.bincount(x), I([1, 1, 3, 0, 7, 1]), nondiff=True),
        S(lambda m, x, w: m.bincount(x, w), I([1, 1, 3, 0]), F(4),
          backward_error="derivative for aten::bincount", name="weights"),
        S(lambda m, x, w: x.bincount(w, minlength=7), I([1, 1, 3]), T("int32", 3),
          nondiff=True, name="int weights -> float64, minlength"),
        S(lambda m, x: m.bincount(x, minlength=3), T("int64", 0), nondiff=True,
          name="empty, minlength"),
    ],
    "histc": [
        S(lambda m, x: m.histc(x, bins=7), F(4, 5), nondiff=True),
        S(lambda m, x: x.histc(5, -1, 1.5), F(30), nondiff=True, name="range"),
        S(lambda m, x: m.histc(x, bins=4, min=0, max=3), V([0.0, 0.75, 1.5, 3.0, 3.5, -1.0]),
          nondiff=True, name="at the edges, outside"),
        S(lambda m, x: m.histc(x, bins=3), V([2.0, 2.0]), nondiff=True, name="one value"),
    ],
    "histogram": [
        S(lambda m, x: m.histogram(x, 6), F(20), backward_error="derivative for aten::histogram"),
        S(lambda m, x, w: m.histogram(x, 4, range=(-1.0, 1.0), weight=w, density=True),
          F(3, 5), F(3, 5), backward_error="histogram", name="range weight density"),
        S(lambda m, x: x.histogram(3), V([0.0, 1.0, 1.0, 3.0]), backward_error="histogram",
          name="values at the edges"),
    ],
    "histogram_bins": [
        S(lambda m, x, b: m.histogram(x, b), F(12), V([-2.0, -0.5, 0.0, 0.5, 1.0],
                                                       rg=False),
          backward_error="derivative for aten::histogram"),
        S(lambda m, x, b, w: m.histogram(x, bins=b, weight=w, density=True), F(12),
          V([-1.0, 0.0, 2.0], rg=False), F(12, rg=False), backward_error="histogram",
          name="weight density"),
    ],
    # histogramdd: _histogramdd_bin_edges and _from_bin_cts (int bins), _from_bin_tensors
    "_histogramdd_bin_edges": [
        S(lambda m, x: m.histogramdd(x, [2, 3]).bin_edges, F(8, 2),
          backward_error="derivative for aten::_histogramdd_bin_edges"),
        S(lambda m, x, w: m.histogramdd(x, 3, weight=w, range=[-1.0, 1.0, 0.0, 2.0, -2, 0]
                                        ).bin_edges, F(2, 4, 3), F(2, 4),
          backward_error="_histogramdd_bin_edges", name="3-d, weight, range"),
    ],
    "_histogramdd_from_bin_cts": [
        S(lambda m, x: m.histogramdd(x, [2, 3]).hist, F(8, 2),
          backward_error="derivative for aten::_histogramdd_from_bin_cts"),
        S(lambda m, x, w: m.histogramdd(x, [3, 2, 2], weight=w, density=True).hist,
          F(2, 4, 3), F(2, 4), backward_error="_histogramdd_from_bin_cts",
          name="3-d, weight, density"),
        S(lambda m, x: m.histogramdd(x, 2, range=[0.0, 3.0, 0.0, 3.0]).hist,
          V([[0.0, 3.0], [1.5, 1.5], [3.0, 0.0], [-1.0, 1.0], [NAN, 1.0]], rg=False),
          nondiff=True, name="at the edges, outside, NaN"),
    ],
    "_histogramdd_from_bin_tensors": [
        S(lambda m, x, a, b: m.histogramdd(x, [a, b]).hist, F(8, 2),
          V([-1.0, 0.0, 0.5, 2.0], rg=False), V([-2.0, 0.0, 1.0], rg=False),
          backward_error="derivative for aten::_histogramdd_from_bin_tensors"),
        S(lambda m, x, a, b, w: m.histogramdd(x, [a, b], weight=w, density=True).hist,
          F(8, 2), V([-1.0, 0.0, 0.5, 2.0]), V([-2.0, 0.0, 1.0], rg=False), F(8),
          backward_error="_histogramdd_from_bin_tensors", name="weight density"),
    ],
    # isin (isin_default_kernel's brute force or isin_sorting, by torch's size heuristic)
    "isin": [
        S(lambda m, x, y: m.isin(x, y), T("int64", 3, 4, lo=0, hi=6), I([1, 3]), nondiff=True),
        S(lambda m, x, y: m.isin(x, y, invert=True), V([NAN, 0.0, -0.0, 1.5, 2.0]),
          V([NAN, -0.0, 2.0] * 5), nondiff=True, name="sorting, NaN, signed zeros, invert"),
        S(lambda m, x, y: m.isin(x, y, assume_unique=True), I([1, 1, 2, 3]),
          I([1] * 12 + [5, 5]), nondiff=True, name="sorting, assume_unique, duplicates"),
        S(lambda m, x, y: m.isin(x, y), F(3), I([0, 1]), nondiff=True, name="float and int"),
        S(lambda m, y: m.isin(1.0, y), I([0, 1]), nondiff=True, name="number, tensor"),
    ],
    "nonzero_static": [
        S(lambda m, x: m.nonzero_static(x, size=5), V([[1.0, 0.0, -0.0], [NAN, 2.0, 0.0]]),
          nondiff=True),
        S(lambda m, x: x.nonzero_static(size=2, fill_value=7), T("int64", 3, 4, lo=-1, hi=2),
          nondiff=True, name="cut, method"),
        S(lambda m, x: m.nonzero_static(x, size=3), C(2, 2), nondiff=True, name="complex"),
        S(lambda m, x: m.nonzero_static(x, size=2), F(), nondiff=True, name="0-dim"),
        S(lambda m, x: m.nonzero_static(x, size=2, fill_value=-3), F(2, 0, 3), nondiff=True,
          name="empty"),
    ],
    # torch's composites of the ops above them: cov (mm), corrcoef (clamp), gradient (cat),
    # unravel_index (floor_divide), Tensor.__rdiv__ (reciprocal)
    "mm": [
        S(lambda m, x: m.cov(x), F(3, 5), name="cov"),
        S(lambda m, x, a: m.cov(x, correction=2, fweights=m.tensor([1, 2, 1, 3, 1]),
                                aweights=a), F(3, 5), V([0.3, 1.2, 0.7, 0.5, 0.9]),
          name="cov weights"),
        S(lambda m, x: x.cov(correction=0), C(2, 4), name="cov complex"),
        S(lambda m, x: m.cov(x), C(4), name="cov one complex variable"),
    ],
    "clamp": [
        S(lambda m, x: m.corrcoef(x), F(3, 5), name="corrcoef"),
        S(lambda m, x: x.corrcoef(), C(2, 4), name="corrcoef complex"),
    ],
    "cat": [
        S(lambda m, x: m.gradient(x, spacing=[2.0, 0.5], edge_order=2), F(4, 5), name="gradient"),
        S(lambda m, x: m.gradient(x, dim=1), F(3, 4), name="gradient dim"),
        S(lambda m, x, c: m.gradient(x, spacing=[c], dim=1, edge_order=2), F(3, 5),
          V([0.0, 1.0, 1.5, 3.0, 4.0]), name="gradient at coordinates"),
    ],
    "floor_divide": [
        S(lambda m, i: m.unravel_index(i, (3, 4)), I([[0, 5], [11, 7]]), nondiff=True,
          name="unravel_index"),
    ],
    "reciprocal": [S(lambda m, x: x.__rdiv__(2.0), F(3, lo=0.5, hi=2.0), name="__rdiv__")],
    # quantile: sort, gather, lerp_, then squeeze_ (scalar q) or unsqueeze_(0),
    # transpose_(0, -1), squeeze_(-1) (a q vector)
    "lerp": [
        S(lambda m, x: m.quantile(x, 0.3), F(3, 4), name="quantile"),
        S(lambda m, x: x.quantile(0.75, dim=0, keepdim=True), F(3, 4),
          name="quantile dim 0 keepdim"),
        S(lambda m, x: x.quantile(0.4, dim=1, interpolation="midpoint"), F(2, 5),
          name="quantile midpoint"),
        S(lambda m, x: m.nanquantile(x, 0.6, dim=1),
          V([[1.0, NAN, 3.0, 0.5], [NAN, NAN, 2.0, -1.0], [NAN, NAN, NAN, NAN]]),
          fd=False, name="nanquantile NaNs"),
    ],
    "unsqueeze_fresh": [
        S(lambda m, x, q: m.quantile(x, q, dim=1), F(3, 5), V([0.1, 0.5, 0.9], rg=False),
          name="quantile q vector"),
        S(lambda m, x, q: x.quantile(q, dim=0, keepdim=True, interpolation="nearest"),
          F(4, 3), V([0.0, 0.33, 1.0], rg=False), name="quantile q vector nearest"),
        S(lambda m, x, q: m.nanquantile(x, q), F(2, 3), V([0.25, 0.5], rg=False),
          name="nanquantile q vector, all elements"),
    ],
    "gather": [
        S(lambda m, x: x.quantile(0.3, dim=-1, interpolation="lower"), F(3, 4),
          name="quantile lower"),
        S(lambda m, x: m.nanquantile(x, 0.7, interpolation="higher"), F(2, 3),
          name="nanquantile higher"),
        S(lambda m, x: m.quantile(x, 0.5, dim=0), F(), name="quantile 0-dim"),
    ],
    "nansum": [
        S(lambda m, x: x.nansum(), F(3, 4)),
        S(lambda m, x: m.nansum(x, 1, keepdim=True), V([[1.0, NAN, 2.0], [NAN, NAN, 3.0]]),
          fd=False, name="NaNs, dim keepdim"),
        S(lambda m, x: x.nansum((0, 1), dtype=m.float64), T("float32", 3, 2), name="dtype"),
        # (jax's where-based nansum gradient is 0 under an all-NaN column, torch's NaN)
        S(lambda m, x: m.nanmean(x, 0), V([[1.0, NAN, 2.0], [NAN, NAN, 3.0]]), fd=False,
          jax=False, name="nanmean"),
        S(lambda m, x: x.nanmean(), F(2, 3), name="nanmean all"),
        S(lambda m, x: m.nansum(x, 0), T("int64", 3, 2), nondiff=True, name="int: sum"),
    ],
    # ---- reductions (reduce.py, sorting.py) ---------------------------------------------------
    "aminmax": [
        S(lambda m, x: x.aminmax(), F(3, 4)),
        S(lambda m, x: m.aminmax(x, dim=1), F(3, 4), name="dim"),
        S(lambda m, x: m.aminmax(x, dim=0, keepdim=True).max, F(3, 4), name="max, keepdim"),
        S(lambda m, x: x.aminmax(dim=0), F(), name="0-dim"),
        S(lambda m, x: x.aminmax(dim=-1), T("int64", 2, 5), nondiff=True, name="int"),
    ],
    "count_nonzero": [
        S(lambda m, x: x.count_nonzero(), V([[1.0, 0.0, -0.0], [NAN, 2.0, 0.0]]),
          nondiff=True),
        S(lambda m, x: m.count_nonzero(x, dim=(0, 2)), T("int64", 2, 3, 4, lo=-1, hi=2),
          nondiff=True, name="dims"),
        S(lambda m, x: m.count_nonzero(x, 1), C(2, 3), nondiff=True, name="complex"),
    ],
    "std_mean": [
        S(lambda m, x: m.std_mean(x), F(3, 4)),
        S(lambda m, x: m.std_mean(x, 1, keepdim=True), F(3, 4), name="dim keepdim"),
        S(lambda m, x: m.std_mean(x, (0, 1), correction=0), F(3, 4), name="correction 0"),
        S(lambda m, x: m.std_mean(x, 0), C(3, 2), name="complex"),
        S(lambda m, x: m.std_mean(x)[1], F(4), name="mean only"),
    ],
    "var_mean": [
        S(lambda m, x: m.var_mean(x), F(3, 4)),
        S(lambda m, x: m.var_mean(x, 1, unbiased=False), F(3, 4), name="unbiased False"),
        S(lambda m, x: m.var_mean(x, False), F(2, 3), name="unbiased positional"),
        S(lambda m, x: m.var_mean(x, -1), C(2, 3), name="complex"),
    ],
    "renorm": [
        S(lambda m, x: x.renorm(2, 0, 1.0), F(3, 4)),
        S(lambda m, x: m.renorm(x, 1, 1, 1.5), F(3, 4), name="p 1, dim 1"),
        S(lambda m, x: x.renorm(math.inf, 0, 1.0), F(3, 4), name="p inf"),
        S(lambda m, x: x.renorm(3, -1, 0.8), F(2, 3, 2), name="p 3"),
        S(lambda m, x: x.renorm(0.5, 1, 4.0), F(3, 4, lo=0.5), name="p 0.5"),
        S(lambda m, x: x.renorm(2, 0, 1.0), C(3, 2), name="complex"),
        S(lambda m, x: _inplace("renorm_")(m, x, 2, 1, 1.0), F(3, 4), name="in-place"),
    ],
    "mode": [
        S(lambda m, x: m.mode(x), F(3, 5)),
        S(lambda m, x: x.mode(0, keepdim=True), F(4, 3), name="dim 0 keepdim"),
        S(lambda m, x: x.mode(), F(), name="0-dim"),
        S(lambda m, x: m.mode(x, 1), T("int64", 3, 6, lo=0, hi=3), nondiff=True, name="int"),
        S(lambda m, x: m.mode(x), T("int64", 2, 40, lo=0, hi=4), nondiff=True,
          name="int, long rows (introsort)"),
    ],
    "nanmedian": [
        S(lambda m, x: m.nanmedian(x), F(3, 5)),
        S(lambda m, x: x.nanmedian(), V([1.0, NAN, 3.0, 2.0]), fd=False, name="NaN"),
        S(lambda m, x: m.nanmedian(x), T("int64", 5, lo=-9, hi=9), nondiff=True, name="int"),
    ],
    "nanmedian_dim": [
        S(lambda m, x: m.nanmedian(x, 1), F(3, 5)),
        S(lambda m, x: x.nanmedian(0, keepdim=True),
          V([[1.0, NAN], [NAN, NAN], [3.0, NAN], [2.0, 5.0]]), fd=False, name="NaNs keepdim"),
        S(lambda m, x: m.nanmedian(x, 0), F(), name="0-dim"),
    ],
    # ---- reducing into (scatter.py) ---------------------------------------------------------
    "scatter_reduce": [
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "sum"), F(3, 4), _IDX, F(3, 4)),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "prod"), F(3, 4), _IDX, F(3, 4),
          name="prod"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "mean"), F(3, 4), _IDX, F(3, 4),
          name="mean"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "amax"), F(3, 4), _IDX, F(3, 4),
          name="amax"),
        S(lambda m, x, i, s: m.scatter_reduce(x, 1, i, s, "amin"), F(3, 4), _IDX, F(3, 4),
          name="amin"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "sum", include_self=False), F(3, 4),
          _IDX, F(3, 4), name="sum, include_self False"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "prod", include_self=False), F(3, 4),
          _IDX, F(3, 4), name="prod, include_self False"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "mean", include_self=False), F(3, 4),
          _IDX, F(3, 4), name="mean, include_self False"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "amax", include_self=False), F(3, 4),
          _IDX, F(3, 4), name="amax, include_self False"),
        S(lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum"), F(4, 3), I([[0, 3, 0], [0, 0, 2]]),
          F(2, 3), name="dim 0, smaller index"),
        S(lambda m, x, i, s: _inplace("scatter_reduce_")(m, x, 1, i, s, "amin"), F(3, 4), _IDX,
          F(3, 4), name="in-place"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "mean"), T("int64", 3, 4, lo=-9, hi=9),
          _IDX, T("int64", 3, 4, lo=-9, hi=9), nondiff=True, name="int mean: floor"),
        S(lambda m, x, i, s: x.scatter_reduce(1, i, s, "prod"), C(3, 4, rg=False), _IDX,
          C(3, 4, rg=False), nondiff=True, name="complex forward"),
    ],
    "index_reduce": [
        S(lambda m, x, i, s: x.index_reduce(0, i, s, "prod"), F(3, 4), I([0, 2, 0, 0]),
          F(4, 4)),
        S(lambda m, x, i, s: x.index_reduce(1, i, s, "mean"), F(3, 4), I([1, 1, 3]), F(3, 3),
          name="mean"),
        S(lambda m, x, i, s: m.index_reduce(x, 1, i, s, "amax", include_self=False), F(3, 4),
          I([1, 1, 3]), F(3, 3), name="amax, include_self False"),
        S(lambda m, x, i, s: x.index_reduce(0, i, s, "amin"), F(3, 2), I([2, 2]), F(2, 2),
          name="amin"),
        S(lambda m, x, i, s: x.index_reduce(0, i, s, "prod", include_self=False), F(3, 2),
          I([2, 0, 2]), F(3, 2), name="prod, include_self False"),
        S(lambda m, x, i, s: _inplace("index_reduce_")(m, x, 0, i, s, "mean"), F(3, 2),
          I([1, 1]), F(2, 2), name="in-place"),
    ],
    "segment_reduce": [
        S(lambda m, x, r=r, init=init: m.segment_reduce(x, r, lengths=m.tensor([2, 0, 3, 1]),
                                                        initial=init),
          F(6, 3), double_backward=False, jax=r != "prod",
          fd=init is not None or r in ("sum", "prod"), name=f"{r}, initial {init}")
        # (jax: no vjp for segment_prod; fd: an empty segment's mean, max, min are nan/inf)
        for r in ("sum", "mean", "max", "min", "prod") for init in (None, 0.5)
    ] + [
        S(lambda m, x: m.segment_reduce(x, "mean", offsets=m.tensor([1, 3, 3, 5])), F(6),
          double_backward=False, fd=False, name="offsets"),
    ],
    "scatter_reduce_arg": [
        S(lambda m, x, i, s: x.scatter(1, i, s, reduce="add"), F(3, 4), _IDX, F(3, 4),
          backward_error="derivative for aten::scatter"),
        S(lambda m, x, i, s: m.scatter(x, 1, i, s, reduce="multiply"), F(3, 4), _IDX, F(3, 4),
          backward_error="aten::scatter", name="multiply"),
        S(lambda m, x, i, s: x.scatter(1, i, s, reduce="multiply"), C(3, 4), _IDX, C(3, 4),
          backward_error="aten::scatter", name="complex"),
    ],
    "scatter_value_reduce": [
        S(lambda m, x, i: x.scatter(1, i, 1.5, reduce="multiply"), F(3, 4), _IDX,
          backward_error="derivative for aten::scatter"),
        S(lambda m, x, i: _inplace("scatter_")(m, x, 1, i, -2.0, reduce="add"), F(3, 4), _IDX,
          backward_error="aten::scatter", name="in-place add"),
    ],
    "put": [
        S(lambda m, x, i, s: x.put(i, s), F(3, 4), I([0, 5, -1]), F(3)),
        S(lambda m, x, i, s: m.put(x, i, s, accumulate=True), F(3, 4), I([[0, 0], [11, 0]]),
          F(2, 2), name="accumulate, duplicates"),
        S(lambda m, x, i, s: _inplace("put_")(m, x, i, s), F(2, 3), I([4, 1]), F(2),
          name="in-place"),
        S(lambda m, x, i, s: x.put(i, s, True), C(2, 3), I([4, 4]), C(2), name="complex"),
    ],
    # ---- the in-place variants of existing ops ------------------------------------------------
    "masked_scatter": [
        S(lambda m, x, c, s: _inplace("masked_scatter_")(m, x, c, s), F(3, 4),
          V([[True, False, True, False]] * 3, "bool"), F(8), name="in-place"),
    ],
}
SAMPLES["cumsum"].append(S(lambda m, x: _inplace("cumsum_")(m, x, 1), F(2, 3), name="in-place"))


def _each(call, patterns, **kw):
    return [S(call, V(p), fd=False, jax=False, **kw) for p in patterns]


_TIES = [[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0], [0.5, -1.0, 0.5, -1.0, 0.5]]
_ZEROS = [[0.0, 2.0, 3.0, 0.5, 5.0], [1.0, 0.0, 0.0, 2.0, 3.0], [2.0, 3.0, 0.0, 0.0, 0.0],
          [0.0, 0.0, 1.5, 0.0, 2.0], [2.0, 1.5, 3.0, 0.5, 0.0]]

SPECIAL = {
    "cumprod": _each(lambda m, x: x.cumprod(0), _ZEROS) + [
        S(lambda m, x: x.cumprod(1), V([[0.0, 2.0, 0.0], [3.0, 0.0, 2.0]]), fd=False, jax=False,
          name="rows with zeros"),
        S(lambda m, x: x.cumprod(0), V([0.0]), fd=False, jax=False, name="one zero"),
        S(lambda m, x: x.cumprod(0), V([1.0 + 1j, 0j, 2.0 - 1j, 0j], "c"), fd=False, jax=False,
          name="complex zeros"),
    ],
    "cummax": _each(lambda m, x: x.cummax(0), _TIES + [[1.0, NAN, 2.0, NAN, 0.0]]),
    "cummin": _each(lambda m, x: x.cummin(0), _TIES + [[1.0, NAN, -2.0, NAN, 0.0]]),
    "logcumsumexp": _each(lambda m, x: x.logcumsumexp(0),
                          [[-INF, 0.0, 1.0], [0.0, -INF, -INF], [1.0, 1.0, 1.0], [INF, 0.0]]),
    "lerp": _each(lambda m, x: x.quantile(0.5), _TIES + [[1.0, NAN, 2.0]]) +
    _each(lambda m, x: x.nanquantile(0.25, interpolation="midpoint"), _TIES) + [
        S(lambda m, x: x.quantile(m.tensor([0.0, 0.5, 1.0], dtype=x.dtype), dim=1),
          V([[1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0]]), fd=False, jax=False,
          name="quantile q vector, ties"),
    ],
    "nansum": _each(lambda m, x: x.nansum(), [[NAN, NAN], [INF, 1.0, NAN]]),
    "aminmax": _each(lambda m, x: x.aminmax(), _TIES + [[1.0, NAN, 2.0]]) + [
        S(lambda m, x: x.aminmax(dim=1), V(_TIES), fd=False, jax=False, name="rows, ties"),
    ],
    "std_mean": [S(lambda m, x: m.std_mean(x), V([2.0, 2.0, 2.0]), name="of a constant")],
    "var_mean": [S(lambda m, x: m.var_mean(x, 0), V([[1.0], [1.0]]), name="of a constant")],
    "renorm": [
        S(lambda m, x: x.renorm(2, 0, 5.0), V([[3.0, 4.0], [0.0, 0.0], [6.0, 8.0]]),
          fd=False, jax=False, name="norm at maxnorm, zero row"),
        S(lambda m, x: x.renorm(1, 1, 0.0), V([[1.0, -2.0], [0.0, 3.0]]), fd=False, jax=False,
          name="maxnorm 0"),
    ],
    "mode": _each(lambda m, x: x.mode(), _TIES + [[2.0, 2.0, 1.0, 1.0],
                                                  [NAN, 1.0, NAN, 1.0, NAN]]) + [
        S(lambda m, x: x.mode(1), V([[0.0, 1.0, 0.0, 1.0] * 5, [1.0, 2.0] * 10]), fd=False,
          jax=False, name="ties in rows of 20 (introsort)"),
    ],
    "nanmedian": _each(lambda m, x: x.nanmedian(), _TIES + [[NAN, NAN], [NAN, 1.0, NAN]]),
    "nanmedian_dim": _each(lambda m, x: x.nanmedian(0), _TIES + [[NAN] * 9, [NAN, 2.0, 2.0]]),
    "scatter_reduce": [
        S(lambda m, x, s, r=r, inc=inc: x.scatter_reduce(0, m.tensor([0, 0, 1, 1]), s, r,
                                                          include_self=inc),
          V([2.0, 1.0]), V([2.0, 1.0, 3.0, 3.0]), fd=False, jax=False,
          name=f"{r} ties, include_self {inc}")
        for r in ("amax", "amin") for inc in (True, False)
    ] + [
        S(lambda m, x, s, inc=inc: x.scatter_reduce(0, m.tensor([0, 0, 1, 1, 2, 2]), s, "prod",
                                                     include_self=inc),
          V([0.0, 2.0, 3.0]), V([0.0, 4.0, 0.0, 0.0, 1.5, 2.0]), fd=False, jax=False,
          double_backward=False, name=f"prod zeros, include_self {inc}")
        for inc in (True, False)
    ] + [
        S(lambda m, x, s: x.scatter_reduce(0, m.tensor([0, 1, 1]), s, "prod"), V([2.0, 0.0]),
          V([0.0, 3.0, 2.0]), fd=False, jax=False, name="prod, one zero each"),
        S(lambda m, x, s: x.scatter_reduce(0, m.tensor([1, 1]), s, "mean", include_self=False),
          V([2.0, 1.0]), V([1.0, 3.0]), fd=False, jax=False, name="mean, unscattered"),
    ],
    "segment_reduce": [
        S(lambda m, x, r=r: m.segment_reduce(x, r, lengths=m.tensor([3, 2, 1]), initial=1.5),
          V([2.0, 0.0, 2.0, 1.5, 0.0, 0.0]), fd=False, jax=False, double_backward=False,
          name=f"{r}: ties, zeros, the initial value winning")
        for r in ("max", "min", "prod")
    ],
    "index_reduce": [
        S(lambda m, x, s: x.index_reduce(0, m.tensor([0, 0, 1]), s, "amax"), V([2.0, 1.0]),
          V([2.0, 1.0, 1.0]), fd=False, jax=False, name="amax ties"),
        S(lambda m, x, s: x.index_reduce(0, m.tensor([0, 1, 1]), s, "prod"), V([0.0, 2.0]),
          V([3.0, 0.0, 5.0]), fd=False, jax=False, name="prod zeros"),
    ],
}

_NONDIFF = "not differentiable: no gradient anywhere"
_NOT_IMPL = "torch has no derivative: its backward raises"
SMOOTH = dict.fromkeys(("searchsorted", "bincount", "histc", "histogram", "histogram_bins",
                        "count_nonzero", "_unique2", "unique_dim", "unique_consecutive",
                        "scatter_reduce_arg", "scatter_value_reduce"), _NONDIFF)
SMOOTH.update({
    "cumprod_backward": "only the first-order backward of cumprod (its zeros: SPECIAL cumprod)",
    "unsqueeze_fresh": "linear: the same gradient at every point",
    "put": "linear in self and source: the same gradient at every point",
})
for _k in ("_unique2", "unique_dim", "unique_consecutive", "scatter_reduce_arg",
           "scatter_value_reduce", "histogram", "histogram_bins"):
    SMOOTH[_k] = _NOT_IMPL
SMOOTH.update(dict.fromkeys(("isin", "nonzero_static"), _NONDIFF))
SMOOTH.update(dict.fromkeys(("_histogramdd_bin_edges", "_histogramdd_from_bin_cts",
                             "_histogramdd_from_bin_tensors"), _NOT_IMPL))
