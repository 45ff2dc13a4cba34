"""The PyTorch tutorial's two-layer net with a custom autograd.Function ReLU ("Defining
new autograd functions": MyReLU, whose backward does `grad_input[input < 0] = 0`),
N=64, D_in=1000, H=100, D_out=10, 100 steps of SGD by hand (`w1 -= lr * w1.grad` under
no_grad, then `w1.grad.zero_()`): eagergrad vs torch eager vs jax.jit of the same step.

Each library runs in its own worker process (on 2 cores torch's OpenMP threads and
XLA's pool slow each other badly in one process); torch runs once with 1 and once with 2
threads, and the faster is the baseline. The driver runs interleaved rounds (one timed
batch of each worker in turn, best of the rounds), after warm-up runs, so compiles are
not timed; each worker also reports its first, cold run. A timed call is the whole
100-step program from the same initial weights (numpy, seed 0); the final loss and
weights of the last timed call are checked against torch's.

    python bench/myrelu.py            # the table
    python bench/myrelu.py --rounds 5
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import _calibrate, _timed, report  # noqa: E402

N, D_IN, H, D_OUT = 64, 1000, 100, 10
STEPS = 100
LR = 1e-6


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
        for t in range(STEPS):
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


def jax_program():
    import jax
    import jax.numpy as jnp

    def loss_fn(w1, w2, x, y):
        return jnp.sum((jax.nn.relu(x @ w1) @ w2 - y) ** 2)

    @jax.jit
    def step(w1, w2, x, y):
        loss, (g1, g2) = jax.value_and_grad(loss_fn, argnums=(0, 1))(w1, w2, x, y)
        return loss, w1 - LR * g1, w2 - LR * g2

    x0, y0, w10, w20 = data()
    x, y = jnp.asarray(x0), jnp.asarray(y0)

    def run():
        w1, w2 = jnp.asarray(w10), jnp.asarray(w20)
        for t in range(STEPS):
            loss, w1, w2 = step(w1, w2, x, y)
        return loss, w1, w2
    return run


# ---- a worker: one library, one process ------------------------------------------------------
def worker(name, threads):
    if name == "torch":
        import torch
        torch.set_num_threads(threads)
        run = torch_like(torch)

        def finish(r):
            return r

        def result(r):
            return float(r[0].detach()), r[1].detach().numpy(), r[2].detach().numpy()
    else:
        import jax
        if name == "eagergrad":
            import eagergrad
            run = torch_like(eagergrad)

            def finish(r):
                jax.block_until_ready([t.jax() for t in r])
                return r

            def result(r):
                return float(r[0]), r[1].numpy(force=True), r[2].numpy(force=True)
        else:
            run = jax_program()

            def finish(r):
                return jax.block_until_ready(r)

            def result(r):
                return float(r[0]), np.asarray(r[1]), np.asarray(r[2])
    last = [None]

    def fn():
        last[0] = finish(run())

    t0 = time.perf_counter()
    fn()
    cold = time.perf_counter() - t0
    number = _calibrate(fn, warmup=2)
    print(json.dumps({"cold": cold, "number": number}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "round":
            time.sleep(0.02)
            print(json.dumps({"t": _timed(fn, number)}), flush=True)
        elif cmd[0] == "result":
            loss, w1, w2 = result(last[0])
            np.savez(cmd[1], loss=loss, w1=w1, w2=w2)
            print(json.dumps({"saved": cmd[1]}), flush=True)
        else:
            return


class Worker:
    def __init__(self, label, name, threads=0):
        self.label = label
        self.p = subprocess.Popen([sys.executable, __file__, "--worker", name, str(threads)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.hello = self.read()

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.label} died")
        return json.loads(line)

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.read()

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.close()
        self.p.wait()


def main(rounds=15):
    # started one at a time: each warms up (compiles) alone
    workers = [Worker("torch eager (1 thread)", "torch", 1),
               Worker("torch eager (2 threads)", "torch", 2),
               Worker("eagergrad", "eagergrad"),
               Worker("jax.jit(step) per step", "jax")]
    best = {w.label: float("inf") for w in workers}
    for _ in range(rounds):
        for w in workers:
            best[w.label] = min(best[w.label], w.ask("round")["t"])
    results = {}
    for k, w in enumerate(workers):
        path = f"/tmp/eagergrad_bench_myrelu_{os.getpid()}_{k}.npz"
        w.ask(f"result {path}")
        with np.load(path) as z:
            results[w.label] = (float(z["loss"]), z["w1"], z["w2"])
        os.unlink(path)
        w.close()
    torch_label = min(workers[:2], key=lambda w: best[w.label]).label
    ref = results[torch_label]
    for label, (loss, w1, w2) in results.items():
        # float32, 100 steps: summation orders differ (XLA vs MKL), so agree loosely
        assert abs(loss - ref[0]) <= 1e-3 * abs(ref[0]), (label, loss, ref[0])
        np.testing.assert_allclose(w1, ref[1], rtol=1e-3, atol=1e-3, err_msg=label)
        np.testing.assert_allclose(w2, ref[2], rtol=1e-3, atol=1e-3, err_msg=label)
    rows = [("torch eager", best[torch_label])] + [(w.label, best[w.label]) for w in workers]
    report(f"myrelu: the tutorial's MyReLU two-layer net, {STEPS} SGD steps per call "
           f"(N={N}, D_in={D_IN}, H={H}, D_out={D_OUT}), warm; final loss {ref[0]:.6g} "
           f"checked against torch", rows)
    print("  cold first call (compiles included): " + ", ".join(
        f"{w.label} {w.hello['cold'] * 1e3:.0f} ms" for w in workers))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]))
    else:
        main(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 15)
