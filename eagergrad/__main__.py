"""Command line: `python -m eagergrad demo`."""
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m eagergrad demo")
        return 0 if argv else 2
    if argv[0] == "demo":
        from .demo import main as demo
        return demo(argv[1:])
    print(f"unknown command {argv[0]!r}; usage: python -m eagergrad demo", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
