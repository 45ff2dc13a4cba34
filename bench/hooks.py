"""ops_chain with one tensor hook per op: eagergrad with hooks vs without, and vs torch
eager with the same hooks, each in its own process (_common.measure). A step's result:
the gradients of x and w and how many times the hooks ran."""
import functools
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Candidate, measure
from ops_chain import DATA, N_OPS

STEPS = 300  # per round, every candidate: ~0.13-0.2 s of torch


def chain(x, w, hook):
    y = x
    for _ in range(N_OPS // 4):
        y = (y * w)
        if hook:
            y.register_hook(hook)
        y = y.sin()
        if hook:
            y.register_hook(hook)
        y = (y + w)
        if hook:
            y.register_hook(hook)
        y = y.tanh()
        if hook:
            y.register_hook(hook)
    return y.sum()


def torch_like(L, hooks):
    x, w = (L.tensor(a, requires_grad=True) for a in DATA)
    calls = [0]

    def hook(g):
        calls[0] += 1

    def step():
        x.grad = w.grad = None
        calls[0] = 0
        chain(x, w, hook if hooks else None).backward()
        return x.grad, w.grad, calls[0]
    return step


LABELS = {False: "no hooks", True: "hook per op"}
CANDIDATES = [Candidate(f"{name} {label}", name, functools.partial(torch_like, hooks=h),
                        ref=f"torch {label}", fused=not h)
              for name in ("torch", "eagergrad") for h, label in LABELS.items()]


def main():
    best, checks = measure(CANDIDATES, STEPS)  # the last step's = the first step's results
    print(f"hooks: ops_chain ({N_OPS} ops on float32[100]) with one tensor hook per op")
    for c in CANDIDATES:
        name, label = c.label.split(" ", 1)
        t = best[c.label]
        print(f"  {name:10s} {label:12s} {t * 1e6:9.1f} us   "
              f"{t / best[f'torch {label}']:5.2f}x torch {label}")
    own = best["eagergrad hook per op"] / best["eagergrad no hooks"]
    print(f"  eagergrad with hooks / without: {own:.2f}x (target <= 1.5x)")
    print(checks)


if __name__ == "__main__":
    main()
