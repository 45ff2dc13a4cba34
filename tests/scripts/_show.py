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
