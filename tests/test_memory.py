"""Memory: saved tensors are freed by a backward without retain_graph (torch's
release_variables), on both executors, and a long training loop with changing shapes
keeps RSS flat with every cache under its bound. Each check runs in a fresh process so
that RSS says something."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # (whole processes, long loops)

_PRELUDE = """
import gc
import jax
import eagergrad as torch
from eagergrad.engine import fused
fused.EAGER = True  # (as the suite: segments fuse on their second sighting)

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

def live_mb():
    gc.collect()
    return sum(a.nbytes for a in jax.live_arrays()) / 2**20
"""


def _run(body):
    env = {k: v for k, v in os.environ.items() if k != "EAGERGRAD_EXECUTABLES"}
    out = subprocess.run([sys.executable, "-c", _PRELUDE + textwrap.dedent(body)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_three_kept_graphs_free_their_saved_tensors():
    # each graph saves 12 x 16 MB (inputs of sin, results of exp) = 192 MB; the leaf is
    # 256 kB. The first graph warms up (node by node); the next three run fused, and
    # their outputs stay referenced.
    _run("""
    fused.BACKGROUND = False
    kept = []
    for i in range(4):
        x = torch.randn(2**16, requires_grad=True)
        y = x.unsqueeze(0).expand(64, 2**16) * 1.0
        for k in range(12):
            y = (y.exp() if k % 2 else y.sin()) * 1.0  # (mul by a number saves nothing)
        loss = y.sum()
        del y
        assert live_mb() > 190, live_mb()
        loss.backward()
        if i == 0:
            del x, loss
            base_rss, base_live = rss_mb(), live_mb()
            continue
        kept.append(loss)
    assert fused.COUNTS["segments_fused"] >= 3, fused.COUNTS
    grew_live, grew_rss = live_mb() - base_live, rss_mb() - base_rss
    # what stays: each leaf and its .grad (torch keeps those too)
    assert grew_live < 3 * 2 * 0.26, grew_live
    assert grew_rss < 80, grew_rss
    with torch.no_grad():
        pass
    try:
        kept[0].backward()
    except RuntimeError as e:
        assert "backward through the graph a second time" in str(e)
    else:
        raise AssertionError("the saved tensors were not freed")
    """)


def test_node_by_node_backward_frees_saved_tensors():
    _run("""
    fused.ENABLED = False
    kept = []
    for i in range(3):
        x = torch.randn(2**16, requires_grad=True)
        y = x.unsqueeze(0).expand(64, 2**16) * 1.0
        for k in range(12):
            y = (y.exp() if k % 2 else y.sin()) * 1.0
        loss = y.sum()
        del y
        loss.backward()
        kept.append(loss)
    assert live_mb() < 3 * 2 * 0.26 + 1, live_mb()
    """)


def test_long_training_loop_with_changing_shapes_keeps_rss_flat():
    _run("""
    import numpy as np
    from eagergrad.engine import engine, graph
    from eagergrad import _storage
    fused.BACKGROUND = False
    rs = np.random.RandomState(0)
    w1 = torch.tensor(rs.randn(32, 64).astype("float32") * 0.1, requires_grad=True)
    w2 = torch.tensor(rs.randn(64, 10).astype("float32") * 0.1, requires_grad=True)
    sizes = [8, 16, 24, 32, 40, 48, 56, 64]
    data = {n: (torch.tensor(rs.randn(n, 32).astype("float32")),
                torch.tensor(rs.randint(0, 10, n))) for n in sizes}

    def step(i):
        x, y = data[sizes[i % len(sizes)]]
        h = (x @ w1).relu()
        logits = h @ w2
        loss = (logits.logsumexp(1) - logits[torch.arange(len(y)), y]).mean()
        loss.backward()
        with torch.no_grad():
            for p in (w1, w2):
                p -= 0.01 * p.grad
                p.grad = None
        return loss

    from eagergrad._cache import EXECUTABLES
    for i in range(2000):  # warm-up: every shape compiled
        step(i)
    gc.collect()
    before = rss_mb()
    puts = EXECUTABLES.stats["put"]
    for i in range(10000):
        loss = step(i)
    gc.collect()
    grew = rss_mb() - before
    # the working set (8 shapes) grew the bound past itself: no compile after warm-up
    assert EXECUTABLES.stats["put"] == puts, (dict(EXECUTABLES.stats), EXECUTABLES.size)
    assert np.isfinite(loss.item())
    assert fused.COUNTS["segments_fused"] > 9000, fused.COUNTS
    assert grew < 30, grew
    assert len(fused._cache) <= fused._MAX
    assert len(engine._plans) <= engine._MAX_PLANS
    assert len(graph._sigs) <= graph._SIGS_MAX
    assert len(_storage._writers) <= _storage._WRITERS_MAX
    from eagergrad.ops import _table, _args, index, masks
    from eagergrad import creation
    assert all(len(op._fwd) <= 256 and len(op.Node._jit_cache) <= 256
               for op in _table.OPS.values())
    assert len(_args._scalar_cache) <= 4097 and len(creation._consts) <= 64
    assert len(masks._masks) <= masks._MASKS_MAX and len(masks._jits) <= 1024
    assert len(index._bounds) <= 256
    """)


def test_new_shapes_every_step_level_off():
    """A new batch size every step (nn.Linear + CrossEntropyLoss, forward and backward):
    executables past the global bound are evicted (counted), RSS levels off, the bound
    barely grows (shapes seen once never come back; the one kernel that does, the
    transpose of the weight's gradient, run node by node at each new shape's first step
    and not by the fused backward after it, may raise it once), and every step's loss is
    right."""
    out = _run("""
    import numpy as np
    from eagergrad._cache import EXECUTABLES
    torch.manual_seed(0)
    lin, loss_fn = torch.nn.Linear(16, 5), torch.nn.CrossEntropyLoss()
    w, b = lin.weight.detach().numpy().astype(np.float64), lin.bias.detach().numpy()
    rs = np.random.RandomState(0)
    marks = {}
    for n in range(1, 61):
        x, y = rs.randn(n, 16).astype(np.float32), rs.randint(0, 5, n)
        loss = loss_fn(lin(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        z = x @ w.T + b
        z = z - z.max(1, keepdims=True)
        want = np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(n), y])
        assert abs(loss.item() - want) < 1e-4, (n, loss.item(), want)
        if n in (20, 40, 60):
            gc.collect()
            marks[n] = rss_mb()
    n_entries = sum(sum(type(e) is list for e in c.values()) for c in EXECUTABLES.owners)
    print(marks[40] - marks[20], marks[60] - marks[40], EXECUTABLES.stats["evicted"],
          EXECUTABLES.stats["grown"], n_entries, EXECUTABLES.size)
    """)
    first, second, evicted, grown, entries, size = (float(v) for v in out.split())
    assert evicted > 200 and grown <= 1 and size <= 120 and entries <= size
    # unbounded, each new shape added ~16 MB (about 20 executables of ~0.8-1.5 MB each,
    # and jax's caches): 320 MB per 20 shapes
    assert first < 40 and second < 40, (first, second)


def test_a_tracked_function_with_a_larger_working_set_stops_being_cleared():
    """A shape-agnostic kernel that cycles through 12 shapes (a view replayed on a dozen
    sequence lengths) is cleared past its limit of 8, then its limit doubles: after that,
    sweeps leave it alone and the cycle compiles nothing."""
    import jax
    import jax.numpy as jnp
    from eagergrad._cache import Executables
    ex = Executables(size=8)
    f = ex.track(jax.jit(lambda x: x * 2))
    xs = [jnp.ones(n) for n in range(1, 13)]
    for _ in range(3):
        for x in xs:
            f(x)
        ex._sweep()
    assert ex.stats["cleared"] == 1 and ex.limits[f] == 16
    for x in xs:
        f(x)
    assert f._cache_size() == 12
