"""Writing through views, and autograd for in-place ops on views.

A view is its base's storage plus a *chain*: the view ops `(fn, output index)` that map
the base array to the view array. Every view op is linear, so:
- writing new values `v` into a view replaces, level by level, the elements the view
  reads (an index map of the level's op, or the real/imag part of a complex parent);
- the transpose of a view (its backward) is that same write into zeros.

NOTE [in-place on a view]: as in torch, the in-place op's own node `fn` does not enter
the graph. The base's history is rebased onto a `CopySlices(base's old edge, fn)`:
its backward takes the base gradient, hands the view's slice of it to `fn`, writes
`fn`'s gradient for the view's old value back into that slice, and passes `fn`'s
other gradients on. Views of the base regenerate their grad_fn from the base's new
history (`AsStridedBackward0`) the next time it is read.
"""
import jax
import jax.numpy as jnp

from ..engine.engine import _validate
from ..engine.graph import Node
from ..tensor import _zeros_meta
from ._table import defop, run

_SPECIAL = {}   # view fn -> write(parent, v): views that are not element selections
_writers = {}


def register_special(fn, write):
    _SPECIAL[fn] = write


def _apply(f, i, a):
    return f(a) if i is None else f(a)[i]


def _write_level(f, i, parent, v):
    w = _SPECIAL.get(f)
    if w is not None:
        return w(parent, v)
    idx = _apply(f, i, jnp.arange(parent.size).reshape(parent.shape))
    flat = parent.reshape(-1).at[idx.reshape(-1)].set(v.reshape(-1).astype(parent.dtype))
    return flat.reshape(parent.shape)


def write_into(base, chain, v):
    """`base` with the elements the view `chain` reads replaced by `v` (jax arrays)."""
    w = _writers.get(chain)
    if w is None:
        def write(base, v):
            parents = [base]
            for f, i in chain[:-1]:
                parents.append(_apply(f, i, parents[-1]))
            for (f, i), parent in zip(reversed(chain), reversed(parents)):
                v = _write_level(f, i, parent, v)
            return v
        w = _writers[chain] = jax.jit(write)
    return w(base, v)


def view_of(base, chain):
    for f, i in chain:
        base = _apply(f, i, base)
    return base


def check_no_overlap(t):
    """torch's has_internal_overlap: a dim of size > 1 with stride 0 (an expand)."""
    if t._stride is not None and any(n > 1 and s == 0 for n, s in zip(t._shape, t._stride)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


# ---- the linear view ops autograd needs, each the other's backward ---------------------
AS_STRIDED = defop("as_strided_view", lambda self, chain, size, stride, storage_offset,
                   self_sym_sizes, self_dtype: view_of(self, chain),
                   attrs=("chain", "size", "stride", "storage_offset", "self_sym_sizes",
                          "self_dtype"),
                   node="AsStridedBackward0",
                   self=lambda grad, chain, self_sym_sizes, self_dtype:
                   run(VIEW_SCATTER, (grad,), (chain, self_sym_sizes, self_dtype)))
VIEW_SCATTER = defop("view_scatter", lambda grad, chain, base_shape, base_dtype:
                     write_into(jnp.zeros(base_shape, base_dtype.np), chain, grad),
                     inputs=("grad",), attrs=("chain", "base_shape", "base_dtype"),
                     node="AsStridedScatterBackward0",
                     grad=lambda grad, chain: run(VIEW_GATHER, (grad,), (chain,)))
VIEW_GATHER = defop("view_gather", lambda self, chain: view_of(self, chain), attrs=("chain",),
                    node="AsStridedBackward0",
                    self=lambda grad, self, chain:
                    run(VIEW_SCATTER, (grad,), (chain, self._shape, self.dtype)))
VIEW_WRITE = defop("view_write", lambda self, src, chain: write_into(self, chain, src),
                   inputs=("self", "src"), attrs=("chain",), node="AsStridedScatterBackward0",
                   self=lambda grad, src, chain: run(VIEW_WRITE, (grad, src * 0), (chain,)),
                   src=lambda grad, chain: run(VIEW_GATHER, (grad,), (chain,)))


class CopySlices(Node):
    """The base's node after an in-place op `fn` on one of its views (see the NOTE)."""

    __slots__ = ("_chain", "_fn")

    def __init__(self, base_edge, meta, chain, fn):
        super().__init__((base_edge,) + tuple(fn._next[1:]), (meta,))
        self._chain = chain
        self._fn = fn

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return [None] * len(self._next)
        fn = self._fn
        gs = run(VIEW_GATHER, (g,), (self._chain,))
        res = _validate(fn, list(fn.apply([gs] + [None] * (len(fn._meta_in) - 1))))
        r0 = res[0] if res[0] is not None else _zeros_meta(gs._shape, gs.dtype)
        return [run(VIEW_WRITE, (g, r0), (self._chain,))] + res[1:]

    def _release(self):
        self._fn._release()


def rebase_history(view, fn):
    """After `fn` (the node of an in-place op on `view`) ran: the base's history goes
    through CopySlices; the view's grad_fn is regenerated lazily (Tensor.grad_fn)."""
    base = view._base
    edge = base._edge() if base._rg else None
    node = CopySlices(edge, (base._shape, base.dtype), view._vchain, fn)
    base._grad_fn, base._out_nr, base._rg = node, 0, True


def regenerate_grad_fn(view):
    """The view's grad_fn from its base's current history: AsStridedBackward0."""
    from ._table import _record
    base = view._base
    attrs = (view._vchain, view._shape, view.stride(), view._offset, base._shape, base.dtype)
    _record(AS_STRIDED, (base,), attrs, (view,))


def _real_write(parent, v):
    return jax.lax.complex(v.astype(parent.real.dtype), jnp.imag(parent))


def _imag_write(parent, v):
    return jax.lax.complex(jnp.real(parent), v.astype(parent.real.dtype))

