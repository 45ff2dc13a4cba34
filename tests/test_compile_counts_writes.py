"""Writes through views at offsets that vary between calls compile nothing new
(docs/design.md §10: indices, offsets, scalars that vary between calls are traced
arguments, never baked into the kernel or its cache key).

Every pattern runs N = 50 times with a different offset (and value) per call, once with
torch and once with eagergrad; the final tensors, `_version`s and, where autograd is
involved, the gradients and grad_fn names must equal torch's. For eagergrad, the XLA
compiles (`EXECUTABLES.compiles_here()`: a jax listener counts every backend compile) of calls
3..N must be at most BOUND = 0: the first two calls compile (the view kernels, the
write kernel of the chain's static structure), the others reuse them.

Known gaps, outside the write path (xfail below, not asserted elsewhere): the backward of
a node keys its vjp by the node's attrs (a select's index, a slice's start), CopySlices
runs view_gather/view_write keyed by the whole view chain, and a torch.func program's
jaxpr key holds Python-int offsets as literals; each compiles once per offset.
"""
import numpy as np
import pytest
import torch

import eagergrad as eg
from eagergrad._cache import EXECUTABLES

N = 50      # calls per pattern, each at its own offset
WARM = 2    # calls that may compile
BOUND = 0   # compiles allowed in calls WARM + 1 .. N

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("counting_compiles"),
              pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors is deprecated")]


def _np(t):
    return t.detach().resolve_conj().numpy().copy() if t.is_complex() else \
        t.detach().numpy().copy()


def _run(L, make):
    """Run pattern `make` with library L: (its results, eagergrad's compiles after WARM
    calls, counted around `step` only)."""
    step, result = make(L)
    compiles = 0
    for i in range(N):
        c0 = EXECUTABLES.compiles_here()
        step(i)
        if i >= WARM:
            compiles += EXECUTABLES.compiles_here() - c0
    return result(), compiles


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)
    else:
        assert a == b


def _rows(L, n, shape, scale=0.5):
    """One value tensor per call, made before the calls (making it is not the pattern)."""
    k = int(np.prod(shape))
    return [L.tensor((np.arange(k, dtype=np.float32) + i * scale).reshape(shape))
            for i in range(n)]


def _out(**tensors):
    def result():
        return {k: (_np(t), t._version) for k, t in tensors.items()}
    return result


# ---- patterns: make(L) -> (step(i), result()) ----------------------------------------------
# (each on shapes of its own: no pattern finds kernels another one compiled)
def set_row_tensor(L):
    x, v = L.zeros(60, 3), _rows(L, N, (3,))

    def step(i):
        x[i] = v[i]
    return step, _out(x=x)


def set_row_float(L):
    x = L.zeros(61, 3)

    def step(i):
        x[i] = float(i) + 0.25
    return step, _out(x=x)


def set_element(L):
    x, v = L.zeros(60, 5), [L.tensor(i + 0.5) for i in range(N)]

    def step(i):
        x[i, i % 5] = v[i]
    return step, _out(x=x)


def set_column(L):
    x, v = L.zeros(4, 60), _rows(L, N, (4,))

    def step(i):
        x[:, i] = v[i]
    return step, _out(x=x)


def set_slice(L):
    x, v = L.zeros(60, 3), _rows(L, N, (2, 3))

    def step(i):
        x[i:i + 2] = v[i]
    return step, _out(x=x)


def set_strided_slice(L):
    x = L.zeros(62, 3)

    def step(i):
        x[i:i + 4:2] = float(i)
    return step, _out(x=x)


def narrow_mul(L):
    x = L.arange(189.0).reshape(63, 3)

    def step(i):
        x.narrow(0, i, 3).mul_(2)
    return step, _out(x=x)


def row_add(L):
    x, v = L.zeros(64, 3), _rows(L, N, (3,))

    def step(i):
        x[i].add_(v[i])
    return step, _out(x=x)


def select_copy(L):
    x, v = L.zeros(5, 60), _rows(L, N, (5,))

    def step(i):
        x.select(1, i).copy_(v[i])
    return step, _out(x=x)


def data_write(L):
    y, v = L.zeros(65, 3, requires_grad=True), _rows(L, N, (3,))

    def step(i):
        y.data[i] = v[i]

    def result():
        return {"y": (_np(y), y._version, y.requires_grad, y.is_leaf)}
    return step, result


def views_of_views(L):
    x, v = L.zeros(66, 3), _rows(L, N, (3,))

    def step(i):
        x[1:59].narrow(0, i, 4)[1:3].add_(1.0)  # three slices, each at its own start
        x[2:58][i] = v[i]
        x.t()[1, i + 5] = float(i)               # transpose, select, select
    return step, _out(x=x)


def expand_in_chain(L):
    b, v = L.zeros(1, 3), _rows(L, N, (3,), 0.125)
    e = b.expand(60, 3)
    out = L.zeros(N, 3)

    def step(i):
        e[i].add_(v[i])       # one memory location per element
        out[i] = b[0]
        if i % 3 == 0:        # two rows over one memory row: the changed value is written
            e[i:i + 2].zero_()  # (the only writes torch allows there: zero_, fill_(number))
    return step, _out(b=b, out=out)


def complex_parts(L):
    z = L.zeros(60, 2, dtype=L.complex64)

    def step(i):
        z[i].imag.add_(float(i))          # select, view_as_real, select
        z[i:i + 2].real.add_(1.0)
        z.conj()[i + 3].add_(1j)          # written back through the conjugate
    return step, _out(z=z)


def strided_view(L):
    x = L.zeros(67)

    def step(i):
        x.as_strided((2, 2), (3, 1), i).add_(1.0)
    return step, _out(x=x)


PATTERNS = [set_row_tensor, set_row_float, set_element, set_column, set_slice,
            set_strided_slice, narrow_mul, row_add, select_copy, data_write, views_of_views,
            expand_in_chain, complex_parts, strided_view]


@pytest.mark.parametrize("make", PATTERNS, ids=[p.__name__ for p in PATTERNS])
def test_write_at_varying_offsets_compiles_nothing_new(make):
    want, _ = _run(torch, make)
    got, compiles = _run(eg, make)
    _same(want, got)
    assert compiles <= BOUND, f"{compiles} compiles in calls {WARM + 1}..{N}"


def test_select_and_slice_views_are_written_by_dynamic_update_slice():
    # (white-box: the chain functions of select and slice views have direct writes,
    # _storage.register_update, not a scatter over a traced index map)
    from eagergrad._storage import _update_of
    x = eg.zeros(6, 4)
    for v in (x[2], x[1:3], x[1:5:2], x.narrow(1, 1, 2), x[:, 3], x[1:4][1, 2:]):
        assert all(_update_of(f) is not None for f, _ in v._vchain)
    assert _update_of(x.t()._vchain[0][0]) is None


# ---- autograd: in-place ops on views of a clone of a leaf that requires grad -------------------
def _autograd(L, count=None, n=60, calls=N):
    """c = w.clone() (w: n x 3); in-place ops on views of c at offset i; backward.
    `count`: a list getting (forward compiles, backward compiles) per call."""
    w = L.arange(n * 3.0).reshape(n, 3).div(100).requires_grad_()
    v = _rows(L, calls, (3,))
    log = []
    for i in range(calls):
        c0 = EXECUTABLES.compiles_here()
        c = w.clone()
        s = c[i:i + 3]
        s.mul_(float(i % 4 + 1))
        c[i + 1].add_(v[i])
        c.narrow(0, i, 2)[1] = v[i] * 0 + 2.0 if i % 2 else c[i + 2]
        loss = (c * c).sum()
        c1 = EXECUTABLES.compiles_here()
        loss.backward()
        if count is not None:
            count.append((c1 - c0, EXECUTABLES.compiles_here() - c1))
        log.append((c._version, s._version, c.grad_fn.name(), s.grad_fn.name(),
                    c[i + 1]._version))
    return {"grad": _np(w.grad), "log": log, "w": (_np(w), w._version)}


def test_inplace_on_views_at_varying_offsets_backward_equals_torch(monkeypatch):
    # the backward compiles per offset (the xfail below); so many compiles make the
    # executable bound's sweeps clear a forward kernel that reached its limit of shapes
    # and contexts, which then compiles again: a cost of the bound (tested on its own),
    # not an offset baked in, so the forward is counted with that limit out of reach
    monkeypatch.setattr(EXECUTABLES, "PER_TRACKED", 1 << 10)
    want = _autograd(torch)
    count = []
    got = _autograd(eg, count)
    _same(want, got)
    forward = sum(f for f, _ in count[WARM:])
    assert forward <= BOUND, f"{forward} forward compiles in calls {WARM + 1}..{N}"


@pytest.mark.xfail(strict=False, reason="a node's vjp is keyed by its attrs (ops/_table.py) "
                   "and CopySlices' view_gather/view_write by the whole chain (ops/views.py): "
                   "the backward compiles once per offset")
def test_backward_through_views_at_varying_offsets_compiles_nothing_new():
    count = []
    _autograd(eg, count, 61, 8)  # (shapes of its own: nothing compiled by the test above)
    backward = sum(b for _, b in count[WARM:])
    assert backward <= BOUND


# ---- forward-mode AD: a dual tensor written through views ----------------------------------
def _forward_ad(L, count=None):
    fwAD = L.autograd.forward_ad
    with fwAD.dual_level():
        x = fwAD.make_dual(L.arange(204.0).reshape(68, 3), L.ones(68, 3))
        for i in range(N):
            c0 = EXECUTABLES.compiles_here()
            x[i:i + 3].mul_(2.0)
            x.narrow(0, i, 2)[1].add_(1.0)
            x[i + 4] = float(i)
            if count is not None:
                count.append(EXECUTABLES.compiles_here() - c0)
        p, t = fwAD.unpack_dual(x)
        return {"primal": _np(p), "tangent": _np(t), "version": x._version}


def test_forward_ad_tangents_written_through_views_at_varying_offsets():
    want = _forward_ad(torch)
    count = []
    got = _forward_ad(eg, count)
    _same(want, got)
    assert sum(count[WARM:]) <= BOUND


# ---- writes inside torch.func transforms ---------------------------------------------------
def _func(L, i):
    X = L.arange(160.0).reshape(4, 40)

    def f(r):
        c = r.clone()
        c[i:i + 2] = 0.5
        c[i + 3].mul_(3)
        c.narrow(0, i + 1, 2).add_(1.0)
        return c

    def g(r):
        c = r * 1
        c[i:i + 2].mul_(2.0)
        c[i + 3].add_(1.0)
        return (c * c).sum()
    return L.func.vmap(f)(X), L.func.grad(g)(X[1]), L.func.vmap(L.func.grad(g))(X)


@pytest.mark.parametrize("i", range(6))
def test_writes_through_views_under_vmap_and_grad_equal_torch(i):
    for a, b in zip(_func(torch, i), _func(eg, i)):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-6)


@pytest.mark.xfail(strict=False, reason="a torch.func program's jaxpr key holds the offsets "
                   "(Python ints) as literals (func/_program.py _jaxpr_key): one program "
                   "per offset")
def test_writes_under_vmap_at_varying_offsets_compile_nothing_new():
    for i in range(10, 10 + WARM):  # (offsets the test above did not use)
        _func(eg, i)
    c0 = EXECUTABLES.compiles_here()
    for i in range(10 + WARM, 16):
        _func(eg, i)
    assert EXECUTABLES.compiles_here() - c0 <= BOUND
