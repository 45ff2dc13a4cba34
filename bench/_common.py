"""Shared benchmark driver: each candidate in its own process, interleaved rounds, and the
result of the timed steps checked against torch's.

A script lists its candidates and calls `measure`. The parent (`python bench/X.py`) starts
one child per candidate (`python bench/X.py --child LABEL`), one at a time, each warming
up alone; then, round after round, it tells each child in turn over stdin to run one round
of STEPS steps and reads back the time. Children wait blocked on stdin in between, so only
one library computes at a time (on 2 cores torch's OpenMP threads and XLA's pool slow each
other in one process), and a slow spell of the machine hits all candidates alike. The best
(minimum) time per step over the rounds is reported.

A candidate's `make(L)` gets its library's module (torch, eagergrad, or jax with
jax_enable_x64 on, as eagergrad turns it on) and builds fresh state from the script's
initial data; it returns `step`, and step() runs one step and returns what it produced
(the gradients, the new parameters, ...). eagergrad's and jax's steps are waited for
(block_until_ready) after each step, as torch's are synchronous. Warm-up runs on a state
of its own: the timed rounds start from a fresh one, so every candidate runs exactly
rounds x STEPS steps from the same initial data and the last step's return value, sent
back as JSON, must match torch's.

Warm-up per library: torch times set_num_threads(1) and (2) and keeps the faster;
eagergrad steps until its backward runs fused (the segments are compiled in a background
thread, fused.BACKGROUND) and then asserts that the timed steps ran fused segments and
nothing node by node; jax.jit compiles."""
import json
import os
import subprocess
import sys
import time
from typing import Callable, NamedTuple, Optional

import numpy as np


class Candidate(NamedTuple):
    label: str
    lib: str                   # "torch", "eagergrad" or "jax"
    make: Callable             # make(L) -> step, on fresh state
    ref: Optional[str] = None  # the torch candidate to match (default: the first torch one)
    fused: bool = True         # eagergrad: the backward has segments to fuse
    unfused_why: str = "a hook on every node: nothing to fuse"  # (fused=False: why not)


# ---- the child: one candidate, one process -------------------------------------------------
def _import(lib):
    if lib == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        return jax
    return __import__(lib)


def _waiter(lib):
    """What waits for a step's outputs: nothing for torch (synchronous)."""
    if lib == "torch":
        return None
    import jax
    if lib == "eagergrad":
        return lambda out: jax.block_until_ready([t.jax() for t in out if hasattr(t, "jax")])
    return jax.block_until_ready


def _rounds(step, wait, steps):
    t0 = time.perf_counter()
    for _ in range(steps):
        out = step()
        if wait is not None:
            wait(out)
    return time.perf_counter() - t0, out


def _fused_counts():
    from eagergrad.engine import fused
    return fused.COUNTS["segments_fused"], fused.COUNTS["segments_node_by_node"]


def _child(c, steps):
    proto = os.fdopen(os.dup(1), "w")  # the pipe to the parent; stray prints go to stderr
    os.dup2(2, 1)
    L = _import(c.lib)
    wait = _waiter(c.lib)
    info = {}
    t0 = time.perf_counter()
    step = c.make(L)
    _rounds(step, wait, 1)
    info["cold"] = time.perf_counter() - t0
    if c.lib == "torch":
        per = {1: float("inf"), 2: float("inf")}
        for _ in range(3):
            for n in per:
                L.set_num_threads(n)
                per[n] = min(per[n], _rounds(step, wait, steps)[0] / steps)
        info["threads"] = min(per, key=per.get)
        info["per_thread"] = per
        L.set_num_threads(info["threads"])
    if c.lib == "eagergrad" and c.fused:
        deadline = time.monotonic() + 120
        while True:  # until a whole step runs fused (its segments seen twice and compiled)
            before = _fused_counts()
            _rounds(step, wait, 1)
            fused, node_by_node = (a - b for a, b in zip(_fused_counts(), before))
            if fused and not node_by_node:
                break
            if time.monotonic() > deadline:
                sys.exit(f"{c.label}: backward still not fused after 120 s of warm-up "
                         f"(last step: {fused} segments fused, {node_by_node} node by node)")
            time.sleep(0.01)
    _rounds(step, wait, steps)  # a warm round

    step = c.make(L)  # the timed steps start from the initial data
    counts = _fused_counts() if c.lib == "eagergrad" else None
    print(json.dumps(info), file=proto, flush=True)
    out = None
    for line in sys.stdin:
        if line.strip() == "round":
            dt, out = _rounds(step, wait, steps)
            print(json.dumps({"t": dt / steps}), file=proto, flush=True)
            continue
        if counts is not None:
            fused, node_by_node = (a - b for a, b in zip(_fused_counts(), counts))
            info = {"fused": fused, "node_by_node": node_by_node}
            if c.fused:
                assert fused > 0 and node_by_node == 0, (
                    f"{c.label}: timed steps ran {fused} segments fused and {node_by_node} "
                    f"node by node (wanted all fused)")
            else:
                assert fused == node_by_node == 0, (
                    f"{c.label}: expected no segments, ran {fused} fused, {node_by_node} "
                    f"node by node")
        result = [np.asarray(v.numpy(force=True) if hasattr(v, "numpy") else v).tolist()
                  for v in out]
        print(json.dumps({"result": result, "info": info}), file=proto, flush=True)
        return


# ---- the parent --------------------------------------------------------------------------
class _Child:
    def __init__(self, c):
        self.c = c
        self.p = subprocess.Popen([sys.executable, sys.argv[0], "--child", c.label],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"child {self.c.label!r} failed (exit code {self.p.wait()})")
        return json.loads(line)

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.read()


def measure(candidates, steps, rounds=15, rtol=1e-4, atol=1e-5,
            result="the last step's outputs"):
    """Best time per step of each candidate (label -> seconds) and the lines saying what
    was checked. `steps` per round, the same for every candidate. In a child process
    (--child LABEL) this serves that candidate and exits instead."""
    if "--child" in sys.argv:
        label = sys.argv[sys.argv.index("--child") + 1]
        _child(next(c for c in candidates if c.label == label), steps)
        sys.exit(0)
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
    children = []
    try:
        for c in candidates:  # one at a time: each warms up (compiles) alone
            children.append(_Child(c))
            children[-1].hello = children[-1].read()
        best = {c.label: float("inf") for c in candidates}
        for _ in range(rounds):
            for ch in children:
                time.sleep(0.02)  # let the previous candidate's spinning worker threads park
                best[ch.c.label] = min(best[ch.c.label], ch.ask("round")["t"])
        done = {ch.c.label: ch.ask("result") for ch in children}
    finally:
        for ch in children:
            ch.p.stdin.close()
            try:
                ch.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                ch.p.kill()
                ch.p.wait()
    for ch in children:
        if ch.p.returncode:
            raise RuntimeError(f"child {ch.c.label!r} exited with {ch.p.returncode}")

    notes, checked = [], []
    first_torch = next(c.label for c in candidates if c.lib == "torch")
    for ch in children:
        c, hello, info = ch.c, ch.hello, done[ch.c.label]["info"]
        if c.lib == "torch":
            per = {int(n): t for n, t in hello["per_thread"].items()}
            notes.append(f"{c.label}: {hello['threads']} thread(s), the faster in warm-up "
                         f"({per[1] * 1e6:.1f} us/step with 1, {per[2] * 1e6:.1f} with 2)")
            continue
        if c.lib == "eagergrad":
            notes.append(f"{c.label}: timed steps ran {info['fused']} fused backward segments"
                         f", {info['node_by_node']} node by node" +
                         ("" if c.fused else f" ({c.unfused_why})"))
        ref = c.ref or first_torch
        got, want = done[c.label]["result"], done[ref]["result"]
        assert len(got) == len(want), (c.label, len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=rtol, atol=atol,
                                       err_msg=f"{c.label} vs {ref}, output {k}")
        checked.append(c.label)
    notes.append(f"results of all timed steps matched torch's: {result} after {rounds} "
                 f"rounds x {steps} steps (rtol {rtol:g}, atol {atol:g}): " + ", ".join(checked))
    notes.append("cold first step (compiles included): " + ", ".join(
        f"{ch.c.label} {ch.hello['cold'] * 1e3:.0f} ms" for ch in children))
    return best, "\n".join("  " + n for n in notes)


def report(title, rows, base="torch eager"):
    print(title)
    ref = dict(rows)[base]
    for name, t in rows:
        print(f"  {name:28s} {t * 1e6:10.1f} us   {t / ref:6.2f}x {base}")
