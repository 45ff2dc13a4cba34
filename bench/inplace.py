"""An in-place-heavy residual block (forward + backward) vs the same block written
out of place, in eagergrad and in torch eager, from one process."""
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import eagergrad as eg  # noqa: E402
from _common import bench_all  # noqa: E402

B, D, DEPTH = 32, 64, 4


def block_inplace(x, params):
    for w1, b1, w2, b2 in params:
        h = x @ w1
        h.add_(b1).relu_()
        h = h @ w2
        h.add_(b2).mul_(0.5)
        h += x
        h.tanh_()
        x = h
    return x.sum()


def block_outofplace(x, params):
    for w1, b1, w2, b2 in params:
        h = (x @ w1 + b1).relu()
        h = (h @ w2 + b2) * 0.5
        h = (h + x).tanh()
        x = h
    return x.sum()


def make(m, rs):
    x = m.tensor(rs.randn(B, D).astype(np.float32), requires_grad=True)
    params = []
    for _ in range(DEPTH):
        layer = [rs.randn(D, D) / np.sqrt(D), rs.randn(D) * 0.1, rs.randn(D, D) / np.sqrt(D),
                 rs.randn(D) * 0.1]
        params.append([m.tensor(a.astype(np.float32), requires_grad=True) for a in layer])
    return x, params


def step(block, x, params):
    x.grad = None
    for layer in params:
        for p in layer:
            p.grad = None
    block(x, params).backward()


def main():
    steps = {}
    grads = {}
    for name, m in (("torch", torch), ("eagergrad", eg)):
        x, params = make(m, np.random.RandomState(0))
        for kind, block in (("in-place", block_inplace), ("out-of-place", block_outofplace)):
            step(block, x, params)
            grads[(name, kind)] = x.grad.numpy().copy()
            steps[(name, kind)] = lambda block=block, x=x, params=params: step(block, x, params)
    rows = dict(zip(steps, bench_all(list(steps.values()))))
    for k, g in grads.items():
        np.testing.assert_allclose(g, grads[("torch", "out-of-place")], rtol=1e-4, atol=1e-5)
    print(f"inplace: residual block x{DEPTH}, batch {B}, width {D}, forward+backward")
    for (name, kind), t in rows.items():
        print(f"  {name:10s} {kind:13s} {t * 1e6:9.1f} us   "
              f"{t / rows[('torch', kind)]:5.2f}x torch {kind}")
    ratio = rows[("eagergrad", "in-place")] / rows[("eagergrad", "out-of-place")]
    print(f"  eagergrad in-place / out-of-place: {ratio:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
