"""Per-op time of small ops (the eager dispatch path: argument parsing, promotion, the
kernel cache lookup, recording the node, wrapping the result), eagergrad vs torch eager,
each library in its own process, torch at its faster thread setting (1 or 2).

Each case is timed as the minimum over repeats of the mean of a tight loop (timeit), after
a warm-up that compiles eagergrad's kernels; eagergrad's loop waits for the last result
(block_until_ready) inside the timed region, so asynchronous dispatch hides nothing. Each
case's result is also returned and checked against torch's. The jax.jit floor (a jitted
`a + b` on the same arrays) is printed for reference: no eager op can be cheaper than one
jitted call.

    python bench/dispatch.py
"""
import json
import os
import subprocess
import sys
import timeit

import numpy as np

RNG = np.random.RandomState(0)
A64, B64 = RNG.randn(2, 64, 64).astype(np.float32)
A128, B128 = RNG.randn(2, 128, 128).astype(np.float32)
V100 = RNG.randn(100).astype(np.float32)
X, W, BIAS = (RNG.randn(16, 64).astype(np.float32), RNG.randn(32, 64).astype(np.float32),
              RNG.randn(32).astype(np.float32))


def cases(L):
    """name -> (fn, what it returns to check). Fresh tensors per library."""
    t = L.tensor
    a64, b64, a128, b128, v = t(A64), t(B64), t(A128), t(B128), t(V100)
    g64 = t(A64, requires_grad=True)
    lin = L.nn.Linear(64, 32)
    with L.no_grad():
        lin.weight.copy_(t(W))
        lin.bias.copy_(t(BIAS))
    x = t(X)

    def linear_nograd():
        with L.no_grad():
            return lin(x)
    return {
        "a + b (100)": lambda: v + v,
        "a + b (64x64)": lambda: a64 + b64,
        "a + b (128x128)": lambda: a128 + b128,
        "a * 1.5 (64x64)": lambda: a64 * 1.5,
        "a.sin() (64x64)": lambda: a64.sin(),
        "a.sum() (64x64)": lambda: a64.sum(),
        "a + b, a requires grad (64x64)": lambda: g64 + b64,
        "a * b, a requires grad (64x64)": lambda: g64 * b64,
        "a.t() (64x64)": lambda: a64.t(),
        "nn.Linear(64, 32) (16x64)": lambda: lin(x),
        "nn.Linear(64, 32) no_grad (16x64)": linear_nograd,
    }


def child(lib, threads):
    if lib == "torch":
        import torch as L
        L.set_num_threads(threads)
        wait = None
    else:
        import jax
        import eagergrad as L
        wait = jax.block_until_ready
    out = {}
    for name, f in cases(L).items():
        for _ in range(300):
            r = f()
        if wait is not None:
            def loop(f=f, n=2000):
                for _ in range(n):
                    r = f()
                wait(r._value)
            n = 2000
            best = min(timeit.repeat(loop, number=1, repeat=9)) / n
        else:
            best = min(timeit.repeat(f, number=2000, repeat=9)) / 2000
        out[name] = (best * 1e6, np.asarray(r.detach().numpy(), np.float64).tolist())
    if lib == "eagergrad":
        import jax.numpy as jnp
        a, b = jnp.asarray(A64), jnp.asarray(B64)
        add = jax.jit(lambda x, y: x + y)
        add(a, b)
        out["(jax.jit floor: a + b, 64x64)"] = (
            min(timeit.repeat(lambda: add(a, b), number=2000, repeat=9)) / 2000 * 1e6, None)
    print(json.dumps(out))


def run(lib, threads=0):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads or 1))
    r = subprocess.run([sys.executable, __file__, "--child", lib, str(threads)], env=env,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    t1, t2 = run("torch", 1), run("torch", 2)
    torch_ = {k: min(t1[k], t2[k], key=lambda x: x[0]) for k in t1}
    eg = run("eagergrad")
    print(f"{'case':40s} {'torch us':>9s} {'eagergrad us':>13s} {'ratio':>6s}")
    bad = []
    for name, (us, val) in eg.items():
        if name not in torch_:
            print(f"{name:40s} {'':9s} {us:13.2f}")
            continue
        tus, tval = torch_[name]
        if not np.allclose(val, tval, rtol=1e-5, atol=1e-5):
            bad.append(name)
        print(f"{name:40s} {tus:9.2f} {us:13.2f} {us / tus:6.2f}x")
    if bad:
        sys.exit(f"results differ from torch's: {bad}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
