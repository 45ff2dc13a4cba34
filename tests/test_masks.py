"""Boolean masks (eagergrad/ops/masks.py NOTE [masks]), differentially against torch:
writes (`x[mask] = v`, index_put_ with a mask) as a where with static shapes, reads
(`x[mask]`, masks among other indices, masked_select, nonzero) on bucket-padded indices,
their backward, and the point of it all: no XLA compile per distinct count.

Every scenario runs once with torch and three times with eagergrad in this process
(conftest.same), each eagergrad run compared with torch's: values, dtypes, grad_fn names,
next_functions, versions, gradients, errors.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import eagergrad as eg
from conftest import same, same_error


def nexts(t):
    fn = t.grad_fn
    return None if fn is None else [(None if n is None else n.name(), i)
                                    for n, i in fn.next_functions]


def _rand(L, *shape, seed=0, rg=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return L.tensor(a, requires_grad=rg)


def _mask(L, *shape, p=0.5, seed=1):
    return L.tensor(np.random.default_rng(seed).random(shape) < p)


def _count_mask(L, shape, count, seed=2):
    """A mask of `shape` with exactly `count` True elements."""
    flat = np.zeros(int(np.prod(shape)), bool)
    flat[np.random.default_rng(seed).permutation(flat.size)[:count]] = True
    return L.tensor(flat.reshape(shape))


# ---- writes: x[mask] = v ---------------------------------------------------------------------
WRITES = {
    "float": lambda L, z, w: z.__setitem__(z.detach() > 0, 0.0),
    "int_into_float": lambda L, z, w: z.__setitem__(z.detach() < 0, 0),
    "bool_value": lambda L, z, w: z.__setitem__(z.detach() < 0, True),
    "neg_zero": lambda L, z, w: z.__setitem__(z.detach() < 0, -0.0),
    "nan": lambda L, z, w: z.__setitem__(z.detach() < 0, float("nan")),
    "0d_tensor": lambda L, z, w: z.__setitem__(z.detach() > 0, L.tensor(2.5)),
    "0d_requires_grad": lambda L, z, w: z.__setitem__(z.detach() > 0, w.sum() * 2),
    "0d_float64_requires_grad": lambda L, z, w: z.__setitem__(
        z.detach() > 0, (w.sum() * 2).double()),
    "0d_int64": lambda L, z, w: z.__setitem__(z.detach() > 0, L.tensor(3)),
    "one_element_float64": lambda L, z, w: z.__setitem__(
        z.detach() > 0, w[:1].double() * 3),
    "one_element_leading_ones": lambda L, z, w: z.__setitem__(
        z.detach() > 0, w[:1].reshape(1, 1) * 3),
    "row_broadcast": lambda L, z, w: z.__setitem__(L.tensor([True, False, True]), w * 2),
    "row_with_leading_one": lambda L, z, w: z.__setitem__(
        L.tensor([True, False, True]), (w * 2).reshape(1, 4)),
    "column_per_row": lambda L, z, w: z.__setitem__(
        L.tensor([True, False, True]), (w[:2] * 2).reshape(2, 1)),
    "one_per_element": lambda L, z, w: z.__setitem__(
        z.detach() > 0, L.cat([w, w, w])[:int((z.detach() > 0).sum())] * 2),
    "all_true": lambda L, z, w: z.__setitem__(L.ones(3, 4, dtype=L.bool), w * 2),
    "all_true_per_element": lambda L, z, w: z.__setitem__(
        L.ones(3, 4, dtype=L.bool), L.cat([w, w, w]) * 2),
    "none_true": lambda L, z, w: z.__setitem__(L.zeros(3, 4, dtype=L.bool), w[0]),
    "none_true_empty_values": lambda L, z, w: z.__setitem__(
        L.zeros(3, 4, dtype=L.bool), w[:0].reshape(0, 1) * 2),
    "mask_on_dim1": lambda L, z, w: z.__setitem__(
        (slice(None), L.tensor([True, False, True, True])), w[0] * 2),
    "mask_on_dim1_per_element": lambda L, z, w: z.__setitem__(
        (slice(None), L.tensor([True, False, True, True])), (w[:3] * 2).expand(3, 3)),
    "mask_then_slice": lambda L, z, w: z.__setitem__(
        (L.tensor([True, False, True]), slice(1, None)), w[1:] * 2),
    "uint8_mask_0d": lambda L, z, w: z.__setitem__(L.tensor([1, 0, 1], dtype=L.uint8), w[0]),
    "uint8_mask_row": lambda L, z, w: z.__setitem__(L.tensor([1, 0, 1], dtype=L.uint8), w * 2),
    "mask_and_index": lambda L, z, w: z.__setitem__(
        (L.tensor([True, False, True]), L.tensor([1, 3])), w[:2] * 2),
    "mask_and_index_scalar": lambda L, z, w: z.__setitem__(
        (L.tensor([True, False, True]), L.tensor([3])), 7.0),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("name", WRITES)
def test_mask_write(name):
    def f(L):
        x = _rand(L, 3, 4, rg=True)
        w = _rand(L, 4, seed=1, rg=True)
        z = x * 1
        WRITES[name](L, z, w)
        (z * z).sum().backward()
        return z, z._version, nexts(z), x.grad, w.grad
    same(f, quiet=True)


@pytest.mark.parametrize("name", ["float", "0d_requires_grad", "row_broadcast",
                                  "one_per_element", "none_true", "mask_on_dim1"])
def test_mask_write_through_views(name):
    """On a view: the base's history goes through CopySlices; the view regenerates."""
    def f(L):
        x = _rand(L, 2, 3, 4, rg=True)
        w = _rand(L, 4, seed=1, rg=True)
        z = x * 1
        v = z[1]
        WRITES[name](L, v, w)
        t = z.transpose(1, 2)[0]            # a non-contiguous view, written through
        t[t.detach() > 0.5] = -1.0
        (z * z).sum().backward()
        return (z, v, z._version, z.grad_fn.name(), nexts(z), v.grad_fn.name(), nexts(v),
                x.grad, w.grad)
    same(f, quiet=True)


def test_mask_write_on_leaf_and_no_grad():
    def f(L, log):
        x = _rand(L, 3, 4, rg=True)
        try:
            x[x.detach() > 0] = 0.0
        except RuntimeError as e:
            log.append(("leaf", type(e).__name__, str(e)))
        with L.no_grad():
            x[x > 0] = 0.0
        log.append((x, x._version, x.grad_fn))
        y = _rand(L, 3, 4, seed=3)
        y[y > 0] = x.sum()                  # a tensor that needs no grad written, requires_grad
        log.append((y, y._version))
        w = L.tensor(2.0, requires_grad=True)
        y[y < 0] = w                        # a leaf value into a plain tensor: recorded
        log.append((y, nexts(y)))
        y.sum().backward()
        log.append(w.grad)
    same(f, layout=True)


def test_signed_zero_and_nan_written():
    """-0.0 and NaN are not confused with 0.0 by any cache (after 0.0 was written)."""
    def f(L):
        out = []
        for v in (0.0, -0.0, float("nan"), 0.0, -0.0):
            z = L.ones(3, 4)
            m = L.tensor([True, False, True])
            z[m] = v
            z2 = L.ones(3, 4)
            z2[(slice(None), L.tensor([True, False, True, True]))] = v
            z3 = L.ones(3, 4).masked_fill(m[:, None], v)
            out.append([[math.copysign(1.0, a) if a == a else "nan" for a in t.reshape(-1).tolist()]
                        for t in (z, z2, z3)])
        return out
    same(f)


def test_index_put_with_a_mask():
    def f(L):
        x = _rand(L, 3, 4, rg=True)
        w = _rand(L, 4, seed=1, rg=True)
        m = L.tensor([True, False, True])
        a = (x * 1).index_put_((m,), w * 2)
        b = (x * 1).index_put_((m,), w * 2, accumulate=True)
        c = x.index_put((L.tensor([[False, True, True, False]] * 3),), w[0] * 3)
        d = x.index_put((m,), L.cat([w, w]).reshape(2, 4), accumulate=True)
        e = x.index_put((x.detach() > 0,), L.tensor(1.0, dtype=L.float64))  # masked_fill
        (a.sum() + (b * b).sum() + (c * c).sum() + (d * d).sum() + e.sum()).backward()
        return a, b, c, d, e, [nexts(t) for t in (a, b, c, d, e)], x.grad, w.grad
    same(f, quiet=True)


WRITE_ERRORS = {
    "count_mismatch": (lambda L, z: z.__setitem__(L.tensor([True, False, True]),
                                                  L.ones(3, 4)), "shape mismatch"),
    "count_mismatch_column": (lambda L, z: z.__setitem__(L.tensor([True, False, True]),
                                                         L.ones(3, 1)), "shape mismatch"),
    "bad_row": (lambda L, z: z.__setitem__(L.tensor([True, False, True]), L.ones(3)),
                "shape mismatch"),
    "empty_count_mismatch": (lambda L, z: z.__setitem__(L.zeros(3, dtype=L.bool),
                                                        L.ones(5, 4)), "shape mismatch"),
    "dtype_mismatch": (lambda L, z: z.__setitem__(L.tensor([True, False, True]),
                                                  L.ones(4, dtype=L.float64)),
                       "Index put requires the source and destination dtypes match"),
    "dtype_mismatch_index": (lambda L, z: z.__setitem__(L.tensor([0, 2]), L.tensor(1.0).double()),
                             "Index put requires the source and destination dtypes match"),
    "mask_shape": (lambda L, z: z.__setitem__(L.tensor([True, False]), 1.0),
                   "The shape of the mask [2] at index 0 does not match"),
}


@pytest.mark.parametrize("name", WRITE_ERRORS)
def test_mask_write_errors(name):
    fn, phrase = WRITE_ERRORS[name]
    exc = IndexError if name == "mask_shape" else RuntimeError

    def f(L):
        WRITE_ERRORS[name][0](L, L.zeros(3, 4))
    same_error(f, phrase, exc)


def test_mask_index_broadcast_error():
    def f(L):
        L.zeros(3, 4)[L.tensor([True, False, True]), L.tensor([1, 3, 0])] = 1.0
    same_error(f, "shape mismatch: indexing tensors could not be broadcast", IndexError)


# ---- reads: x[mask], masked_select, nonzero ------------------------------------------------
READS = {
    "mask": lambda L, x, m: x[m],
    "mask_rows": lambda L, x, m: x[m[:, 0]],
    "mask_dim1": lambda L, x, m: x[:, m[0]],
    "mask_then_index": lambda L, x, m: x[m[:, 0], L.tensor([2])],
    "mask_index_broadcast": lambda L, x, m: x[m[:, 0], L.tensor([[1], [3]])],
    "index_then_mask": lambda L, x, m: x[L.tensor([[2], [0]]), m[1]],
    "mask_slice_index": lambda L, x, m: x[m[:, 0], 1:][:, L.tensor([0, 3])],
    "mask_slice_index_apart": lambda L, x, m: x[:, None][m[:, 0], :, L.tensor([[0], [3]])],
    "none_ellipsis": lambda L, x, m: x[None, ..., m[0]],
    "masked_select": lambda L, x, m: x.masked_select(m),
    "masked_select_broadcast_mask": lambda L, x, m: L.masked_select(x, m[0]),
    "masked_select_broadcast_input": lambda L, x, m: L.masked_select(x[0], m),
}

COUNTS = {"random": lambda L: _mask(L, 6, 5), "none": lambda L: L.zeros(6, 5, dtype=L.bool),
          "all": lambda L: L.ones(6, 5, dtype=L.bool), "one": lambda L: _count_mask(L, (6, 5), 1),
          "seventeen": lambda L: _count_mask(L, (6, 5), 17)}


@pytest.mark.fast_first
@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("name", READS)
def test_mask_read(name, count):
    def f(L):
        x = _rand(L, 6, 5, rg=True)
        m = COUNTS[count](L)
        y = READS[name](L, x, m)
        w = _rand(L, *y.shape, seed=4)
        ((y * w).sum() + (y * y).sum()).backward()
        return y, nexts(y), x.grad
    same(f, quiet=True)


def test_mask_read_3d_mask_and_varying_counts_in_one_process():
    def f(L, log):
        x = _rand(L, 2, 3, 4, rg=True)
        for count in (0, 5, 24, 1, 9, 5, 13):
            m = _count_mask(L, (2, 3, 4), count, seed=count)
            y = x[m]
            z = x.masked_select(m) * 2
            (y.sum() + (z * z).sum()).backward()
            log.append((y, z, nexts(y), nexts(z), x.grad))
            x.grad = None
    same(f)


def test_mask_read_saved_and_modified_in_place():
    """masked_select saves self (torch's MaskedSelectBackward0): an in-place change
    after it fails backward; x[mask] saves only sizes."""
    def f(L, log):
        x = _rand(L, 3, 4, rg=True)
        m = x.detach() > 0
        h = x * 1
        y = h[m]
        h.mul_(2)
        y.sum().backward()
        log.append(x.grad)
        h2 = x * 1
        z = h2.masked_select(m)
        h2.mul_(2)
        z.sum().backward()
    same(f)


def test_mask_read_then_written_and_double_backward():
    def f(L, log):
        x = _rand(L, 3, 4, rg=True)
        h = x * 1
        m = h.detach() > 0
        h[m] = h[m] * h[m]
        (g,) = L.autograd.grad((h * h).sum(), x, create_graph=True)
        log.append((h, nexts(h), g, g.grad_fn.name()))
        (g2,) = L.autograd.grad((g * g).sum(), x)
        log.append(g2)
        y = x.masked_select(m)
        (gy,) = L.autograd.grad((y ** 3).sum(), x, create_graph=True)
        (gy2,) = L.autograd.grad(gy.sum(), x)
        log.append((gy, gy2))
    same(f, quiet=True)


def test_nonzero_and_where():
    def f(L):
        x = _rand(L, 4, 5)
        outs = [L.nonzero(x > 0), (x > 0).nonzero(as_tuple=True), L.where(x < -0.5),
                L.nonzero(L.zeros(3, 0)), L.nonzero(L.tensor(5)), L.nonzero(L.tensor(0.0)),
                L.tensor(5).nonzero(as_tuple=True), L.tensor(0).nonzero(as_tuple=True),
                L.nonzero(x), L.nonzero(L.zeros(2, 3, dtype=L.bool)),
                L.nonzero(L.tensor([0.0, float("nan"), -0.0, 1j], dtype=L.complex64))]
        return outs
    same(f)


def test_masked_scatter():
    def f(L, log):
        x = _rand(L, 3, 4, rg=True)
        s = _rand(L, 13, seed=5, rg=True)
        for m in (x.detach() > 0, L.zeros(3, 4, dtype=L.bool), L.ones(3, 4, dtype=L.bool),
                  L.tensor([True, False, False, True])):
            y = x.masked_scatter(m, s[:12] * 2)
            z = L.masked_scatter(x[0], m, s.reshape(1, 13)[:, :12].reshape(3, 4))  # self bcast
            ((y * y).sum() + (z * 3).sum()).backward()
            log.append((y, z, nexts(y), nexts(z), x.grad, s.grad))
            x.grad = s.grad = None
    same(f, quiet=True)


READ_ERRORS = {
    "masked_scatter_uint8": (lambda L: L.ones(3).masked_scatter(L.ones(3, dtype=L.uint8),
                                                                L.ones(3)),
                             "masked_scatter_ only supports boolean masks", RuntimeError),
    "masked_scatter_dtype": (lambda L: L.ones(3).masked_scatter(L.ones(3, dtype=L.bool),
                                                                L.ones(3).double()),
                             "expected self and source to have same dtypes", RuntimeError),
    "masked_scatter_short": (lambda L: L.ones(3).masked_scatter(L.ones(3, dtype=L.bool),
                                                                L.ones(2)),
                             "Number of elements of source < number of ones in mask",
                             RuntimeError),
    "masked_select_uint8": (lambda L: L.ones(3).masked_select(L.ones(3, dtype=L.uint8)),
                            "masked_select: expected BoolTensor for mask", RuntimeError),
    "masked_select_shapes": (lambda L: L.ones(2, 3).masked_select(L.ones(4, dtype=L.bool)),
                             "must match the size of tensor b", RuntimeError),
    "mask_shape": (lambda L: L.ones(2, 3)[L.ones(3, dtype=L.bool)],
                   "The shape of the mask [3] at index 0 does not match", IndexError),
    "broadcast": (lambda L: L.ones(3, 4)[L.tensor([True, False, True]), L.tensor([0, 1, 2])],
                  "shape mismatch: indexing tensors could not be broadcast", IndexError),
}


@pytest.mark.parametrize("name", READ_ERRORS)
def test_mask_read_errors(name):
    fn, phrase, exc = READ_ERRORS[name]
    same_error(fn, phrase, exc)


# ---- the PyTorch tutorial's custom ReLU ------------------------------------------------------
def _my_relu(L):
    class MyReLU(L.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input
    return MyReLU


def _two_layer(L, steps, log=None):
    rs = np.random.RandomState(0)  # float64: the sums of this net cancel a lot
    x = L.tensor(rs.randn(16, 30))
    y = L.tensor(rs.randn(16, 5))
    w1 = L.tensor(rs.randn(30, 20), requires_grad=True)
    w2 = L.tensor(rs.randn(20, 5), requires_grad=True)
    relu = _my_relu(L).apply
    for _ in range(steps):
        h = relu(x.mm(w1))
        loss = (h.mm(w2) - y).pow(2).sum()
        loss.backward()
        if log is not None:
            log.append((loss, h.grad_fn.name(), nexts(h), w1.grad, w2.grad))
        with L.no_grad():
            w1 -= 1e-4 * w1.grad
            w2 -= 1e-4 * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return w1, w2


def test_tutorial_my_relu():
    same(lambda L, log: _two_layer(L, 5, log))


# ---- no compile per count -----------------------------------------------------------------
class _Compiles:
    """Counts XLA backend compiles (jax.monitoring) while `on`."""
    on = False
    n = 0


def _listener(name, secs, **kwargs):
    if _Compiles.on and name == "/jax/core/compile/backend_compile_duration":
        _Compiles.n += 1


jax.monitoring.register_event_duration_secs_listener(_listener)


def _compiles(fn):
    _Compiles.n = 0
    _Compiles.on = True
    try:
        fn()
    finally:
        _Compiles.on = False
    return _Compiles.n


def test_compile_counter_counts():
    f = jax.jit(lambda a: a * 3.0 + 1.5)  # a fresh function: one compile, then none
    a = jnp.asarray(np.ones(7, np.float32))
    assert _compiles(lambda: f(a)) == 1
    assert _compiles(lambda: f(a)) == 0


SHAPE = (40, 50)  # 2000 elements: counts 0..2000 fall in 12 buckets


def _counts(n=50, seed=0):
    """n counts in 0..numel: half uniform, half log-uniform (every bucket gets some)."""
    rng = np.random.default_rng(seed)
    numel = SHAPE[0] * SHAPE[1]
    logs = np.exp(rng.uniform(0, np.log(numel + 1), n - n // 2)).astype(int) - 1
    return np.concatenate([[0, numel], rng.integers(0, numel + 1, n // 2 - 2), logs])


def _bucket_bound():
    return int(np.ceil(np.log2(SHAPE[0] * SHAPE[1]))) + 1


def test_mask_writes_compile_once():
    """x[mask] = number / 0-dim / row, forward and backward, for 50 counts: a where with
    static shapes, compiled once."""
    x = eg.tensor(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32),
                  requires_grad=True)
    w = eg.tensor(np.ones(SHAPE[1], np.float32), requires_grad=True)
    masks = [_count_mask(eg, SHAPE, int(c), seed=i) for i, c in enumerate(_counts())]

    def step(m):
        z = x * 1
        z[m] = 0.0
        z[~m] = w.sum()
        z[m[:, 0]] = w      # a row per selected row
        z.sum().backward()

    step(masks[0])
    step(masks[1])  # warm: the second run may compile the fused backward once
    n = _compiles(lambda: [step(m) for m in masks[2:]])
    assert n <= 2, n


def test_mask_reads_compile_per_bucket_not_per_count():
    x = eg.tensor(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32),
                  requires_grad=True)
    counts = _counts()
    masks = [_count_mask(eg, SHAPE, int(c), seed=i) for i, c in enumerate(counts)]
    grads = [eg.tensor(np.ones(int(c), np.float32)) for c in counts]

    def read(m, g):
        y = x[m]
        (gx,) = eg.autograd.grad(y, x, g)
        return y, gx

    read(masks[0], grads[0])
    n = _compiles(lambda: [read(m, g) for m, g in zip(masks, grads)])
    assert len(set(counts.tolist())) > 40
    assert n <= 2 * _bucket_bound() + 2, n  # a gather and a scatter per bucket at most
    # and the results are right
    for m, g in list(zip(masks, grads))[:5]:
        y, gx = read(m, g)
        xm = np.asarray(x.detach().numpy())
        mm = np.asarray(m.numpy())
        np.testing.assert_array_equal(y.detach().numpy(), xm[mm])
        np.testing.assert_array_equal(gx.numpy(), mm.astype(np.float32))


def test_masked_select_and_nonzero_compile_per_bucket():
    x = eg.tensor(np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32))
    counts = _counts(seed=1)
    masks = [_count_mask(eg, SHAPE, int(c), seed=i) for i, c in enumerate(counts)]
    x.masked_select(masks[0])
    n = _compiles(lambda: [(x.masked_select(m), m.nonzero(), x[m]) for m in masks])
    assert n <= 2 * _bucket_bound() + 2, n


def test_my_relu_compiles_nothing_after_warmup():
    relu = _my_relu(eg).apply
    rs = np.random.RandomState(0)
    x = eg.tensor(rs.randn(64, 100).astype(np.float32))
    w = eg.tensor(rs.randn(100, 10).astype(np.float32), requires_grad=True)

    def step():
        relu(x.mm(w)).sum().backward()
        with eg.no_grad():
            w.sub_(1e-2 * w.grad)
            w.grad.zero_()

    for _ in range(3):
        step()
    assert _compiles(lambda: [step() for _ in range(20)]) == 0


# ---- tracing: writes work on tracers, reads need a concrete mask --------------------------------
def test_mask_write_under_jit_matches_torch():
    d = np.random.default_rng(0).standard_normal((2, 8, 6)).astype(np.float32)
    w0 = np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32)

    def step(x, w):
        w = w.detach().requires_grad_()
        relu = _my_relu(eg).apply
        h = relu(x.mm(w))
        h2 = h * 1
        h2[h2 > 1.0] = w[0, 0]                 # 0-dim value that requires grad
        h2[:, h2.detach()[0] > 0.5] = x[:, :1] * w[1, 0]  # a column, mask on dim 1
        h2.sum().backward()
        return h2.detach(), w.grad

    jitted = jax.jit(eg.jaxify(step))
    for k in range(2):
        out, grad = jitted(jnp.asarray(d[k]), jnp.asarray(w0))
        wt = torch.tensor(w0, requires_grad=True)
        h = _my_relu(torch).apply(torch.tensor(d[k]).mm(wt))
        h2 = h * 1
        h2[h2 > 1.0] = wt[0, 0]
        h2[:, h2.detach()[0] > 0.5] = torch.tensor(d[k])[:, :1] * wt[1, 0]
        h2.sum().backward()
        np.testing.assert_allclose(np.asarray(out), h2.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(grad), wt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_mask_read_under_jit():
    """A traced mask cannot be read (data-dependent shape): NotImplementedError, as
    before. A concrete mask over traced data works, backward included."""
    def traced_mask(x):
        return (x[x > 0]).sum().jax()

    with pytest.raises(NotImplementedError, match="data-dependent shape"):
        jax.jit(eg.jaxify(traced_mask))(jnp.ones(3))
    with pytest.raises(NotImplementedError, match="data-dependent shape"):
        jax.jit(eg.jaxify(lambda x: x.nonzero().jax()))(jnp.ones(3))
    with pytest.raises(NotImplementedError, match="data-dependent shape"):
        jax.jit(eg.jaxify(lambda x: x.masked_select(x > 0).jax()))(jnp.ones(3))

    m = np.array([[True, False, True], [False, False, True]])
    mt = eg.tensor(m)  # concrete: made outside the trace

    def concrete_mask(x):
        x = x.detach().requires_grad_()
        y = x[mt]
        (y * y).sum().backward()
        return y.detach(), x.grad

    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    y, g = jax.jit(eg.jaxify(concrete_mask))(jnp.asarray(xs))
    np.testing.assert_array_equal(np.asarray(y), xs[m])
    np.testing.assert_array_equal(np.asarray(g), 2 * xs * m)
