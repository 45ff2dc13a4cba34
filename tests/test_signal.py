"""torch.signal.windows against torch: values and dtypes for every window, length and
symmetry; the graph and gradient of a window made with requires_grad=True; torch's errors."""
import pytest

from conftest import same

WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 0.7},
    "gaussian": {"std": 1.3}, "general_cosine": {"a": [0.46, 0.3, 0.24]},
    "general_hamming": {"alpha": 0.6}, "hamming": {}, "hann": {}, "kaiser": {"beta": 5.0},
    "nuttall": {},
}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_window_values(name):
    def f(L):
        fn = getattr(L.signal.windows, name)
        return [fn(M, sym=sym, dtype=dt, **WINDOWS[name]) for M in (0, 1, 2, 5, 8)
                for sym in (True, False) for dt in (L.float32, L.float64)]
    same(f, runs=1)


@pytest.mark.parametrize("name", ["general_cosine", "kaiser", "exponential"])
def test_window_graph_and_gradient(name):
    def f(L):
        w = getattr(L.signal.windows, name)(6, dtype=L.float64, requires_grad=True,
                                            **WINDOWS[name])
        loss = (w * L.arange(6.0, dtype=L.float64)).sum()
        nodes, grads, todo = [], [], [w.grad_fn]
        while todo:  # the whole graph, and the gradients of its leaves
            n = todo.pop()
            nodes.append(type(n).__name__)
            if hasattr(n, "variable"):
                grads.append(n.variable)
            todo.extend(m for m, _ in n.next_functions if m is not None)
        loss.backward()
        return w, loss, nodes, [g.grad for g in grads]
    same(f)


ERRORS = {
    "negative length": lambda L: L.signal.windows.hann(-1),
    "integer dtype": lambda L: L.signal.windows.bartlett(4, dtype=L.int64),
    "not strided": lambda L: L.signal.windows.cosine(4, layout=L.sparse_coo),
    "std": lambda L: L.signal.windows.gaussian(4, std=0.0),
    "tau": lambda L: L.signal.windows.exponential(4, tau=-1.0),
    "center of a symmetric window": lambda L: L.signal.windows.exponential(4, center=1.0),
    "beta": lambda L: L.signal.windows.kaiser(4, beta=-1.0),
    "no coefficients": lambda L: L.signal.windows.general_cosine(4, a=[]),
    "coefficients not a list": lambda L: L.signal.windows.general_cosine(4, a=0.5),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_window_errors(case):
    got = same(ERRORS[case], runs=1)
    assert got[0] == "err"
