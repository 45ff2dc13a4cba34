"""Time to result: how long ordinary PyTorch programs take from `python` to their last
line, under real torch and under eagergrad, compile time included.

Each program in bench/programs/ (plain torch scripts, weights and data from numpy so both
libraries see the same numbers, each ending with a line "result <numbers>") runs as a
whole process, timed from the parent, so the figures include the interpreter's start,
the import of the library and, for eagergrad, every XLA compile:

  torch        `import torch` with OMP_NUM_THREADS=n and torch.set_num_threads(n), for
               n = 1 and 2; the faster is reported
  eagergrad 1  `torch` resolved to eagergrad (eagergrad.runner, as `python -m eagergrad
               run`) with an EMPTY persistent compilation cache: a fresh directory per
               program in EAGERGRAD_COMPILATION_CACHE
  eagergrad 2  the same, again, with the cache the first run filled

Each eagergrad process reports at exit (stderr): the compile events (eagergrad's
`_cache.EXECUTABLES.compiles`, jax's backend-compile event, which fires on a persistent
cache hit too), the cache hits (jax's /jax/compilation_cache/cache_hits), and the seconds
jax spent tracing, lowering and in the backend (compiling, or loading from the cache).
Every eagergrad run must print torch's result line (rtol 1e-4, atol 1e-6: the programs
print float32 values; atol covers those that are ~0).

    python bench/time_to_result.py [--repeats N] [--only NAME ...] [--cache-root DIR]

--repeats N runs each configuration N times and keeps the fastest (each first run with a
fresh cache). The machine's load shows in single runs: compare the ratios, not seconds.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = sorted(glob.glob(os.path.join(HERE, "programs", "*.py")))
RTOL, ATOL = 1e-4, 1e-6

# argv: lib script. torch: the thread count from OMP_NUM_THREADS. eagergrad: the runner
# (torch and torch.* resolved to eagergrad), and the counts printed at exit
SHIM = r"""
import atexit, json, os, sys
lib, script = sys.argv[1], sys.argv[2]
if lib == "torch":
    import runpy
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")
    sys.exit(0)
from jax import monitoring
stats = {"hits": 0, "trace_s": 0.0, "lower_s": 0.0, "backend_s": 0.0}
DUR = {"/jax/core/compile/jaxpr_trace_duration": "trace_s",
       "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
       "/jax/core/compile/backend_compile_duration": "backend_s"}
def on_event(event, **kw):
    if event == "/jax/compilation_cache/cache_hits":
        stats["hits"] += 1
def on_duration(event, secs, **kw):
    if event in DUR:
        stats[DUR[event]] += secs
monitoring.register_event_listener(on_event)
monitoring.register_event_duration_secs_listener(on_duration)
from eagergrad import _cache, _compile_cache, runner
def done():
    stats.update(compiles=_cache.EXECUTABLES.compiles, cache=_compile_cache.current())
    print("EAGERGRAD_STATS " + json.dumps(stats), file=sys.stderr, flush=True)
atexit.register(done)
sys.exit(runner.run([script]))
"""

_CLEARED = ("EAGERGRAD_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR", "OMP_NUM_THREADS",
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES")


def run(lib, script, **env):
    """One whole process: (wall seconds, the numbers of its result line, eagergrad's
    stats or None)."""
    e = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    e.update({k: str(v) for k, v in env.items()})
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SHIM, lib, script], capture_output=True,
                         text=True, env=e, timeout=3600)
    wall = time.perf_counter() - t0
    name = os.path.basename(script)
    if out.returncode:
        raise RuntimeError(f"{name} under {lib} exited with {out.returncode}:\n"
                           f"{out.stderr[-3000:]}")
    results = [ln for ln in out.stdout.splitlines() if ln.startswith("result ")]
    if not results:
        raise RuntimeError(f"{name} under {lib} printed no result line:\n{out.stdout[-2000:]}")
    stats = [ln for ln in out.stderr.splitlines() if ln.startswith("EAGERGRAD_STATS ")]
    return (wall, [float(v) for v in results[-1].split()[1:]],
            json.loads(stats[-1].split(" ", 1)[1]) if stats else None)


def check(name, label, got, want):
    if len(got) != len(want) or not np.allclose(got, want, rtol=RTOL, atol=ATOL):
        raise AssertionError(f"{name}: {label} printed result {got}, torch {want}")


def measure(script, repeats, cache_root):
    name = os.path.splitext(os.path.basename(script))[0]
    row = {"program": name}
    torch_best = {}
    for _ in range(repeats):
        for n in (1, 2):
            wall, want, _ = run("torch", script, OMP_NUM_THREADS=n)
            torch_best[n] = min(torch_best.get(n, float("inf")), wall)
    row["threads"] = min(torch_best, key=torch_best.get)
    row["torch"] = torch_best[row["threads"]]
    row["torch_per_thread"] = torch_best
    for _ in range(repeats):
        cache = os.path.join(cache_root, name)
        shutil.rmtree(cache, ignore_errors=True)
        os.makedirs(cache)
        wall, got, stats = run("eagergrad", script, EAGERGRAD_COMPILATION_CACHE=cache)
        check(name, "eagergrad (first run)", got, want)
        assert stats["cache"] and stats["cache"].startswith(cache), stats
        if wall < row.get("first", float("inf")):
            row["first"], row["first_stats"] = wall, stats
        wall, got, stats = run("eagergrad", script, EAGERGRAD_COMPILATION_CACHE=cache)
        check(name, "eagergrad (second run)", got, want)
        if wall < row.get("second", float("inf")):
            row["second"], row["second_stats"] = wall, stats
        row["entries"] = sum(len(fs) for _, _, fs in os.walk(cache))
    return row


def table(rows):
    head = (f"{'program':16s} {'torch s':>10s} {'eagergrad 1st s':>17s} "
            f"{'eagergrad 2nd s':>17s} {'1st: compiles (hits)':>21s} "
            f"{'trace+lower s':>14s} {'XLA s':>7s} {'2nd: compiles (hits)':>21s} "
            f"{'trace+lower s':>14s} {'XLA s':>6s}")
    lines = [head, "-" * len(head)]
    for r in rows:
        f, s = r["first_stats"], r["second_stats"]
        lines.append(
            f"{r['program']:16s} {r['torch']:6.2f} ({r['threads']}t) "
            f"{r['first']:8.2f} ({r['first'] / r['torch']:5.1f}x) "
            f"{r['second']:8.2f} ({r['second'] / r['torch']:5.1f}x) "
            f"{f['compiles']:14d} ({f['hits']:4d}) "
            f"{f['trace_s'] + f['lower_s']:14.2f} {f['backend_s']:7.2f} "
            f"{s['compiles']:14d} ({s['hits']:4d}) "
            f"{s['trace_s'] + s['lower_s']:14.2f} {s['backend_s']:6.2f}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="program names (without .py)")
    ap.add_argument("--cache-root", help="where the per-program caches go (default: a "
                    "temporary directory, removed at the end)")
    args = ap.parse_args()
    scripts = [p for p in PROGRAMS if not args.only
               or os.path.splitext(os.path.basename(p))[0] in args.only]
    root = args.cache_root or tempfile.mkdtemp(prefix="eagergrad-ttr-")
    rows = []
    try:
        for script in scripts:
            rows.append(measure(script, args.repeats, root))
            print(f"  {rows[-1]['program']}: done", file=sys.stderr, flush=True)
    finally:
        if not args.cache_root:
            shutil.rmtree(root, ignore_errors=True)
    print(f"time to result: whole processes (interpreter start, import, compiles), "
          f"best of {args.repeats}; ratios to torch")
    print(table(rows))
    per = ", ".join(f"{r['program']} {r['torch_per_thread'][1]:.2f}/"
                    f"{r['torch_per_thread'][2]:.2f} s" for r in rows)
    print(f"  torch: the faster of 1 and 2 threads (1/2 threads: {per})")
    print("  compiles: jax backend-compile events (EXECUTABLES.compiles), a persistent "
          "cache hit included; hits: loaded from the cache; trace+lower s and XLA s: jax's "
          "time tracing and lowering to HLO (before the cache is looked up), and in the "
          "backend (compiling, or loading from the cache), summed over threads (the fused "
          "backward compiles in a background thread)")
    print(f"  every eagergrad run printed torch's result line (rtol {RTOL:g}, atol {ATOL:g})")


if __name__ == "__main__":
    main()
