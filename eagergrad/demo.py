"""`python -m eagergrad demo`: train a small classifier written the PyTorch way on two
spirals, then check one step's gradients against jax.grad of the same code; then fit a
complex linear system with plain `z -= lr * z.grad` (torch's conjugate Wirtinger
convention makes that gradient descent) and crosscheck its gradient against JAX."""
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


def complex_problem(m=16, n=8, seed=1):
    """A complex least-squares problem A z = b (complex128) with a known solution."""
    rs = np.random.RandomState(seed)
    a = (rs.randn(m, n) + 1j * rs.randn(m, n)) / math.sqrt(2 * m)
    z_true = rs.randn(n) + 1j * rs.randn(n)
    return a, z_true, a @ z_true


def complex_loss(torch, a, b, z):
    """|A z - b|^2, real-valued (written for any torch-like module)."""
    r = a @ z - b
    return (r * r.conj()).real.sum()


def fit_complex(steps=400, lr=0.15, out=sys.stdout):
    """Gradient descent on z with z.grad = dL/dz* (torch's convention): converges."""
    a_np, z_true, b_np = complex_problem()
    a, b = torch.from_numpy(a_np), torch.from_numpy(b_np)
    z = torch.zeros(a_np.shape[1], dtype=torch.complex128, requires_grad=True)
    for step in range(1, steps + 1):
        loss = complex_loss(torch, a, b, z)
        z.grad = None
        loss.backward()
        with torch.no_grad():
            z -= lr * z.grad
        if step % 100 == 0 or step == 1:
            out.write(f"  step {step:4d}  loss {loss.item():.3e}\n")
    err = float(np.linalg.norm(z.detach().numpy() - z_true) / np.linalg.norm(z_true))
    return z.detach(), a, b, err


def main(argv=()):
    print("eagergrad demo: a 2-64-64-2 tanh MLP on two spirals, trained the PyTorch way")
    params, x, y, acc = train()
    diff = cross_check(params, x, y)
    print(f"final accuracy {acc:.2%}")
    print(f"gradient cross-check vs jax.grad: max relative difference {diff:.2e}")
    if not diff <= 1e-4:
        print("FAILED: eagergrad's gradients disagree with jax.grad", file=sys.stderr)
        return 1
    print("\ncomplex least squares |Az - b|^2, 8 complex unknowns, plain z -= lr * z.grad:")
    z, a, b, err = fit_complex()
    print(f"relative error of z: {err:.2e}")
    z0 = torch.full(z.shape, 0.5 + 0.5j, dtype=torch.complex128)  # away from the optimum
    report = torch.testing.crosscheck(lambda torch, z: complex_loss(torch, a_of(torch, a),
                                                                    a_of(torch, b), z), z0)
    print(report)
    if not (err < 1e-3 and report.ok):
        print("FAILED: the complex fit did not converge or its gradients disagree",
              file=sys.stderr)
        return 1
    print("OK")
    return 0


def a_of(module, t):
    """`t` as a tensor of `module` (the crosscheck's torch route gets torch tensors)."""
    return t if module is torch else module.tensor(t.numpy())
