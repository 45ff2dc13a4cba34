"""Scans, searching, counting and reducing-into ops: what the op-table samples
(_samples_scan.py) cannot express. torch's errors (types and messages), integer and
data-dependent outputs (unique, bincount, histc, searchsorted's options), results' layout
and versions (quantile's in-place steps, the in-place methods), named tuples, the
warnings torch gives once, and tracing (value-dependent shapes refuse jax tracers)."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from conftest import same, same_error

import eagergrad as eg

NAN, INF = float("nan"), float("inf")


def _x(m, *shape, dtype="float32", seed=0):
    return m.tensor(np.random.default_rng(seed).uniform(-2, 2, shape), dtype=getattr(m, dtype))


# ---- errors: type and message as torch's -------------------------------------------------
ERRORS = {
    "cumprod dim": (lambda m: m.ones(2, 3).cumprod(2), IndexError,
                    "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    "cummax complex": (lambda m: m.ones(2, dtype=m.complex64).cummax(0), NotImplementedError,
                       "\"cummax_cpu\" not implemented for 'ComplexFloat'"),
    "cummin complex": (lambda m: m.cummin(m.ones(2, dtype=m.complex128), 0),
                       NotImplementedError, "\"cummin_cpu\" not implemented for 'ComplexDouble'"),
    "logcumsumexp int": (lambda m: m.tensor([1, 2]).logcumsumexp(0), NotImplementedError,
                         "\"logcumsumexp_out_cpu\" not implemented for 'Long'"),
    "diff 0-dim": (lambda m: m.tensor(1.0).diff(), RuntimeError,
                   "diff expects input to be at least one-dimensional"),
    "diff order": (lambda m: m.ones(3).diff(n=-1), RuntimeError,
                   "order must be non-negative but got -1"),
    "diff prepend dims": (lambda m: m.ones(2, 3).diff(prepend=m.ones(2)), RuntimeError,
                          "diff expects prepend or append to be the same dimension as input"),
    "diff append shape": (lambda m: m.ones(2, 3).diff(dim=0, append=m.ones(1, 4)), RuntimeError,
                          "input.size(1) = 3, but got tensor.size(1) = 4"),
    "trapezoid x length": (lambda m: m.trapezoid(m.ones(2, 3), m.ones(2)), RuntimeError,
                           "trapezoid: There must be one `x` value for each sample point"),
    "trapezoid bool": (lambda m: m.trapezoid(m.ones(3) > 0), RuntimeError,
                       "trapezoid: received a bool input for `y`, but bool is not supported"),
    "trapezoid bool x": (lambda m: m.trapezoid(m.ones(3), m.ones(3) > 0), RuntimeError,
                         "received a bool input for `x` or `y`"),
    "trapezoid complex dx": (lambda m: m.trapezoid(m.ones(3), dx=1j), RuntimeError,
                             "trapezoid: Currently, we only support dx as a real number."),
    "trapezoid 0-dim": (lambda m: m.trapezoid(m.tensor(1.0)), IndexError,
                        "Dimension specified as -1 but tensor has no dimensions"),
    "trapezoid number x": (lambda m: m.trapezoid(m.ones(3), 2), TypeError,
                           "trapezoid() received an invalid combination of arguments"),
    "cumulative_trapezoid 0-dim": (lambda m: m.cumulative_trapezoid(m.tensor(1.0)), IndexError,
                                   "slice() cannot be applied to a 0-dim tensor."),
    "cumulative_trapezoid x": (lambda m: m.cumulative_trapezoid(m.ones(2, 3), m.ones(2)),
                               RuntimeError, "cumulative_trapezoid: There must be one `x`"),
    "quantile q range": (lambda m: m.ones(3).quantile(1.5), RuntimeError,
                         "quantile() q must be in the range [0, 1] but got 1.5"),
    "quantile q values": (lambda m: m.ones(3).quantile(m.tensor([0.5, -0.1])), RuntimeError,
                          "quantile() q values must be in the range [0, 1]"),
    "quantile q dims": (lambda m: m.ones(3).quantile(m.ones(1, 1) / 2), RuntimeError,
                        "quantile() q must be a scalar or 1D tensor"),
    "quantile int": (lambda m: m.tensor([1, 2]).quantile(0.5), RuntimeError,
                     "quantile() input tensor must be either float or double dtype"),
    "quantile q dtype": (lambda m: m.ones(3).quantile(m.tensor([0.5], dtype=m.float64)),
                         RuntimeError, "quantile() q tensor must be same dtype as the input"),
    "quantile empty": (lambda m: m.ones(0).nanquantile(0.5), RuntimeError,
                       "quantile() input tensor must be non-empty"),
    "quantile interpolation": (lambda m: m.ones(3).quantile(0.5, interpolation="mean"),
                               RuntimeError, "interpolation must be one of linear, lower, "
                               "higher, midpoint or nearest, but got mean"),
    "nansum complex": (lambda m: m.ones(2, dtype=m.complex64).nansum(), RuntimeError,
                       "nansum on CPU does not support complex inputs"),
    "nanmean int": (lambda m: m.tensor([1, 2]).nanmean(), RuntimeError,
                    "nanmean(): expected input to have floating point or complex dtype but got "
                    "Long"),
    "aminmax empty": (lambda m: m.ones(0).aminmax(), RuntimeError,
                      "aminmax(): cannot compute aminmax over an empty dimension"),
    "aminmax empty dim": (lambda m: m.ones(2, 0).aminmax(dim=1), IndexError,
                          "aminmax: Expected reduction dim 1 to have non-zero size."),
    "aminmax complex": (lambda m: m.ones(2, dtype=m.complex64).aminmax(), NotImplementedError,
                        "\"aminmax_cpu\" not implemented for 'ComplexFloat'"),
    "count_nonzero dims": (lambda m: m.ones(2, 3).count_nonzero((1, 1)), RuntimeError,
                           "dim 1 appears multiple times in the list of dims"),
    "var_mean int": (lambda m: m.var_mean(m.tensor([1, 2])), RuntimeError,
                     "var_mean only support floating point and complex dtypes"),
    "std_mean int": (lambda m: m.std_mean(m.tensor([1, 2])), RuntimeError,
                     "std_mean only support floating point and complex dtypes"),
    "renorm p": (lambda m: m.ones(2, 2).renorm(0, 0, 1.0), RuntimeError,
                 "renorm: non-positive-norm not supported"),
    "renorm maxnorm": (lambda m: m.ones(2, 2).renorm(2, 0, -1.0), RuntimeError,
                       "renorm: expected maxnorm to be >= 0 but got -1"),
    "renorm 1-dim": (lambda m: m.ones(2).renorm(2, 0, 1.0), RuntimeError,
                     "renorm: input needs at least 2 dimensions, got 1 dimensions"),
    "renorm int": (lambda m: m.ones(2, 2, dtype=m.int64).renorm(2, 0, 1.0), RuntimeError,
                   "Expected a floating point or complex tensor as input. Got Long"),
    "mode complex": (lambda m: m.ones(2, dtype=m.complex64).mode(), NotImplementedError,
                     "\"mode_cpu\" not implemented for 'ComplexFloat'"),
    "mode empty": (lambda m: m.ones(2, 0).mode(1), IndexError,
                   "mode(): Expected reduction dim 1 to have non-zero size."),
    "nanmedian bool": (lambda m: m.ones(2, dtype=m.bool).nanmedian(), NotImplementedError,
                       "\"median_cpu\" not implemented for 'Bool'"),
    "nanmedian dim complex": (lambda m: m.ones(2, dtype=m.complex64).nanmedian(0),
                              NotImplementedError, "\"median_out\" not implemented for"),
    "nanmedian empty dim": (lambda m: m.ones(2, 0).nanmedian(1), IndexError,
                            "median(): Expected reduction dim 1 to have non-zero size."),
    "searchsorted side": (lambda m: m.searchsorted(m.ones(3), m.ones(2), side="middle"),
                          RuntimeError, "side can only be 'left' or 'right' but got middle"),
    "searchsorted side right": (lambda m: m.searchsorted(m.ones(3), m.ones(2), side="left",
                                                         right=True), RuntimeError,
                                "side and right can't be set to opposites"),
    "searchsorted sorter size": (lambda m: m.searchsorted(m.ones(3), m.ones(2),
                                                          sorter=m.tensor([0, 1])),
                                 RuntimeError, "boundary and sorter must have the same size, "
                                 "but got boundary tensor [3]and got sorter tensor [2]"),
    "searchsorted sorter dtype": (lambda m: m.searchsorted(m.ones(3), m.ones(2),
                                                           sorter=m.ones(3)), RuntimeError,
                                  "sorter must be a tensor of long dtype but got dtype Float"),
    "searchsorted sorter range": (lambda m: m.searchsorted(m.ones(3), m.ones(2),
                                                           sorter=m.tensor([0, 1, 3])),
                                  RuntimeError, "torch.searchsorted(): sorter index out of range"),
    "searchsorted 0-dim boundaries": (lambda m: m.searchsorted(m.tensor(1.0), m.ones(2)),
                                      RuntimeError, "boundaries tensor should have positive "
                                      "dimension, but got 0 dimension"),
    "searchsorted dims": (lambda m: m.searchsorted(m.ones(2, 4), m.ones(3, 2)), RuntimeError,
                          "but we got boundaries tensor [2, 4] and input value tensor [3, 2]"),
    "searchsorted scalar": (lambda m: m.searchsorted(m.ones(2, 4), 1.0), RuntimeError,
                            "input value can be a scalar only when boundaries tensor dimension "
                            "is 1, but we got boundaries tensor dim(2) and input value's dim(0) "
                            "numel(1)"),
    "searchsorted complex": (lambda m: m.searchsorted(m.ones(2, dtype=m.complex64),
                                                      m.ones(1, dtype=m.complex64)),
                             NotImplementedError, "\"searchsorted_out_cpu\" not implemented for "
                             "'ComplexFloat'"),
    "bucketize 2-d": (lambda m: m.bucketize(m.ones(3), m.ones(1, 3)), RuntimeError,
                      "boundaries tensor must be 1 dimension, but got dim(2)"),
    "unique complex": (lambda m: m.unique(m.ones(2, dtype=m.complex64)), NotImplementedError,
                       "\"unique\" not implemented for 'ComplexFloat'"),
    "unique dim complex": (lambda m: m.unique(m.ones(2, 1, dtype=m.complex64), dim=0),
                           NotImplementedError, "\"unique_dim\" not implemented for"),
    "unique dim range": (lambda m: m.unique(m.ones(2, 3), dim=2), IndexError,
                         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    "unique zero-sized": (lambda m: m.unique(m.ones(2, 0, 3), dim=0), RuntimeError,
                          "There are 0 sized dimensions, and they aren't selected, so unique "
                          "cannot be applied"),
    "bincount float": (lambda m: m.bincount(m.ones(3)), NotImplementedError,
                       "\"bincount_cpu\" not implemented for 'Float'"),
    "bincount negative": (lambda m: m.bincount(m.tensor([1, -1])), RuntimeError,
                          "bincount only supports 1-d non-negative integral inputs."),
    "bincount 2-d": (lambda m: m.bincount(m.tensor([[1]])), RuntimeError,
                     "bincount only supports 1-d non-negative integral inputs."),
    "bincount minlength": (lambda m: m.bincount(m.tensor([1]), minlength=-1), RuntimeError,
                           "minlength should be >= 0"),
    "bincount weights": (lambda m: m.bincount(m.tensor([1, 2]), m.ones(3)), RuntimeError,
                         "weights should be 1-d and have the same length as input"),
    "histc int": (lambda m: m.histc(m.tensor([1, 2])), NotImplementedError,
                  "\"histogram_cpu\" not implemented for 'Long'"),
    "histc bins": (lambda m: m.histc(m.ones(3), bins=0), RuntimeError,
                   "torch.histogram(): bins must be > 0, but got 0 for dimension 0"),
    "histc min max": (lambda m: m.histc(m.ones(3), 3, 3, 1), RuntimeError,
                      "torch.histc: max must be larger than min"),
    "histc nan data": (lambda m: m.histc(m.tensor([1.0, NAN])), RuntimeError,
                       "torch.histc: range of [-nan, -nan] is not finite"),
    "histc inf data": (lambda m: m.histc(m.tensor([1.0, INF])), RuntimeError,
                       "torch.histc: range of [1, inf] is not finite"),
    "histogram int": (lambda m: m.histogram(m.tensor([1, 2])), NotImplementedError,
                      "\"histogramdd\" not implemented for 'Long'"),
    "histogram range": (lambda m: m.histogram(m.ones(3), 3, range=(3.0, 1.0)), RuntimeError,
                        "min should not exceed max, but got min 3 max 1 for dimension 0"),
    "histogram weight dtype": (lambda m: m.histogram(m.ones(3), 3,
                                                     weight=m.ones(3, dtype=m.float64)),
                               RuntimeError, "should have the same dtype, but got input(float), "
                               "and weight(double)"),
    "histogram bins dims": (lambda m: m.histogram(m.ones(3), m.ones(1, 3)), RuntimeError,
                            "bins tensor should have one dimension, but got 2 dimensions"),
    "histogram nan data": (lambda m: m.histogram(m.tensor([1.0, NAN])), RuntimeError,
                           "torch.histogramdd: dimension 0's range [nan, nan] is not finite"),
    "scatter_reduce reduce": (lambda m: m.ones(3).scatter_reduce(0, m.tensor([0]), m.ones(1),
                                                                 "add"), RuntimeError,
                              "reduce argument must be either sum, prod, mean, amax or amin, "
                              "got add"),
    "scatter_reduce index dtype": (lambda m: m.ones(3).scatter_reduce(0, m.ones(1), m.ones(1),
                                                                      "sum"), RuntimeError,
                                   "scatter(): Expected dtype int32/int64 for index"),
    "scatter_reduce src dtype": (lambda m: m.ones(3).scatter_reduce(
        0, m.tensor([0]), m.ones(1, dtype=m.float64), "sum"), RuntimeError,
        "scatter(): Expected self.dtype to be equal to src.dtype"),
    "scatter_reduce shapes": (lambda m: m.ones(4).scatter_reduce(0, m.tensor([0, 1, 0, 1]),
                                                                 m.ones(3), "sum"), RuntimeError,
                              "Expected index [4] to be no larger than self [4] apart from "
                              "dimension 0 and to be no larger size than src [3]"),
    "scatter_reduce bounds": (lambda m: m.ones(4).scatter_reduce(0, m.tensor([0, 9]),
                                                                 m.ones(2), "sum"), RuntimeError,
                              "index 9 is out of bounds for dimension 0 with size 4"),
    "scatter_reduce complex amax": (lambda m: m.ones(2, dtype=m.complex64).scatter_reduce(
        0, m.tensor([0]), m.ones(1, dtype=m.complex64), "amax"), NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_amax\" not implemented for 'ComplexFloat'"),
    "scatter_reduce bool mean": (lambda m: m.ones(2, dtype=m.bool).scatter_reduce(
        0, m.tensor([0]), m.ones(1, dtype=m.bool), "mean"), NotImplementedError,
        "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"),
    "scatter_reduce complex autograd": (lambda m: m.ones(2, dtype=m.complex64,
                                                         requires_grad=True).scatter_reduce(
        0, m.tensor([0]), m.ones(1, dtype=m.complex64), "sum"), RuntimeError,
        "scatter_reduce does not support automatic differentiation for outputs with complex "
        "dtype."),
    "index_reduce reduce": (lambda m: m.ones(3).index_reduce(0, m.tensor([0]), m.ones(1),
                                                             "sum"), RuntimeError,
                            "index_reduce(): Expected reduce to be one of prod, mean, amax or "
                            "amin but got sum."),
    "index_reduce index dims": (lambda m: m.ones(2, 2).index_reduce(1, m.tensor([[0, 0]]),
                                                                    m.ones(2, 2), "prod"),
                                IndexError, "Index is supposed to be a vector, but got dim: 2 "
                                "with type: Long and size: [1, 2]"),
    "index_reduce count": (lambda m: m.ones(2, 2).index_reduce(1, m.tensor([0, 0, 1]),
                                                               m.ones(2, 2), "prod"),
                           RuntimeError, "Number of indices (3) should be equal to "
                           "source.size(dim): (2), for dim: 1"),
    "index_reduce dtype": (lambda m: m.ones(2).index_reduce(0, m.tensor([0]),
                                                            m.ones(1, dtype=m.float64), "prod"),
                           RuntimeError, "self (Float) and source (Double) must have the same "
                           "scalar type"),
    "index_reduce bounds": (lambda m: m.ones(2, 2).index_reduce(1, m.tensor([0, 5]),
                                                                m.ones(2, 2), "prod"),
                            IndexError, "index out of range in self"),
    "index_reduce shape": (lambda m: m.tensor(1.0).index_reduce(0, m.tensor([0]), m.ones(1),
                                                                "prod"), RuntimeError,
                           "source tensor shape must match self tensor shape, excluding the "
                           "specified dimension. Got self.shape = [] source.shape = [1]"),
    "index_reduce complex": (lambda m: m.ones(2, dtype=m.complex64).index_reduce(
        0, m.tensor([0]), m.ones(1, dtype=m.complex64), "prod"), NotImplementedError,
        "\"index_func_\" not implemented for 'ComplexFloat'"),
    "scatter reduce name": (lambda m: m.ones(3).scatter(0, m.tensor([0]), 2.0, reduce="mean"),
                            RuntimeError, "reduce argument must be either add or multiply."),
    "put index dtype": (lambda m: m.ones(2, 2).put(m.tensor([0, 1], dtype=m.int32), m.ones(2)),
                        RuntimeError, "put_(): Expected a long tensor for index, but got Int"),
    "put dtype": (lambda m: m.ones(2, 2).put(m.tensor([0]), m.ones(1, dtype=m.float64)),
                  RuntimeError, "put_(): self and source expected to have the same dtype, but "
                  "got self.dtype = Float and source.dtype = Double"),
    "put numel": (lambda m: m.ones(2, 2).put(m.tensor([0, 1]), m.ones(3)), IndexError,
                  "Expected source and index to have the same number of elements, but got "
                  "source.numel() = 3, index.numel() = 2"),
    "put bounds": (lambda m: m.ones(2, 2).put(m.tensor([0, 4]), m.ones(2)), IndexError,
                   "out of range: tried to access index 4 on a tensor of 4 elements."),
    "index_select dtype": (lambda m: m.ones(3, 4).index_select(1, m.tensor([1.0])), RuntimeError,
                           "index_select(): Expected dtype int32 or int64 for index"),
    "index_select scalar": (lambda m: m.tensor(2.0).index_select(0, m.tensor([0, 0])),
                            RuntimeError, "index_select(): Index to scalar can have only 1 "
                            "value, got 2 value(s)"),
    "index_select bounds": (lambda m: m.ones(3, 4).index_select(1, m.tensor([5])), RuntimeError,
                            "INDICES element is out of DATA bounds, id=5 axis_dim=4"),
    "index_add index dtype": (lambda m: m.ones(3).index_add(0, m.tensor([1.0]), m.ones(1)),
                              RuntimeError, "index_add_(): Expected dtype int32/int64 for index "
                              "but got: Float"),
    "index_add index dims": (lambda m: m.ones(3).index_add(0, m.tensor([[1]]), m.ones(1)),
                             IndexError, "index_add_(): Index is supposed to be a vector, but "
                             "got dim: 2 with type: Long and size: [1, 1]"),
    "index_copy index dtype": (lambda m: m.ones(3).index_copy(0, m.tensor([1], dtype=m.int32),
                                                              m.ones(1)), RuntimeError,
                               "index_copy_(): Expected a long tensor for index, but got Int"),
    "index_copy index dims": (lambda m: m.ones(3).index_copy(0, m.tensor([[1]]), m.ones(1)),
                              IndexError, "index_copy_(): Index should have dimension 1 or 0 "
                              "(got 2)"),
    "index_fill index dtype": (lambda m: m.ones(3).index_fill(0, m.tensor([1.0]), 2.0),
                               IndexError, "index_fill_(): Expected dtype int64 for index."),
    "index_fill index dims": (lambda m: m.ones(3).index_fill(0, m.tensor([[1]]), 2.0),
                              RuntimeError, "Index has to be a vector/scalar"),
    "logsumexp no dim": (lambda m: m.ones(2, 2).logsumexp(dim=None), TypeError,
                         "logsumexp(): argument 'dim' must be tuple of ints, not NoneType"),
    "logsumexp empty dims": (lambda m: m.logsumexp(m.ones(3, 4), ()), RuntimeError,
                             "output with shape [] doesn't match the broadcast shape [1, 1]"),
    "index_put values shape": (lambda m: m.ones(3, 4).index_put((m.tensor([0, 0]),),
                                                                m.ones(2), accumulate=True),
                               RuntimeError, "shape mismatch: value tensor of shape [2] cannot "
                               "be broadcast to indexing result of shape [2, 4]"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, exc, phrase = ERRORS[case]
    same_error(fn, phrase, exc, quiet=True)


# ---- integer and data-dependent outputs ---------------------------------------------------
@pytest.mark.parametrize("kw", [{}, dict(sorted=False), dict(return_inverse=True),
                                dict(return_counts=True),
                                dict(return_inverse=True, return_counts=True)],
                         ids=["plain", "sorted False", "inverse", "counts", "inverse counts"])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_unique_options(kw, dim):
    def f(m):
        x = m.tensor([[2, 1, 2], [0, 1, 0], [2, 1, 2], [0, 3, 0]])
        y = m.tensor([[1.5, NAN], [1.5, NAN], [-0.0, 0.0], [0.0, 2.0]])
        return [m.unique(x, dim=dim, **kw), x.unique(dim=dim, **kw),
                m.unique_consecutive(x, dim=dim, **{k: v for k, v in kw.items()
                                                    if k != "sorted"}),
                m.unique(y, dim=dim, **kw)]
    same(f, layout=True)


def test_unique_shapes_and_dtypes():
    def f(m):
        return [m.unique(m.tensor(3.0), return_inverse=True, return_counts=True),
                m.unique_consecutive(m.tensor(3.0), return_inverse=True, return_counts=True),
                m.unique(m.ones(0), return_inverse=True, return_counts=True),
                m.unique(m.tensor([True, False, True]), return_counts=True),
                m.unique(m.tensor([3, 1], dtype=m.int32), return_inverse=True),
                m.unique(m.tensor([3.0, 1.0], dtype=m.float16)),
                m.unique(m.ones(2, 0, 3), dim=1, return_counts=True)]
    same(f, layout=True)


def test_searchsorted_options():
    def f(m):
        s = m.tensor([3.0, 1.0, 2.0, 2.0, NAN])
        order = m.tensor([1, 2, 3, 0, 4])
        v = m.tensor([[2.0, 0.0], [5.0, NAN], [2.5, 1.0]])
        out = []
        for right in (False, True):
            out += [m.searchsorted(s, v, sorter=order, right=right),
                    m.searchsorted(s, v, sorter=order, side="right" if right else "left"),
                    m.searchsorted(s.sort().values, v, right=right, out_int32=True),
                    m.bucketize(v, m.tensor([1.0, 2.0, 2.0]), right=right, out_int32=right),
                    m.bucketize(2.0, m.tensor([1.0, 2.0, 2.0]), right=right),
                    m.searchsorted(m.tensor([[0, 1, 1], [2, 2, 5]]), m.tensor([[1], [2]]),
                                   right=right)]
        return out + [m.searchsorted(m.ones(0), m.ones(2)), m.searchsorted(m.ones(3), m.ones(0)),
                      m.searchsorted(m.tensor([1.0, 1.0000001]), m.tensor(1.00000005,
                                                                          dtype=m.float64)),
                      m.searchsorted(m.tensor([1, 2, 3], dtype=m.int32), 2)]
    same(f)


def test_bincount_values():
    def f(m):
        x = m.tensor([4, 1, 1, 0, 4, 4])
        return [m.bincount(x), x.bincount(minlength=9), m.bincount(x, minlength=2),
                m.bincount(x, m.tensor([0.5, 1.0, 2.0, 0.25, -1.0, 3.0])),
                m.bincount(x, m.arange(6, dtype=m.float64)),
                m.bincount(x, m.arange(6, dtype=m.int32)),
                m.bincount(x, m.arange(6) > 2),
                m.bincount(x.to(m.uint8)), m.bincount(m.tensor([], dtype=m.int64)),
                m.bincount(m.tensor([], dtype=m.int64), m.ones(0), minlength=2)]
    same(f)


@pytest.mark.slow  # (seconds in the fast tier)
def test_histc_histogram_values():
    def f(m):
        x = _x(m, 200, seed=3)
        e = m.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
        edges = m.tensor([-1.0, 0.0, 0.5, 2.0])
        return [m.histc(x), m.histc(x, bins=8, min=-1, max=1), x.histc(5, 0.5, 0.5),
                m.histc(e, bins=4, min=0, max=1), m.histc(x.double(), 9),
                m.histc(m.ones(0), bins=3), m.histc(m.tensor([2.0, 2.0]), 3),
                m.histc(x.half(), 6), tuple(m.histogram(x, 7)),
                tuple(m.histogram(e, 4, range=(0.0, 1.0))),
                tuple(m.histogram(x, edges, weight=x.abs())),
                tuple(m.histogram(x, edges, density=True)),
                tuple(x.histogram(6, weight=x.abs(), density=True)),
                tuple(m.histogram(m.ones(0), 3)), tuple(m.histogram(m.tensor([1.0, 1.0]), 3)),
                tuple(m.histogram(e, m.tensor([0.0, 1.0, 0.5])))]
    same(f)


def test_count_nonzero_argwhere_nonzero():
    def f(m):
        x = m.tensor([[1.0, 0.0, NAN], [0.0, -0.0, 2.0]])
        return [m.count_nonzero(x), x.count_nonzero(1), m.count_nonzero(x, (0, 1)),
                m.count_nonzero(x, dim=[0]), m.count_nonzero(m.tensor([1j, 0j])),
                m.argwhere(x), x.argwhere(), m.argwhere(m.tensor(1.0)),
                m.argwhere(m.tensor(0.0)), m.nonzero(x, as_tuple=True),
                m.nonzero(m.tensor(3), as_tuple=True)]
    same(f)


def test_nan_reductions_values():
    def f(m):
        x = m.tensor([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN], [2.0, 2.0, NAN, 1.0]])
        return [m.nansum(x), x.nansum(1), m.nansum(x, (0, 1), keepdim=True),
                m.nansum(m.tensor([1, 2]), keepdim=True), m.nansum(x, dtype=m.float64),
                x.nanmean(1), m.nanmean(x, keepdim=True), m.nanmean(m.ones(0)),
                x.nanmedian(), tuple(x.nanmedian(1)), tuple(m.nanmedian(x, 0, keepdim=True)),
                m.ones(0).nanmedian(), tuple(m.full((2, 9), NAN).nanmedian(1)),
                tuple(m.tensor([[3, 1, 2]]).nanmedian(1))]
    same(f)


@pytest.mark.slow  # (compiles libstdc++'s sort loops once per shape)
def test_mode_values():
    def f(m):
        rng = np.random.default_rng(5)
        a = rng.integers(0, 4, (4, 37)).astype(np.float32)
        a[rng.random(a.shape) < 0.1] = np.nan
        x = m.tensor(a)
        k = m.tensor(rng.integers(-3, 3, (3, 21)))
        return [tuple(m.mode(x)), tuple(x.mode(0)), tuple(x.mode(1, keepdim=True)),
                tuple(m.mode(k, 1)), tuple(k.mode(0)), tuple(m.mode(x > 1, 1)),
                tuple(m.ones(2, 0).mode(0)), tuple(m.tensor(3.0).mode(0))]
    same(f)


def test_aminmax_std_mean_var_mean_values():
    def f(m):
        x = _x(m, 3, 4)
        return [tuple(x.aminmax()), tuple(m.aminmax(x.round(), dim=0, keepdim=True)),
                tuple(m.aminmax(x > 0, dim=1)), tuple(m.aminmax(m.tensor(2.0), dim=0)),
                tuple(m.ones(2, 0).aminmax(dim=0)), m.std_mean(x), m.std_mean(x, False),
                m.var_mean(x, 1, keepdim=True), m.var_mean(x, (0, 1), correction=2),
                m.var_mean(x.to(m.complex64) * (1 + 2j), 0),
                m.std_mean(x, dim=None, correction=0)]
    same(f)


def test_var_mean_degrees_of_freedom_warning():
    def f(m, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.var_mean(m.ones(1))
            m.std_mean(m.ones(2, 3), 0, correction=2)
        log.append([str(x.message).split(" (Triggered internally")[0] for x in w])
    same(f)


# ---- layout and versions: in-place steps of ATen's composites, in-place methods -------------
@pytest.mark.slow  # (seconds in the fast tier)
def test_quantile_layout():
    def f(m):
        x = _x(m, 3, 4, dtype="float64")
        q = m.tensor([0.25, 0.5, 0.9], dtype=m.float64)
        return [x.quantile(0.3), x.quantile(q, dim=0), x.quantile(q, dim=1, keepdim=True),
                x.quantile(q), m.nanquantile(x, q, dim=0, interpolation="lower"),
                x.quantile(0.5, dim=1, interpolation="nearest"),
                x.quantile(q, dim=1, interpolation="higher")]
    same(f, layout=True)


def test_in_place_methods():
    def f(m, log):
        x = _x(m, 3, 4)
        idx = m.tensor([[0, 1, 0, 1], [2, 2, 0, 3], [1, 1, 1, 1]])
        for step in (lambda t: t.cumprod_(1), lambda t: t.cumsum_(0),
                     lambda t: t.scatter_reduce_(1, idx, x, "amax", include_self=False),
                     lambda t: t.index_reduce_(0, m.tensor([0, 0, 2]), x, "mean"),
                     lambda t: t.put_(m.tensor([0, 5]), m.ones(2), accumulate=True),
                     lambda t: t.renorm_(2, 0, 1.0),
                     lambda t: t.masked_scatter_(x > 0, x * 3),
                     lambda t: t.scatter_(1, idx, 2.0, reduce="multiply")):
            y = x.clone().requires_grad_(True)
            z = y * 1
            r = step(z)
            log.append((r is z, z, z._version, type(z.grad_fn).__name__))
            v = z.clone()[1:]
            step(v)
            log.append((v, v._version))
        t = m.tensor([1, 2, 3], dtype=m.int32)
        t.cumprod_(0)
        log.append((t, t._version))
    same(f, quiet=True, layout=True)


def test_cumprod_zeros_double_backward():
    """cumprod's gradient at zeros, and its own gradient (torch switches to the exact
    product formula under create_graph), against torch on rows with 0, 1, 2 and 3 zeros."""
    def f(m, log):
        x = m.tensor([[0.0, 2.0, 3.0, -1.0], [1.5, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0],
                      [1.0, 2.0, 0.5, 3.0]], dtype=m.float64, requires_grad=True)
        for dim in (0, 1):
            y = x.cumprod(dim)
            w = m.arange(16, dtype=m.float64).reshape(4, 4) - 6
            (g,) = m.autograd.grad(y, x, w, create_graph=True)
            log.append(g.detach())
            (gg,) = m.autograd.grad((g * g).sum(), x)
            log.append(gg)
    same(f)


# ---- named tuples -----------------------------------------------------------------------------
def test_named_tuples():
    def f(m):
        x = m.tensor([[1.0, 3.0], [2.0, 0.0]])
        out = []
        for r in (x.cummax(1), m.cummin(x, 0), m.mode(x), x.nanmedian(0), x.aminmax(),
                  m.histogram(x, 2)):
            out.append((type(r).__name__, repr(r).replace("torch.return_types",
                                                          "eagergrad.return_types"),
                        r._fields if hasattr(r, "_fields") else None))
        r = x.aminmax()
        h = m.histogram(x, 2)
        return out[:5] + [r.min, r.max, h.hist, h.bin_edges, x.cummax(1).indices,
                          x.mode().values]
    torch_out = f(torch)
    eg_out = f(eg)
    for (tn, tr, _), (en, er, _) in zip(torch_out[:5], eg_out[:5]):
        assert en == tn
        assert er.replace("eagergrad.", "torch.") == tr.replace("eagergrad.", "torch.")
    same(lambda m: f(m)[5:])


# ---- warnings torch gives once per process ------------------------------------------------------
@pytest.mark.parametrize("call,key,text", [
    (lambda m: m.ones(3).index_reduce(0, m.tensor([0]), m.ones(1), "prod"), "index_reduce",
     "index_reduce() is in beta and the API may change at any time."),
    (lambda m: m.ones(3).scatter(0, m.tensor([0]), m.ones(1), reduce="add"), "scatter_reduce",
     "The reduce argument of torch.scatter with Tensor src is deprecated"),
], ids=["index_reduce", "scatter reduce"])
def test_warns_once(call, key, text, monkeypatch):
    from eagergrad.ops import scatter as IS
    monkeypatch.setattr(IS, "_WARNED", set())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call(eg)
        call(eg)
        call(eg)
    got = [str(x.message) for x in w]
    assert len(got) == 1 and got[0].startswith(text), got
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call(eg)
    assert not w  # (scatter(value, reduce=) never warns: torch's scalar overload)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        eg.ones(3).scatter(0, eg.tensor([0]), 2.0, reduce="add")
    assert not w


# ---- tracing: static shapes run under jax, data-dependent ones refuse tracers ----------------
@pytest.mark.slow  # (compiles the whole program under jax.jit)
def test_static_shapes_trace():
    """The kernels are tracer-safe: under jax.jit (eagergrad.jaxify) they give the eager
    results."""
    def f(x):
        s = x.sort(-1).values
        return (x.cumprod(1), x.cummax(1).values, x.logcumsumexp(0), eg.diff(x, 2),
                eg.trapezoid(x), eg.cumulative_trapezoid(x, dim=0), x.quantile(0.3, dim=1),
                eg.searchsorted(s, x), eg.histc(x, 5), eg.histogram(x, 4).hist,
                x.nansum(1), x.aminmax(dim=0).max, x.count_nonzero(1), x.mode(1).values,
                x.nanmedian(0).values, x.renorm(2, 0, 1.0), eg.std_mean(x, 1)[0],
                x.scatter_reduce(1, eg.tensor([[0, 0, 1]] * 2), x, "prod"))
    x = _x(eg, 2, 3, dtype="float64")
    eager = f(x)
    traced = jax.jit(eg.jaxify(f))(jnp.asarray(x.numpy()))
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(np.asarray(t), e.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda x: eg.unique(x), lambda x: eg.unique_consecutive(x),
    lambda x: eg.unique(x, dim=0), lambda x: eg.bincount((x > 0).long()),
    lambda x: eg.bincount(eg.tensor([0, 1]), x[:2]),
], ids=["unique", "unique_consecutive", "unique dim", "bincount", "bincount weights"])
def test_data_dependent_shapes_refuse_tracers(call):
    with pytest.raises(NotImplementedError, match="data-dependent output shape"):
        jax.jit(eg.jaxify(call))(jnp.ones(3))


def test_grad_through_func_transform():
    """torch.func.grad differentiates the kernels with jax (scatter_reduce's prod at
    repeated targets, cumprod, quantile): the same gradients as torch.func."""
    def f(m, x):
        i = m.tensor([0, 0, 1, 1, 1])
        return (x.scatter_reduce(0, i, x * 2, "prod").sum() + x.cumprod(0).sum()
                + x.quantile(0.4) + x.logcumsumexp(0).sum())

    def run(m):
        x = m.tensor([0.5, -1.5, 2.0, 0.25, 1.25], dtype=m.float64)
        return m.func.grad(lambda x: f(m, x))(x)
    same(run)
