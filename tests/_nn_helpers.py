"""Helpers of the nn differential tests: seeded arrays, weights copied into a module, and
a graph below a node with its saved values (to compare torch's and eagergrad's)."""
import numpy as np


def arrays(seed, *shapes, dtype="float32"):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]


def copy_weights(L, m, seed, dtype="float32"):
    """Load seeded weights into module m (torch's and eagergrad's get the same values)."""
    names = [k for k, _ in m.named_parameters()]
    values = arrays(seed, *[tuple(p.shape) for _, p in m.named_parameters()], dtype=dtype)
    m.load_state_dict({k: L.tensor(a) for k, a in zip(names, values)})
    return m


def saved(fn, extra=frozenset()):
    """A node's `_saved_*` values; `extra`: names (or (node name, name) pairs) to leave
    out, attributes where eagergrad's nodes are known to differ from torch's."""
    out = {}
    for k in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        if k in extra or (fn.name(), k) in extra:
            continue
        v = getattr(fn, k)
        if callable(v):  # (eagergrad's node has a _saved_arrays method)
            continue
        out[k] = v.detach() if hasattr(v, "shape") else v
    return out


def walk(fn, extra=frozenset(), saved_of=None):
    """The graph below a node: (name, saved values, [children...])."""
    if fn is None:
        return None
    saved_of = saved_of or (lambda f: saved(f, extra))
    return (fn.name(), saved_of(fn), [walk(n, extra, saved_of) for n, _ in fn.next_functions])
