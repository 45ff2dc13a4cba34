"""torch's top-level ATen entry points against real torch: torch.lstm / gru / rnn_tanh /
rnn_relu (padded and packed) and the cells, SyncBatchNorm's primitives (batch_norm_stats,
_elemt, _gather_stats, _gather_stats_with_counts, _backward_reduce, _backward_elemt,
_update_stats), grid_sampler, norm_except_dim, native_norm and cudnn_is_acceptable.

torch runs six of the batch norm primitives on CUDA only: their op-table samples
(tests/_samples_batchnorm.py) compare them with torch's own entry points over stand-in
kernels; here they are checked against what they compute, with torch's ops on the whole
batch: per-process statistics gathered into the batch's (torch.var_mean, the running
statistics F.batch_norm keeps), and SyncBatchNorm's forward / backward chain
(torch/nn/modules/_functions.py, the all-reduce a sum over simulated processes) against
torch's BatchNorm output and gradients."""
import numpy as np
import pytest
import torch
from _nn_helpers import arrays
from conftest import attempt, same, same_error

import eagergrad as eg


def _names(fn):
    """The graph below a node: (name, [child indices]) in DFS order, shared nodes once."""
    index, out, todo = {}, [], [fn]
    while todo:
        n = todo.pop()
        if n is None or id(n) in index:
            continue
        index[id(n)] = len(out)
        kids = [k for k, _ in n.next_functions]
        out.append((n, kids))
        todo.extend(reversed(kids))
    return [(n.name(), [None if k is None else index[id(k)] for k in kids]) for n, kids in out]


# ---- torch.lstm / gru / rnn_tanh / rnn_relu -------------------------------------------------
H, F_IN, PROJ = 2, 3, 1
_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _weights(L, fn, layers, bidir, bias, proj, dtype, seed=4):
    nd = 2 if bidir else 1
    out_size = proj or H
    shapes = []
    for layer in range(layers):
        for _ in range(nd):
            g = _GATES[fn] * H
            shapes += [(g, F_IN if layer == 0 else out_size * nd), (g, out_size)]
            shapes += [(g,), (g,)] if bias else []
            shapes += [(proj, H)] if proj else []
    return [L.tensor(a, requires_grad=True) for a in arrays(seed, *shapes, dtype=dtype)]


RNN_CASES = [
    ("rnn_relu", "float32", dict(bias=False)),
    ("lstm", "float32", dict(layers=2, bidir=True, batch_first=True)),  # (mkldnn)
    ("lstm", "float64", dict(bias=False, proj=PROJ, packed=True)),
    ("gru", "float32", dict(batch_first=True, layers=2)),
    ("rnn_tanh", "float64", dict(packed=True, bidir=True)),
]


@pytest.mark.fast_first
@pytest.mark.parametrize("fn,dtype,kw", RNN_CASES,
                         ids=[f"{f}-{i}" for i, (f, *_) in enumerate(RNN_CASES)])
def test_rnn_functions(fn, dtype, kw):
    """torch.<fn> with the weights as a flat list: outputs, the graph below them, the
    gradients of the input, hx and every weight (one eagergrad run: the computation is
    nn.LSTM / GRU / RNN's, tests/test_nn_rnn.py runs it fused too)."""
    layers, bidir, packed = kw.get("layers", 1), kw.get("bidir", False), kw.get("packed")
    bias, proj, batch_first = kw.get("bias", True), kw.get("proj", 0), kw.get("batch_first")

    def f(L):
        ws = _weights(L, fn, layers, bidir, bias, proj, dtype)
        n = layers * (2 if bidir else 1)
        batch = 3 if packed else 2
        shape = (6, F_IN) if packed else (2, 3, F_IN) if batch_first else (3, 2, F_IN)
        x = L.tensor(arrays(2, shape, dtype=dtype)[0], requires_grad=True)
        h0, c0 = (L.tensor(a, requires_grad=True) for a in arrays(
            3, (n, batch, proj or H), (n, batch, H), dtype=dtype))
        hx = (h0, c0) if fn == "lstm" else h0
        rest = (ws, bias, layers, 0.0, True, bidir)
        out = getattr(L, fn)(*((x, L.tensor([3, 2, 1]), hx) + rest if packed else
                               (x, hx) + rest + (bool(batch_first),)))
        vs = [L.tensor(a) for a in arrays(5, *[tuple(o.shape) for o in out], dtype=dtype)]
        loss = sum((o * v).sum() for o, v in zip(out, vs))
        leaves = [x, h0] + ([c0] if fn == "lstm" else []) + ws
        return out, [_names(o.grad_fn) for o in out], L.autograd.grad(loss, leaves)
    same(f, runs=1)


def _rnn_errors(L, log, dtype):
    seed = iter(range(10, 100))

    def W(n, i):
        return [L.tensor(a) for a in arrays(next(seed), (n * H, i), (n * H, H), (n * H,),
                                            (n * H,), dtype=dtype)]
    x = L.tensor(arrays(1, (3, 2, 4), dtype=dtype)[0])
    h = L.zeros(1, 2, H, dtype=x.dtype)
    h2 = L.zeros(2, 2, H, dtype=x.dtype)
    hp = L.zeros(1, 3, H, dtype=x.dtype)
    data, bs = x.reshape(6, 4), L.tensor([3, 2, 1])
    cases = {
        "lstm one hidden": lambda: L.lstm(x, (h,), W(4, 4), True, 1, 0., True, False, False),
        "lstm 2-d hidden": lambda: L.lstm(x, (h[0], h[0]), W(4, 4), True, 1, 0., True, False,
                                          False),
        "lstm too few layers": lambda: L.lstm(x, (h, h), W(4, 4), True, 2, 0., True, False,
                                              False),
        "lstm extra hidden": lambda: L.lstm(x, (h2, h2), W(4, 4), True, 1, 0., True, False,
                                            False),
        "lstm extra weights": lambda: L.lstm(x, (h, h), W(4, 4) + W(4, 2), True, 1, 0., True,
                                             False, False),
        "lstm 3 params": lambda: L.lstm(x, (h, h), W(4, 4)[:3], True, 1, 0., True, False,
                                        False),
        "lstm bidirectional, one direction": lambda: L.lstm(x, (h, h), W(4, 4), True, 1, 0.,
                                                            True, True, False),
        "lstm bidirectional, one hidden": lambda: L.lstm(x, (h, h), W(4, 4) + W(4, 4), True,
                                                         1, 0., True, True, False),
        "lstm empty sequence": lambda: L.lstm(x[:0], (h, h), W(4, 4), True, 1, 0., True,
                                              False, False),
        "gru extra hidden": lambda: L.gru(x, h2, W(3, 4), True, 1, 0., True, False, False),
        "gru extra weights": lambda: L.gru(x, h, W(3, 4) + W(3, 2), True, 1, 0., True, False,
                                           False),
        "gru 3 params": lambda: L.gru(x, h, W(3, 4)[:3], True, 1, 0., True, False, False),
        "gru bidirectional, one direction": lambda: L.gru(x, h, W(3, 4), True, 1, 0., True,
                                                          True, False),
        "gru 2-d input": lambda: L.gru(x[0], h, W(3, 4), True, 1, 0., True, False, False),
        "gru empty sequence": lambda: L.gru(x[:0], h, W(3, 4), True, 1, 0., True, False, False),
        "rnn_tanh float batch_sizes": lambda: L.rnn_tanh(data, bs.double(), hp, W(1, 4), True,
                                                         1, 0., True, False),
        "rnn_tanh batch_sizes past the data": lambda: L.rnn_tanh(data[:5], bs, hp, W(1, 4),
                                                                 True, 1, 0., True, False),
        "lstm increasing batch_sizes": lambda: L.lstm(data, bs.flip(0), (hp, hp), W(4, 4),
                                                      True, 1, 0., True, False),
        "gru too few arguments": lambda: L.gru(x, h),
        "rnn_relu an argument too many": lambda: L.rnn_relu(x, h, W(1, 4), True, 1, 0., True,
                                                            False, False, 5),
        "lstm_cell one hidden": lambda: L.lstm_cell(x[0], (h[0],), *W(4, 4)),
        "lstm_cell weights of 3 gates": lambda: L.lstm_cell(x[0], (h[0], h[0]), *W(3, 4)),
        "lstm_cell cell of another size": lambda: L.lstm_cell(
            x[0], (h[0], L.zeros(2, 3, dtype=x.dtype)), *W(4, 4)),
        "gru_cell hidden batch": lambda: L.gru_cell(x[0], L.zeros(3, 2, dtype=x.dtype),
                                                    *W(3, 4)),
        "gru_cell weights of 4 gates": lambda: L.gru_cell(x[0], h[0], *W(4, 4)),
        "gru_cell 1-d input": lambda: L.gru_cell(x[0, 0], h[0, 0], *W(3, 4)),
        "rnn_tanh_cell weights first": lambda: L.rnn_tanh_cell(
            x[0], L.zeros(3, 2, dtype=x.dtype), *W(2, 5)),
        "rnn_relu_cell input size": lambda: L.rnn_relu_cell(x[0], h[0], *W(1, 5)),
        "gru_cell an int weight": lambda: L.gru_cell(x[0], h[0], W(3, 4)[0], 3),
    }
    for tag, fn in cases.items():
        attempt(log, tag, lambda: [tuple(t.shape) for t in fn()])


@pytest.mark.slow
def test_rnn_function_errors():
    """ATen's checks (composite path; float32 LSTM: mkldnn's) and torch's argument errors."""
    def f(L, log):
        for dtype in ("float32", "float64"):
            _rnn_errors(L, log, dtype)
    same(f, runs=1)


@pytest.mark.slow
def test_rnn_cells():
    """torch.lstm_cell / gru_cell / rnn_tanh_cell / rnn_relu_cell: results, graph, grads."""
    def f(L):
        x, h, c = (L.tensor(a, requires_grad=True) for a in arrays(1, (2, 3), (2, 2), (2, 2)))
        res = []
        for name, g, bias in (("lstm_cell", 4, True), ("gru_cell", 3, True),
                              ("rnn_tanh_cell", 1, False), ("rnn_relu_cell", 1, True)):
            ws = [L.tensor(a, requires_grad=True)
                  for a in arrays(g, (g * 2, 3), (g * 2, 2), (g * 2,), (g * 2,))][:4 if bias
                                                                                  else 2]
            out = getattr(L, name)(x, (h, c) if name == "lstm_cell" else h, *ws)
            out = out if isinstance(out, tuple) else (out,)
            loss = sum((o * (k + 1.5)).sum() for k, o in enumerate(out))
            res.append((out, [_names(o.grad_fn) for o in out],
                        L.autograd.grad(loss, [x, h] + ws)))
        return res
    same(f, runs=1)


# ---- SyncBatchNorm's primitives -----------------------------------------------------------
def test_batch_norm_update_stats():
    """torch CPU's kernel: (mean, biased var), running stats updated in place without a
    version bump, a NotImplemented node and torch's backward error; dtypes and errors."""
    def f(L, log):
        x = L.tensor(arrays(1, (4, 3, 2))[0], requires_grad=True)
        rm, rv = (L.tensor(a) for a in arrays(2, (3,), (3,)))
        mean, var = L.batch_norm_update_stats(x, rm, rv, 0.1)
        fn = mean.grad_fn
        log.append((mean, var, rm, rv, rm._version, rv._version, fn.name(), var.output_nr,
                    [n.name() for n, _ in fn.next_functions]))
        attempt(log, "backward", lambda: (mean.sum() + var.sum()).backward())
        attempt(log, "only running_mean", lambda: (L.batch_norm_update_stats(
            x.detach(), rm, None, 0.5), rm))
        attempt(log, "half, float stats", lambda: (L.batch_norm_update_stats(
            x.detach().half(), rm, rv, 0.1), rm, rv))
        attempt(log, "half, no stats", lambda: L.batch_norm_update_stats(
            x.detach().half(), None, None, 0.1))
        attempt(log, "one element per channel", lambda: (L.batch_norm_update_stats(
            x.detach()[:1, :, :1], rm, rv, 0.1), rm, rv))
        attempt(log, "int", lambda: L.batch_norm_update_stats(L.ones(2, 3, dtype=L.int64),
                                                              None, None, 0.1))
        attempt(log, "complex", lambda: L.batch_norm_update_stats(
            L.ones(2, 3, dtype=L.complex64), None, None, 0.1))
        attempt(log, "1-d", lambda: L.batch_norm_update_stats(L.ones(3), None, None, 0.1))
        attempt(log, "empty", lambda: L.batch_norm_update_stats(L.ones(0, 3), None, None, 0.1))
        for tag, dts in (("double stats", ("float64", "float64")),
                         ("float, double", ("float32", "float64")),
                         ("double input", ("float32", "float32"))):
            attempt(log, tag, lambda: L.batch_norm_update_stats(
                x.detach().double() if tag == "double input" else x.detach(),
                rm.to(getattr(L, dts[0])), rv.to(getattr(L, dts[1])), 0.1))
    same(f)


def _split(x, sizes):
    return [x[sum(sizes[:k]):sum(sizes[:k + 1])] for k in range(len(sizes))]


@pytest.mark.fast_first
@pytest.mark.parametrize("dtype,sizes", [("float32", [4, 1, 5]), ("float64", [10])],
                         ids=["world-3", "world-1"])
def test_sync_batch_norm_chain(dtype, sizes):
    """SyncBatchNorm's forward and backward (torch/nn/modules/_functions.py) from the
    primitives, over processes holding `sizes` samples each (all_gather a stack, all_reduce
    a sum), against torch's BatchNorm on the whole batch: output, running statistics,
    input / weight / bias gradients; each process's batch_norm_stats against
    torch.var_mean."""
    eps, momentum = 1e-5, 0.1
    n = sum(sizes)
    xa, ga, wa, ba, rma, rva = arrays(7, (n, 3, 2, 2), (n, 3, 2, 2), (3,), (3,), (3,), (3,),
                                      dtype=dtype)
    rva = rva + 1.5
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)

    # torch: BatchNorm on the whole batch
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xa, wa, ba))
    trm, trv = torch.tensor(rma), torch.tensor(rva)
    tout = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True, momentum, eps)
    tgx, tgw, tgb = torch.autograd.grad(tout, (tx, tw, tb), torch.tensor(ga))

    x, w, b, g = (eg.tensor(a) for a in (xa, wa, ba, ga))
    rm, rv = eg.tensor(rma), eg.tensor(rva)
    xs, gs = _split(x, sizes), _split(g, sizes)
    stats = [eg.batch_norm_stats(p, eps) for p in xs]
    for p, (mean, invstd) in zip(_split(torch.tensor(xa), sizes), stats):
        var, tmean = torch.var_mean(p, (0, 2, 3), correction=0)
        np.testing.assert_allclose(mean.numpy(), tmean.numpy(), **tol)
        np.testing.assert_allclose(invstd.numpy(), (var + eps).rsqrt().numpy(), **tol)
    counts = eg.tensor([float(p.shape[0] * 4) for p in xs], dtype=x.dtype)
    mean, invstd = eg.batch_norm_gather_stats_with_counts(
        x, eg.stack([s[0] for s in stats]), eg.stack([s[1] for s in stats]), rm, rv, momentum,
        eps, counts)
    out = eg.cat([eg.batch_norm_elemt(p, w, b, mean, invstd, eps) for p in xs])
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), **tol)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), **tol)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), **tol)
    assert (rm._version, rv._version) == (0, 0)  # (written by the kernel, as CUDA's)

    reduced = [eg.batch_norm_backward_reduce(gp, p, mean, invstd, w, True, True, True)
               for gp, p in zip(gs, xs)]
    sum_dy, sum_dy_xmu, gw, gb = (sum(r[k] for r in reduced) for k in range(4))
    count = counts.to(eg.int32)
    gx = eg.cat([eg.batch_norm_backward_elemt(gp, p, mean, invstd, w, sum_dy, sum_dy_xmu,
                                              count) for gp, p in zip(gs, xs)])
    for e, t in ((gx, tgx), (gw, tgw), (gb, tgb)):
        assert e.dtype == eg.float32 if dtype == "float32" else e.dtype == eg.float64
        np.testing.assert_allclose(e.numpy(), t.numpy(), **tol)


@pytest.mark.slow
def test_gather_stats_and_half_inputs():
    """batch_norm_gather_stats (one count for all) against the batch's statistics and
    torch's running statistics; half inputs: statistics in float32 (the accumulate type),
    batch_norm_elemt's result in half."""
    xa = arrays(3, (6, 2, 3))[0]
    t = torch.tensor(xa)
    trm, trv = torch.zeros(2), torch.ones(2)
    tout = torch.nn.functional.batch_norm(t, trm, trv, None, None, True, 0.3, 1e-3)
    x = eg.tensor(xa)
    rm, rv = eg.zeros(2), eg.ones(2)
    parts = [eg.batch_norm_stats(p, 1e-3) for p in _split(x, [3, 3])]
    mean, invstd = eg.batch_norm_gather_stats(x, eg.stack([p[0] for p in parts]),
                                              eg.stack([p[1] for p in parts]), rm, rv, 0.3,
                                              1e-3, 9)
    var, tmean = torch.var_mean(t, (0, 2), correction=0)
    np.testing.assert_allclose(mean.numpy(), tmean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd.numpy(), (var + 1e-3).rsqrt().numpy(), rtol=1e-5)
    np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-5)
    out = eg.batch_norm_elemt(x, None, None, mean, invstd, 1e-3)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-5, atol=1e-5)

    h = x.half()
    hmean, hinvstd = eg.batch_norm_stats(h, 1e-3)
    assert (hmean.dtype, hinvstd.dtype) == (eg.float32, eg.float32)
    var, tmean = torch.var_mean(t.half().float(), (0, 2), correction=0)
    np.testing.assert_allclose(hmean.numpy(), tmean.numpy(), rtol=1e-5, atol=1e-6)
    hout = eg.batch_norm_elemt(h, None, None, hmean, hinvstd, 1e-3)
    assert hout.dtype == eg.float16
    np.testing.assert_allclose(hout.float().numpy(), tout.numpy(), rtol=1e-2, atol=1e-2)


def test_cuda_primitives_autograd_and_checks():
    """No derivative (NotImplemented nodes with edges to the inputs that require grad,
    torch's backward error), the zero-variance invstd of eps 0, and the kernels' checks."""
    x = eg.tensor(arrays(1, (4, 3))[0], requires_grad=True)
    mean, invstd = eg.batch_norm_stats(x, 1e-5)
    assert mean.grad_fn.name() == "torch::autograd::NotImplemented" and invstd.output_nr == 1
    assert [n.variable is x for n, _ in mean.grad_fn.next_functions] == [True]
    with pytest.raises(RuntimeError, match="derivative for aten::batch_norm_stats is not "
                                           "implemented"):
        (mean.sum() + invstd.sum()).backward()
    w = eg.ones(3, requires_grad=True)
    out = eg.batch_norm_elemt(x.detach(), w, None, mean.detach(), invstd.detach(), 1e-5)
    assert [n.variable is w for n, _ in out.grad_fn.next_functions] == [True]
    with pytest.raises(RuntimeError, match="aten::batch_norm_elemt is not implemented"):
        out.sum().backward()
    _, istd = eg.batch_norm_stats(eg.ones(2, 2), 0.0)
    assert istd.tolist() == [0.0, 0.0]  # (the InvStd transform, not inf)

    xd = x.detach()
    with pytest.raises(NotImplementedError, match="\"batch_norm_stats_cuda\" not implemented "
                                                  "for 'Long'"):
        eg.batch_norm_stats(eg.ones(2, 3, dtype=eg.int64), 1e-5)
    with pytest.raises(NotImplementedError, match="empty input"):
        eg.batch_norm_stats(eg.ones(0, 3), 1e-5)
    with pytest.raises(IndexError, match="Dimension out of range"):
        eg.batch_norm_stats(eg.ones(3), 1e-5)
    m64 = mean.detach().double()
    with pytest.raises(RuntimeError, match="Expected mean to have type Float but got Double"):
        eg.batch_norm_elemt(xd, None, None, m64, invstd.detach(), 1e-5)
    with pytest.raises(RuntimeError, match="mean and invstd need to have the same"):
        eg.batch_norm_backward_reduce(xd, xd, m64, invstd.detach(), None, True, False, False)
    with pytest.raises(RuntimeError, match="expected scalar type Int but found Long"):
        eg.batch_norm_backward_elemt(xd, xd, mean.detach(), invstd.detach(), None,
                                     mean.detach(), mean.detach(), eg.tensor([4]))
    assert eg.batch_norm_backward_reduce(xd, xd, mean.detach(), invstd.detach(), None, False,
                                         False, False) == (None,) * 4


# ---- grid_sampler, norm_except_dim, native_norm, cudnn_is_acceptable -----------------------
@pytest.mark.slow
def test_grid_sampler():
    """torch.grid_sampler: grid_sampler_2d / _3d by the input's dims (values, node, grads)
    and torch's checks."""
    def f(L, log):
        x2, g2, x3, g3 = (L.tensor(a * 1.2, requires_grad=True) for a in arrays(
            1, (1, 2, 3, 4), (1, 2, 2, 2), (1, 2, 2, 3, 2), (1, 2, 1, 2, 3), dtype="float64"))
        for x, g, mode, pad, align in ((x2, g2, 0, 0, False), (x2, g2, 1, 2, True),
                                       (x3, g3, 0, 1, False)):
            out = L.grid_sampler(x, g, mode, pad, align)
            log.append((out, out.grad_fn.name(),
                        L.autograd.grad((out * out).sum(), (x, g) if mode == 0 else x)))
        xd, gd = x2.detach(), g2.detach()
        for tag, fn in {
            "batch": lambda: L.grid_sampler(xd, L.cat([gd, gd]), 0, 0, False),
            "grid's last dim": lambda: L.grid_sampler(xd, gd[..., :1], 0, 0, False),
            "5-d grid": lambda: L.grid_sampler(xd, gd[:, None], 0, 0, False),
            "3-d input": lambda: L.grid_sampler(xd[0], gd[0], 0, 0, False),
            "empty spatial dim": lambda: L.grid_sampler(xd[:, :, :0], gd, 0, 0, False),
            "dtypes": lambda: L.grid_sampler(xd, gd.float(), 0, 0, False),
            "int": lambda: L.grid_sampler(xd.long(), gd.long(), 0, 0, False),
            "complex": lambda: L.grid_sampler(xd.cfloat(), gd.cfloat(), 0, 0, False),
            "3-d int": lambda: L.grid_sampler(x3.detach().long(), g3.detach().long(), 0, 0,
                                              False),
        }.items():
            attempt(log, tag, lambda: fn())
    same(f, runs=1)


@pytest.mark.slow
def test_norm_except_dim():
    """ATen's composite: view / norm / view (NormBackward1), transposes for a middle dim,
    NormBackward0 for dim -1; values, graphs, gradients and errors."""
    def f(L, log):
        v = L.tensor(arrays(1, (3, 4, 2), dtype="float64")[0], requires_grad=True)
        for pow, dim in ((2, 0), (3, 2), (2, 1), (2, -2), (2, -1), (1, 0)):
            out = L.norm_except_dim(v, pow, dim)
            log.append((out, _names(out.grad_fn), L.autograd.grad(out.sum(), v)))
        log.append(L.norm_except_dim(v.detach()[0, 0]))
        log.append(L.norm_except_dim(v.detach().transpose(0, 2), 2, 0))
        attempt(log, "float pow", lambda: L.norm_except_dim(v, 2.5, 0))
        attempt(log, "dim 3", lambda: L.norm_except_dim(v, 2, 3))
        attempt(log, "int", lambda: L.norm_except_dim(L.ones(2, 2, dtype=L.int64), 2, 0))
        attempt(log, "int, dim -1", lambda: L.norm_except_dim(L.ones(2, dtype=L.int64), 2, -1))
    same(f, runs=1)


def test_native_norm_and_cudnn_is_acceptable():
    """native_norm has sparse kernels only: torch's error for a dense tensor (its message up
    to the backend list); cudnn_is_acceptable is False off CUDA."""
    msg = same_error(lambda L: L.native_norm(L.ones(3)), "Could not run 'aten::native_norm'",
                     NotImplementedError, messages=False)
    with pytest.raises(NotImplementedError) as info:
        eg.native_norm(eg.ones(3), 2)
    head = "'aten::native_norm' is only available for these backends: ["
    assert str(info.value).split(head)[0] == msg.split(head)[0]
    same_error(lambda L: L.native_norm(3), "must be Tensor", TypeError)
    same_error(lambda L: L.native_norm(3, 2, 0), "invalid combination of arguments", TypeError)
    assert same(lambda L: [L.cudnn_is_acceptable(L.ones(2, dtype=d))
                           for d in (L.float32, L.float64, L.float16)]) == [False] * 3
    same_error(lambda L: L.cudnn_is_acceptable(3), "must be Tensor", TypeError)
