"""A chain of 100 small elementwise ops on 100-element float32 tensors, forward and
backward: eagergrad vs torch eager vs jax.jit(value_and_grad), same process."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import eagergrad as eg  # noqa: E402
from _common import bench_all, report  # noqa: E402

N_OPS = 100


def chain(x, w):
    y = x
    for i in range(N_OPS // 4):
        y = (y * w).sin()
        y = (y + w).tanh()
    return y.sum()


def jchain(x, w):
    y = x
    for i in range(N_OPS // 4):
        y = jnp.sin(y * w)
        y = jnp.tanh(y + w)
    return y.sum()


def main():
    data = np.random.RandomState(0).randn(2, 100).astype(np.float32)
    xt = torch.tensor(data[0], requires_grad=True)
    wt = torch.tensor(data[1], requires_grad=True)
    xe = eg.tensor(data[0], requires_grad=True)
    we = eg.tensor(data[1], requires_grad=True)

    def step_torch():
        xt.grad = wt.grad = None
        chain(xt, wt).backward()

    def step_eg():
        xe.grad = we.grad = None
        chain(xe, we).backward()

    jfn = jax.jit(jax.value_and_grad(jchain, argnums=(0, 1)))
    xj, wj = jnp.asarray(data[0]), jnp.asarray(data[1])

    def step_jax():
        jax.block_until_ready(jfn(xj, wj))

    step_eg()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy() if xt.grad is not None else
                               (step_torch(), xt.grad.numpy())[1], rtol=1e-4, atol=1e-5)
    names = ["torch eager", "eagergrad", "jax.jit(value_and_grad)"]
    rows = list(zip(names, bench_all([step_torch, step_eg, step_jax],
                                     rounds=25)))  # as mlp_step: steadier minimums on a noisy VM
    report(f"ops_chain: {N_OPS} elementwise ops (+sum) on float32[100], forward+backward",
           rows)
    t, e = rows[0][1], rows[1][1]
    print(f"  per op: torch {t / N_OPS * 1e6:.2f} us, eagergrad {e / N_OPS * 1e6:.2f} us, "
          f"ratio {e / t:.2f}x")


if __name__ == "__main__":
    main()
