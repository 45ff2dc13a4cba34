"""Status of every op_db entry in eagergrad: `python tests/scripts/opinfo_report.py [out.tsv]
[--part i/n] [-k substring,...]`. One line per (entry, dtype), and per entry with error inputs
one for them ("errors"): pass, fail (first error), skip or missing, with the time taken.
`tests/scripts/opinfo_status.py` turns these lines into tests/_opinfo_status.py. The
samples are test_opinfo.py's (EAGERGRAD_OPINFO_SAMPLES=all: every sample, hours)."""
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("EAGERGRAD_COMPILATION_CACHE", "0")
os.environ.setdefault("EAGERGRAD_OPINFO_DTYPES", "all")
import conftest  # noqa: F401  (the harness's settings)
import pytest
import test_opinfo as T


def _alarm(*_):
    raise TimeoutError("over 120 s")


def _run(test, *args):
    """(status, first error) of one test call, bounded at 120 s."""
    signal.alarm(120)
    try:
        test(*args)
        return "pass", ""
    except pytest.skip.Exception as e:
        return "skip", str(e)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        tb = traceback.extract_tb(e.__traceback__)[-1]
        first = (str(e).strip().splitlines() or [""])[0][:200]
        where = f"{os.path.basename(tb.filename)}:{tb.lineno}"
        why = f"{type(e).__name__}: {first} @ {where}"
        missing = "has no attribute" in why or "Missing" in why or "NotImplementedError" in why
        return ("missing" if missing else "fail"), why
    finally:
        signal.alarm(0)


def main():
    args = sys.argv[1:]
    out = args[0] if args and not args[0].startswith("-") else "/dev/stdout"
    part, n = (0, 1)
    if "--part" in args:
        part, n = map(int, args[args.index("--part") + 1].split("/"))
    subs = args[args.index("-k") + 1].split(",") if "-k" in args else [""]
    signal.signal(signal.SIGALRM, _alarm)
    with open(out, "w") as f:
        for i, (eid, op) in enumerate(T.ENTRIES.items()):
            if i % n != part or not any(sub in eid for sub in subs):
                continue
            ours = T._ours(eid)
            runs = [(str(dt).split(".")[1], T.test_op, (eid, dt)) for dt in T._dtypes(op)]
            if op.error_inputs_func is not None:
                runs.append(("errors", T.test_op_errors, (eid,)))
            for d, test, targs in runs:
                if isinstance(ours, Exception):
                    f.write(f"{eid}\t{d}\tmissing\t{ours}\n")
                    continue
                t0 = time.time()
                status, why = _run(test, *targs)
                f.write(f"{eid}\t{d}\t{status}\t{why}\t{time.time() - t0:.1f}s\n")
                f.flush()


if __name__ == "__main__":
    main()
