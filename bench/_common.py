"""Shared timing helper for the benchmarks: best-of-N wall time per call."""
import time


def bench(fn, warmup=3, repeat=7, number=None):
    for _ in range(warmup):
        fn()
    if number is None:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        number = max(1, int(0.2 / max(dt, 1e-7)))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def report(title, rows, base="torch eager"):
    print(title)
    ref = dict(rows)[base]
    for name, t in rows:
        print(f"  {name:28s} {t * 1e6:10.1f} us   {t / ref:6.2f}x {base}")
