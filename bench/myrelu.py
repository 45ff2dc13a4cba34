"""The PyTorch tutorial's two-layer net with a custom autograd.Function ReLU ("Defining
new autograd functions": MyReLU, whose backward does `grad_input[input < 0] = 0`),
N=64, D_in=1000, H=100, D_out=10, 100 steps of SGD by hand (`w1 -= lr * w1.grad` under
no_grad, then `w1.grad.zero_()`): eagergrad vs torch eager vs jax.jit of the same step,
each in its own process (_common.measure).

A "step" here is the whole 100-step program from the same initial weights (numpy,
seed 0); its result, the final loss and weights, is checked against torch's.

    python bench/myrelu.py            # the table
    python bench/myrelu.py --rounds 5
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _common import Candidate, measure, report

N, D_IN, H, D_OUT = 64, 1000, 100, 10
STEPS = 100
LR = 1e-6
CALLS = 6  # 100-step programs per round, every candidate: ~0.16 s of torch


def data():
    rs = np.random.RandomState(0)
    return (rs.randn(N, D_IN).astype(np.float32), rs.randn(N, D_OUT).astype(np.float32),
            rs.randn(D_IN, H).astype(np.float32), rs.randn(H, D_OUT).astype(np.float32))


def torch_like(L):
    """The tutorial's program for `L` (torch or eagergrad): run() -> (loss, w1, w2)."""
    class MyReLU(L.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input

    x0, y0, w10, w20 = data()
    x, y = L.tensor(x0), L.tensor(y0)

    def run():
        w1 = L.tensor(w10, requires_grad=True)
        w2 = L.tensor(w20, requires_grad=True)
        for _ in range(STEPS):
            relu = MyReLU.apply
            y_pred = relu(x.mm(w1)).mm(w2)
            loss = (y_pred - y).pow(2).sum()
            loss.backward()
            with L.no_grad():
                w1 -= LR * w1.grad
                w2 -= LR * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
        return loss, w1, w2
    return run


def jax_loss(w1, w2, x, y):
    return jnp.sum((jax.nn.relu(x @ w1) @ w2 - y) ** 2)


@jax.jit
def jax_step(w1, w2, x, y):
    loss, (g1, g2) = jax.value_and_grad(jax_loss, argnums=(0, 1))(w1, w2, x, y)
    return loss, w1 - LR * g1, w2 - LR * g2


def jax_program(L):
    x0, y0, w10, w20 = data()
    x, y = jnp.asarray(x0), jnp.asarray(y0)

    def run():
        w1, w2 = jnp.asarray(w10), jnp.asarray(w20)
        for _ in range(STEPS):
            loss, w1, w2 = jax_step(w1, w2, x, y)
        return loss, w1, w2
    return run


CANDIDATES = [Candidate("torch eager", "torch", torch_like),
              Candidate("eagergrad", "eagergrad", torch_like),
              Candidate("jax.jit(step) per step", "jax", jax_program)]


def main():
    # float32, 100 SGD steps of a sum-of-squares loss: summation orders differ (XLA vs
    # MKL), so the final loss and weights agree loosely
    best, checks = measure(CANDIDATES, CALLS, rtol=1e-3, atol=1e-3,
                           result="the last program's final loss and weights")
    report(f"myrelu: the tutorial's MyReLU two-layer net, {STEPS} SGD steps per call "
           f"(N={N}, D_in={D_IN}, H={H}, D_out={D_OUT}), warm", list(best.items()))
    print(checks)


if __name__ == "__main__":
    main()
