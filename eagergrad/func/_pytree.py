"""Pytrees (tuples, lists, namedtuples, dicts, None) of tensors, flattened as torch's
pytree: _Spec (a structure, with torch's TreeSpec repr), _flatten/_unflatten, and the
in_dims/out_dims prefix trees of vmap (_broadcast, _prefix_spec)."""


class _Spec:
    """A pytree structure: a leaf (`kind is None`) or a container and its children."""
    __slots__ = ("children", "context", "kind")

    def __init__(self, kind=None, context=None, children=()):
        self.kind, self.context, self.children = kind, context, children

    def __eq__(self, other):
        return (self.kind, self.context, self.children) == \
            (other.kind, other.context, other.children)

    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves() for c in self.children)

    def __repr__(self, indent=0):  # torch's TreeSpec repr
        if self.kind is None:
            return "*"
        out = f"TreeSpec({self.kind.__name__}, {self.context}, ["
        if self.children:
            indent += 2
            out += self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            out += ",".join("\n" + " " * indent + c.__repr__(indent)
                            for c in self.children[1:])
        return out + "])"

    def pprint(self):  # torch's treespec_pprint
        if self.kind is None:
            return "*"
        parts = [c.pprint() for c in self.children]
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.context, parts)) + "}"
        if self.kind is list:
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _flatten(tree, leaves=None, none_leaf=False):
    """(leaves, spec) of a pytree."""
    leaves = [] if leaves is None else leaves
    if isinstance(tree, (tuple, list)):
        spec = _Spec(type(tree), None,
                     tuple(_flatten(x, leaves, none_leaf)[1] for x in tree))
    elif isinstance(tree, dict):
        spec = _Spec(dict, list(tree),
                     tuple(_flatten(x, leaves, none_leaf)[1] for x in tree.values()))
    elif tree is None and not none_leaf:
        spec = _Spec(type(None), None, ())
    else:
        leaves.append(tree)
        spec = _Spec()
    return leaves, spec


def _unflatten(spec, leaves):
    return _build(spec, iter(leaves))


def _build(s, it):
    # (module-level: a closure over itself would be a reference cycle that keeps the
    # leaves, e.g. large outputs, alive until the garbage collector runs)
    if s.kind is None:
        return next(it)
    kids = [_build(c, it) for c in s.children]
    if s.kind is dict:
        return dict(zip(s.context, kids))
    if s.kind is type(None):
        return None
    if hasattr(s.kind, "_fields"):  # namedtuple
        return s.kind(*kids)
    return s.kind(kids)


def _broadcast(prefix, spec):
    """Leaves of the prefix tree `prefix` repeated over the subtrees of `spec` (None if
    the structures do not match). An int or None in the prefix covers a whole subtree."""
    out = []

    def walk(p, s):
        if p is None or isinstance(p, int) or not isinstance(p, (tuple, list, dict)):
            out.extend([p] * s.num_leaves())
            return True
        ps = _flatten(p)[1] if isinstance(p, dict) else None
        if s.kind is None or (type(p) is not s.kind and not (
                isinstance(p, tuple) and issubclass(s.kind, tuple))):
            return False
        if isinstance(p, dict):
            if ps.context != s.context:
                return False
            kids = list(p.values())
        else:
            kids = list(p)
        if len(kids) != len(s.children):
            return False
        return all(walk(k, c) for k, c in zip(kids, s.children))
    return out if walk(prefix, spec) else None


def _prefix_spec(prefix):
    """The spec of an in_dims/out_dims tree (ints and None as leaves)."""
    if isinstance(prefix, (tuple, list)):
        return _Spec(type(prefix), None, tuple(_prefix_spec(x) for x in prefix))
    if isinstance(prefix, dict):
        return _Spec(dict, list(prefix), tuple(_prefix_spec(x) for x in prefix.values()))
    return _Spec()
