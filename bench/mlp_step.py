"""One SGD step of a 784-512-512-10 MLP with cross-entropy, batch 128, float32:
eagergrad vs torch eager vs jax.jit(value_and_grad), same process."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import eagergrad as eg  # noqa: E402
from _common import bench_all, report  # noqa: E402

SIZES = (784, 512, 512, 10)
LR = 0.01


def init(seed=0):
    rs = np.random.RandomState(seed)
    params = []
    for i, o in zip(SIZES[:-1], SIZES[1:]):
        params.append((rs.randn(i, o) / np.sqrt(i)).astype(np.float32))
        params.append(np.zeros(o, np.float32))
    x = rs.randn(128, SIZES[0]).astype(np.float32)
    y = rs.randint(0, SIZES[-1], 128).astype(np.int64)
    return params, x, y


def forward(m, params, x, y):
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = h.relu()
    logp = h.log_softmax(1)
    return -logp[m.arange(len(y)), y].mean()


def sgd_step(m, params, x, y):
    for p in params:
        p.grad = None
    loss = forward(m, params, x, y)
    loss.backward()
    with m.no_grad():
        for p in params:
            p -= LR * p.grad
    return loss


def jax_loss(params, x, y):
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = jax.nn.relu(h)
    logp = jax.nn.log_softmax(h, 1)
    return -logp[jnp.arange(len(y)), y].mean()


@jax.jit
def jax_step(params, x, y):
    loss, g = jax.value_and_grad(jax_loss)(params, x, y)
    return loss, [p - LR * gi for p, gi in zip(params, g)]


def main():
    params, x, y = init()
    pt = [torch.tensor(p, requires_grad=True) for p in params]
    pe = [eg.tensor(p, requires_grad=True) for p in params]
    xt, yt = torch.tensor(x), torch.tensor(y)
    xe, ye = eg.tensor(x), eg.tensor(y)
    lt = sgd_step(torch, pt, xt, yt).item()
    le = sgd_step(eg, pe, xe, ye).item()
    assert abs(lt - le) < 1e-4 * max(1, abs(lt)), (lt, le)
    for a, b in zip(pt, pe):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(force=True), rtol=1e-4, atol=1e-5)
    pj = [jnp.asarray(p) for p in params]
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    state = {"p": pj}

    def step_jax():
        loss, state["p"] = jax_step(state["p"], xj, yj)
        jax.block_until_ready(loss)

    def step_eg():
        sgd_step(eg, pe, xe, ye)
        jax.block_until_ready(pe[-1].jax())

    names = ["torch eager", "eagergrad", "jax.jit(value_and_grad)"]
    rows = list(zip(names, bench_all([lambda: sgd_step(torch, pt, xt, yt), step_eg, step_jax],
                                     rounds=25)))  # a few ms per step: more rounds, steadier mins
    report("mlp_step: 784-512-512-10 MLP, batch 128, cross-entropy, one SGD step", rows)


if __name__ == "__main__":
    main()
