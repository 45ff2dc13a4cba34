"""The printer of the scripts that run under torch and under eagergrad and print
`label | value` lines for tests/test_distributed.py to compare."""
import re


def show(label, f):
    """Print `label | f()` (or `label | Type: message` of what it raised) on one line,
    object addresses removed."""
    try:
        out = f()
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        out = f"{type(e).__name__}: {e}"
    print(label, "|", re.sub(r" at 0x[0-9a-f]+", "", str(out)).replace("\n", "\\n"),
          flush=True)


def devices(n):
    """XLA_FLAGS for jax's CPU platform as `n` devices (set before jax starts). A
    collective waits for every device's thread, and XLA aborts the process when one is
    40 s late: on a loaded 2-core machine (the suite's other worker) a thread can be
    starved that long, so the scripts allow 10 minutes."""
    return (f"--xla_force_host_platform_device_count={n} "
            "--xla_cpu_collective_call_terminate_timeout_seconds=600")
