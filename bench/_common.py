"""Shared timing helpers for the benchmarks: best-of-N wall time per call, with the
candidates measured in interleaved rounds so that a slow spell of the machine (this
is often a shared VM) hits them all alike instead of whichever ran during it."""
import time


def _calibrate(fn, warmup):
    for _ in range(warmup):
        fn()
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    return max(1, int(0.1 / max(dt, 1e-7)))


def _timed(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def bench_all(fns, warmup=3, rounds=15):
    """Best time per call of each function in `fns`, measured round-robin."""
    numbers = [_calibrate(fn, warmup) for fn in fns]
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, (fn, number) in enumerate(zip(fns, numbers)):
            time.sleep(0.02)  # let the previous candidate's spinning worker threads park
            best[k] = min(best[k], _timed(fn, number))
    return best


def bench(fn, warmup=3, rounds=15):
    """Best time per call of `fn`."""
    return bench_all([fn], warmup, rounds)[0]


def report(title, rows, base="torch eager"):
    print(title)
    ref = dict(rows)[base]
    for name, t in rows:
        print(f"  {name:28s} {t * 1e6:10.1f} us   {t / ref:6.2f}x {base}")
