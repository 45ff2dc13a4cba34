"""torch's rules at the points where an op is not differentiable, for every op.

Two sweeps, each compared with real torch (forward values, graph, and float64
gradients in the harness's node-by-node and fused runs, NaNs compared as NaNs):

- every op sample of tests/_samples.py with all its parametrized float inputs set to
  0 (division by zero, log/sqrt/pow at 0, atan2(0, 0), norms of the zero vector, where
  with NaNs in the branch not taken...) and to 1 (ties for max/min/amax/sort/median...);
- SPECIAL: samples at the kinks and boundaries each op is known for (relu at 0, clamp
  at and between its bounds and with min > max, ties split by maximum, ...).

An op of the table must have an entry in SPECIAL, or a reason in SMOOTH why the sweeps
above already cover it: a new op without either fails `test_every_op_is_in_the_table`.
"""
import copy
import math

import numpy as np
import pytest

import eagergrad as eg
from eagergrad.ops import OPS
from _samples import ALL, Arg, FLOAT, COMPLEX, S, V, I, make_inputs, as_list
from _samples_conv import SPECIAL as _CONV
from _samples_linalg import SPECIAL as _LINALG
from _samples_nn import SPECIAL as _NN
from _samples_norm import SPECIAL as _NORM
from _samples_sorting import SPECIAL as _SORTING
from _samples_activation import SPECIAL as _ACT
from _samples_batchnorm import SPECIAL as _BN
from _samples_rnn import SPECIAL as _RNN
from _samples_attention import SPECIAL as _ATT
from _samples_spatial import SPECIAL as _SPATIAL
from _samples_random import SPECIAL as _RANDOM
from _samples_tensor_ops import SPECIAL as _TENSOR_OPS
from _samples_special import SPECIAL as _SPECIAL_FNS
from _samples_scan import SPECIAL as _SCAN
from test_ops_torch import check_backward, check_double_backward, check_forward, check_graph

NAN, INF = math.nan, math.inf


def _at(sample, value):
    """The sample with every parametrized input filled with `value`."""
    s = copy.copy(sample)
    args = []
    for a in sample.args:
        if a.dtype in (FLOAT, COMPLEX) and a.value is None:
            a = Arg(a.shape, a.dtype, rg=a.rg, value=np.full(a.shape, value))
        args.append(a)
    s.args = tuple(args)
    s.id = f"{sample.id}@{value}"
    return s  # (its xfail aspects, strict xfails in test_ops_torch, are skipped below)


# ---- the kinks and boundaries of each op --------------------------------------------------
def _c(values):
    return V(values, "c")


SPECIAL = {
    "relu": [S(lambda m, x: x.relu(), V([-1.0, 0.0, -0.0, 2.0]), name="relu'(0) = 0")],
    "abs": [S(lambda m, x: x.abs(), V([-1.0, 0.0, -0.0, 2.0]), name="|x|'(0) = 0"),
            S(lambda m, x: x.abs(), _c([0j, 1 + 1j, -2j]), name="complex |0|")],
    "sgn": [S(lambda m, x: x.sgn(), _c([0j, 1 + 1j, -2j]), name="sgn at 0"),
            S(lambda m, x: x.sgn(), V([-1.0, 0.0, 3.0]), name="real sgn")],
    "sign": [S(lambda m, x: x.sign(), V([-1.0, 0.0, -0.0, 2.0]), name="zero gradient")],
    "angle": [S(lambda m, x: x.angle(), V([-1.0, 0.0, 2.0]), name="angle of reals"),
              S(lambda m, x: x.angle(), _c([0j, 1j, -1 + 0j]), name="angle at 0")],
    "clamp": [
        S(lambda m, x: x.clamp(-1.0, 1.0), V([-2.0, -1.0, 0.0, 1.0, 2.0]),
          name="at and between the bounds"),
        S(lambda m, x: x.clamp(1.0, -1.0), V([-2.0, -1.0, 0.0, 1.0, 2.0]), name="min > max"),
        S(lambda m, x: x.clip(0.0, 0.0), V([-1.0, 0.0, 1.0]), name="clip, min == max"),
        S(lambda m, x: x.clamp(-1.0, 1.0), V([NAN, INF, -INF]), name="nan and infinities"),
    ],
    "clamp_min": [S(lambda m, x: x.clamp_min(0.0), V([-1.0, 0.0, 1.0]), name="at the bound"),
                  S(lambda m, x: x.clamp_min(0.0), V([NAN, -INF]), name="nan")],
    "clamp_max": [S(lambda m, x: x.clamp_max(0.0), V([-1.0, 0.0, 1.0]), name="at the bound")],
    "clamp_tensor": [
        S(lambda m, x, lo, hi: x.clamp(lo, hi), V([-1.0, 0.0, 1.0, 2.0]),
          V([-1.0, -1.0, -1.0, 3.0]), V([1.0, 0.0, 1.0, 1.0]),
          name="at the bounds, and min > max"),
        S(lambda m, x, lo: x.clamp(min=lo), V([0.0, 1.0, 2.0]), V([0.0, 2.0, 1.0]),
          name="min only, ties"),
        S(lambda m, x, hi: m.clamp(x, max=hi), V([0.0, 1.0, 2.0]), V([0.0, 2.0, 1.0]),
          name="max only, ties"),
    ],
    "max": [S(lambda m, x: x.max(), V([1.0, 3.0, -1.0, 3.0, 3.0]), name="ties split"),
            S(lambda m, x: x.max(), V([1.0, NAN, 3.0, NAN]), name="nan wins, split")],
    "min": [S(lambda m, x: x.min(), V([1.0, -1.0, -1.0]), name="ties split")],
    "max_dim": [S(lambda m, x: x.max(1), V([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
                  name="ties: the first index"),
                S(lambda m, x: x.max(0), V([[1.0, NAN], [NAN, 2.0]]), name="nan")],
    "min_dim": [S(lambda m, x: x.min(1, keepdim=True), V([[1.0, 0.0, 0.0], [2.0, 2.0, 2.0]]),
                  name="ties: the first index")],
    "amax": [S(lambda m, x: x.amax(1), V([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]), name="ties split"),
             S(lambda m, x: x.amax(), V([[1.0, NAN], [NAN, 2.0]]), name="nan")],
    "amin": [S(lambda m, x: x.amin(), V([[1.0, 3.0, 1.0], [2.0, 1.0, 2.0]]), name="ties split")],
    "maximum": [S(lambda m, x, y: m.maximum(x, y), V([1.0, 2.0, 3.0, NAN]),
                  V([1.0, 0.0, 3.0, 1.0]), name="ties split, nan")],
    "minimum": [S(lambda m, x, y: m.minimum(x, y), V([1.0, 2.0, 3.0, 0.0]),
                  V([1.0, 0.0, 3.0, NAN]), name="ties split, nan")],
    "sqrt": [S(lambda m, x: x.sqrt(), V([0.0, -0.0, -1.0, 1.0]), name="at 0 and below")],
    "rsqrt": [S(lambda m, x: x.rsqrt(), V([0.0, -0.0, -1.0, 1.0]), name="at 0 and below")],
    "log": [S(lambda m, x: x.log(), V([0.0, -0.0, -1.0, INF]), name="at 0 and below")],
    "log2": [S(lambda m, x: x.log2(), V([0.0, -1.0]), name="at 0 and below")],
    "log10": [S(lambda m, x: x.log10(), V([0.0, -1.0]), name="at 0 and below")],
    "log1p": [S(lambda m, x: x.log1p(), V([-1.0, -2.0, 0.0]), name="at -1 and below")],
    "reciprocal": [S(lambda m, x: x.reciprocal(), V([0.0, -0.0, INF]), name="at 0 and inf"),
                   S(lambda m, x: 1.0 / x, V([0.0, -0.0]), name="scalar / 0")],
    "asin": [S(lambda m, x: x.asin(), V([-1.0, 1.0, 2.0]), name="at the domain's ends")],
    "acos": [S(lambda m, x: x.acos(), V([-1.0, 1.0, 2.0]), name="at the domain's ends")],
    "exp": [S(lambda m, x: x.exp(), V([800.0, -800.0, INF, -INF]), name="overflow")],
    "sigmoid": [S(lambda m, x: x.sigmoid(), V([800.0, -800.0, INF, -INF]), name="saturation")],
    "tanh": [S(lambda m, x: x.tanh(), V([800.0, -800.0, INF, -INF]), name="saturation")],
    "pow": [
        S(lambda m, x: x ** 0.5, V([0.0, 1.0, -1.0]), name="** 0.5 at 0, negative base"),
        S(lambda m, x: x ** 2, V([0.0, -0.0, 1.0]), name="** 2 at 0"),
        S(lambda m, x: x ** 0, V([0.0, 1.0, -1.0, NAN]), name="** 0"),
        S(lambda m, x: x ** -1, V([0.0, -0.0, 2.0]), name="** -1 at 0"),
        S(lambda m, x: x ** 1.5, V([0.0, -2.0]), name="** 1.5, negative base"),
        S(lambda m, x: x ** 0, _c([0j, 1 + 1j]), name="complex ** 0"),
    ],
    "pow_tensor": [
        S(lambda m, x, y: x ** y, V([0.0, 0.0, 0.0, 2.0, -2.0]), V([2.0, 0.0, -1.0, 0.5, 0.5]),
          name="0 ** y, negative base"),
        S(lambda m, x, y: x ** y, _c([0j, 0j, 0j, 1 + 1j]), _c([2 + 0j, 0j, -1 + 1j, 0j]),
          name="complex 0 ** y"),
    ],
    "pow_scalar": [S(lambda m, y: 0.0 ** y, V([2.0, 0.0, -1.0]), name="0.0 ** y"),
                   S(lambda m, y: (-2.0) ** y, V([2.0, 0.5]), name="negative base ** y")],
    "atan2": [S(lambda m, x, y: m.atan2(x, y), V([0.0, -0.0, 0.0, 1.0]),
                V([0.0, 0.0, -0.0, 0.0]), name="atan2(0, 0)")],
    "div": [S(lambda m, x, y: x / y, V([1.0, -1.0, 0.0, 2.0]), V([0.0, 0.0, 0.0, -0.0]),
              name="division by zero"),
            S(lambda m, x: x / 0.0, V([1.0, 0.0, -1.0]), name="/ scalar 0")],
    "div_mode": [S(lambda m, x, y: m.div(x, y, rounding_mode="floor"), V([1.0, -1.0, 2.0]),
                   V([0.0, 0.0, 1.0]), name="zero gradient, divisor 0")],
    "remainder": [S(lambda m, x, y: x % y, V([4.0, -3.0, 1.0]), V([2.0, 1.5, 0.0]),
                    name="at multiples, divisor 0")],
    "remainder_scalar": [S(lambda m, x: x % 1.5, V([3.0, -1.5, 0.0]), name="at multiples")],
    "remainder_rscalar": [S(lambda m, y: 3.0 % y, V([1.5, 1.0, 0.0]), name="at multiples",
                            backward_error="derivative for aten::remainder")],
    "floor": [S(lambda m, x: x.floor(), V([-1.0, 0.0, 0.5, 2.0]), name="zero gradient")],
    "ceil": [S(lambda m, x: x.ceil(), V([-1.0, 0.0, 0.5, 2.0]), name="zero gradient")],
    "trunc": [S(lambda m, x: x.trunc(), V([-1.5, 0.0, 2.0]), name="zero gradient")],
    "round": [S(lambda m, x: x.round(), V([-0.5, 0.5, 1.5, 2.0]), name="zero gradient, halves")],
    "round_decimals": [S(lambda m, x: x.round(decimals=1), V([0.25, 0.35, -0.05]),
                         name="zero gradient")],
    "frac": [S(lambda m, x: x.frac(), V([-1.0, 0.0, 2.0, -0.5]), name="at integers")],
    "floor_divide": [S(lambda m, x, y: x // y, V([1.0, 0.5]), V([0.0, 0.5]),
                       backward_error="floor_divide", name="torch's NotImplemented node")],
    "floor_divide_scalar": [S(lambda m, x: x // 0.5, V([1.0, -0.5]), backward_error="floor_",
                              name="torch's NotImplemented node")],
    "prod": [S(lambda m, x: x.prod(), V([0.0, 2.0, 3.0]), name="one zero"),
             S(lambda m, x: x.prod(), V([0.0, 2.0, 0.0]), name="two zeros")],
    "prod_dim": [S(lambda m, x: x.prod(1), V([[0.0, 0.0, 3.0], [1.0, 0.0, 2.0]]),
                   name="zeros in a row")],
    "std": [S(lambda m, x: x.std(), V([2.0, 2.0, 2.0]), name="of a constant"),
            S(lambda m, x: x.std(), V([2.0]), name="one element")],
    "var": [S(lambda m, x: x.var(0), V([[1.0], [1.0]]), name="of a constant"),
            S(lambda m, x: x.var(), V([2.0]), name="one element")],
    "where": [
        S(lambda m, x: m.where(x > 0, x.sqrt(), 0.0), V([-1.0, 0.0, 4.0]),
          name="nan in the branch not taken"),
        S(lambda m, x: m.where(x != 0, 1 / x, 0.0), V([0.0, 2.0]), name="inf not taken"),
        S(lambda m, x: m.where(x > 0, x, x.log()), V([-1.0, 1.0]), name="nan on the other side"),
    ],
    "nan_to_num": [S(lambda m, x: x.nan_to_num(), V([NAN, INF, -INF, 1.0]), fd=False,
                     name="non-finite inputs get no gradient")],
    "softmax": [S(lambda m, x: x.softmax(0), V([-INF, 0.0, 1.0]), name="-inf entry"),
                S(lambda m, x: x.softmax(0), V([1.0, 1.0]), name="ties")],
    "log_softmax": [S(lambda m, x: x.log_softmax(0), V([-INF, 0.0, 1.0]), name="-inf entry")],
    "logsumexp": [S(lambda m, x: x.logsumexp(0), V([-INF, -INF]), name="all -inf"),
                  S(lambda m, x: x.logsumexp(0), V([INF, 1.0]), name="+inf")],
    "scatter": [S(lambda m, x, i, y: x.scatter(0, i, y), V([0.0, 0.0, 0.0]), I([1, 1]),
                  V([1.0, 2.0]), name="duplicate indices")],
    "index_put": [S(lambda m, x, v: x.index_put((m.tensor([0, 0]),), v), V([1.0, 2.0]),
                    V([3.0, 4.0]), name="duplicate indices")],
    "cumsum": [S(lambda m, x: x.cumsum(0), V([INF, 1.0, -INF]), name="infinities")],
    "mean": [S(lambda m, x: x.mean(), V([INF, -INF]), name="inf - inf")],
}
for _table in (_LINALG, _SORTING, _NN, _NORM, _CONV, _ACT, _BN, _RNN, _ATT, _SPATIAL,
               _RANDOM, _TENSOR_OPS, _SPECIAL_FNS, _SCAN):
    for _k, _v in _table.items():
        SPECIAL.setdefault(_k, []).extend(_v)

# Ops whose gradient has no point to single out beyond the 0/1 sweep, and why.
_LINEAR = "linear: the same gradient at every point"
_NONDIFF = "not differentiable: no gradient anywhere"
_SMOOTH = "analytic where it is defined; its values at 0 and 1 are in the sweep"
SMOOTH = dict.fromkeys((
    "_reshape_alias", "_to_copy", "_unsafe_view", "add", "alias", "as_strided",
    "as_strided_backward", "as_strided_view", "cat", "clone", "complex", "conj",
    "conj_physical", "copy", "cumsum_backward", "diagonal", "diagonal_backward", "expand",
    "fill", "fill_tensor", "gather", "index", "index_add", "index_copy", "index_fill",
    "index_put_acc", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
    "index_select", "mask_index", "mask_index_put", "mask_put",
    "mask_put_seq", "mask_take", "masked_fill", "masked_fill_tensor", "masked_scatter",
    "masked_scatter_backward", "masked_select", "mean_dim", "neg", "permute", "rsub",
    "rsub_scalar", "scatter_add", "scatter_value", "select", "select_backward", "slice",
    "slice_backward", "split", "split_with_sizes", "squeeze0", "squeeze1", "squeeze2",
    "squeeze4", "stack", "sub", "sum", "sum_dim", "t", "transpose", "unbind", "unfold",
    "unfold_backward", "unsqueeze", "view", "view_as_complex", "view_as_real",
    "view_gather", "view_scatter", "view_write", "zero",
    "mul", "mm", "bmm", "mv", "dot", "addmm", "_trilinear"), _LINEAR)
SMOOTH.update(dict.fromkeys((
    "all", "any", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "eq", "ne", "ge", "gt", "le", "lt", "isclose", "isfinite", "isinf", "isnan",
    "logical_and", "logical_not", "logical_or", "logical_xor"), _NONDIFF))
SMOOTH.update(dict.fromkeys((
    "atan", "cos", "cosh", "erf", "exp2", "expm1", "sin", "sinh", "tan", "polar"), _SMOOTH))
SMOOTH.update(dict.fromkeys(("mul_scalar", "add_scalar", "div_scalar"), _LINEAR))
SMOOTH["mse_loss"] = "a polynomial: the same formula at every point"
SMOOTH.update(dict.fromkeys((
    "convolution", "convolution_backward", "constant_pad_nd", "avg_pool2d", "avg_pool2d_backward",
    "_adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "max_pool2d_with_indices_backward"),
    "linear in each tensor input (convolution: bilinear): the same formula at every point"))
for _group in ("activation", "batchnorm", "rnn", "attention", "spatial", "linalg", "fft",
               "random", "tensor_ops", "special", "scan", "copies", "inplace_views"):
    SMOOTH.update(getattr(__import__(f"_samples_{_group}"), "SMOOTH", {}))


def test_every_op_is_in_the_table():
    """Each op of the table has special points here, or a reason in SMOOTH; not both."""
    assert sorted(set(OPS) - set(SPECIAL) - set(SMOOTH)) == []
    assert sorted(set(SPECIAL) & set(SMOOTH)) == []
    assert sorted((set(SPECIAL) | set(SMOOTH)) - set(OPS)) == []


_CASES = [(op, s) for op, ss in sorted(SPECIAL.items()) for s in ss]
for _i, (_op, _s) in enumerate(_CASES):
    _s.id = f"special:{_op}:{_i}"


def _reaches(op, sample):
    """Does the eagergrad graph of the sample contain the op's node?"""
    outs = as_list(sample.call(eg, *make_inputs(eg, sample, "float64")))
    seen, todo = set(), [o.grad_fn for o in outs if o.grad_fn is not None]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        if type(fn) is OPS[op].Node:
            return True
        todo.extend(f for f, _ in fn.next_functions)
    return False


@pytest.mark.fast_first
@pytest.mark.parametrize("op,sample", _CASES, ids=[f"{op}-{s.name}" for op, s in _CASES])
def test_special_points(op, sample):
    if sample.differentiable and not sample.nondiff:
        assert _reaches(op, sample), f"the sample does not record {OPS[op].Node.__name__}"
    check_forward(sample, "float64")
    check_graph(sample, "float64")
    if sample.differentiable:
        check_backward(sample, "float64")
        if sample.double_backward:
            check_double_backward(sample, "float64")


# ---- the sweep: every sample at 0 and at 1 -------------------------------------------------
SWEEP = [_at(s, v) for s in ALL if any(a.dtype in (FLOAT, COMPLEX) for a in s.args)
         for v in (0.0, 1.0)]


@pytest.mark.slow
@pytest.mark.parametrize("sample", SWEEP, ids=[s.id for s in SWEEP])
def test_sweep(sample):
    # (no graph check here: ops are tracer-safe, so a graph cannot depend on the values;
    # test_ops_torch compares every sample's graph)
    if "forward" not in sample.xfail:
        check_forward(sample, "float64")
    if sample.differentiable and "backward" not in sample.xfail:
        # at 1 (ties) node by node only; at 0 (division by zero, log(0): NaN and inf) the
        # fused run too, whose compiled formulas must keep them (the suite's time budget)
        check_backward(sample, "float64", runs=None if sample.id.endswith("@0.0") else 1)
