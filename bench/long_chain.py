"""Long chains: the backward of a 10k- and a 100k-node chain, first sighting (node by
node) and later ones (fused segments compiled in the background), plus teardown. Checks
(docs/design.md §6-7): the 100k backward takes <= 11x the 10k one on every repetition,
the 10k chain's later backwards are no slower than its first, and every timed
backward's gradient equals the numpy reference. Also prints what one segment compile costs."""
import gc
import subprocess
import sys
import time

import numpy as np

REPS = 4


def chain_grad_reference(x, n):
    """d sum(chain(x)) / dx in float64: the chain alternates y * 1.0001 and sin(y)."""
    y, d = x.astype(np.float64), np.ones_like(x, dtype=np.float64)
    for i in range(n):
        if i % 2:
            d = d * np.cos(y)
            y = np.sin(y)
        else:
            y = y * 1.0001
            d = d * 1.0001
    return d


def child(n):
    import eagergrad as torch
    from eagergrad.engine import fused
    x0 = np.linspace(-1, 1, 10).astype(np.float32)
    ref = chain_grad_reference(x0, n)
    x = torch.tensor(x0, requires_grad=True)
    rows = []
    for _rep in range(REPS):
        t0 = time.perf_counter()
        y = x
        for i in range(n):
            y = y.sin() if i % 2 else y * 1.0001
        loss = y.sum()
        del y
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        del loss
        gc.collect()
        t3 = time.perf_counter()
        np.testing.assert_allclose(x.grad.numpy(), ref, rtol=2e-3, atol=1e-6)
        x.grad = None
        rows.append((t1 - t0, t2 - t1, t3 - t2, fused.COUNTS["segments_fused"]))
        time.sleep(1.0)  # let a background compile finish, as between training steps
    print(repr(rows))


def compile_cost():
    """Seconds to compile one fused segment of fused.MAX_NODES matmul/tanh/softmax nodes."""
    import eagergrad as torch
    from eagergrad.engine import fused
    fused.BACKGROUND = False
    w = torch.randn(64, 64, requires_grad=True)
    x = torch.randn(32, 64)

    def prog():
        h = x
        for _ in range(fused.MAX_NODES // 6):
            h = (h @ w + 1).tanh()
            h = h.log_softmax(1).exp() * h
        return h.sum()
    prog().backward()  # first sighting: node by node (and each node's kernel compiled)
    loss = prog()
    t0 = time.perf_counter()
    loss.backward()    # second: compiles the segment on the spot
    dt = time.perf_counter() - t0
    assert fused.COUNTS["compiles"] >= 1, fused.COUNTS
    print(repr((fused.MAX_NODES, dt)))


def run_child(*args):
    out = subprocess.run([sys.executable, __file__, *map(str, args)], capture_output=True,
                         text=True, check=True)
    return eval(out.stdout.strip().splitlines()[-1])


def main():
    nodes, dt = run_child("compile")
    print(f"one segment of {nodes} op nodes (matmul/tanh/log_softmax): compile + run "
          f"{dt:.2f} s")
    res = {n: run_child(n) for n in (10_000, 100_000)}
    print(f"{'rep':>4} {'10k fwd':>9} {'10k bwd':>9} {'100k fwd':>9} {'100k bwd':>9} "
          f"{'ratio':>6} {'100k teardown':>14}")
    ok = True
    for rep in range(REPS):
        a, b = res[10_000][rep], res[100_000][rep]
        ratio = b[1] / a[1]
        ok &= ratio <= 11
        print(f"{rep:>4} {a[0]:8.2f}s {a[1]:8.3f}s {b[0]:8.2f}s {b[1]:8.3f}s {ratio:6.1f} "
              f"{b[2]:13.3f}s")
    first = res[10_000][0][1]
    later = max(r[1] for r in res[10_000][1:])
    print(f"10k chain: first backward {first:.3f} s, slowest later one {later:.3f} s; "
          f"fused segments run: {res[10_000][-1][3]}")
    ok &= later <= first
    if not ok:
        sys.exit("FAILED: 100k backward > 11x 10k, or a later 10k backward slower than "
                 "the first")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        compile_cost() if sys.argv[1] == "compile" else child(int(sys.argv[1]))
    else:
        main()
