"""eagergrad.viz.make_dot: the DOT text has one box per node of the backward graph, named
as torch names them (the same multiset of names as torch's graph, walked the same way),
leaves named by `params`, saved tensors' shapes and versions, CopySlices after an in-place
op on a view."""
import collections
import re

import torch

import eagergrad as eg
from eagergrad.viz import make_dot


def torch_names(t):
    """Node names of t's backward graph in torch (each node once)."""
    seen, stack, names = set(), [t.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append("AccumulateGrad" if hasattr(fn, "variable") else fn.name())
        stack.extend(n for n, _ in fn.next_functions)
    return collections.Counter(names)


def dot_names(dot):
    labels = re.findall(r'\[label="([^"]*)"', dot.source)
    out = collections.Counter()
    for lab in labels[1:]:  # the first box is the output tensor
        first = lab.split("\\n")[0]
        out["AccumulateGrad" if first.startswith("(") or first in ("w", "b") else first] += 1
    return out


def program(L):
    w = L.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    b = L.tensor([0.1, -0.2], requires_grad=True)
    x = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    h = (x @ w + b).tanh()
    h2 = h.clone()
    h2[:, 0].mul_(2)  # CopySlices on the base
    return (h2.log_softmax(1) * h).sum(), w, b


def test_nodes_match_torchs_graph():
    t, _, _ = program(torch)
    e, w, b = program(eg)
    dot = make_dot(e, params={"w": w, "b": b})
    assert dot_names(dot) == torch_names(t)
    assert "torch::autograd::CopySlices" in dot.source
    assert dot.source.startswith("digraph {") and dot.source.rstrip().endswith("}")


def test_leaves_are_named_and_shaped():
    e, w, b = program(eg)
    src = make_dot(e, params={"w": w, "b": b}).source
    assert 'label="w\\n(2, 2)"' in src and 'label="b\\n(2,)"' in src


def test_saved_tensors_show_shape_and_version():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its result
    z = y * 1.0
    src = make_dot(z, show_saved=True).source
    assert "result: (2,) v0" in src
    with eg.no_grad():
        y.add_(1)  # bumps the version the node saved
    assert "result: (2,) v0, now v1: modified in place" in make_dot(z, show_saved=True).source


def test_edges_follow_next_functions():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sin()
    src = make_dot(y).source
    mul = y.grad_fn.next_functions[0][0]
    assert f"{id(mul)} -> {id(y.grad_fn)}" in src
    assert f"{id(mul.next_functions[0][0])} -> {id(mul)}" in src


def test_without_graphviz_the_repr_is_dot_text_with_a_hint(monkeypatch):
    import eagergrad.viz as viz
    monkeypatch.setattr(viz, "_renderer", lambda: None)
    d = make_dot(eg.ones(2, requires_grad=True) * 2)
    assert repr(d).startswith("digraph {") and "install the graphviz" in repr(d)
    assert d._repr_svg_() is None


def test_renders_svg_when_graphviz_is_installed():
    import shutil

    import pytest
    pytest.importorskip("graphviz")
    if not shutil.which("dot"):
        pytest.skip("the graphviz binary (dot) is not installed")
    e, w, b = program(eg)
    svg = make_dot(e, params={"w": w, "b": b})._repr_svg_()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:300]
    for name in ("TanhBackward0", "CopySlices", "MmBackward0"):
        assert name in svg
