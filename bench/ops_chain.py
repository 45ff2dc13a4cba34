"""A chain of 100 small elementwise ops on 100-element float32 tensors, forward and
backward: eagergrad vs torch eager vs jax.jit(value_and_grad), each in its own process
(_common.measure). A step's result: the gradients of x and w."""
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Candidate, measure, report

N_OPS = 100
STEPS = 400  # per round, every candidate: ~0.17 s of torch
DATA = np.random.RandomState(0).randn(2, 100).astype(np.float32)


def chain(x, w):
    y = x
    for _ in range(N_OPS // 4):
        y = (y * w).sin()
        y = (y + w).tanh()
    return y.sum()


def jchain(x, w):
    y = x
    for _ in range(N_OPS // 4):
        y = jnp.sin(y * w)
        y = jnp.tanh(y + w)
    return y.sum()


jfn = jax.jit(jax.value_and_grad(jchain, argnums=(0, 1)))


def torch_like(L):
    x, w = (L.tensor(a, requires_grad=True) for a in DATA)

    def step():
        x.grad = w.grad = None
        chain(x, w).backward()
        return x.grad, w.grad
    return step


def jax_jit(L):
    x, w = (jnp.asarray(a) for a in DATA)
    return lambda: jfn(x, w)[1]


CANDIDATES = [Candidate("torch eager", "torch", torch_like),
              Candidate("eagergrad", "eagergrad", torch_like),
              Candidate("jax.jit(value_and_grad)", "jax", jax_jit)]


def main():
    # rounds as mlp_step: steadier minimums on a noisy VM; the same 100 ops every step, so
    # the last step's gradients are the first step's: float32 rounding differences only
    best, checks = measure(CANDIDATES, STEPS, rounds=25, rtol=1e-4, atol=1e-5)
    rows = list(best.items())
    report(f"ops_chain: {N_OPS} elementwise ops (+sum) on float32[100], forward+backward",
           rows)
    t, e = rows[0][1], rows[1][1]
    print(f"  per op: torch {t / N_OPS * 1e6:.2f} us, eagergrad {e / N_OPS * 1e6:.2f} us, "
          f"ratio {e / t:.2f}x")
    print(checks)


if __name__ == "__main__":
    main()
