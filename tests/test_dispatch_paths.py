"""call_op's fast paths, each a second implementation, driven against torch:

- a view op whose output shape is known makes a *lazy* view (no kernel runs; read when
  needed, concretely even while jax traces);
- an op whose input is a view replays the view's chain inside its own kernel (*fused*
  views) instead of reading the view first;
- a recorded node's static part (save plan, spec, signature) is kept in the executable
  entry per pattern of inputs needing a gradient.

Every scenario runs with torch once and with eagergrad three times (`same`): the first run
takes the slow paths (kernels compiled, shapes learnt), later runs the fast ones; the
VIEW_COUNTS counters show that they ran.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eagergrad as eg
from eagergrad.ops import _table
from conftest import same


def _x(L, shape, seed=0):
    a = np.random.RandomState(seed).randn(*shape)
    return L.tensor(a, dtype=L.float64)


@pytest.fixture
def counts():
    before = dict(_table.VIEW_COUNTS)
    yield lambda: {k: _table.VIEW_COUNTS[k] - before[k] for k in before}


def _linear_graph(L, log):
    lin = L.nn.Linear(4, 3, dtype=L.float64)
    with L.no_grad():
        lin.weight.copy_(_x(L, (3, 4), 1))
        lin.bias.copy_(_x(L, (3,), 2))
    x = _x(L, (5, 4), 3)
    out = lin(x)
    log.append((out.detach(), out.grad_fn.name(),
                [None if f is None else f.name() for f, _ in out.grad_fn.next_functions]))
    (out * out).sum().backward()
    log.append((lin.weight.grad, lin.bias.grad))
    x3 = _x(L, (2, 5, 4), 4)  # 3-D input: view + addmm + view
    y = lin(x3)
    log.append((y.detach(), y.grad_fn.name(), y._version))
    y.sum().backward()
    log.append((lin.weight.grad, lin.bias.grad))


def test_linear_graph_and_grads(counts):
    same(_linear_graph, runs=3)
    c = counts()
    assert c["fused"] > 0 and c["lazy"] > 0, c


def _view_chains(L, log):
    x = _x(L, (4, 6)).requires_grad_()
    y = x * 1.0
    v = y.view(6, 4).t().unsqueeze(0)       # three lazy views of a non-leaf
    z = (v * 2).sum(dim=1)                   # a fused chain
    log.append((z.detach(), z.grad_fn.name(), v.grad_fn.name(), v._base is y))
    w = y.t()[1:3].transpose(0, 1)           # slicing inside a chain
    s = (w.exp() + w).sum()
    log.append(s.detach())
    (z.sum() + s).backward()
    log.append(x.grad)
    p = y.permute(1, 0).reshape(3, 8)        # reshape of a non-contiguous view: a copy
    log.append((p.detach(), p.is_contiguous(), p.grad_fn.name()))
    r = y[1].t() + 1                          # a select (dynamic index) then a view
    log.append((r.detach(), r.grad_fn.name()))
    parts = y.split([2, 4], dim=1)           # a multi-output view op
    log.append([(q.detach(), q.grad_fn.name(), q.stride()) for q in parts])
    log.append((parts[1] * 3).sum(dim=0).detach())


def test_view_chains_against_torch(counts):
    same(_view_chains, runs=3)
    c = counts()
    assert c["fused"] > 0 and c["lazy"] > 0, c


def _writes_then_reads(L, log):
    x = _x(L, (3, 4))
    v = x.t()               # lazy: nothing read yet
    x.add_(1)               # the base is written before the view was ever read
    log.append((v + 0, v._version, x._version))
    u = x[:, 1:3]
    u.mul_(2)               # an in-place op through a lazy view
    log.append((x.clone(), u.clone(), x._version))
    w = x.view(12)
    x.zero_()
    log.append((w * 1, w.sum()))
    a = _x(L, (2, 3)).requires_grad_()
    b = a.clone()
    bv = b.t()
    b.mul_(3)               # the view's grad_fn is regenerated on its next use
    out = (bv * bv).sum()
    out.backward()
    log.append((bv.grad_fn.name(), a.grad, out.detach()))


def test_lazy_views_see_later_writes(counts):
    same(_writes_then_reads, runs=3)
    assert counts()["lazy"] > 0


def test_lazy_view_read_inside_func_transforms(counts):
    """A lazy view made outside a transform and first read inside it: the transform sees
    the captured weight (gradients reach it), and afterwards the view holds a concrete
    array, not a leaked tracer."""
    def f(L, log):
        w = _x(L, (3, 4), 5).requires_grad_()
        wt = w.t()
        x = _x(L, (4,), 6)
        g = L.func.grad(lambda x: ((x @ wt) ** 2).sum())(x)
        log.append(g.detach())
        out = L.func.vmap(lambda r: (r @ wt).sin())(_x(L, (2, 4), 7))
        out.sum().backward()
        log.append((out.detach(), w.grad))
        log.append(wt * 1)
    same(f, runs=3)
    assert counts()["lazy"] > 0


def test_lazy_view_read_under_jax_jit():
    """Read for the first time while jax.jit traces: the view's value is computed
    concretely, so the view is still usable (and equal to torch's) after the trace."""
    base = np.arange(12.0).reshape(3, 4)
    w = eg.tensor(base)
    _wt = w.t()
    wt2 = w.t()  # the executable ran once: this one is lazy
    assert wt2._arr is None

    def f(a):
        v = wt2.jax()  # the first read, while jax traces
        return (eg.from_jax(a) @ eg.from_jax(v)).sum()._value

    got = jax.jit(f)(jnp.ones((2, 4)))
    assert float(got) == float((np.ones((2, 4)) @ base.T).sum())
    assert isinstance(wt2._arr, jax.Array) and not isinstance(wt2._arr, jax.core.Tracer)
    np.testing.assert_array_equal(np.asarray((wt2 + 0)._value), base.T)


def test_record_cache_distinguishes_patterns():
    """The same op and shapes with different inputs needing a gradient: each pattern keeps
    its own node part (which gradients, what is saved)."""
    def f(L, log):
        a, b = _x(L, (3,), 1), _x(L, (3,), 2)
        for ra, rb in ((True, False), (False, True), (True, True), (True, False)):
            x, y = a.clone().requires_grad_(ra), b.clone().requires_grad_(rb)
            out = (x * y).sum()
            out.backward()
            log.append((x.grad, y.grad, [None if n is None else n.name()
                                         for n, _ in out.grad_fn.next_functions[0][0]
                                         .next_functions]))
    same(f, runs=3)
