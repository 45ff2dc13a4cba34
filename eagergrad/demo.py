"""`python -m eagergrad demo`: train a small classifier written the PyTorch way on two
spirals, then check one step's gradients against jax.grad of the same code."""
import math
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import eagergrad as torch


def two_spirals(n_per_class=256, noise=0.15, seed=0):
    """Deterministic two-spiral data: features float32 [2n, 2], labels int64 [2n]."""
    rs = np.random.RandomState(seed)
    t = np.sqrt(rs.rand(n_per_class)) * 3 * math.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], 1) / (3 * math.pi)
    x = np.concatenate([arm, -arm]) + rs.randn(2 * n_per_class, 2) * noise / 3
    y = np.concatenate([np.zeros(n_per_class), np.ones(n_per_class)]).astype(np.int64)
    perm = rs.permutation(2 * n_per_class)
    return x[perm].astype(np.float32), y[perm]


def init_params(sizes=(2, 64, 64, 2), seed=0):
    rs = np.random.RandomState(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / math.sqrt(fan_in)
        params.append(rs.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rs.uniform(-bound, bound, (fan_out,)).astype(np.float32))
    return params


def forward(params, x):
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i + 2 < len(params):
            h = h.tanh()
    return h


def loss_fn(params, x, y):
    """Mean cross-entropy, written with torch-style tensor ops."""
    logp = forward(params, x).log_softmax(1)
    return -logp.gather(1, y.unsqueeze(1)).mean()


def _bar(done, total, width=24):
    n = int(width * done / total)
    return "[" + "#" * n + "." * (width - n) + "]"


def train(epochs=60, batch=64, lr=0.1, momentum=0.9, out=sys.stdout):
    x_np, y_np = two_spirals()
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    params = [torch.tensor(p, requires_grad=True) for p in init_params()]
    velocity = [torch.zeros_like(p) for p in params]
    steps = (len(y_np) + batch - 1) // batch
    acc = 0.0
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        total = 0.0
        for s in range(steps):
            xb, yb = x[s * batch:(s + 1) * batch], y[s * batch:(s + 1) * batch]
            loss = loss_fn(params, xb, yb)
            for p in params:
                p.grad = None
            loss.backward()
            with torch.no_grad():  # SGD with momentum, as torch.optim.SGD does it
                for p, v in zip(params, velocity):
                    v.mul_(momentum).add_(p.grad)
                    p -= lr * v
            total += loss.item() * len(yb)
            out.write(f"\repoch {epoch:3d}/{epochs} {_bar(s + 1, steps)}")
            out.flush()
        with torch.no_grad():
            acc = (forward(params, x).argmax(1) == y).float().mean().item()
        out.write(f"\repoch {epoch:3d}/{epochs} {_bar(steps, steps)} loss {total / len(y_np):.4f}"
                  f"  accuracy {acc:6.2%}  ({time.perf_counter() - t0:.2f}s)\n")
    return params, x, y, acc


def cross_check(params, x, y):
    """Max relative difference between eagergrad's backward and jax.grad of the same
    loss_fn run on jax tracers."""
    leaves = [p.detach().requires_grad_() for p in params]
    loss_fn(leaves, x, y).backward()
    eager = [p.grad.jax() for p in leaves]
    arrays = [p.jax() for p in params]
    jax_grads = jax.jit(jax.grad(torch.jaxify(loss_fn)))(arrays, x.jax(), y.jax())
    worst = 0.0
    for a, b in zip(eager, jax_grads):
        scale = float(jnp.max(jnp.abs(b)))
        worst = max(worst, float(jnp.max(jnp.abs(a - b))) / max(scale, 1e-12))
    return worst


def main(argv=()):
    print("eagergrad demo: a 2-64-64-2 tanh MLP on two spirals, trained the PyTorch way")
    params, x, y, acc = train()
    diff = cross_check(params, x, y)
    print(f"final accuracy {acc:.2%}")
    print(f"gradient cross-check vs jax.grad: max relative difference {diff:.2e}")
    if not diff <= 1e-4:
        print("FAILED: eagergrad's gradients disagree with jax.grad", file=sys.stderr)
        return 1
    print("OK")
    return 0
