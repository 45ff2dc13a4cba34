"""ops_chain with one tensor hook per op: eagergrad with hooks vs without, and vs torch
eager with the same hooks, from one process."""
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import eagergrad as eg  # noqa: E402
from _common import bench_all  # noqa: E402
from ops_chain import N_OPS  # noqa: E402


def chain(x, w, hook):
    y = x
    for i in range(N_OPS // 4):
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


def main():
    data = np.random.RandomState(0).randn(2, 100).astype(np.float32)
    calls = [0]

    def hook(g):
        calls[0] += 1

    steps = {}
    for name, m in (("torch", torch), ("eagergrad", eg)):
        x = m.tensor(data[0], requires_grad=True)
        w = m.tensor(data[1], requires_grad=True)
        for label, h in (("no hooks", None), ("hook per op", hook)):
            def step(x=x, w=w, h=h):
                x.grad = w.grad = None
                chain(x, w, h).backward()
            calls[0] = 0
            step()
            assert calls[0] == (N_OPS if h else 0), calls[0]
            steps[(name, label)] = step
    rows = dict(zip(steps, bench_all(list(steps.values()))))
    print(f"hooks: ops_chain ({N_OPS} ops on float32[100]) with one tensor hook per op")
    for (name, label), t in rows.items():
        print(f"  {name:10s} {label:12s} {t * 1e6:9.1f} us   "
              f"{t / rows[('torch', label)]:5.2f}x torch {label}")
    own = rows[("eagergrad", "hook per op")] / rows[("eagergrad", "no hooks")]
    print(f"  eagergrad with hooks / without: {own:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
