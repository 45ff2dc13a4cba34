"""SavedTensor: a tensor kept for backward, version-checked on unpack."""
from ..tensor import _make
from .grad_mode import STATE

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or "
          "if you need to access saved tensors after calling backward.")


class SavedTensor:
    """A tensor saved by a node. An input is kept as the tensor object itself (so
    `x is y.grad_fn._saved_self`); an output is kept as its array, and unpacking it
    makes a new tensor whose grad_fn is the node (no reference cycle)."""

    __slots__ = ("_t", "_arr", "_version", "_vc", "_is_output", "_freed", "_rg")

    def __init__(self, t, is_output):
        if t._inference:
            if not STATE.inference:
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. Please do not use Tensors "
                    "created in inference mode in computation tracked by autograd. To work "
                    "around this, you can make a clone to get a normal tensor and use it in "
                    "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
        self._vc = t._vc
        self._version = t._vc.v
        self._is_output = is_output
        self._freed = False
        if is_output:
            self._t = None
            self._arr = t._value
            self._rg = t._rg
        else:
            self._t = t

    def unpack(self, node=None):
        if self._freed:
            raise RuntimeError(_FREED)
        if self._vc.v != self._version:
            self._version_error(node)
        if self._is_output:
            t = _make(self._arr)
            if self._rg:
                t._rg = True
                t._grad_fn = node
            return t
        return self._t

    def array(self, node):
        """The saved value as a jax array (the fast path of backward)."""
        if self._freed:
            raise RuntimeError(_FREED)
        if self._vc.v != self._version:
            self._version_error(node)
        return self._arr if self._is_output else self._t._value

    def _version_error(self, node):
        t = self._t
        shape = list(t._shape) if t is not None else list(self._arr.shape)
        dt = (t.dtype if t is not None else None)
        tname = _type_name(dt if dt is not None else self._arr.dtype)
        # torch 2.13 names the forward op here: ExpBackward0 -> Exp
        fwd = node.name().rstrip("0123456789").removesuffix("Backward") if node else ""
        where = f", which is output 0 of {fwd}," if self._is_output and node else ""
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{tname} {shape}]{where} is at version {self._vc.v}; "
            f"expected version {self._version} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")

    def free(self):
        self._freed = True
        self._t = self._arr = None


def _type_name(dt):
    from .._dtypes import as_dtype
    d = as_dtype(dt)
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long",
             "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
    return f"eagergrad.{names[d.name]}Tensor"
