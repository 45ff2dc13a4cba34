"""`python -m eagergrad demo`: train a small classifier written the PyTorch way (an
nn.Module, CrossEntropyLoss, optim.Adam, a shuffling DataLoader; a tqdm progress bar on a
terminal, one line per epoch otherwise) on two spirals, then check its gradients against
jax.grad of the same code; then fit a
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


class Classifier(torch.nn.Module):
    """A 2-64-64-2 tanh MLP, written as any PyTorch model is."""

    def __init__(self, sizes=(2, 64, 64, 2)):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(i, o) for i, o in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        return functional_forward([p for m in self.layers for p in (m.weight, m.bias)], x)


def functional_forward(params, x):
    """The classifier's forward on explicit (weight, bias, ...) tensors."""
    h = x
    for i in range(0, len(params), 2):
        h = torch.nn.functional.linear(h, params[i], params[i + 1])
        if i + 2 < len(params):
            h = h.tanh()
    return h


def loss_fn(params, x, y):
    """Mean cross-entropy of the classifier with these parameters."""
    return torch.nn.functional.cross_entropy(functional_forward(params, x), y)


def _progress(epoch, epochs, steps, out):
    """A tqdm bar over one epoch's steps when `out` is a terminal, else nothing (the
    epoch's summary line is printed either way)."""
    if not (hasattr(out, "isatty") and out.isatty()):
        return None
    from tqdm import tqdm
    return tqdm(total=steps, desc=f"epoch {epoch:3d}/{epochs}", file=out, leave=False,
                ncols=80)


def train(epochs=60, batch=64, lr=0.01, out=sys.stdout, seed=0):
    torch.manual_seed(seed)
    x_np, y_np = two_spirals()
    data = torch.utils.data.TensorDataset(torch.from_numpy(x_np), torch.from_numpy(y_np))
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    model = Classifier()
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    x, y = data.tensors
    acc = 0.0
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        total = 0.0
        bar = _progress(epoch, epochs, len(loader), out)
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
            if bar is not None:
                bar.set_postfix(loss=f"{loss.item():.4f}")
                bar.update()
        if bar is not None:
            bar.close()
        model.eval()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        out.write(f"epoch {epoch:3d}/{epochs}  loss {total / len(y_np):.4f}  "
                  f"accuracy {acc:6.2%}  ({time.perf_counter() - t0:.2f}s)\n")
        out.flush()
    return model, x, y, acc


def cross_check(model, x, y):
    """Max relative difference between eagergrad's backward through the model and
    jax.grad of the same loss run on jax tracers."""
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    params = list(model.parameters())
    eager = [p.grad.jax() for p in params]
    arrays = [p.detach().jax() for p in params]
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
    print("eagergrad demo: a 2-64-64-2 tanh MLP (nn.Module, CrossEntropyLoss, optim.Adam,"
          " DataLoader) on two spirals")
    model, x, y, acc = train()
    diff = cross_check(model, x, y)
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
