"""The written guards of compiled calls (NOTE [written guards], eagergrad/_dynamo/_guard.py)
against the walk they stand for (_heap.py): a guard written from one heap, then run on a
heap changed one way at a time, passes exactly when the walk's key is unchanged, and then
returns what the walk finds (the same objects, storages, counters and lifted floats, in
order). Each change is applied to a heap built afresh, so the guard is never run on the
objects it was written from."""
import functools
import sys
import types

import numpy as np
import pytest

import eagergrad as eg
from eagergrad._dynamo import _guard, _heap

cfg = types.ModuleType("eg_guard_cfg")  # a user's config module, read by the function
cfg.__file__ = __file__
cfg.scale, cfg.mode = 0.5, "sum"
sys.modules[cfg.__name__] = cfg


class Holder:
    """A user class with class-level state."""
    count = 3
    tags = ["a"]

    def method(self):
        return self.values


class Slotted:
    __slots__ = ("a", "b")


def add(a, b=1.0):
    return a + b


def build():
    """A heap: the roots of a compiled call of `fn` and a dict naming its parts."""
    eg.manual_seed(0)
    m = eg.nn.Sequential(eg.nn.Linear(3, 4), eg.nn.BatchNorm1d(4))
    opt = eg.optim.Adam(m.parameters(), lr=0.1, betas=(0.9, 0.99))
    m(eg.randn(5, 3)).sum().backward()
    h = Holder()
    h.values = {"f": 1.5, "z": 0.0, "n": float("nan"), "i": 2, "t": (1, "x"), "e": [],
                7: "int key", "arr": np.arange(3.0)}
    s = Slotted()
    s.a = 1
    part = functools.partial(add, b=2.0)
    bound = h.method
    other = eg.zeros(5, 3)  # (the batch's structure: changes that alias them are seen)

    def fn(x, y=None):
        return m(x), opt, h, s, part, bound, other, cfg.scale, cfg.mode

    x = eg.randn(5, 3)
    parts = dict(m=m, opt=opt, h=h, s=s, x=x, fn=fn, other=other)
    return [("args", (x,)), ("kwargs", {}), ("fn", fn)], parts


def _quietly(*_):
    return None


def _set_class(name, value):
    old = Holder.__dict__[name]
    setattr(Holder, name, value)
    return lambda: setattr(Holder, name, old)


def _set_cfg(name, value):
    old = getattr(cfg, name)
    setattr(cfg, name, value)
    return lambda: setattr(cfg, name, old)


def _cell(name, new):
    def change(roots, p):
        fn = p["fn"]
        fn.__closure__[fn.__code__.co_freevars.index(name)].cell_contents = new(p)
    return change


def _args(new):
    def change(roots, p):
        roots[0] = ("args", new(p))
    return change


def _kwargs(new):
    def change(roots, p):
        roots[1] = ("kwargs", new(p))
    return change


# (name, change(roots, parts) -> an undo or None)
CHANGES = [
    ("nothing", lambda r, p: None),
    ("a float by value", lambda r, p: p["h"].values.update(f=1.25)),
    ("0.0 -> -0.0", lambda r, p: p["h"].values.update(z=-0.0)),
    ("nan stays nan", lambda r, p: p["h"].values.update(n=float("nan"))),
    ("int -> bool", lambda r, p: p["h"].values.update(i=True)),
    ("int -> float", lambda r, p: p["h"].values.update(i=2.0)),
    ("a tuple's item", lambda r, p: p["h"].values.update(t=(1, "y"))),
    ("a new key", lambda r, p: p["h"].values.update(g=1)),
    ("a key removed", lambda r, p: p["h"].values.pop("t")),
    ("keys reordered", lambda r, p: p["h"].values.update(f=p["h"].values.pop("f"))),
    ("an empty list filled", lambda r, p: p["h"].values["e"].append(1)),
    ("an int key's value", lambda r, p: p["h"].values.update({7: "other"})),
    ("an ndarray's value", lambda r, p: p["h"].values["arr"].__setitem__(0, 5.0)),
    ("an ndarray's dtype", lambda r, p: p["h"].values.update(arr=np.arange(3))),
    ("an attribute added", lambda r, p: setattr(p["h"], "extra", 1)),
    ("a class attribute", lambda r, p: _set_class("count", 4)),
    ("a class list appended", lambda r, p: Holder.tags.append("b") or
     (lambda: Holder.tags.pop())),
    ("a method replaced", lambda r, p: _set_class("method", lambda self: 0)),
    ("a config float", lambda r, p: _set_cfg("scale", 0.25)),
    ("a config str", lambda r, p: _set_cfg("mode", "mean")),
    ("a slot set", lambda r, p: setattr(p["s"], "b", 2)),
    ("a slot changed", lambda r, p: setattr(p["s"], "a", "1")),
    ("eval()", lambda r, p: _quietly(p["m"].eval())),
    ("a submodule's attribute", lambda r, p: setattr(p["m"][1], "momentum", None)),
    ("requires_grad off", lambda r, p: _quietly(p["m"][0].weight.requires_grad_(False))),
    ("a .grad set to None", lambda r, p: setattr(p["m"][0].weight, "grad", None)),
    ("a .grad replaced by an equal one",
     lambda r, p: setattr(p["m"][0].bias, "grad", eg.zeros(4))),
    ("a .grad that is a view",
     lambda r, p: setattr(p["m"][0].bias, "grad", eg.zeros(8)[:4])),
    ("a parameter replaced by an equal one",
     lambda r, p: setattr(p["m"][0], "weight", eg.nn.Parameter(eg.zeros(4, 3)))),
    ("a tensor hook", lambda r, p: _quietly(p["m"][0].weight.register_hook(lambda g: g))),
    ("a forward hook", lambda r, p: _quietly(p["m"].register_forward_hook(lambda *a: None))),
    ("a buffer in place", lambda r, p: _quietly(p["m"][1].running_mean.add_(1))),
    ("lr (lifted)", lambda r, p: p["opt"].param_groups[0].__setitem__("lr", 0.5)),
    ("betas (lifted)", lambda r, p: p["opt"].param_groups[0].__setitem__("betas", (0.8, 0.9))),
    ("lr to an int", lambda r, p: p["opt"].param_groups[0].__setitem__("lr", 1)),
    ("a flag", lambda r, p: p["opt"].param_groups[0].__setitem__("amsgrad", True)),
    ("optimizer state dropped", lambda r, p: p["opt"].state.clear()),
    ("the group also a global", lambda r, p: setattr(p["h"], "group",
                                                      p["opt"].param_groups[0])),
    ("another batch size", _args(lambda p: (eg.randn(6, 3),))),
    ("a batch as a view", _args(lambda p: (eg.randn(10, 3)[:5],))),
    ("a batch of another dtype", _args(lambda p: (eg.randn(5, 3, dtype=eg.float64),))),
    ("a batch requiring grad", _args(lambda p: (eg.randn(5, 3, requires_grad=True),))),
    ("the batch is a closure's tensor", _args(lambda p: (p["other"],))),
    ("the batch shares a closure tensor's storage",
     _args(lambda p: (p["other"].detach(),))),
    ("the batch twice", _args(lambda p: (p["x"], p["x"]))),
    ("two batches", _args(lambda p: (p["x"], eg.randn(5, 3)))),
    ("a batch sharing a parameter's storage",
     _args(lambda p: (p["m"][0].weight.detach()[:3],))),
    ("a keyword", _kwargs(lambda p: {"y": 1})),
    ("a global rebound", lambda r, p: setattr(p["h"], "values", dict(p["h"].values))),
    ("a partial's keyword", _cell("part", lambda p: functools.partial(add, b=3.0))),
    ("a cell to a tensor of the same structure", _cell("other", lambda p: eg.ones(5, 3))),
    ("a cell to the batch", _cell("other", lambda p: p["x"])),
    ("a cell to a parameter", _cell("other", lambda p: p["m"][0].bias)),
    ("a bound method of another object", _cell("bound", lambda p: Holder().method)),
]


@pytest.mark.parametrize("name,change", CHANGES, ids=[c[0] for c in CHANGES])
def test_written_guard_is_the_walk(name, change):
    roots, _ = build()
    key = _heap.walk(roots).key
    guard = _guard.write(roots)
    assert guard is not None
    assert _guard.agrees(guard(*[o for _, o in roots]), _heap.walk(roots))

    roots, parts = build()
    undo = change(roots, parts)
    try:
        now = _heap.walk(roots)
        seen = guard(*[o for _, o in roots])
    finally:
        if callable(undo):
            undo()
    assert (seen is not None) == (now.key == key), \
        f"{name}: guard {'passed' if seen is not None else 'refused'}, walk key " \
        f"{'equal' if now.key == key else 'different'}"
    if seen is not None:
        assert _guard.agrees(seen, now)
    if name == "nothing":
        assert seen is not None


def test_guard_refuses_without_calling_user_eq():
    """A key or value of another class is refused on its class, before any comparison
    could run a user's __eq__ (a tensor's is elementwise)."""
    roots, _ = build()
    guard = _guard.write(roots)
    roots, p = build()
    p["h"].values["f"] = eg.ones(3)   # (a float's place)
    p["h"].values[7] = eg.ones(3)     # (a str's place)
    assert guard(*[o for _, o in roots]) is None
