"""A whole compiled training step (zero_grad, forward, loss, backward, optimizer step):
eagergrad's torch.compile vs a hand-written jax.jit(value_and_grad) step with the same
optimizer vs torch eager vs torch.compile (and eagergrad eager), each variant in its own
process, on three models:

  mlp   784-512-512-10 MLP, ReLU, cross-entropy, AdamW(lr=1e-3, weight_decay=1e-2),
        batch 64, float32
  gpt   the tiny GPT of examples/tiny_gpt.py (its class, sizes, numpy init, AdamW groups,
        batch 4, block 16; no lr schedule: a fixed lr)
  tiny  Linear(8, 8), batch 4, MSE, SGD(lr=0.1): the per-call overhead

Every variant starts from the same numpy-seeded weights and cycles through the same
K batches (step k takes batch k % K). A child times its first 3 calls one by one (the
compile/trace calls: eagergrad's first call traces and runs once, the second traces and
compiles, NOTE [compiled calls]), then warms up, then the parent runs interleaved rounds
of STEPS steps in each child, one child at a time (each child blocks on its state at the
end of a round, not per step). Reported: the median (and min) time per step over the
rounds. Every variant runs exactly 3 + WARM x STEPS + ROUNDS x STEPS steps, and its final
loss and parameters are checked against torch eager's after the same steps.

Persistent compilation caches are off in every child (EAGERGRAD_COMPILATION_CACHE=0,
TORCHINDUCTOR_FORCE_DISABLE_CACHES=1): first calls are cold compiles. torch runs with
1 or 2 threads, the faster in warm-up. torch.compile that fails, or whose first 3 calls
take more than 120 s, is reported n/a with the reason.

    python bench/compiled_step.py [--models mlp,gpt,tiny] [--rounds 11]
    python bench/compiled_step.py --profile mlp   # cProfile of 200 replayed calls
"""
import json
import math
import os
import select
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "tiny_gpt.py")
K = 8  # batches cycled through
WARM = 4  # warm-up rounds (torch: 2 with 1 thread, 2 with 2)
STEPS = {"mlp": 20, "gpt": 20, "tiny": 300}
TORCH_COMPILE_LIMIT = 120.0  # seconds for torch.compile's first 3 calls
VARIANTS = ["eagergrad compiled", "eagergrad eager", "jax.jit (hand-written)",
            "torch eager", "torch.compile"]
LIB = {"eagergrad compiled": "eagergrad", "eagergrad eager": "eagergrad",
       "jax.jit (hand-written)": "jax", "torch eager": "torch", "torch.compile": "torch"}
REF = "torch eager"
# The check of a variant against torch eager. Float32 differences (MKL vs XLA summation
# orders) are amplified by AdamW: its first update is ~lr * sign(grad), so a gradient
# component that is ~0 up to rounding moves by +-lr either way, and over the steps the
# differences grow past any elementwise tolerance (|dp| up to ~3e-2 measured, the
# hand-written jax step's too). So: the losses of the first 3 calls within float32
# tolerance (rtol, atol); the parameters after them, and after all the steps, within a
# distance to torch's relative to how far torch's moved from the initial ones (d3 <= 1e-2,
# d <= 0.1), and the final loss relative (<= 0.1). Measured d3 <= ~1e-3, d and the loss
# <= ~4e-2; a wrong step (a missed update, another formula) is off by O(1).
FIRST_TOL = (1e-4, 1e-5, 1e-2)
FINAL_TOL = 0.1


# ---- data and initial weights (numpy, the same for every library) ------------------------
MLP = (784, 512, 512, 10)


def mlp_data():
    rs = np.random.RandomState(0)
    params = []  # torch layout: weight (out, in), bias (out,)
    for i, o in zip(MLP[:-1], MLP[1:]):
        params.append((rs.randn(o, i) / np.sqrt(i)).astype(np.float32))
        params.append((0.01 * rs.randn(o)).astype(np.float32))
    xs = rs.randn(K, 64, MLP[0]).astype(np.float32)
    teacher = rs.randn(MLP[0], MLP[-1])  # learnable labels, noisy
    ys = (np.argmax(xs @ teacher + 2 * rs.randn(K, 64, MLP[-1]), -1)).astype(np.int64)
    return params, xs, ys


def tiny_data():
    rs = np.random.RandomState(0)
    params = [(rs.randn(8, 8) / np.sqrt(8)).astype(np.float32),
              (0.1 * rs.randn(8)).astype(np.float32)]
    xs = rs.randn(K, 4, 8).astype(np.float32)
    ys = rs.randn(K, 4, 8).astype(np.float32)
    return params, xs, ys


def gpt_text():
    ns = {}
    src = open(EXAMPLE).read()
    start = src.index("TEXT = ")
    exec(src[start:src.index("\n", start)], ns)
    return ns["TEXT"]


GPT = dict(d=32, heads=4, layers=2, block=16, batch=4)  # examples/tiny_gpt.py's sizes
GPT_OPT = dict(lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
GPT_DECAY = 0.1


def _gpt_init():
    return [a for _, a in gpt_data()[0]]


def gpt_data():
    """The example's numpy_init, replayed in numpy: (name, array) in named_parameters
    order, and K batches drawn as its training loop draws them."""
    text = gpt_text()
    chars = sorted(set(text))
    vocab, d, block = len(chars), GPT["d"], GPT["block"]
    shapes = [("tok.weight", (vocab, d)), ("pos.weight", (block, d))]
    for i in range(GPT["layers"]):
        b = f"blocks.{i}."
        shapes += [(b + "ln1.weight", (d,)), (b + "ln1.bias", (d,)),
                   (b + "qkv.weight", (3 * d, d)), (b + "qkv.bias", (3 * d,)),
                   (b + "proj.weight", (d, d)), (b + "proj.bias", (d,)),
                   (b + "ln2.weight", (d,)), (b + "ln2.bias", (d,)),
                   (b + "mlp.0.weight", (4 * d, d)), (b + "mlp.0.bias", (4 * d,)),
                   (b + "mlp.2.weight", (d, 4 * d)), (b + "mlp.2.bias", (d,))]
    shapes += [("ln.weight", (d,)), ("ln.bias", (d,))]
    rs = np.random.RandomState(0)
    params = []
    for name, shape in shapes:
        if "ln" in name:
            a = np.ones(shape) if name.endswith("weight") else np.zeros(shape)
        else:
            a = rs.normal(0, 0.02 if len(shape) > 1 else 0.01, shape)
        params.append((name, a.astype(np.float32)))
    data = np.array([chars.index(c) for c in text])
    starts = np.random.RandomState(1).randint(0, len(data) - block - 1, (K, GPT["batch"]))
    idx = starts[:, :, None] + np.arange(block + 1)
    return params, data[idx[..., :-1]], data[idx[..., 1:]], vocab


INIT = {"mlp": lambda: mlp_data()[0], "tiny": lambda: tiny_data()[0], "gpt": _gpt_init}


# ---- torch and eagergrad: the same step, eager or compiled -------------------------------
def _example(L):
    """examples/tiny_gpt.py as module `tiny_gpt` (torch.compile looks its classes up by
    module name) with `torch` being library L."""
    import importlib.util
    names = {"torch": L, "torch.nn": L.nn, "torch.nn.functional": L.nn.functional}
    saved = {k: sys.modules.get(k) for k in names}
    sys.modules.update(names)
    try:
        spec = importlib.util.spec_from_file_location("tiny_gpt", EXAMPLE)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["tiny_gpt"] = mod
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return vars(mod)


def torch_like(L, model_name, compiled):
    nn, F = L.nn, L.nn.functional
    if model_name == "mlp":
        params, xs, ys = mlp_data()
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        with L.no_grad():
            for p, a in zip(model.parameters(), params):
                p.copy_(L.from_numpy(a))
        opt = L.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
        loss_fn = F.cross_entropy
    elif model_name == "tiny":
        params, xs, ys = tiny_data()
        model = nn.Linear(8, 8)
        with L.no_grad():
            for p, a in zip(model.parameters(), params):
                p.copy_(L.from_numpy(a))
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        loss_fn = F.mse_loss
    else:
        named, xs, ys, vocab = gpt_data()
        ns = _example(L)
        model = ns["GPT"](vocab, d=GPT["d"], heads=GPT["heads"], layers=GPT["layers"],
                          block=GPT["block"])
        ns["numpy_init"](model, 0)
        for (name, p), (want, a) in zip(model.named_parameters(), named, strict=True):
            assert name == want and np.array_equal(p.detach().numpy(), a), name
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        opt = L.optim.AdamW([{"params": decay, "weight_decay": GPT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}], **GPT_OPT)

        def loss_fn(logits, y):
            return F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
    xs = [L.from_numpy(x) for x in xs]
    ys = [L.from_numpy(y) for y in ys]

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = L.compile(step) if compiled else step
    k = [0]

    def call():
        i = k[0] % K
        k[0] += 1
        return fn(xs[i], ys[i])

    def state(loss):
        return [loss, *model.parameters()]
    return call, state


# ---- the hand-written jax step -----------------------------------------------------------
def adamw(jnp, p, m, v, g, t, lr, b1, b2, eps, wd):
    """torch.optim.AdamW's update (single-tensor formulas), t the new step count."""
    p = p * (1 - lr * wd)
    m = m + (g - m) * (1 - b1)  # exp_avg.lerp_(grad, 1 - beta1)
    v = v * b2 + (1 - b2) * g * g
    bc1 = 1 - b1 ** t
    bc2 = 1 - b2 ** t
    denom = (jnp.sqrt(v) / jnp.sqrt(bc2).astype(v.dtype)) + eps
    return p - (lr / bc1).astype(p.dtype) * m / denom, m, v


def jax_step_fn(model_name):
    import jax
    import jax.numpy as jnp

    def ce(logits, y):
        lp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(lp, y[:, None], 1).mean()

    if model_name == "mlp":
        params, xs, ys = mlp_data()

        def loss_fn(ps, x, y):
            h = x
            for i in range(0, len(ps), 2):
                h = h @ ps[i].T + ps[i + 1]
                if i < len(ps) - 2:
                    h = jax.nn.relu(h)
            return ce(h, y)
        hyper = [dict(lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=1e-2)] * len(params)
    elif model_name == "tiny":
        params, xs, ys = tiny_data()

        def loss_fn(ps, x, y):
            return ((x @ ps[0].T + ps[1] - y) ** 2).mean()
        hyper = None
    else:
        named, xs, ys, vocab = gpt_data()
        names = [n for n, _ in named]
        params = [a for _, a in named]
        d, heads = GPT["d"], GPT["heads"]
        hd = d // heads

        def ln(x, w, b):
            mu = x.mean(-1, keepdims=True)
            var = ((x - mu) ** 2).mean(-1, keepdims=True)
            return (x - mu) / jnp.sqrt(var + 1e-5) * w + b

        def lin(x, w, b=None):
            y = x @ w.T
            return y if b is None else y + b

        def loss_fn(ps, idx, y):
            P = dict(zip(names, ps))
            bsz, t = idx.shape
            x = P["tok.weight"][idx] + P["pos.weight"][jnp.arange(t)]
            mask = jnp.tril(jnp.ones((t, t), bool))
            for i in range(GPT["layers"]):
                b = f"blocks.{i}."
                qkv = lin(ln(x, P[b + "ln1.weight"], P[b + "ln1.bias"]),
                          P[b + "qkv.weight"], P[b + "qkv.bias"])
                q, k, v = (z.reshape(bsz, t, heads, hd).transpose(0, 2, 1, 3)
                           for z in jnp.split(qkv, 3, axis=2))
                att = (q @ k.transpose(0, 1, 3, 2)) / math.sqrt(hd)
                att = jax.nn.softmax(jnp.where(mask, att, -jnp.inf), -1)
                yv = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, t, d)
                x = x + lin(yv, P[b + "proj.weight"], P[b + "proj.bias"])
                h = ln(x, P[b + "ln2.weight"], P[b + "ln2.bias"])
                h = jax.nn.gelu(lin(h, P[b + "mlp.0.weight"], P[b + "mlp.0.bias"]),
                                approximate=False)
                x = x + lin(h, P[b + "mlp.2.weight"], P[b + "mlp.2.bias"])
            logits = lin(ln(x, P["ln.weight"], P["ln.bias"]), P["tok.weight"])
            return ce(logits.reshape(-1, vocab), y.reshape(-1))
        hyper = [dict(lr=GPT_OPT["lr"], b1=GPT_OPT["betas"][0], b2=GPT_OPT["betas"][1],
                      eps=GPT_OPT["eps"], wd=GPT_DECAY if a.ndim >= 2 else 0.0)
                 for a in params]

    if hyper is None:  # SGD
        def step(ps, x, y):
            loss, g = jax.value_and_grad(loss_fn)(ps, x, y)
            return loss, [p - 0.1 * gi for p, gi in zip(ps, g)]
        step = jax.jit(step, donate_argnums=(0,))
        state = [jnp.asarray(a) for a in params]
    else:
        def step(st, x, y):
            ps, ms, vs, t = st
            loss, g = jax.value_and_grad(loss_fn)(ps, x, y)
            t = t + 1
            new = [adamw(jnp, p, m, v, gi, t, **h)
                   for p, m, v, gi, h in zip(ps, ms, vs, g, hyper)]
            return loss, ([a for a, _, _ in new], [b for _, b, _ in new],
                          [c for _, _, c in new], t)
        step = jax.jit(step, donate_argnums=(0,))
        ps = [jnp.asarray(a) for a in params]
        state = (ps, [jnp.zeros_like(a) for a in ps], [jnp.zeros_like(a) for a in ps],
                 jnp.asarray(0.0, jnp.float64))  # torch's step count is a float
    xs = [jnp.asarray(x) for x in xs]
    ys = [jnp.asarray(y) for y in ys]
    jax.block_until_ready((state, xs, ys))
    box = [state]
    k = [0]

    def call():
        i = k[0] % K
        k[0] += 1
        loss, box[0] = step(box[0], xs[i], ys[i])
        return loss

    def params_of():
        return box[0] if hyper is None else box[0][0]
    return call, lambda loss: [loss, *params_of()]


# ---- the child: one variant of one model -------------------------------------------------
def _build(model_name, variant):
    lib = LIB[variant]
    if lib == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)  # as eagergrad does
        return jax_step_fn(model_name)
    L = __import__(lib)
    return torch_like(L, model_name, compiled=variant.endswith("compile")
                      or variant == "eagergrad compiled")


def _blocker(variant):
    if LIB[variant] == "torch":
        return lambda outs: None
    import jax
    if LIB[variant] == "jax":
        return jax.block_until_ready
    return lambda outs: jax.block_until_ready([t.jax() for t in outs])


def _value(v):
    return np.asarray(v.detach().numpy() if hasattr(v, "detach") else v, np.float64)


def _child(model_name, variant):
    proto = os.fdopen(os.dup(1), "w")  # the pipe to the parent; stray prints go to stderr
    os.dup2(2, 1)

    def send(obj):
        print(json.dumps(obj), file=proto, flush=True)

    lib = LIB[variant]
    steps = STEPS[model_name]
    info = {}
    try:
        call, state = _build(model_name, variant)
        block = _blocker(variant)
        if lib == "eagergrad":
            from eagergrad._dynamo import COUNTERS
            from eagergrad.engine import fused
            fused.BACKGROUND = False  # eager: fuse on the spot, not behind the timed steps
            counters = [dict(COUNTERS)]
        firsts, losses = [], []
        for _ in range(3):
            t0 = time.perf_counter()
            loss = call()
            block(state(loss))
            firsts.append(time.perf_counter() - t0)
            losses.append(_value(loss).item())
    except Exception as e:  # torch.compile: reported n/a
        if variant != "torch.compile":
            raise
        send({"na": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"})
        return
    send({"firsts": firsts, "losses": losses,
          "params3": np.concatenate([_value(v).ravel() for v in state(loss)[1:]]).tolist()})
    if lib == "eagergrad":
        counters.append(dict(COUNTERS))

    def run_round():
        t0 = time.perf_counter()
        for _ in range(steps):
            loss = call()
        block(state(loss))
        return time.perf_counter() - t0, loss

    if lib == "torch":
        import torch
        per = {1: [], 2: []}
        for r in range(WARM):
            n = 1 + r % 2
            torch.set_num_threads(n)
            per[n].append(run_round()[0] / steps)
        info["threads"] = min(per, key=lambda n: min(per[n]))
        info["per_thread"] = {n: min(v) for n, v in per.items()}
        torch.set_num_threads(info["threads"])
    else:
        for _ in range(WARM):
            run_round()
    if lib == "eagergrad":
        counters.append(dict(COUNTERS))
        seg = dict(fused.COUNTS)
    send(info)
    loss = None
    for line in sys.stdin:
        if line.strip() == "round":
            dt, loss = run_round()
            send({"t": dt / steps})
            continue
        out = {}
        if lib == "eagergrad":
            counters.append(dict(COUNTERS))
            out["counters"] = counters  # after: build, 3 first calls, warm-up, timed rounds
            out["segments"] = {k: fused.COUNTS[k] - seg.get(k, 0)
                               for k in ("segments_fused", "segments_node_by_node")}
        out["result"] = [_value(v).ravel().tolist() for v in state(loss)]
        send(out)
        return


# ---- the parent --------------------------------------------------------------------------
class _Child:
    def __init__(self, model_name, variant):
        self.variant = variant
        env = dict(os.environ, EAGERGRAD_COMPILATION_CACHE="0",
                   TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child",
                                   model_name, variant], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)

    def read(self, timeout=None):
        if timeout is not None:
            ready, _, _ = select.select([self.p.stdout], [], [], timeout)
            if not ready:
                raise TimeoutError
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"child {self.variant!r} failed (exit code {self.p.wait()})")
        return json.loads(line)

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.read()

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def run_model(model_name, rounds):
    children, na, hello = [], {}, {}
    try:
        for v in VARIANTS:  # one at a time: each compiles and warms up alone
            ch = _Child(model_name, v)
            try:
                msg = ch.read(timeout=TORCH_COMPILE_LIMIT if v == "torch.compile" else None)
            except TimeoutError:
                ch.p.kill()
                ch.p.wait()
                na[v] = f"first calls took more than {TORCH_COMPILE_LIMIT:.0f} s"
                continue
            if "na" in msg:
                ch.close()
                na[v] = msg["na"]
                continue
            msg.update(ch.read())
            hello[v] = msg
            children.append(ch)
        times = {ch.variant: [] for ch in children}
        for _ in range(rounds):
            for ch in children:
                time.sleep(0.02)  # let the previous child's spinning worker threads park
                times[ch.variant].append(ch.ask("round")["t"])
        done = {ch.variant: ch.ask("result") for ch in children}
    finally:
        for ch in children:
            ch.close()
    return times, hello, done, na


def _fmt_ratio(x):
    return "  -  " if x is None else f"{x:5.2f}x"


def report(model_name, rounds, times, hello, done, na):
    steps = STEPS[model_name]
    total = 3 + WARM * steps + rounds * steps
    med = {v: float(np.median(t)) for v, t in times.items()}
    best = {v: min(t) for v, t in times.items()}
    jx, te = med.get("jax.jit (hand-written)"), med.get("torch eager")
    ref, ref_losses = done[REF]["result"], hello[REF]["losses"]
    p0 = np.concatenate([a.ravel() for a in INIT[model_name]()]).astype(np.float64)
    p_ref = np.concatenate(ref[1:])
    moved = np.linalg.norm(p_ref - p0)
    print(f"\n{model_name}: {STEPS[model_name]} steps a round, {rounds} rounds; median "
          f"(min) per step; every variant ran {total} steps. check vs {REF}: the losses of "
          f"calls 1-3 (rtol {FIRST_TOL[0]:g}, atol {FIRST_TOL[1]:g}), the parameters after "
          f"them (d3 <= {FIRST_TOL[2]:g}) and at the end (d = |theta - theta_ref| / "
          f"|theta_ref - theta_0| <= {FINAL_TOL:g}) and "
          f"|loss - loss_ref| / loss_ref <= {FINAL_TOL:g}")
    print(f"  {'variant':24s} {'call 1':>9s} {'call 2':>8s} {'call 3':>8s} "
          f"{'step us (min)':>20s} {'vs jax':>7s} {'vs torch':>8s}  check")
    for v in VARIANTS:
        if v in na:
            print(f"  {v:24s} n/a: {na[v]}")
            continue
        f = hello[v]["firsts"]
        got = done[v]["result"]
        p = np.concatenate(got[1:])
        assert p.shape == p_ref.shape, (v, p.shape, p_ref.shape)
        d = np.linalg.norm(p - p_ref) / moved
        dl = abs(got[0][0] - ref[0][0]) / abs(ref[0][0])
        p3, p3_ref = np.asarray(hello[v]["params3"]), np.asarray(hello[REF]["params3"])
        d3 = np.linalg.norm(p3 - p3_ref) / np.linalg.norm(p3_ref - p0)
        first_ok = np.allclose(hello[v]["losses"], ref_losses, rtol=FIRST_TOL[0],
                               atol=FIRST_TOL[1]) and d3 <= FIRST_TOL[2]
        ok = first_ok and d <= FINAL_TOL and dl <= FINAL_TOL
        check = "ref" if v == REF else ("OK" if ok else "MISMATCH") + (
            f" (d3 {d3:.0e}, d {d:.0e}, loss {dl:.0e}, max|dp| "
            f"{np.max(np.abs(p - p_ref)):.0e}"
            f"{'' if first_ok else ', calls 1-3 differ'})")
        print(f"  {v:24s} {f[0] * 1e3:7.0f}ms {f[1] * 1e3:6.1f}ms {f[2] * 1e3:6.1f}ms "
              f"{med[v] * 1e6:10.1f} ({best[v] * 1e6:7.1f}) "
              f"{_fmt_ratio(med[v] / jx if jx else None):>7s} "
              f"{_fmt_ratio(med[v] / te if te else None):>8s}  {check}")
    for v in VARIANTS:
        if LIB[v] == "torch" and v in hello:
            per = hello[v]["per_thread"]
            print(f"  {v}: {hello[v]['threads']} thread(s) (warm-up best: 1 thread "
                  f"{per['1'] * 1e6:.0f} us, 2 threads {per['2'] * 1e6:.0f} us)")
        if LIB[v] == "eagergrad" and v in done:
            c = done[v]["counters"]
            names = ("after build", "after calls 1-3", "after warm-up", "after timed")
            print(f"  {v}: COUNTERS " + "; ".join(
                f"{n}: " + ",".join(f"{k}={x[k]}" for k in ("traced", "compiled", "replayed",
                                                             "discarded", "eager"))
                for n, x in zip(names, c)))
            timed = {k: c[3][k] - c[2][k] for k in c[3]}
            seg = done[v]["segments"]
            print(f"    timed steps: {timed['replayed']} replayed, {timed['traced']} traced, "
                  f"{timed['eager']} eager (of {rounds * steps}); backward segments fused "
                  f"{seg['segments_fused']}, node by node {seg['segments_node_by_node']}")
    return med


def checks(meds, hellos):
    eg, jx, te = "eagergrad compiled", "jax.jit (hand-written)", "torch eager"
    out = []

    def add(name, ok, detail):
        out.append(f"  {'PASS' if ok else 'FAIL'}  {name}: {detail}")

    for m in ("mlp", "gpt"):
        if m in meds:
            r = meds[m][eg] / meds[m][jx]
            add(f"{m}: compiled eagergrad <= 1.05x hand-written jax", r <= 1.05, f"{r:.3f}x")
    if "mlp" in meds:
        r = meds["mlp"][te] / meds["mlp"][eg]
        add("mlp batch 64: compiled eagergrad >= 3x faster than torch eager", r >= 3,
            f"{r:.2f}x faster")
    for m in meds:
        a = sum(hellos[m][eg]["firsts"][:2])
        b = hellos[m][jx]["firsts"][0]
        add(f"{m}: compile (eagergrad calls 1+2, both trace) <= 2x jax's first call",
            a <= 2 * b, f"{a * 1e3:.0f} ms vs {b * 1e3:.0f} ms = {a / b:.2f}x "
            f"(call 1 alone {hellos[m][eg]['firsts'][0] / b:.2f}x; with call 3, "
            f"{sum(hellos[m][eg]['firsts']) / sum(hellos[m][jx]['firsts']):.2f}x jax's 3)")
    if "tiny" in meds:
        d = (meds["tiny"][eg] - meds["tiny"][jx]) * 1e6
        add("tiny: compiled eagergrad overhead <= hand-written jax + 30 us", d <= 30,
            f"{meds['tiny'][eg] * 1e6:.1f} us vs {meds['tiny'][jx] * 1e6:.1f} us "
            f"(+{d:.1f} us)")
    return out


# ---- profile: where a replayed call's time goes ------------------------------------------
def profile(model_name, calls=200):
    import cProfile
    import pstats

    import jax

    import eagergrad
    from eagergrad._dynamo import COUNTERS
    call, state = torch_like(eagergrad, model_name, compiled=True)
    for _ in range(5):
        loss = call()
    jax.block_until_ready([t.jax() for t in state(loss)])
    before = dict(COUNTERS)
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    for _ in range(calls):
        loss = call()
    jax.block_until_ready([t.jax() for t in state(loss)])
    pr.disable()
    wall = time.perf_counter() - t0
    print(f"{model_name}: {calls} replayed calls (COUNTERS replayed "
          f"+{COUNTERS['replayed'] - before['replayed']}, traced "
          f"+{COUNTERS['traced'] - before['traced']}), {wall / calls * 1e6:.0f} us a call "
          f"under cProfile")
    st = pstats.Stats(pr)
    st.sort_stats("cumulative").print_stats(30)
    st.sort_stats("tottime").print_stats(20)


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2])
        return
    if argv[:1] == ["--profile"]:
        profile(argv[1])
        return
    models = ["mlp", "gpt", "tiny"]
    rounds = 11
    if "--models" in argv:
        models = argv[argv.index("--models") + 1].split(",")
    if "--rounds" in argv:
        rounds = int(argv[argv.index("--rounds") + 1])
    load0 = os.getloadavg()
    meds, hellos = {}, {}
    for m in models:
        times, hello, done, na = run_model(m, rounds)
        for v in ("eagergrad compiled", "jax.jit (hand-written)", "torch eager"):
            if v not in done:
                sys.exit(f"{m}: {v} did not run: {na.get(v)}")
        meds[m] = report(m, rounds, times, hello, done, na)
        hellos[m] = hello
    print("\nacceptance (compiled eagergrad, medians):")
    print("\n".join(checks(meds, hellos)))
    print(f"load average (1, 5, 15 min) at start {load0[0]:.2f} {load0[1]:.2f} "
          f"{load0[2]:.2f}, at end " + " ".join(f"{x:.2f}" for x in os.getloadavg()) +
          f"; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
