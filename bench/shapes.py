"""Memory and time per new shape: a new batch size every step, eagergrad vs torch eager,
each library in its own process.

Two workloads: an nn.Linear(64, 10) + CrossEntropyLoss forward and backward (300 batch
sizes), and torch.func.vmap(grad(loss)) per-sample gradients of the same model (240 batch
sizes). A child prints its RSS growth over the steps (the plateau: the growth in the last
third of the steps is what an unbounded cache would keep adding) and the mean time per new
shape; the parent checks that every step's loss (and for vmap, the gradients' sum) agrees
between the libraries.

    python bench/shapes.py [--linear N] [--vmap N]
"""
import json
import subprocess
import sys
import time

import numpy as np

IN, OUT = 64, 10


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024


def data(n, seed):
    rs = np.random.RandomState(seed)
    return rs.randn(n, IN).astype(np.float32), rs.randint(0, OUT, n)


def child(lib, workload, steps):
    L = __import__(lib)
    rs = np.random.RandomState(0)
    lin = L.nn.Linear(IN, OUT)
    with L.no_grad():
        lin.weight.copy_(L.tensor(rs.randn(OUT, IN).astype(np.float32) * 0.1))
        lin.bias.copy_(L.tensor(rs.randn(OUT).astype(np.float32) * 0.1))
    loss_fn = L.nn.CrossEntropyLoss()
    if workload == "vmap":
        params = {k: v.detach() for k, v in lin.named_parameters()}

        def one(p, x, y):
            return loss_fn(L.func.functional_call(lin, p, (x[None],)), y[None])
        per_sample = L.func.vmap(L.func.grad(one), in_dims=(None, 0, 0))

    def step(n):
        x, y = data(n, n)
        x, y = L.tensor(x), L.tensor(y)
        if workload == "linear":
            loss = loss_fn(lin(x), y)
            loss.backward()
            return float(loss)
        g = per_sample(params, x, y)
        return float(sum(v.sum() for v in g.values()))

    results, marks = [], []
    step(1)
    step(2)
    base = rss_mb()
    t0 = time.perf_counter()
    for i, n in enumerate(range(3, 3 + steps)):
        results.append(step(n))
        if (i + 1) % max(1, steps // 6) == 0:
            marks.append((i + 1, rss_mb() - base))
    elapsed = time.perf_counter() - t0
    extra = {}
    if lib == "eagergrad":
        from eagergrad._cache import EXECUTABLES
        extra = {"executables": dict(EXECUTABLES.stats), "bound": EXECUTABLES.size}
    print(json.dumps({"results": results, "marks": marks, "ms_per_shape": elapsed / steps * 1e3,
                      **extra}))


def run(lib, workload, steps):
    out = subprocess.run([sys.executable, __file__, "--child", lib, workload, str(steps)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv):
    steps = {"linear": 300, "vmap": 240}
    for flag in ("--linear", "--vmap"):
        if flag in argv:
            steps[flag[2:]] = int(argv[argv.index(flag) + 1])
    for workload, n in steps.items():
        r = {lib: run(lib, workload, n) for lib in ("torch", "eagergrad")}
        a, b = np.array(r["torch"]["results"]), np.array(r["eagergrad"]["results"])
        assert np.allclose(a, b, rtol=1e-4, atol=1e-4), np.abs(a - b).max()
        print(f"{workload}: {n} new batch sizes, results match torch")
        for lib in ("torch", "eagergrad"):
            marks = ", ".join(f"{i}: +{m:.0f} MB" for i, m in r[lib]["marks"])
            print(f"  {lib:9s} {r[lib]['ms_per_shape']:8.1f} ms/new shape   RSS {marks}")
        e = r["eagergrad"]
        print(f"  eagergrad executables: {e['executables']}, bound {e['bound']}")
        print(f"  time per new shape: {e['ms_per_shape'] / r['torch']['ms_per_shape']:.0f}x torch")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main(sys.argv[1:])
