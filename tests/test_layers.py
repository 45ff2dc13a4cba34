"""The package's layers (docs/design.md §2): every import, module-level or inside a function,
goes down this order (inside func/ and nn/ too: SUBLAYERS), and no import circle exists
anywhere in the package."""
import ast
import pathlib

import eagergrad

ROOT = pathlib.Path(eagergrad.__file__).parent

# lowest first; a module may import modules of its own layer or below, never above
LAYERS = [
    ["_dtypes", "_storage", "_mode", "_errors", "_cache", "_compile_cache", "_torch_names",
     "_shapes", "_layouts", "size", "device", "_repr", "cuda", "cpu", "backends",
     "accelerator", "_settings", "version", "torch_version", "futures", "mps", "xpu",
     "mtia", "_streams", "_utils"],
    ["tensor", "overrides"],
    ["engine"],
    ["ops", "creation", "_sym"],
    ["linalg", "fft", "special", "signal", "nn", "optim", "utils", "serialization", "amp",
     "spectral", "random", "return_types", "_lowrank", "_lobpcg", "storage", "distributed"],
    ["autograd", "distributions", "func", "testing", "viz", "interop", "demo", "runner",
     "__main__", "onnx", "_tensor_methods", "functional", "__init__", "jit", "compiler",
     "multiprocessing", "_control_flow", "library", "hub", "profiler", "_dynamo"],
]


def _module(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(["eagergrad"] + parts)


def _imports(path):
    mod = _module(path)
    if path.name == "__init__.py":
        mod = mod[: -len(".__init__")]
    return mod, _imports_of(path.read_text(), mod, path.name == "__init__.py")


def _imports_of(text, mod, is_pkg):
    """Every eagergrad module the source `text` of module `mod` imports, anywhere in it."""
    pkg = mod if is_pkg else mod.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("eagergrad"):
                continue
            if node.module is None or target in _PACKAGES:  # `from . import x`
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    out.add(sub if sub in _MODULES else target)
            else:
                out.add(target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("eagergrad"))
    out.discard(mod)
    return out


_FILES = sorted(ROOT.rglob("*.py"))
_MODULES = {_module(p)[: -len(".__init__")] if p.name == "__init__.py" else _module(p)
            for p in _FILES}
_PACKAGES = {_module(p)[: -len(".__init__")] for p in _FILES if p.name == "__init__.py"}


def _layer(mod):
    first = mod.split(".")[1] if "." in mod else "__init__"
    for rank, names in enumerate(LAYERS):
        if first in names:
            return rank
    raise AssertionError(f"{mod} is in no layer: add it to LAYERS in {__file__}")


def _graph():
    return dict(_imports(p) for p in _FILES)


def test_every_import_goes_down_the_layers():
    bad = []
    for mod, targets in _graph().items():
        for t in targets:
            if t in _PACKAGES and t != "eagergrad" and t.count(".") == 1 and \
                    mod.startswith(t + "."):
                continue  # a package's module importing its package's __init__: see cycles
            if _layer(t) > _layer(mod):
                bad.append(f"{mod} imports {t}")
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


# inside a package, lowest first: its modules import down this order too
SUBLAYERS = {
    # torch.func: pytrees and tracing; the traced-program machinery; levels and the jax side
    # of each transform; autograd over a transform; deferred transforms; the transforms
    "eagergrad.func": [["_pytree", "_trace"], ["_program"], ["_levels", "_jax_transforms"],
                       ["_autograd"], ["_deferred"],
                       ["_eager_transforms", "_vmap", "_functional_call"], ["__init__"]],
    # torch.nn: the functional code never imports a module class (as torch's F)
    "eagergrad.nn": [["_functional", "grad", "functional", "init", "parameter"],
                     ["modules", "utils", "parallel", "__init__"]],
}


def _sublayer(pkg, mod):
    if mod == pkg:
        first = "__init__"
    elif mod.startswith(pkg + "."):
        first = mod[len(pkg) + 1:].split(".")[0]
    else:
        return None
    for rank, names in enumerate(SUBLAYERS[pkg]):
        if first in names:
            return rank
    raise AssertionError(f"{mod} is in no sublayer of {pkg}: add it to SUBLAYERS")


def test_imports_inside_func_and_nn_go_down_their_order():
    bad = []
    for mod, targets in _graph().items():
        for pkg in SUBLAYERS:
            r = _sublayer(pkg, mod)
            if r is None:
                continue
            for t in targets:
                rt = _sublayer(pkg, t)
                if rt is not None and rt > r:
                    bad.append(f"{mod} imports {t}")
    assert not bad, "imports against the order inside a package:\n" + "\n".join(sorted(bad))


def test_no_import_circle():
    graph = _graph()
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import circles:\n" + "\n".join(cycles)


def test_the_checker_sees_every_kind_of_import():
    src = ("from ..ops import views\n"
           "def f():\n    from .graph import Node\n    from . import saved\n"
           "    import eagergrad.autograd\n")
    assert _imports_of(src, "eagergrad.engine.engine", False) == {
        "eagergrad.ops.views", "eagergrad.engine.graph", "eagergrad.engine.saved",
        "eagergrad.autograd"}
