"""Command line: `python -m eagergrad demo | run [--nproc-per-node N] script.py [args] |
coverage [--missing]`."""
import sys

USAGE = ("usage: python -m eagergrad demo | run [--nproc-per-node N] script.py [args] | "
         "coverage [--missing]")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    if argv[0] == "demo":
        from .demo import main as demo
        return demo(argv[1:])
    if argv[0] == "run":
        from .runner import run
        return run(argv[1:])
    if argv[0] == "coverage":
        from .runner import coverage
        return coverage(argv[1:])
    print(f"unknown command {argv[0]!r}; {USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
