"""Samples for the sorting ops (merged into _samples.SAMPLES), same format as _samples.py.

SAMPLES use random floats (no ties); SPECIAL holds samples at ties and NaNs, where the
index torch picks decides where the gradient goes (eagergrad/ops/sorting.py NOTE [ties]).
"""
from _samples import POS, UNIT, C, F, I, S, T, V  # noqa: F401

NAN = float("nan")
TIES = [[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0], [0.5, -1.0, 0.5, -1.0, 0.5]]

SAMPLES = {
    "sort": [
        S(lambda m, x: m.sort(x), F(3, 5)),
        S(lambda m, x: x.sort(0, True), F(4, 3), name="dim 0 descending"),
        S(lambda m, x: m.sort(x, dim=1).values, F(2, 4, 3), name="values, middle dim"),
        S(lambda m, x: m.sort(x), F(), name="0-dim"),
        S(lambda m, x: m.msort(x), F(4, 3), name="msort"),
        S(lambda m, x: m.sort(x, descending=True), T("int64", 3, 5, lo=-50, hi=50),
          nondiff=True, name="int"),
        S(lambda m, x: m.msort(x), T("int32", 5, 2, lo=-50, hi=50), nondiff=True,
          name="msort int32"),
    ],
    "sort_stable": [
        S(lambda m, x: m.sort(x, stable=True), F(3, 5)),
        S(lambda m, x: x.sort(stable=False, dim=0, descending=True), F(4, 3),
          name="stable False, dim 0 descending"),
        S(lambda m, x: m.sort(x, stable=True), T("float16", 3, 4, rg=False), nondiff=True,
          name="float16"),
    ],
    "argsort": [
        S(lambda m, x: m.argsort(x), F(3, 5), nondiff=True),
        S(lambda m, x: x.argsort(0, descending=True), F(4, 3), nondiff=True,
          name="dim 0 descending"),
        S(lambda m, x: m.argsort(x, stable=True), T("int64", 3, 5, lo=-50, hi=50),
          nondiff=True, name="int stable"),
    ],
    "topk": [
        S(lambda m, x: m.topk(x, 2), F(3, 5)),
        S(lambda m, x: x.topk(3, 0, largest=False), F(4, 3), name="smallest dim 0"),
        S(lambda m, x: m.topk(x, 3, sorted=False), F(2, 6), name="unsorted"),
        S(lambda m, x: m.topk(x, 2, dim=1, largest=False, sorted=False), F(2, 5, 3),
          name="smallest unsorted middle dim"),
        S(lambda m, x: m.topk(x, 5).values, F(2, 5), name="k = n"),
        S(lambda m, x: m.topk(x, 2).values, F(2, 200), name="partial sort (k * 64 <= n)"),
        S(lambda m, x: m.topk(x, 1), F(), name="0-dim"),
        S(lambda m, x: m.topk(x, 2), T("int64", 3, 5, lo=-50, hi=50), nondiff=True,
          name="int"),
    ],
    "kthvalue": [
        S(lambda m, x: m.kthvalue(x, 2), F(3, 5)),
        S(lambda m, x: x.kthvalue(4, 0, keepdim=True), F(4, 3), name="dim 0 keepdim"),
        S(lambda m, x: m.kthvalue(x, 1, 1).values, F(2, 3, 4), name="k 1 middle dim"),
        S(lambda m, x: m.kthvalue(x, 7), F(7), name="k = n"),
        S(lambda m, x: m.kthvalue(x, 1), F(), name="0-dim"),
        S(lambda m, x: m.kthvalue(x, 3), T("int64", 3, 5, lo=-50, hi=50), nondiff=True,
          name="int"),
    ],
    "median": [
        S(lambda m, x: m.median(x), F(3, 5)),
        S(lambda m, x: x.median(), F(4), name="even count"),
        S(lambda m, x: x.median(), F(), name="0-dim"),
        S(lambda m, x: m.median(x), T("int64", 3, 5, lo=-50, hi=50), nondiff=True,
          name="int"),
    ],
    "median_dim": [
        S(lambda m, x: m.median(x, 1), F(3, 5)),
        S(lambda m, x: x.median(0, keepdim=True), F(4, 3), name="dim 0 keepdim"),
        S(lambda m, x: m.median(x, -2).values, F(2, 4, 3), name="middle dim"),
        S(lambda m, x: m.median(x, 0), F(), name="0-dim"),
        S(lambda m, x: m.median(x, 1), T("int32", 3, 4, lo=-50, hi=50), nondiff=True,
          name="int32"),
    ],
}


def _each(call, patterns, **kw):
    return [S(call, V(p), fd=False, jax=False, **kw) for p in patterns]


SPECIAL = {
    "sort": _each(lambda m, x: m.sort(x), TIES + [[1.0, NAN, 2.0, NAN, -1.0]]) +
    _each(lambda m, x: m.sort(x, 0, True), TIES + [[1.0, NAN, 2.0, NAN, -1.0]]) + [
        S(lambda m, x: m.sort(x, 1), V([[0.0, -0.0, 0.0], [1.0, 1.0, -1.0]]), fd=False,
          jax=False, name="signed zeros"),
        S(lambda m, x: m.msort(x), V([[1.0, 2.0], [1.0, 2.0], [0.0, 2.0]]), fd=False,
          jax=False, name="msort ties"),
    ],
    "sort_stable": _each(lambda m, x: m.sort(x, stable=True), TIES) +
    _each(lambda m, x: m.sort(x, stable=False, descending=True), TIES) + [
        S(lambda m, x: m.sort(x, stable=True), V([float(i % 3) for i in range(40)]),
          fd=False, jax=False, name="long row"),
    ],
    "argsort": _each(lambda m, x: m.argsort(x, descending=True), TIES, nondiff=True),
    "topk": [
        S(lambda m, x, k=k, lg=lg, so=so: m.topk(x, k, largest=lg, sorted=so), V(p),
          fd=False, jax=False, name=f"k={k} largest={lg} sorted={so}")
        for p in ([1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0, 0.0, 0.0],
                  [1.0, NAN, 3.0, NAN, 3.0])
        for k in (1, 2, 3) for lg in (True, False) for so in (True, False)
    ],
    "kthvalue": [
        S(lambda m, x, k=k: m.kthvalue(x, k), V(p), fd=False, jax=False, name=f"k={k}")
        for p in ([2.0, 2.0, 2.0, 2.0], [1.0, 3.0, 3.0, 2.0, 3.0], [5.0, 5.0, 1.0, 1.0, 3.0, 3.0],
                  [1.0, NAN, 2.0, NAN], [0.0] * 9)
        for k in range(1, len(p) + 1)
    ],
    "median": _each(lambda m, x: m.median(x), TIES + [[1.0, NAN, 2.0, NAN], [1.0, 2.0, 2.0, 3.0],
                                                     [NAN, NAN, NAN]]),
    "median_dim": _each(lambda m, x: m.median(x, 0), TIES + [[1.0, NAN, 2.0, NAN],
                                                            [2.0, 2.0, 2.0, 2.0], [0.0] * 9]) + [
        S(lambda m, x: m.median(x, 1), V([[1.0, 1.0, 2.0, 2.0], [NAN, 0.0, NAN, 1.0],
                                          [3.0, 3.0, 3.0, 3.0]]), fd=False, jax=False,
          name="rows"),
    ],
}
