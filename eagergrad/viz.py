"""Pictures of the backward graph, as torchviz draws them: `make_dot(tensor)`.

The graph is written as Graphviz DOT text by this module (no dependency). With the optional
`graphviz` Python package (`pip install -e '.[viz]'`) and its `dot` binary, the result
renders inline in Jupyter as SVG; without them it shows its DOT text and a one-line hint.
"""
import shutil

from .tensor import Tensor

_HINT = ("(install the graphviz package and binary to render this: pip install graphviz; "
         "apt-get install graphviz)")


class Dot:
    """A DOT graph: `.source` is its text; `_repr_svg_` renders it when graphviz is there."""

    def __init__(self, source):
        self.source = source

    def __str__(self):
        return self.source

    def __repr__(self):
        return self.source if _renderer() is not None else self.source + "\n" + _HINT

    def _repr_svg_(self):
        r = _renderer()
        return None if r is None else r(self.source).pipe(format="svg").decode()

    def render(self, filename, format="png"):
        """Write the picture to filename.<format> (needs graphviz); returns the path."""
        r = _renderer()
        if r is None:
            raise RuntimeError("make_dot: rendering needs graphviz " + _HINT)
        return r(self.source).render(filename, format=format, cleanup=True)


def _renderer():
    try:
        import graphviz
    except ImportError:
        return None
    return graphviz.Source if shutil.which("dot") else None


def _size(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _unusable(raw):
    """What a saved tensor that cannot be unpacked is: freed, or modified in place."""
    if raw is None or getattr(raw, "_freed", True):
        return "(freed)"
    shape = raw._meta[0]
    return (f"{_size(shape)} v{raw._version}, now v{raw._version_counter.version}: "
            f"modified in place")


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    """The backward graph of `var` (a tensor or a tuple of them) as a Dot: one box per
    node (its name; with show_saved its saved tensors' shapes and versions, with
    show_attrs its other saved attributes), AccumulateGrad leaves named by `params`
    ({name: tensor}) and shaped, the output tensors in olive, as torchviz does.

    >>> import eagergrad as torch
    >>> w = torch.ones(3, requires_grad=True)
    >>> print(make_dot((w * 2).sum(), params={"w": w}).source.count("Backward0"))
    2
    """
    names = {id(t): n for n, t in (params or {}).items()}
    lines = ["digraph {", '\tgraph [size="12,12"]',
             '\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 '
             'shape=box style=filled]']
    seen = set()
    outputs = var if isinstance(var, (tuple, list)) else (var,)

    def node_id(obj):
        return str(id(obj))

    def label(fn):
        name = fn.name()
        rows = [name]
        if show_saved or show_attrs:
            for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
                key = attr[len("_saved_"):]
                try:
                    value = getattr(fn, attr)
                except RuntimeError:  # freed after backward, or modified in place since
                    if show_saved:
                        rows.append(f"{key}: {_unusable(getattr(fn, '_raw' + attr, None))}")
                    continue
                if callable(value) and not isinstance(value, Tensor):
                    continue
                if isinstance(value, Tensor):
                    if show_saved:
                        rows.append(f"{key}: {_size(value.shape)} v{value._version}")
                elif show_attrs:
                    text = str(value)
                    if len(text) > max_attr_chars:
                        text = text[:max_attr_chars - 3] + "..."
                    rows.append(f"{key}: {text}")
        return "\n".join(rows)

    stack = []
    for t in outputs:
        lines.append(f"\t{node_id(t)} [label={_quote(_size(t.shape))} fillcolor=darkolivegreen1]")
        if t.grad_fn is not None:
            lines.append(f"\t{node_id(t.grad_fn)} -> {node_id(t)}")
            stack.append(t.grad_fn)
    while stack:
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        variable = getattr(fn, "variable", None)
        if variable is not None:  # AccumulateGrad: the leaf it writes
            name = names.get(id(variable), "")
            text = (name + "\n" if name else "") + _size(variable.shape)
            lines.append(f"\t{node_id(fn)} [label={_quote(text)} fillcolor=lightblue]")
        else:
            lines.append(f"\t{node_id(fn)} [label={_quote(label(fn))}]")
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                lines.append(f"\t{node_id(nxt)} -> {node_id(fn)}")
                stack.append(nxt)
    lines.append("}")
    return Dot("\n".join(lines) + "\n")
