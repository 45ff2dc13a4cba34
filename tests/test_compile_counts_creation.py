"""Factories and dropout on new shapes: constants are made on the host (no compile) and
dropout's mask comes from a bucketed sampler (creation's NOTE [sampling buckets]), with
bitwise the values jax's own calls give."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import eagergrad as eg
import eagergrad.nn.functional as F
from eagergrad._cache import EXECUTABLES
from eagergrad.creation import _next_key

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("counting_compiles")]


SHAPES = [(3, 4), (5, 6), (7,), (100, 20), (9, 9), (2, 3, 5), (0, 4), ()]


@pytest.mark.parametrize("dtype", [eg.float32, eg.float64, eg.float16, eg.bfloat16, eg.int64,
                                   eg.int8, eg.uint8, eg.bool, eg.complex64])
def test_factories_on_new_shapes_compile_nothing_and_equal_jnp_full(dtype):
    np_dt = {eg.bfloat16: ml_dtypes.bfloat16}.get(dtype, None) or dtype.np
    eg.zeros(1, dtype=dtype)
    before = EXECUTABLES.compiles_here()
    made, fills = [], []
    for i, s in enumerate(SHAPES):
        fill = 1 if dtype in (eg.int8, eg.uint8, eg.bool) else (0.1 * (i + 1) - 0.3)
        made += [eg.zeros(s, dtype=dtype), eg.ones(s, dtype=dtype), eg.full(s, fill, dtype=dtype)]
        fills.append(fill)
    assert EXECUTABLES.compiles_here() == before
    wants = [w for s, fill in zip(SHAPES, fills)
             for w in (jnp.zeros(s, np_dt), jnp.ones(s, np_dt), jnp.full(s, fill, np_dt))]
    for t, want in zip(made, wants):
        assert t.shape == want.shape and t.dtype.np == want.dtype
        assert np.asarray(t._value).tobytes() == np.asarray(want).tobytes()


def test_out_of_range_integer_fill_is_torchs():
    """A fill out of the integer dtype's range: torch's checked conversion (an error, or a
    negative int in uint8 range as its two's complement), never numpy's or jax's wrap."""
    import torch
    for v, d in ((300, "int8"), (-1, "uint8"), (-255, "uint8"), (2.5e9, "int32")):
        try:
            want = torch.full((3,), v, dtype=getattr(torch, d)).tolist()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=re.escape(str(e))):
                eg.full((3,), v, dtype=getattr(eg, d))
            continue
        assert eg.full((3,), v, dtype=getattr(eg, d)).tolist() == want


@pytest.mark.parametrize("fn", ["dropout", "dropout2d", "alpha_dropout", "native"])
def test_dropout_masks_bucketed_and_bitwise(fn):
    """The mask is jax.random.bernoulli's with the generator's key, bitwise; new shapes
    compile no bernoulli sampler (the remaining compiles are the small elementwise ones:
    at most 4 per new shape)."""
    def run(x):
        if fn == "dropout":
            return F.dropout(x, 0.3)
        if fn == "dropout2d":
            return F.dropout2d(x, 0.3)
        if fn == "alpha_dropout":
            return F.alpha_dropout(x, 0.3, training=True)
        return eg.native_dropout(x, 0.3, True)[0]

    shapes = [(4, 5, 6), (5, 6, 2), (7, 3, 3), (6, 6, 1), (3, 2, 9)]
    for s in shapes:
        x = eg.ones(*s)
        eg.manual_seed(5)
        got = run(x)
        eg.manual_seed(5)
        key = _next_key()
        shape = s[:2] + (1,) if fn == "dropout2d" else s
        keep = np.asarray(jax.random.bernoulli(key, 0.7, shape))
        if fn in ("dropout", "dropout2d"):
            want = keep.astype(np.float32) / np.float32(0.7) * np.ones(s, np.float32)
            assert got.numpy().tobytes() == want.tobytes()
        else:  # the same positions dropped
            assert np.array_equal(np.broadcast_to(keep, s), got.numpy() != got.numpy().min()) \
                or np.array_equal(np.broadcast_to(keep, s), got.numpy() != 0)
    before = EXECUTABLES.compiles_here()
    for _i, s in enumerate([(8, 3, 2), (2, 9, 4), (3, 3, 7)]):
        run(eg.ones(*s))
    assert EXECUTABLES.compiles_here() - before <= 4 * 3, EXECUTABLES.compiles_here() - before
