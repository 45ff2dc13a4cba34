"""`python -m eagergrad run [--nproc-per-node N] script.py [args]`: run an unchanged
PyTorch script with `torch` and every `torch.*` submodule resolved to eagergrad's (real
torch is never loaded; with N, in N processes as torchrun), and `python -m eagergrad
coverage`: how much of torch's public surface exists.

An import-system finder answers for `torch` and `torch.<sub>`: it hands out
`eagergrad.<sub>`, and a submodule eagergrad lacks raises NotImplementedError naming
`torch.<sub>`. A NotImplementedError that stops the script is reported with the script's
own file and line.
"""
import importlib
import importlib.abc
import importlib.util
import os
import re
import runpy
import sys
import traceback

from ._torch_names import missing


class _Alias(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass  # the eagergrad module is already executed


# functorch: the legacy name of torch.func, still imported by tutorials
_ROOTS = {"torch": "eagergrad", "functorch": "eagergrad.func"}


class TorchFinder(importlib.abc.MetaPathFinder):
    """Resolves `torch` and `torch.*` to `eagergrad` and `eagergrad.*` (and `functorch` to
    `eagergrad.func`)."""

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.split(".", 1)[0]
        if root not in _ROOTS:
            return None
        target = _ROOTS[root] + fullname[len(root):]
        try:
            found = importlib.util.find_spec(target)
        except ModuleNotFoundError:
            found = None
        if found is None:
            parent = importlib.import_module(target.rsplit(".", 1)[0])
            attr = target.rsplit(".", 1)[1]
            if isinstance(parent.__dict__.get(attr), type(sys)):  # a module attribute
                sys.modules[target] = parent.__dict__[attr]
            else:
                raise missing(fullname)
        return importlib.util.spec_from_loader(fullname, _Alias(target),
                                               is_package=fullname.count(".") < 3)


def install():
    """Put the finder first on sys.meta_path (forgetting any torch already imported)."""
    for name in [n for n in sys.modules if n.split(".", 1)[0] in _ROOTS]:
        del sys.modules[name]
    if not any(isinstance(f, TorchFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchFinder())


def run(argv):
    """Run script argv[0] with argv as its sys.argv, as `python script.py` would; after
    torchrun's options (`--nproc-per-node N`...), in N processes as torchrun would."""
    from .distributed import run as torchrun
    opts, argv = torchrun.parse(argv)
    if not argv:
        print("usage: python -m eagergrad run [--nproc-per-node N] script.py [args]",
              file=sys.stderr)
        return 2
    if opts:
        return torchrun.launch(opts, argv)
    script = os.path.abspath(argv[0])
    if not os.path.isfile(script):
        print(f"python -m eagergrad run: can't open file {argv[0]!r}", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except NotImplementedError as e:
        return _report(e, e, script)
    except ImportError as e:  # `from torch.x import Name`: Python turns our error into this
        lacking = _lacking_import(e)
        if lacking is None:
            raise
        return _report(lacking, e, script)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


def _report(error, raised, script):
    """Print the error at the script's innermost line in the traceback of `raised`."""
    frames = [f for f in traceback.extract_tb(raised.__traceback__)
              if os.path.abspath(f.filename) == script]
    where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    line = f"\n    {frames[-1].line}" if frames and frames[-1].line else ""
    print(f"{where}NotImplementedError: {error}{line}", file=sys.stderr)
    return 1


def _lacking_import(e):
    """For "cannot import name 'X' from 'eagergrad.sub'", the NotImplementedError of a
    torch name eagergrad lacks; None for a name torch does not have either."""
    m = re.match(r"cannot import name '(\w+)' from '(eagergrad[\w.]*)'", str(e))
    module = sys.modules.get(m.group(2)) if m else None
    if module is None:
        return None
    try:
        getattr(module, m.group(1))
    except NotImplementedError as err:
        return err
    except AttributeError:
        return None
    return None


def coverage(argv):
    """Print, per torch namespace, how many of torch 2.13's public names eagergrad has,
    and (with --missing) which ones it lacks."""
    import eagergrad
    from . import _torch_names as N
    spaces = [("torch", eagergrad, N.TORCH_NAMES),
              ("torch.Tensor", eagergrad.zeros(1), N.TENSOR_ATTRIBUTES),
              ("torch.nn", eagergrad.nn, N.NN_NAMES),
              ("torch.nn.functional", eagergrad.nn.functional, N.NN_FUNCTIONAL_NAMES),
              ("torch.nn.init", eagergrad.nn.init, N.NN_INIT_NAMES),
              ("torch.optim", eagergrad.optim, N.OPTIM_NAMES),
              ("torch.autograd", eagergrad.autograd, N.AUTOGRAD_NAMES)]
    show = "--missing" in argv
    for name, ns, names in spaces:
        have = sorted(n for n in names if _has(ns, n))
        lack = sorted(set(names) - set(have))
        print(f"{name:22s} {len(have):5d} of {len(names):5d} public names "
              f"({100 * len(have) / len(names):.0f}%)")
        if show:
            print("  missing: " + ", ".join(lack))
    return 0


def _has(ns, name):
    try:
        getattr(ns, name)
    except (AttributeError, NotImplementedError):
        return False
    except Exception:  # noqa: BLE001 - exists, but not for this example tensor
        return True
    return True
