"""Transforms inside a program's trace (NOTE [programs]): the user's function is traced
at the transform's own level and jax's transform is applied to its jaxpr, built and
jitted once per distinct jaxpr (_deferred); _Deferred runs the result."""
import jax

from .._mode import FUNC
from ..tensor import Tensor
from ._autograd import _autograd_over
from ._program import _DEFERRED, _built, _captured_in, _Frame, _jaxpr_key, _resolve
from ._trace import _reached, _trace_jaxpr, _undonated, _used


def _deferred(kind, pure, args, static, build):
    """The _Deferred of `pure` traced at its own level on `args` (arrays, tracers of the
    enclosing trace or ShapeDtypeStructs): the user's function runs as under the
    transform (its level pushed), but jax's transform is applied to the jaxpr, once per
    distinct jaxpr, by the function build(jaxpr, n_writes, static()) makes (jitted):
    tracing through vmap/vjp primitive by primitive cost most of a call. static() is
    evaluated after the trace (counts the trace found). The consts (closed-over values)
    are its first argument. Storages from outside that pure wrote are extra outputs of
    the jaxpr, put back after the trace; _Deferred.write(their values) writes them at the
    enclosing level."""
    cap = FUNC.capture
    frame, through = _Frame(kind), []
    flat = jax.tree_util.tree_leaves(args)

    def traced(*a):
        frame.trace = inner = cap.enter(flat)
        outs = pure(*a)
        cap.flush()
        # storages from outside this trace that it wrote: extra outputs, written through
        through.extend(st for st, old in frame.values()
                       if not (isinstance(old, jax.core.Tracer) and old._trace is inner))
        return outs, [st.array for st in through]
    cap.frames.append(frame)
    try:
        jaxpr, consts = _trace_jaxpr(traced, args)
    finally:
        cap.frames.pop()
        cap.leave(frame.trace)
        for st, old in frame.values():
            st.array = old
            st.generation += 1
    consts = _resolve(frame.loose, consts)
    if frame.concrete:  # (the enclosing frames' jaxprs hold the value too)
        cap.concrete = True
        for f in cap.frames:
            f.concrete = True
    s = static()
    try:
        key = (kind, s, len(through), _jaxpr_key(jaxpr))
    except TypeError:
        key = None
    if frame.concrete:  # (run primitive by primitive on its first sighting: _built)
        jaxpr = _undonated(jaxpr)
    made = _built(_DEFERRED, key, lambda: build(jaxpr, len(through), s), frame.concrete)
    return _Deferred(made, consts, through, frame.born, cap)


class _Deferred:
    """A _deferred trace's result: `made` (what its build made), the consts, and how to
    run it. At the top of a call with no trace around it (_over_autograd's direct path),
    a run reaching captured tensors that require grad goes through autograd (one node,
    NOTE [captured tensors]): its outputs are tensors then."""
    __slots__ = ("born", "cap", "consts", "cpos", "made", "through", "captured")

    def __init__(self, made, consts, through, born, cap):
        self.made, self.consts, self.through, self.born, self.cap = \
            made, consts, through, born, cap
        self.cpos, self.captured = ([], []) if not (cap.direct and not cap.frames) else \
            _captured_in(consts, cap)

    def run(self, fn, *args):
        """fn(consts, *args): a pytree of arrays, or of tensors (autograd over it)."""
        if not self.captured:
            return fn(self.consts, *args)
        consts, cpos, tree = self.consts, self.cpos, []

        def compute(*caps):
            cs = list(consts)
            for k, j in cpos:
                cs[k] = caps[j]
            flat, treedef = jax.tree_util.tree_flatten(fn(cs, *args))
            tree[:] = [treedef]
            return flat
        closed = jax.make_jaxpr(compute)(*[t._value for t in self.captured])
        k = len(closed.jaxpr.constvars)
        outs = _autograd_over(compute, self.captured, _used(closed.jaxpr)[k:],
                              lambda mask: _reached(closed.jaxpr, [False] * k + mask))
        return jax.tree_util.tree_unflatten(tree[0], outs)

    def write(self, values):
        """Give the storages the trace wrote their values at the enclosing level."""
        for st, v in zip(self.through, values):
            self.cap.writes(st)
            st.array = v._value if isinstance(v, Tensor) else v
            st.generation += 1
