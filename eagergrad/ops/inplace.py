"""In-place ops: the out-of-place op, then its result written into the tensor's storage
(through the view chain for views, see views.py), and the version counter bumped once."""
import sys
import weakref

import jax

from ..engine.grad_mode import STATE
from ..size import can_broadcast_to
from .._mode import AUTOCAST, CAPTURING, COMPILING, DONATING, FUNC, FWD
from ..tensor import Tensor, _make, _tangent
from ._table import DTChain
from .views import (check_no_overlap, check_no_partial_overlap, handle_view_on_rebase,
                    rebase_history)


def _can_cast(src, dst):
    if src.is_complex and not dst.is_complex:
        return False
    if src._kind == 2 and not dst.is_differentiable:
        return False
    if src._kind > 0 and dst._kind == 0:
        return False
    return True


def inplace(self, fn, *args, **kwargs):
    """`self.op_(*args)`: run `fn(self, *args)` and write its result into self.

    Recorded like its out-of-place twin on a snapshot of self's old value, after which
    self takes the node as its grad_fn; on a view the base is rebased instead (NOTE [in-place
    on a view] in views.py)."""
    if AUTOCAST.n and AUTOCAST.tl.active:  # torch autocasts no in-place op
        tl = AUTOCAST.tl
        prev, tl.active = tl.active, {}
        try:
            return inplace(self, fn, *args, **kwargs)
        finally:
            tl.active = prev
    if self._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    if CAPTURING.n and FUNC.capture is not None:  # inside a torch.func program's trace
        FUNC.capture.mutates(self, fn)
    view = self._base is not None
    # (self.requires_grad, inlined)
    self_rg = self._requires_grad or view and self._base._requires_grad
    record = STATE.grad and (self_rg or any(isinstance(a, Tensor) and a._requires_grad
                                            for a in args))
    if record:  # torch's check_inplace, before the kernel's own checks
        if view:
            _check_view(self)
        if self._grad_fn is None and self_rg:  # (the field: not regenerated)
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
    _check_overlap(self, fn, args)
    if not record:
        if fn in DONATE_FNS and not FWD.active and _donatable(self, args):
            out = _donating(self, fn, args, kwargs)
        else:
            out = fn(self, *args, **kwargs)
        _write_result(self, out, fn)
        if FWD.active:
            _write_tangent(self, out)
        return self
    snap = _make(self._value)  # the old value (arrays are immutable), with self's history
    if FWD.active:
        snap._fw = (FWD.gen, _tangent(self))
    if self_rg:
        snap._requires_grad, snap._grad_fn, snap._out_nr, snap._accumulator_ref = True, \
            self.grad_fn if view else self._grad_fn, self._out_nr, self._accumulator_ref
    out = fn(snap, *args, **kwargs)
    if out.dtype is not self.dtype and _can_cast(out.dtype, self.dtype):
        out = out.to(self.dtype)
    _write_result(self, out, fn)
    if FWD.active:
        _write_tangent(self, out)
    node = out._grad_fn
    saved = getattr(node, "_saved", None)
    saved_out = [s for s in saved.values() if getattr(s, "_is_output", False)] if saved else ()
    for s in saved_out:  # a saved result is now this tensor
        s._version_counter, s._version = self._version_counter, self._version_counter.version
        s._src = (self._storage, self._vchain, self._storage.generation)
    if view:
        rebase_history(self, node)
        for s in saved_out:  # torch's is_inplace_on_view SavedVariable: names the view's node
            s._meta = s._meta[:3] + (weakref.ref(self.grad_fn),)
    else:
        old = self._grad_fn
        self._grad_fn, self._out_nr, self._requires_grad = node, out._out_nr, out._requires_grad
        if self._retains_grad and old is not None:  # retain_grad follows the tensor
            old._retain_hooks.pop(snap._out_nr, None)
            self._attach_retain()
    return self


DONATE_FNS = frozenset()  # set by ops/__init__.py: elementwise ops with one kernel call

# Donation decides by sys.getrefcount, which is right only where every holder of the array
# owns a reference, values pending on the interpreter's stack included. Checked on CPython
# 3.10.13, 3.11.7, 3.12.1 and 3.13.0 (tests/test_donation.py runs the probe on the
# running interpreter). CPython 3.14 may borrow references on its stack (fewer counted
# than there are holders): off there, and wherever this was not checked.
REFCOUNT_EXACT = (sys.implementation.name == "cpython"
                  and (3, 10) <= sys.version_info[:2] <= (3, 13))


def _donatable(self, args):
    """Whether the kernel may reuse self's buffer: a real floating base tensor whose
    Storage holds the only reference to its array (no alias, saved output, cached
    constant or user handle), and a result that surely has self's shape and dtype."""
    if not REFCOUNT_EXACT or self._vchain is not None or self._base is not None or \
            self.dtype._kind != 2:
        return False
    for a in args:
        if isinstance(a, Tensor):
            if a._storage is self._storage or not can_broadcast_to(a._shape, self._shape) or (
                    a.dtype is not self.dtype and not (a._wrapped and a.dtype._kind <= 2)):
                return False
        elif type(a) not in (int, float, bool):
            return False
    arr = self._storage.array
    # the Storage's slot, `arr` and the argument; never a tracer (donation is eager only)
    return sys.getrefcount(arr) == 3 and not isinstance(arr, jax.core.Tracer)


def _donating(self, fn, args, kwargs):
    tl = DONATING.tl
    tl.storage = self._storage
    DONATING.n += 1
    try:
        return fn(self, *args, **kwargs)
    finally:
        DONATING.n -= 1
        tl.storage = None


def _write_tangent(self, out):
    """Forward mode: self's tangent becomes out's, written in place (so through a view
    into its base's tangent, as torch); a view of a base without a tangent gives the base
    a zero one first. A result without a tangent zeroes self's."""
    to, ts = _tangent(out), _tangent(self)
    if to is None and ts is None:
        return
    if ts is None:
        base = self._base
        if base is None:
            self._fw = (FWD.gen, _make(to._value.astype(self.dtype.np)))
            return
        base._fw = (FWD.gen, _make(jax.numpy.zeros(base._shape, base.dtype.np)))
        self._fw = None
        ts = _tangent(self)
    ts._write(jax.numpy.zeros(ts._shape, ts.dtype.np) if to is None else to._value)


def _check_view(view):
    handle_view_on_rebase(view)
    if view._base._grad_fn is None and view.requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def overlap_rule(internal=True, partial=True, scalar_internal=True, noop_on_self=False):
    """Mark an in-place kernel with the overlap checks torch's kernel makes: `internal`,
    its output (self) may not overlap itself (an expanded view) (`scalar_internal`: also
    when the value is a number); `partial`, an input may not partly overlap the output;
    `noop_on_self`: nothing to check when the first argument is self (copy_). Unmarked
    kernels check everything."""
    def mark(fn):
        fn.overlap_rule = (internal, partial, scalar_internal, noop_on_self)
        return fn
    return mark


_CHECK_ALL = (True, True, True, False)


def _check_overlap(self, fn, args):
    if self._stride is None:  # dense, so no internal overlap; other storages can't overlap
        for a in args:
            if isinstance(a, Tensor) and a._storage is self._storage:
                break
        else:
            return
    internal, partial, scalar_internal, noop_on_self = getattr(fn, "overlap_rule", _CHECK_ALL)
    if noop_on_self and args[0] is self:
        return
    if internal and (scalar_internal or isinstance(args[0], Tensor) and not args[0]._wrapped):
        check_no_overlap(self)
    if partial:
        for a in args:
            # (an index kernel that skips the internal check takes a 0-dim value as a fill)
            if isinstance(a, Tensor) and not (a.ndim == 0 and not internal):
                check_no_partial_overlap(self, a)


def _write_result(self, out, fn=None):
    """Check `out` fits self (torch's wording), write it, bump the version once."""
    if out._shape != self._shape or out.dtype is not self.dtype:
        _check_cast(out, self, fn)
        self._write(out._value)
    elif self._vchain is None and not (CAPTURING.n and FUNC.capture is not None) and \
            not COMPILING.n:
        # (the common case, as _write does it)
        st = self._storage
        st.array = out._value
        st.generation += 1
    elif self._vchain.__class__ is DTChain:  # a DTensor: rank by rank (distributed/tensor)
        self._assign(out)
    else:
        self._write(out._value)
    self._version_counter.version += 1


def _check_cast(out, self, fn=None):
    if out._shape != self._shape and not can_broadcast_to(out._shape, self._shape):
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(out._shape)}")
    if out.dtype is not self.dtype and not _can_cast(out.dtype, self.dtype):
        # (some kernels, clamp's, name the output type as its C++ type: cast_error_cpp)
        want = self.dtype.cpp_name if getattr(fn, "cast_error_cpp", False) else \
            self.dtype.scalar_name
        raise RuntimeError(f"result type {out.dtype.scalar_name} can't be cast to the desired "
                           f"output type {want}")


def _inplace_function(name):
    """torch.<name>(input, ...), a module-level in-place function (torch.relu_): the
    method Tensor.<name> as bound now."""
    method = getattr(Tensor, name)

    def f(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    f.__name__ = name
    f.__module__ = "eagergrad"  # (as torch's report "torch")
    f.__doc__ = f"torch.{name}(input, ...): input.{name}(...)."
    return f
