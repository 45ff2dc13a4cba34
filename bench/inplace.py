"""An in-place-heavy residual block (forward + backward) vs the same block written
out of place, in eagergrad and in torch eager, each in its own process
(_common.measure). A step's result: the gradients of the input and of every parameter."""
import functools
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Candidate, measure

B, D, DEPTH = 32, 64, 4
STEPS = 500  # per round, every candidate: ~0.15 s of torch


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


def torch_like(L, block):
    x, params = make(L, np.random.RandomState(0))
    leaves = [x] + [p for layer in params for p in layer]

    def step():
        for t in leaves:
            t.grad = None
        block(x, params).backward()
        return [t.grad for t in leaves]
    return step


KINDS = {"in-place": block_inplace, "out-of-place": block_outofplace}
CANDIDATES = [Candidate(f"{name} {kind}", name, functools.partial(torch_like, block=block),
                        ref=f"torch {kind}")
              for name in ("torch", "eagergrad") for kind, block in KINDS.items()]


def main():
    best, checks = measure(CANDIDATES, STEPS)  # the last step's = the first step's results
    print(f"inplace: residual block x{DEPTH}, batch {B}, width {D}, forward+backward")
    for c in CANDIDATES:
        name, kind = c.label.split(" ", 1)
        t = best[c.label]
        print(f"  {name:10s} {kind:13s} {t * 1e6:9.1f} us   "
              f"{t / best[f'torch {kind}']:5.2f}x torch {kind}")
    ratio = best["eagergrad in-place"] / best["eagergrad out-of-place"]
    print(f"  eagergrad in-place / out-of-place: {ratio:.2f}x (target <= 1.2x)")
    print(checks)


if __name__ == "__main__":
    main()
