"""Random streams: eagergrad.Generator, generator= on the random functions, and the
global state (get_rng_state / set_rng_state). The numbers are jax's, not torch's; what
must hold is torch's contract: a seed fixes a stream, a generator's stream is its own,
a saved state replays it, and bad states raise torch's errors."""
import pytest

import eagergrad as eg
from conftest import same

DRAWS = {
    "rand": lambda g: eg.rand(3, 2, generator=g),
    "randn": lambda g: eg.randn(4, generator=g, dtype=eg.float64),
    "randint": lambda g: eg.randint(0, 10, (5,), generator=g),
    "randperm": lambda g: eg.randperm(6, generator=g),
    "normal_": lambda g: eg.zeros(3).normal_(2.0, 0.5, generator=g),
    "uniform_": lambda g: eg.zeros(3).uniform_(-1.0, 1.0, generator=g),
    "random_split": lambda g: eg.tensor([sorted(s.indices) for s in
                                         eg.utils.data.random_split(range(6), [3, 3], g)]),
    "init.normal_": lambda g: eg.nn.init.normal_(eg.zeros(3), generator=g),
}


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())


@pytest.mark.parametrize("name", sorted(DRAWS))
def test_a_seeded_generator_fixes_the_stream_and_leaves_the_global_one_alone(name):
    draw = DRAWS[name]
    eg.manual_seed(0)
    plain = eg.rand(4)
    eg.manual_seed(0)
    a = draw(eg.Generator().manual_seed(7))
    after = eg.rand(4)  # the global stream did not move
    b = draw(eg.Generator().manual_seed(7))
    c = draw(eg.Generator().manual_seed(8))
    assert _same(a, b) and _same(plain, after)
    assert not _same(a, c) or name == "random_split"  # (6 choose 3: may coincide)


def test_generator_state_round_trip():
    g = eg.Generator().manual_seed(1)
    eg.rand(2, generator=g)
    state = g.get_state()
    a = eg.randn(3, generator=g)
    assert _same(eg.randn(3, generator=g.set_state(state)), a)
    assert state.dtype is eg.uint8


def test_global_state_round_trip():
    state = eg.get_rng_state()
    a = eg.rand(3)
    eg.set_rng_state(state)
    assert _same(eg.rand(3), a)


def test_generator_attributes_match_torch():
    def f(L):
        g = L.Generator()
        return (g.initial_seed(), str(g.device), g.manual_seed(5) is g, g.initial_seed())
    same(f)


@pytest.mark.parametrize("bad", ["float", "list"])
def test_bad_states_raise_torch_errors(bad):
    def f(L):
        state = L.zeros(3) if bad == "float" else [1, 2]
        L.Generator().set_state(state)
    same(f)

    def g(L):
        L.set_rng_state(L.zeros(3) if bad == "float" else [1, 2])
    same(g)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "complex128"])
def test_uniform_fills_each_part_of_a_complex_tensor_as_torch(dtype):
    """torch's uniform_/rand on complex draw the real and imaginary parts each in [a, b)."""
    import torch
    for L in (torch, eg):
        t = L.zeros(2000, dtype=getattr(L, dtype)).uniform_(-2.0, 3.0)
        parts = [t.real, t.imag] if t.is_complex() else [t]
        for p in parts:
            assert float(p.min()) >= -2.0 and float(p.max()) < 3.0
            assert abs(float(p.mean()) - 0.5) < 0.2
        r = L.rand(500, dtype=getattr(L, dtype))
        assert float(r.real.min()) >= 0 and float(r.real.max()) < 1


def test_a_draw_under_a_jax_trace_keeps_no_tracer():
    """rand inside jaxify + jax.jit (and a seeded generator's first draw there) advances
    the stream with concrete keys: drawing again afterwards works."""
    import jax
    import jax.numpy as jnp
    eg.manual_seed(3)
    g = eg.Generator()
    out = jax.jit(eg.jaxify(lambda x: x * eg.rand(3) + eg.randn(3, generator=g)))(jnp.ones(3))
    assert out.shape == (3,)
    assert eg.rand(2).shape == (2,) and eg.randn(1, generator=g).shape == (1,)
