"""Random sampling compiles once per size bucket, not once per shape (docs/design.md §10;
NOTE [sampling buckets] in eagergrad/creation.py), and draws bitwise the numbers it drew
before: those of plain jax.random called with the key the generator hands out.

The expected values here are derived independently of eagergrad's sampling code: the key
a draw uses is the second half of `jax.random.split` of the generator's state (read with
`get_state` / `get_rng_state`), and after the draw the state is the first half (one split
per call); the numbers are `jax.random.<sampler>(key, shape, dtype, ...)`, un-jitted, as
eagergrad called them before sampling was bucketed. Every case draws twice: the first
draw of a (bucket, shape) reaches its shape through the host, the second through a
slice kernel; both must give the same bits.

Compile counts (`EXECUTABLES.compiles_here()`, a jax listener counting every XLA compile): with
a bucket's sampler compiled, 20 new shapes in that bucket drawn once compile nothing
(bound 2), drawn again 20 slice kernels (bound 22, one each, no sampler); before
bucketing each new shape compiled a sampler of its own (~300 ms each).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eagergrad as eg
from eagergrad import creation
from eagergrad._cache import EXECUTABLES

pytestmark = pytest.mark.usefixtures("counting_compiles")


F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def _key_of(state):
    return jnp.asarray(np.frombuffer(state.numpy().tobytes(), np.uint32).copy())


def _bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, a.reshape(-1).view(np.uint8).tobytes()


def _same_bits(got, expected):
    got = got.detach().numpy() if isinstance(got, eg.Tensor) else got
    assert _bits(got) == _bits(expected)


def _uniform(key, shape, dt, lo, hi):
    """jax's numbers for torch.rand / uniform_ (complex: real and imaginary parts drawn as
    a trailing axis of 2)."""
    if np.dtype(dt).kind == "c":
        real = np.float32 if np.dtype(dt) == np.complex64 else np.float64
        parts = jax.random.uniform(key, shape + (2,), real, lo, hi)
        return jax.lax.complex(parts[..., 0], parts[..., 1])
    return jax.random.uniform(key, shape, dt, lo, hi)


SHAPES = [(), (0,), (3, 0, 2), (1,), (3,), (2, 3), (100, 50), (4096,), (4097,), (4608,),
          (4609,), (70, 71), (257, 1000)]

# (name, draw(generator, shape), expected(key, shape)) for a generator of its own
CASES = [
    ("rand", lambda g, s: eg.rand(s, generator=g),
     lambda k, s: jax.random.uniform(k, s, F32)),
    ("randn", lambda g, s: eg.randn(*s, generator=g),
     lambda k, s: jax.random.normal(k, s, F32)),
    ("randn_f64", lambda g, s: eg.randn(s, dtype=eg.float64, generator=g),
     lambda k, s: jax.random.normal(k, s, F64)),
    ("rand_c64", lambda g, s: eg.rand(s, dtype=eg.complex64, generator=g),
     lambda k, s: _uniform(k, s, np.complex64, 0.0, 1.0)),
    ("randint", lambda g, s: eg.randint(-3, 100, s, generator=g),
     lambda k, s: jax.random.randint(k, s, -3, 100, jnp.int64)),
    ("uniform_", lambda g, s: eg.empty(s).uniform_(-2.0, 3.0, generator=g),
     lambda k, s: jax.random.uniform(k, s, F32, -2.0, 3.0)),
]


@pytest.mark.slow
@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_draws_are_jax_samplers_numbers_for_every_shape(name):
    _, draw, expected = next(c for c in CASES if c[0] == name)
    for seed, shape in enumerate(SHAPES):
        for _ in range(2):  # through the host, then through the slice kernel
            g = eg.Generator().manual_seed(1000 * seed + 17)
            key = _key_of(g.get_state())
            nxt, sub = jax.random.split(key)
            _same_bits(draw(g, shape), expected(sub, shape))
            _same_bits(_key_of(g.get_state()), nxt)  # one split per draw


DTYPE_CASES = [
    # (function, dtype, draw(g, dtype), expected(key, np dtype))
    ("rand", "float16", lambda g, d: eg.rand(7, 5, dtype=d, generator=g),
     lambda k, d: _uniform(k, (7, 5), d, 0.0, 1.0)),
    ("rand", "bfloat16", lambda g, d: eg.rand(7, 5, dtype=d, generator=g),
     lambda k, d: _uniform(k, (7, 5), d, 0.0, 1.0)),
    ("rand", "float64", lambda g, d: eg.rand(5000, dtype=d, generator=g),
     lambda k, d: _uniform(k, (5000,), d, 0.0, 1.0)),
    ("rand", "complex128", lambda g, d: eg.rand(3000, dtype=d, generator=g),
     lambda k, d: _uniform(k, (3000,), d, 0.0, 1.0)),
    ("rand", "complex64", lambda g, d: eg.rand((), dtype=d, generator=g),
     lambda k, d: _uniform(k, (), d, 0.0, 1.0)),
    ("randn", "float16", lambda g, d: eg.randn(33, 3, dtype=d, generator=g),
     lambda k, d: jax.random.normal(k, (33, 3), d)),
    ("randn", "bfloat16", lambda g, d: eg.randn(33, 3, dtype=d, generator=g),
     lambda k, d: jax.random.normal(k, (33, 3), d)),
    ("randn", "complex64", lambda g, d: eg.randn(33, 3, dtype=d, generator=g),
     lambda k, d: jax.random.normal(k, (33, 3), d)),
    ("randn", "complex128", lambda g, d: eg.randn(4100, dtype=d, generator=g),
     lambda k, d: jax.random.normal(k, (4100,), d)),
    ("uniform_", "float64", lambda g, d: eg.empty(9, 4, dtype=d).uniform_(-1, 1, generator=g),
     lambda k, d: jax.random.uniform(k, (9, 4), d, -1, 1)),
    ("uniform_", "complex64", lambda g, d: eg.empty(9, 4, dtype=d).uniform_(-2.0, 3.0,
                                                                            generator=g),
     lambda k, d: _uniform(k, (9, 4), d, -2.0, 3.0)),
    ("randint_big", "int64", lambda g, d: eg.randint(-2 ** 40, 2 ** 40, (5000,), generator=g),
     lambda k, d: jax.random.randint(k, (5000,), -2 ** 40, 2 ** 40, jnp.int64)),
    ("randint_like", "int64", lambda g, d: eg.randint(7, (4, 4), generator=g),
     lambda k, d: jax.random.randint(k, (4, 4), 0, 7, jnp.int64)),
] + [
    ("randint", dt, lambda g, d: eg.randint(0, 100 if d is not eg.bool else 2, (17, 3),
                                            dtype=d, generator=g),
     lambda k, d: jax.random.randint(k, (17, 3), 0, 100 if d != np.bool_ else 2,
                                     jnp.int64).astype(d))
    for dt in ("int32", "int16", "int8", "uint8", "bool", "float32", "float64", "float16",
               "bfloat16", "complex64")
]


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(DTYPE_CASES)),
                         ids=[f"{c[0]}-{c[1]}" for c in DTYPE_CASES])
def test_draws_of_every_dtype_are_jax_samplers_numbers(i):
    _, dt, draw, expected = DTYPE_CASES[i]
    d = getattr(eg, dt)
    for seed in (3, 4):
        g = eg.Generator().manual_seed(seed)
        sub = jax.random.split(_key_of(g.get_state()))[1]
        for _ in range(2):
            g = eg.Generator().manual_seed(seed)
            got = draw(g, d)
            got = got.float() if d is eg.bfloat16 else got
            exp = np.asarray(expected(sub, d.np))
            _same_bits(got, exp.astype(np.float32) if d is eg.bfloat16 else exp)


def test_the_global_stream_and_its_state():
    """A run of draws from the global generator: each takes the next split of the state,
    normal_ is randn * std + mean, and the final state is the one the splits give."""
    eg.manual_seed(1234)
    key = _key_of(eg.get_rng_state())
    subs = []
    for _ in range(6):
        key, sub = jax.random.split(key)
        subs.append(sub)
    out = [eg.rand(3, 4), eg.randn(10), eg.randint(0, 5, (6,)),
           eg.rand_like(eg.empty(2, 2, dtype=eg.float64)),
           eg.randn_like(eg.empty(5, dtype=eg.complex64)),
           eg.empty(6, 2).normal_(0.5, 2.0)]
    exp = [jax.random.uniform(subs[0], (3, 4), F32), jax.random.normal(subs[1], (10,), F32),
           jax.random.randint(subs[2], (6,), 0, 5, jnp.int64),
           jax.random.uniform(subs[3], (2, 2), F64),
           jax.random.normal(subs[4], (5,), np.complex64),
           (eg.from_jax(jax.random.normal(subs[5], (6, 2), F32)) * 2.0 + 0.5).numpy()]
    for o, e in zip(out, exp):
        _same_bits(o, e)
    _same_bits(_key_of(eg.get_rng_state()), key)


def test_float64_default_dtype_and_nn_init():
    """Float64 by default; Linear's kaiming_uniform_/uniform_ bounds (torch's formulas),
    normal_, trunc_normal_ (in [a, b], clamped)."""
    def linear_bound(fan_in):  # kaiming_uniform_(a=sqrt(5)), as torch's Linear
        gain = math.sqrt(2.0 / (1 + 5))
        return math.sqrt(3.0) * (gain / math.sqrt(fan_in))

    eg.set_default_dtype(eg.float64)
    try:
        eg.manual_seed(5)
        key = _key_of(eg.get_rng_state())
        key, s1 = jax.random.split(key)
        key, s2 = jax.random.split(key)
        _same_bits(eg.rand(4, 3), jax.random.uniform(s1, (4, 3), F64))
        lin = eg.nn.Linear(6, 4)
        _same_bits(lin.weight, jax.random.uniform(s2, (4, 6), F64, -linear_bound(6),
                                                  linear_bound(6)))
    finally:
        eg.set_default_dtype(eg.float32)

    eg.manual_seed(0)
    key = _key_of(eg.get_rng_state())
    for fan_in, fan_out in [(784, 256), (20, 7), (1, 1), (300, 100)]:
        lin = eg.nn.Linear(fan_in, fan_out)
        key, sw = jax.random.split(key)
        key, sb = jax.random.split(key)
        b = linear_bound(fan_in)
        _same_bits(lin.weight, jax.random.uniform(sw, (fan_out, fan_in), F32, -b, b))
        bb = 1 / math.sqrt(fan_in)
        _same_bits(lin.bias, jax.random.uniform(sb, (fan_out,), F32, -bb, bb))

    for shape, dt, (mean, std, a, b) in [((64, 33), F32, (0.25, 0.5, -2.0, 2.0)),
                                         ((5000,), F64, (1.0, 2.0, -1.0, 4.0)),
                                         ((), F32, (0.0, 1.0, -2.0, 2.0))]:
        for _ in range(2):
            g = eg.Generator().manual_seed(11)
            sub = jax.random.split(_key_of(g.get_state()))[1]
            t = eg.empty(shape, dtype=eg.float64 if dt == F64 else eg.float32)
            eg.nn.init.trunc_normal_(t, mean, std, a, b, generator=g)
            z = jax.random.truncated_normal(sub, (a - mean) / std, (b - mean) / std, shape, dt)
            _same_bits(t, np.clip(np.asarray(z * std + mean), a, b))


def test_draws_under_a_jax_trace_and_vmap():
    """Tracer keys and draws inside a jax trace take the kernel path, with the same bits."""
    g = eg.Generator().manual_seed(5)
    sub = jax.random.split(_key_of(g.get_state()))[1]
    out = jax.jit(eg.jaxify(lambda x: eg.rand(3, 4, generator=g)))(jnp.ones(3))
    _same_bits(np.asarray(out), jax.random.uniform(sub, (3, 4), F32))
    assert eg.rand(2, generator=g).shape == (2,)  # no tracer kept in the generator

    g = eg.Generator().manual_seed(6)
    sub = jax.random.split(_key_of(g.get_state()))[1]
    r = eg.func.vmap(lambda v: eg.randn(4, 2, generator=g), randomness="different")(
        eg.zeros(3, 4))
    _same_bits(r, jnp.stack([jax.random.normal(jax.random.fold_in(sub, i), (4, 2), F32)
                             for i in range(3)]))


def test_without_partitionable_threefry_each_shape_has_its_sampler():
    """Prefix consistency holds for partitionable threefry only: otherwise sample() draws
    each shape with its own sampler, as before (still jax's numbers)."""
    with jax.threefry_partitionable(False):
        for shape in [(3, 5), (5000,)]:
            g = eg.Generator().manual_seed(9)
            sub = jax.random.split(_key_of(g.get_state()))[1]
            _same_bits(eg.randn(shape, generator=g), jax.random.normal(sub, shape, F32))


def test_bucket_sizes():
    assert creation._bucket(0) == creation._bucket(1) == creation._bucket(4096) == 4096
    prev = 4096
    for n in list(range(4090, 20000, 7)) + [10 ** 6, 10 ** 8 + 1, 2 ** 40 - 1]:
        b = creation._bucket(n)
        assert n <= b <= max(4096, n * 1.125) and b >= prev
        prev = b
    # 8 buckets per power of two above 4096
    assert len({creation._bucket(n) for n in range(4097, 8193)}) == 8


# compiles a count may hold besides the sampling's own: jax's tracing caches are cleared
# every EXECUTABLES.JAX_CLEAR_EVERY compiles, and the key split recompiles then
SLACK = 2


def _compiles(f):
    c = EXECUTABLES.compiles_here()
    f()
    return EXECUTABLES.compiles_here() - c


@pytest.mark.parametrize("fn", ["rand", "randn", "uniform_"])
def test_new_shapes_in_a_bucket_compile_no_sampler(fn):
    """With the bucket's sampler compiled, 20 new shapes of one bucket compile nothing
    drawn once (bound SLACK = 2) and one slice kernel each drawn again (bound 20 +
    SLACK), never a sampler; before, each new shape compiled a sampler (~300 ms)."""
    rng = np.random.default_rng({"rand": 1, "randn": 2, "uniform_": 3}[fn])
    draw = {"rand": lambda s: eg.rand(*s), "randn": lambda s: eg.randn(*s),
            "uniform_": lambda s: eg.empty(*s, dtype=eg.float64).uniform_(-1.0, 1.0)}[fn]
    # shapes of 5121..5632 numbers (bucket 5632), unseen in the session (odd sizes)
    shapes, sizes = [], set()
    while len(shapes) < 20:
        n = int(rng.integers(5121, 5633))
        d = next((d for d in (13, 11, 7, 3) if n % d == 0), 1)
        if n not in sizes:
            sizes.add(n)
            shapes.append((n // d, d, 1))
    assert {creation._bucket(math.prod(s)) for s in shapes} == {5632}
    # uniform_ also compiles its copy_ write kernel per shape: count the sampling only
    draw((5632,))
    samplers = len(creation._SAMPLERS)
    if fn == "uniform_":
        once = sum(_compiles(lambda s=s: creation._uniform(creation._next_key(None), s,
                                                           eg.float64, -1.0, 1.0))
                   for s in shapes)
        again = sum(_compiles(lambda s=s: creation._uniform(creation._next_key(None), s,
                                                            eg.float64, -1.0, 1.0))
                    for s in shapes)
        for s in shapes:
            assert draw(s).shape == s
    else:
        once = sum(_compiles(lambda s=s: draw(s)) for s in shapes)
        again = sum(_compiles(lambda s=s: draw(s)) for s in shapes)
    assert once <= SLACK, once
    assert again <= 20 + SLACK, again
    assert len(creation._SAMPLERS) <= samplers  # (evictions only)
