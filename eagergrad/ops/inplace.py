"""In-place ops: the out-of-place op, then its result written into the tensor's storage
(through the view chain for views, see views.py), and the version counter bumped once."""
from ..engine.grad_mode import STATE
from ..tensor import INFERENCE_MODE, MULTI_OUTPUT, NO_GRAD_MODE, Tensor, _make
from .views import check_no_overlap, rebase_history


def _broadcasts_to(src, dst):
    return len(src) <= len(dst) and all(a == b or a == 1 for a, b in
                                        zip(reversed(src), reversed(dst)))


def _can_cast(src, dst):
    if src.is_complex and not dst.is_complex:
        return False
    if src._kind == 2 and dst._kind < 2:
        return False
    if src._kind > 0 and dst._kind == 0:
        return False
    return True


def _type_word(dt):
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int",
            "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
            "float16": "Half", "bfloat16": "BFloat16", "uint8": "Byte", "int8": "Char",
            "int16": "Short"}[dt.name]


def inplace(self, fn, *args, **kwargs):
    """`self.op_(*args)`: run `fn(self, *args)` and write its result into self.

    Recorded like its out-of-place twin on a snapshot of self's old value, after which
    self takes the node as its grad_fn; on a view the base is rebased instead (NOTE [in-place
    on a view] in views.py)."""
    if self._inference and not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not "
                           "allowed.You can make a clone to get a normal tensor before doing "
                           "inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                           "more details.")
    view = self._base is not None
    if view:
        check_no_overlap(self)
    record = STATE.grad and (self.requires_grad or
                             any(isinstance(a, Tensor) and a._rg for a in args))
    if not record:
        out = fn(self, *args, **kwargs)
        _check_cast(out, self)
        self._write(out._value)
        self._vc.v += 1
        return self
    if view:
        _check_view(self)
    elif self._grad_fn is None and self._rg:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    snap = _make(self._value)  # the old value (arrays are immutable), with self's history
    if self.requires_grad:
        snap._rg, snap._grad_fn, snap._out_nr, snap._acc = True, self.grad_fn, self._out_nr, \
            self._acc
    out = fn(snap, *args, **kwargs)
    _check_cast(out, self)
    if out.dtype is not self.dtype:
        out = out.to(self.dtype)
    self._write(out._value)
    self._vc.v += 1
    node = out._grad_fn
    for s in getattr(node, "_saved", {}).values():
        if getattr(s, "_is_output", False):  # a saved result is now this tensor
            s._vc, s._version = self._vc, self._vc.v
    if view:
        rebase_history(self, node)
    else:
        old = self._grad_fn
        self._grad_fn, self._out_nr, self._rg = node, out._out_nr, out._rg
        if self._retains_grad and old is not None:  # retain_grad follows the tensor
            old._retain_hooks.pop(snap._out_nr, None)
            self._attach_retain()
    return self


def _check_view(view):
    meta = view._creation_meta
    base = view._base
    if meta == MULTI_OUTPUT:
        node = view._grad_fn.name() if view._grad_fn is not None else "a function"
        raise RuntimeError(
            f"Output {view._out_nr} of {_forward_name(node)} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views. Such "
            "functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one.")
    if meta == NO_GRAD_MODE and base.requires_grad:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")
    if meta == INFERENCE_MODE:
        raise RuntimeError(
            "A view was created in inference mode and is being modified inplace in normal "
            "mode.")
    if base._grad_fn is None and base._rg:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _forward_name(node_name):
    """torch 2.13 names the forward op in these messages: 'SplitBackward0' -> 'Split'."""
    return node_name.rstrip("0123456789").removesuffix("Backward")


def _check_cast(out, self):
    if out._shape != self._shape and not _broadcasts_to(out._shape, self._shape):
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the broadcast "
                           f"shape {list(out._shape)}")
    if out.dtype is not self.dtype and not _can_cast(out.dtype, self.dtype):
        raise RuntimeError(f"result type {_type_word(out.dtype)} can't be cast to the desired "
                           f"output type {_type_word(self.dtype)}")
