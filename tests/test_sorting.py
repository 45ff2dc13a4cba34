"""sort/argsort/msort/topk/kthvalue/median: torch's errors and named-tuple results.
(Values, graphs and gradients come from the samples in _samples_sorting.py.)"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import same, same_error

import eagergrad as eg

NAN = float("nan")


# ---- complex, bool and integer dtypes --------------------------------------------------
@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("call,phrase", [
    (lambda m, x: m.sort(x), " Sort does not support complex dtypes on CPU"),
    (lambda m, x: m.sort(x, stable=True), " Sort does not support complex dtypes on CPU"),
    (lambda m, x: m.argsort(x), " Sort does not support complex dtypes on CPU"),
    (lambda m, x: m.msort(x), " Sort does not support complex dtypes on CPU"),
    (lambda m, x: m.topk(x, 2), " topk does not support complex dtypes on CPU"),
], ids=["sort", "sort stable", "argsort", "msort", "topk"])
def test_complex_runtime_error(dt, call, phrase):
    msg = same_error(lambda m: call(m, m.ones(3, 4, dtype=getattr(m, dt))), phrase)
    assert msg == phrase  # the leading space is torch's


@pytest.mark.parametrize("dt,name", [("complex64", "ComplexFloat"),
                                     ("complex128", "ComplexDouble"), ("bool", "Bool")])
@pytest.mark.parametrize("call,kernel", [
    (lambda m, x: m.kthvalue(x, 2), "kthvalue_cpu"),
    (lambda m, x: m.median(x), "median_cpu"),
    (lambda m, x: x.median(1), "median_out"),
], ids=["kthvalue", "median", "median dim"])
def test_not_implemented_dtypes(dt, name, call, kernel):
    same_error(lambda m: call(m, m.ones(3, 4, dtype=getattr(m, dt))),
               f"\"{kernel}\" not implemented for '{name}'", NotImplementedError)


def test_topk_bool():
    same_error(lambda m: m.topk(m.ones(3, dtype=m.bool), 1),
               "topk does not support bool dtypes on CPU")


@pytest.mark.parametrize("dt", ["bool", "int64", "int32", "uint8", "float16"])
def test_sort_other_dtypes(dt):
    def f(m):
        x = m.tensor([[1, 0, 1, 1], [0, 0, 1, 0]], dtype=getattr(m, dt))
        return [tuple(m.sort(x)), tuple(m.sort(x, descending=True, stable=True)),
                m.argsort(x, dim=0), m.msort(x)]
    same(f)


@pytest.mark.parametrize("dt", ["int64", "uint8", "float16"])
def test_select_other_dtypes(dt):
    def f(m):
        x = m.tensor([[3, 1, 1, 2], [0, 5, 5, 5]], dtype=getattr(m, dt))
        return [tuple(m.topk(x, 2)), tuple(m.kthvalue(x, 3)), tuple(m.median(x, 1)),
                m.median(x)]
    same(f)


# ---- dims and k out of range; empty inputs --------------------------------------------
DIM = "Dimension out of range (expected to be in range of [-2, 1], but got"


@pytest.mark.parametrize("call", [
    lambda m, x: m.sort(x, 2), lambda m, x: x.sort(-3), lambda m, x: m.sort(x, stable=True, dim=2),
    lambda m, x: m.argsort(x, 2), lambda m, x: m.topk(x, 1, 2), lambda m, x: m.kthvalue(x, 1, 2),
    lambda m, x: m.median(x, 2), lambda m, x: x.median(-3),
], ids=["sort", "sort -3", "sort stable", "argsort", "topk", "kthvalue", "median",
        "median -3"])
def test_dim_out_of_range(call):
    same_error(lambda m: call(m, m.ones(3, 4)), DIM, IndexError)


def test_dim_out_of_range_0dim():
    same_error(lambda m: m.sort(m.tensor(2.0), 1),
               "Dimension out of range (expected to be in range of [-1, 0], but got 1)",
               IndexError)


@pytest.mark.parametrize("call", [
    lambda m: m.topk(m.ones(3, 4), 5), lambda m: m.topk(m.ones(3, 4), -1),
    lambda m: m.topk(m.ones(3, 4), 4, dim=0), lambda m: m.topk(m.tensor(2.0), 2),
], ids=["k > n", "k < 0", "k > n dim 0", "0-dim k 2"])
def test_topk_k_out_of_range(call):
    same_error(call, "selected index k out of range")


@pytest.mark.parametrize("call", [
    lambda m: m.kthvalue(m.ones(3, 4), 5), lambda m: m.kthvalue(m.ones(3, 4), 0),
    lambda m: m.kthvalue(m.ones(3, 4), 4, 0), lambda m: m.kthvalue(m.tensor(2.0), 2),
], ids=["k > n", "k 0", "k > n dim 0", "0-dim k 2"])
def test_kthvalue_k_out_of_range(call):
    same_error(call, "kthvalue(): selected number k out of range for dimension")


@pytest.mark.parametrize("call,name", [
    (lambda m: m.kthvalue(m.ones(0), 1), "kthvalue"),
    (lambda m: m.median(m.ones(0, 3), 0), "median"),
])
def test_empty_reduction_dim(call, name):
    same_error(call, f"{name}(): Expected reduction dim 0 to have non-zero size.", IndexError)


def test_empty_inputs():
    same(lambda m: [tuple(m.sort(m.ones(0, 3))), tuple(m.topk(m.ones(3, 4), 0)),
                    tuple(m.topk(m.ones(0), 0)), tuple(m.kthvalue(m.ones(0, 3), 1, 1)),
                    tuple(m.median(m.ones(0, 3), 1)), m.median(m.ones(0))])


@pytest.mark.parametrize("call,phrase", [
    (lambda m: m.topk(m.ones(3), 1.5), "topk(): argument 'k' (position 2) must be int"),
    (lambda m: m.median(m.ones(3), None), "median(): argument 'dim' (position 2) must be int"),
])
def test_argument_types(call, phrase):
    same_error(call, phrase, TypeError, messages=False)


# ---- named tuples ------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, x: m.sort(x, 1), lambda m, x: x.topk(2), lambda m, x: m.kthvalue(x, 2, 0),
    lambda m, x: x.median(1, keepdim=True),
], ids=["sort", "topk", "kthvalue", "median"])
def test_named_tuple(call):
    def f(m):
        x = m.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], requires_grad=True)
        r = call(m, x)
        values, indices = r
        assert r.values is r[0] is values and r.indices is r[1] is indices
        assert len(r) == 2 and isinstance(r, tuple)
        return [values, indices, type(r).__name__, repr(r).split("(")[0].split(".")[-1]]
    same(f)


def test_grad_fn_names():
    def f(m):
        x = m.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], requires_grad=True)
        return [m.sort(x).values.grad_fn.name(), m.sort(x, stable=True).values.grad_fn.name(),
                x.sort(stable=False).values.grad_fn.name(), m.msort(x).grad_fn.name(),
                m.sort(x, 0, True).values.grad_fn.name(), x.topk(1).values.grad_fn.name(),
                x.kthvalue(1).values.grad_fn.name(), x.median().grad_fn.name(),
                x.median(0).values.grad_fn.name(), m.argsort(x).requires_grad,
                x.topk(2).indices.requires_grad]
    same(f)


def test_backward_at_ties():
    """Gradients land where torch's indices point, NaN medians spread over the NaNs."""
    def f(m):
        out = []
        for call in (lambda x: x.topk(3).values, lambda x: x.kthvalue(2).values,
                     lambda x: x.median(0).values, lambda x: x.median(),
                     lambda x: x.sort(descending=True).values[:2]):
            for v in ([2.0, 2.0, 2.0, 2.0, 2.0], [1.0, 3.0, 3.0, 2.0, 3.0],
                      [1.0, NAN, 2.0, NAN, 0.0]):
                x = m.tensor(v, requires_grad=True)
                y = call(x)
                w = m.arange(1.0, y.numel() + 1.0).reshape(y.shape)
                (g,) = m.autograd.grad((y * w).sum(), x)
                out.append(g)
        return out
    same(f)


@pytest.mark.slow
def test_under_jit():
    """The kernels are tracer-safe: the same results under jax.jit and jax.vmap."""
    def f(x):
        return [eg.topk(x, 2).indices, eg.kthvalue(x, 2).indices, eg.median(x, -1).indices,
                eg.sort(x).indices, eg.topk(x, 3, largest=False, sorted=False).indices,
                eg.median(x)]
    a = jnp.array([[1.0, 3.0, 3.0, 2.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    want = [np.asarray(t._value) for t in f(eg.from_jax(a))]
    for got in (jax.jit(eg.jaxify(f))(a), [jax.vmap(eg.jaxify(f))(a[None])[k][0]
                                          for k in range(6)]):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
