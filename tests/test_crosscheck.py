"""eagergrad.testing.crosscheck: the routes agree on correct code (real, complex, order 1
and 2, with torch as the last route, finite differences in slow and fast mode), and a wrong
formula is caught by every independent route, with the input and the element named."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eagergrad as eg
from eagergrad.ops import _table
from eagergrad.testing import CrosscheckError, crosscheck
from eagergrad.testing._crosscheck import N_DIRECTIONS, Projections


def R(*v):
    return eg.tensor(list(v), dtype=eg.float64)


def Z(*v):
    return eg.tensor(list(v), dtype=eg.complex128)


def test_abs_squared_follows_torch_convention_and_jax_agrees_after_conversion():
    """|z|^2 at 3+4j: torch's gradient is 2z = 6+8j (dL/dz*), JAX's raw vjp gives 6-8j;
    crosscheck converts, and all routes agree."""
    r = crosscheck(lambda L, z: (z * z.conj()).real, Z(3 + 4j))
    assert r.ok and r.routes == ["tape", "jax", "jvp", "fd", "torch"]
    assert "conj(vjp(conj(v)))" in r.convention
    # the real output's cotangent v is real: the gradient is v * 2z, a real multiple of 6+8j
    g = r.inputs[0].grads["tape"][0]
    assert np.isclose((g / (6 + 8j)).imag, 0) and not np.isclose((g / (6 - 8j)).imag, 0)


@pytest.mark.slow
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("kind", ["real", "complex", "mixed"])
def test_correct_functions_pass_every_route(kind, order):
    if kind == "real":
        fn, ins = (lambda L, x, w: ((x * w).sin() + w).tanh() * x), (R(0.5, -1.0), R(1.5, 0.2))
    elif kind == "complex":
        fn, ins = (lambda L, z, w: (z * w).exp() / (w + 2)), (Z(0.5 + 1j, -1 - 0.5j),
                                                              Z(0.3 - 0.2j, 1j))
    else:  # R -> C -> R
        fn, ins = (lambda L, x, z: (x * z).abs() + (z.conj() * x).real), (R(0.5, -1.0),
                                                                        Z(1 + 1j, 2 - 1j))
    r = crosscheck(fn, *ins, order=order, raise_on_mismatch=True)
    assert r.ok and r.routes == ["tape", "jax", "jvp", "fd", "torch"]
    assert [i.name for i in r.inputs] == list(fn.__code__.co_varnames[1:3])
    fast = crosscheck(fn, *ins, order=order, fast_mode=True, raise_on_mismatch=True)
    assert fast.ok and fast.routes == r.routes
    assert all(isinstance(i.grads["fd"], Projections) for i in fast.inputs)


def test_without_the_module_argument_torch_is_not_run():
    r = crosscheck(lambda x: x.sin().sum(), R(0.5, 1.0))
    assert r.ok and r.routes == ["tape", "jax", "jvp", "fd"]


def test_float32_inputs():
    x = eg.tensor([0.5, -1.0, 2.0])
    assert crosscheck(lambda L, x: (x.exp() * x).sum(), x).ok


# ---- wrong formulas must be caught ------------------------------------------------------
def _injected(name, formula):
    """An op put into the table only for this test (kept out of OPS: it has no samples)."""
    op = _table.defop(name, lambda self, other: self * other, inputs=("self", "other"),
                      self=formula, other=lambda grad, self: grad * self.conj())
    del _table.OPS[name]
    return lambda a, b: _table.call_op(op, (a, b))


def test_missing_conjugation_is_caught():
    mul = _injected("test_mul_noconj", lambda grad, other: grad * other)  # conj missing
    r = crosscheck(lambda z, w: mul(z, w), Z(0.5 + 1j, -1 - 0.5j), Z(0.3 - 0.2j, 2 + 1j))
    assert not r.ok
    z, w = r.inputs
    assert not z.ok and w.ok
    assert z.errors["jax"][0] > 0.1 and z.errors["fd"][0] > 0.1 and z.errors["jvp"][0] > 0.1
    assert z.worst is not None and set(z.at_worst) == {"tape", "jax", "fd"}
    fast = crosscheck(lambda z, w: mul(z, w), Z(0.5 + 1j, -1 - 0.5j), Z(0.3 - 0.2j, 2 + 1j),
                      fast_mode=True)
    assert not fast.inputs[0].ok and fast.inputs[0].errors["fd"][0] > 0.1
    assert fast.inputs[1].ok
    with pytest.raises(CrosscheckError, match="MISMATCH") as e:
        crosscheck(lambda z, w: mul(z, w), Z(0.5 + 1j), Z(0.3 - 0.2j), raise_on_mismatch=True)
    assert "<- mismatch" in str(e.value) and "z" in str(e.value)


def test_one_percent_error_is_caught_and_located():
    mul = _injected("test_mul_1pct", lambda grad, other: grad * other * 1.01)
    x = R(0.5, -1.0, 2.0)
    w = R(1.5, 0.25, -4.0)
    r = crosscheck(lambda x, w: mul(x, w), x, w)
    assert not r.ok and not r.inputs[0].ok and r.inputs[1].ok
    rep = r.inputs[0]
    assert rep.errors["jax"][1] == pytest.approx(0.01 / 1.01, rel=1e-6)  # relative to the tape
    assert rep.worst == (2,)  # the largest |gradient|: w = -4
    assert rep.at_worst["tape"] == pytest.approx(rep.at_worst["jax"] * 1.01)
    # along any direction u the tape's projection is 1.01 times JAX's forward derivative
    assert rep.errors["jvp"][1] == pytest.approx(0.01 / 1.01, rel=1e-6)
    fast = crosscheck(lambda x, w: mul(x, w), x, w, fast_mode=True)
    assert not fast.inputs[0].ok and fast.inputs[1].ok
    assert fast.inputs[0].errors["fd"][1] == pytest.approx(0.01 / 1.01, rel=1e-4)


def test_fast_mode_evaluates_the_function_twice_per_direction():
    calls = []

    def fn(x):
        calls.append(1)
        return x.sin() * x
    x = eg.tensor(np.linspace(-1, 1, 50), dtype=eg.float64)
    crosscheck(fn, x, check_jvp=False)
    slow = len(calls)
    calls.clear()
    crosscheck(fn, x, check_jvp=False, fast_mode=True)
    assert slow - len(calls) == 2 * 50 - 2 * N_DIRECTIONS


def test_jvp_route_is_skipped_where_jax_has_no_forward_mode():
    """An op whose kernel is a jax.custom_vjp: JAX's jvp cannot go through it."""
    @jax.custom_vjp
    def sin(x):
        return jnp.sin(x)
    sin.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (g * jnp.cos(x),))
    op = _table.defop("test_sin_custom_vjp", sin, self=lambda grad, self: grad * self.cos())
    del _table.OPS["test_sin_custom_vjp"]
    r = crosscheck(lambda x: _table.call_op(op, (x,)), R(0.5, -1.0))
    assert r.ok and r.routes == ["tape", "jax", "fd"]


def test_wrong_custom_function_backward_is_caught_by_jax_and_fd():
    class Square(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x  # 2 missing

    r = crosscheck(Square.apply, R(1.0, 2.0))
    assert not r.ok and r.inputs[0].errors["jax"][1] == pytest.approx(1.0)  # |x - 2x| / |x|
    assert r.inputs[0].name == "input 0"


def test_second_order_error_is_caught():
    class ExpDetached(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.detach().exp()  # right first derivative, no second

    assert crosscheck(ExpDetached.apply, R(0.5, -1.0)).ok
    assert not crosscheck(ExpDetached.apply, R(0.5, -1.0), order=2).ok


# ---- bad input ----------------------------------------------------------------------------
def test_not_tracer_safe_function_names_the_problem():
    def branchy(x):
        return x * 2 if x.sum().item() > 0 else x * 3
    with pytest.raises(CrosscheckError, match="not tracer-safe") as e:
        crosscheck(branchy, R(0.5, 1.0))
    assert "item" in str(e.value)


def test_integer_inputs_only():
    with pytest.raises(CrosscheckError, match="no input is floating point"):
        crosscheck(lambda i: i * 2, eg.tensor([1, 2]))


def test_non_tensor_output_and_input():
    with pytest.raises(CrosscheckError, match="must return tensors"):
        crosscheck(lambda x: 3.0, R(1.0))
    with pytest.raises(TypeError, match="not a tensor"):
        crosscheck(lambda x: x, jnp.ones(2))


def test_report_prints_a_table():
    text = str(crosscheck(lambda L, x: x.exp(), R(0.5, 1.0)))
    lines = text.splitlines()
    assert lines[0].startswith("crosscheck of <lambda>, order 1: OK")
    assert "|tape-jax| abs/rel" in lines[2] and lines[3].startswith("x")
    assert "|tape-jvp|(u) abs/rel" in lines[2]
