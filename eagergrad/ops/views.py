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

from .._storage import register_special, relative_chain, view_of, write_into  # noqa: F401
from ..engine.grad_mode import STATE
from ..engine.graph import Node, _validate
from ..engine.saved import _FREED, forward_name
from ..tensor import (IN_CUSTOM_FUNCTION, INFERENCE_MODE, MULTI_OUTPUT, NO_GRAD_MODE,
                      _zeros_meta)
from ._table import _record, defop, call_op

def has_internal_overlap(t):
    """torch's has_internal_overlap == YES: a dim of size > 1 with stride 0 (an expand)."""
    return t._stride is not None and any(n > 1 and s == 0 for n, s in zip(t._shape, t._stride))


def check_no_overlap(t):
    """torch's assert_no_internal_overlap."""
    if has_internal_overlap(t):
        check_no_overlap_error()


def check_no_overlap_error():
    raise RuntimeError("unsupported operation: more than one element of the written-to "
                       "tensor refers to a single memory location. Please clone() the "
                       "tensor before performing the operation.")


def _dense_range(t):
    """[begin, end) of t's memory if it is non-overlapping and dense, else None."""
    n = t.numel()
    if t._stride is None:
        return t._offset, t._offset + n
    dims = sorted((s, k) for s, k in zip(t._stride, t._shape) if k != 1)
    expected = 1
    for s, k in dims:
        if s != expected:
            return None
        expected *= k
    return t._offset, t._offset + n


def check_no_partial_overlap(out, src):
    """torch's assert_no_partial_overlap(out, src) for two tensors over one storage:
    both dense, their memory ranges intersect, and they are not the same layout."""
    if src is out or src._storage is not out._storage or not out.numel() or not src.numel():
        return
    a, b = _dense_range(out), _dense_range(src)
    if a is None or b is None:
        return  # torch's MemOverlapStatus::TooHard: not checked
    if a == b and out.stride() == src.stride():
        return  # full overlap: the same elements
    if a[0] < b[1] and b[0] < a[1]:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


def handle_view_on_rebase(view, indirect=False):
    """torch's handle_view_on_rebase: a view made in no_grad or inference mode, or one of
    several views a function returned, may not be modified in place (`indirect`: its base
    or another view was) with autograd."""
    meta = view._creation_meta
    if meta is None:
        return
    fn = view._grad_fn
    obj = "its base or another view of its base has been" if indirect else "is being"
    if meta in (INFERENCE_MODE, NO_GRAD_MODE) or fn is None:
        prefix = (f"Output {view._out_nr} of {forward_name(fn)} is a view of a view which was "
                  "created in" if fn is not None else "A view was created in")
        if meta == INFERENCE_MODE:
            msg = f"{prefix} inference mode and {obj} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {obj} modified inplace with grad mode enabled."
    else:
        msg = f"Output {view._out_nr} of {forward_name(fn)} is a view and {obj} modified inplace."
    if meta == IN_CUSTOM_FUNCTION:
        msg += (" This view was created inside a custom Function (or because an input was "
                "returned as-is) and the autograd logic to handle view+inplace would override "
                "the custom backward associated with the custom Function, leading to incorrect "
                "gradients. This behavior is forbidden. You can fix this by cloning the output "
                "of the custom Function.")
    elif meta == MULTI_OUTPUT:
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    else:
        block = "no_grad" if meta == NO_GRAD_MODE else "inference_mode"
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                "can clarify your code by moving both the view and the inplace either both "
                f"inside the {block} block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    raise RuntimeError(msg)


# ---- the linear view ops autograd needs, each the other's backward ---------------------
AS_STRIDED = defop("as_strided_view", lambda self, chain, size, stride, storage_offset,
                   self_sym_sizes, self_dtype: view_of(self, chain),
                   attrs=("chain", "size", "stride", "storage_offset", "self_sym_sizes",
                          "self_dtype"),
                   node="AsStridedBackward0",
                   self=lambda grad, chain, self_sym_sizes, self_dtype:
                   call_op(VIEW_SCATTER, (grad,), (chain, self_sym_sizes, self_dtype)))
VIEW_SCATTER = defop("view_scatter", lambda grad, chain, base_shape, base_dtype:
                     write_into(jnp.zeros(base_shape, base_dtype.np), chain, grad, True),
                     inputs=("grad",), attrs=("chain", "base_shape", "base_dtype"),
                     node="AsStridedScatterBackward0",
                     grad=lambda grad, chain: call_op(VIEW_GATHER, (grad,), (chain,)))
VIEW_GATHER = defop("view_gather", lambda self, chain: view_of(self, chain), attrs=("chain",),
                    node="AsStridedBackward0",
                    self=lambda grad, self, chain:
                    call_op(VIEW_SCATTER, (grad,), (chain, self._shape, self.dtype)))
VIEW_WRITE = defop("view_write", lambda self, src, chain: write_into(self, chain, src),
                   inputs=("self", "src"), attrs=("chain",), node="AsStridedScatterBackward0",
                   self=lambda grad, src, chain: call_op(VIEW_WRITE, (grad, src * 0), (chain,)),
                   src=lambda grad, chain: call_op(VIEW_GATHER, (grad,), (chain,)))


class CopySlices(Node):
    """The base's node after an in-place op `fn` on one of its views (see the NOTE)."""

    __slots__ = ("_chain", "_geometry", "_fn", "_overlap")

    def __init__(self, base_edge, meta, chain, geometry, fn, overlap=False):
        super().__init__((base_edge,) + tuple(fn._next[1:]), (meta,))
        self._chain = chain
        # the view's (size, stride, storage offset); None for a view of another dtype
        # (real/imag parts), which as_strided cannot express
        self._geometry = geometry
        self._fn = fn
        self._overlap = overlap  # the view has internal overlap (fill_/zero_ on an expand)

    def name(self):
        return "torch::autograd::CopySlices"

    def apply(self, grads):
        fn = self._fn
        if fn is None:
            raise RuntimeError(_FREED)
        g = grads[0]
        if g is None:
            return [None] * len(self._next)
        if STATE.grad and self._geometry is not None:
            return self._apply_recorded(fn, g)
        gs = call_op(VIEW_GATHER, (g,), (self._chain,))
        res = _validate(fn, list(fn.apply([gs] + [None] * (len(fn._meta_in) - 1))))
        if self._overlap and res[0] is not None:
            check_no_overlap_error()  # torch copies res[0] into the view's slice of grad
        r0 = res[0] if res[0] is not None else _zeros_meta(gs._shape, gs.dtype)
        return [call_op(VIEW_WRITE, (g, r0), (self._chain,))] + res[1:]

    def _apply_recorded(self, fn, g):
        """Under create_graph=True: torch's CopySlices::apply step by step, so the graph
        it records is torch's (CopyBackwards, AsStridedBackward0, CloneBackward0, and a
        CopySlices of its own)."""
        result = g.new_zeros(g._shape)
        result.copy_(g)
        grad_slice = result.as_strided(*self._geometry)
        nones = [None] * (len(fn._meta_in) - 1)
        res = _validate(fn, list(fn.apply([grad_slice.clone()] + nones)))
        if res[0] is not None:
            if self._overlap:
                check_no_overlap_error()
            grad_slice.copy_(res[0])
        return [result] + res[1:]

    def _release(self):
        # torch's CopySlices::release_variables only drops its reference to fn: fn's saved
        # values go with fn when nothing else holds it, but a graph built with
        # create_graph=True may still reach fn (its saved output's history) and run it
        self._fn = None


def rebase_history(view, fn):
    """After `fn` (the node of an in-place op on `view`) ran: the base's history goes
    through CopySlices; the view's grad_fn is regenerated lazily (Tensor.grad_fn)."""
    base = view._base
    edge = base._edge() if base._requires_grad else None
    # (the recorded path's as_strided reads a gradient laid out as the base: contiguous)
    geometry = (view._shape, view.stride(), view._offset) if view.dtype == base.dtype and \
        base._offset == 0 and base.is_contiguous() else None
    node = CopySlices(edge, (base._shape, base.dtype), _chain_from(base, view), geometry, fn,
                      has_internal_overlap(view))
    base._grad_fn, base._out_nr, base._requires_grad = node, 0, True


def regenerate_grad_fn(view):
    """The view's grad_fn from its base's current history: AsStridedBackward0."""
    base = view._base
    attrs = (_chain_from(base, view), view._shape, view.stride(), view._offset, base._shape,
             base.dtype)
    _record(AS_STRIDED, (base,), attrs, (view,))


def _chain_from(base, view):
    """The view chain from the base's value to the view's (NOTE [in-place view ops])."""
    chain = relative_chain(view._vchain, base._vchain)
    if chain is None:
        raise NotImplementedError("eagergrad does not implement autograd through a view made "
                                  "before as_strided_ changed its base yet")
    return chain


def _real_write(parent, v):
    return jax.lax.complex(v.astype(parent.real.dtype), jnp.imag(parent))


def _imag_write(parent, v):
    return jax.lax.complex(jnp.real(parent), v.astype(parent.real.dtype))


def _sync_view(self):
    """torch's VariableHooks::grad_fn for a view whose base (or another view of it) was
    modified in place: raise if the view may not be rebased (its creation meta), else
    regenerate its grad_fn from the base's history (Tensor._sync_view, bound by
    _tensor_methods.py)."""
    base = self._base
    if self._grad_fn is None and not base._requires_grad:
        return
    handle_view_on_rebase(self, indirect=True)
    self._attr_version = self._version_counter.version
    regenerate_grad_fn(self)
