"""SavedTensor: a tensor kept for backward, version-checked on unpack."""
import re
import threading

from .._mode import FWD, STATE
from ..tensor import Tensor, _make

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or "
          "if you need to access saved tensors after calling backward.")


class _HookState(threading.local):
    def __init__(self):
        self.stack = []        # (pack, unpack) pairs of saved_tensors_hooks, innermost last
        self.disabled = None   # the message of disable_saved_tensors_hooks


HOOKS = _HookState()


class saved_tensors_hooks:
    """Pack/unpack hooks for every tensor saved for backward inside the context
    (thread-local; nested contexts: the innermost wins).

    >>> import eagergrad as torch
    >>> calls = []
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: calls.append(1) or t,
    ...                                              lambda t: t):
    ...     y = x * x
    >>> len(calls)
    2
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if HOOKS.disabled is not None:
            raise RuntimeError(HOOKS.disabled)
        HOOKS.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        HOOKS.stack.pop()


class SavedTensor:
    """A tensor saved by a node. An input is kept as the tensor object itself (so
    `x is y.grad_fn._saved_self`); an output is kept as its array, and unpacking it
    makes a new tensor whose grad_fn is the node (no reference cycle). With pack/unpack
    hooks (register_hooks, or saved_tensors_hooks when saved) only the packed object is
    kept: pack runs once, unpack on every use."""

    __slots__ = ("_t", "_arr", "_src", "_version", "_version_counter", "_is_output", "_freed",
                 "_requires_grad", "_meta",
                 "_packed", "_unpack", "_hist", "_fw")

    def __init__(self, t, is_output):
        if t._inference:
            if not STATE.inference:
                raise RuntimeError(
                    "Inference tensors cannot be saved for backward. Please do not use Tensors "
                    "created in inference mode in computation tracked by autograd. To work "
                    "around this, you can make a clone to get a normal tensor and use it in "
                    "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")
        self._version_counter = t._version_counter
        self._version = t._version_counter.version
        self._is_output = is_output
        self._freed = False
        self._meta = (t._shape, t.dtype, t._out_nr, None)  # None: see _version_error
        self._unpack = None
        if is_output:
            self._t = None
            self._arr = t._value
            self._src = (t._storage, t._vchain, t._storage.generation)
            self._requires_grad = t._requires_grad
            # forward mode: the output's tangent, for forward-over-reverse (as torch's)
            self._fw = getattr(t, "_fw", None) if FWD.active else None
        else:
            self._t = t
        if HOOKS.stack and not t._wrapped:  # torch never packs a wrapped number
            pack, unpack = HOOKS.stack[-1]
            self._pack(pack, unpack, t)

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack this saved tensor now with pack_hook; unpack_hook(packed) on every use."""
        if self._freed:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        if self._unpack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("expected two callables as arguments")
        # torch packs the saved input detached (an output: its data, without history)
        t = self._t if not self._is_output else _make(self._arr)
        self._pack(pack_hook, unpack_hook, t, detach=not self._is_output)

    def _pack(self, pack, unpack, t, detach=False):
        if isinstance(t, Tensor) and t is self._t:
            # what the node's tensor looked like, to give the unpacked one its history
            # (a leaf's: its grad accumulator, so gradients still reach the leaf)
            self._hist = (t._requires_grad, t._grad_fn, t._out_nr, t._accumulator_ref)
        version = t._version_counter.version
        self._packed = pack(t.detach() if detach else t)
        if t._version_counter.version != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can "
                "lead to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")
        self._unpack = unpack
        self._t = self._arr = self._src = None  # (_src: the storage, its array too)

    def _unpacked(self):
        t = self._unpack(self._packed)
        if not isinstance(t, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        return t

    def unpack(self, node=None):
        if self._freed:
            raise RuntimeError(_FREED)
        if self._unpack is not None:  # with hooks torch checks no version: it can't
            u = self._unpacked()
            t = _make(u._value)
            if self._is_output:
                t._requires_grad = self._requires_grad
                t._grad_fn = node if self._requires_grad else None
                t._out_nr = self._meta[2]
            else:
                t._requires_grad, t._grad_fn, t._out_nr, t._accumulator_ref = self._hist
            return t
        if self._version_counter.version != self._version:
            self._version_error(node)
        if self._is_output:
            t = _make(self._out_array())
            if self._fw is not None:
                t._fw = self._fw
            if self._requires_grad:
                t._requires_grad = True
                t._grad_fn = node
                t._out_nr = self._meta[2]
            return t
        return self._t

    def array(self, node):
        """The saved value as a jax array (the fast path of backward)."""
        if self._freed:
            raise RuntimeError(_FREED)
        if self._unpack is not None:
            return self._unpacked()._value
        if self._version_counter.version != self._version:
            self._version_error(node)
        return self._out_array() if self._is_output else self._t._value

    def _out_array(self):
        """A saved output's value: its memory now, as in torch, where a write that bumps
        no version (through `.data`) is seen by backward; else the array kept at save."""
        st, chain, gen = self._src
        if st.generation == gen:
            return self._arr
        a = st.array
        for f, i in chain or ():
            a = f(a) if i is None else f(a)[i]
        return a

    def _version_error(self, node):
        shape, dt, out_nr, view_fn = list(self._meta[0]), self._meta[1], self._meta[2], \
            self._meta[3]
        if not self._is_output and self._t is not None:  # torch: the input's size now (resize_)
            shape = list(self._t._shape)
        tname = f"eagergrad.{dt.scalar_name}Tensor"
        # torch names the saving node for an output (for the output of an in-place op on a
        # view: the view's grad_fn then, a weakref set by ops/inplace.py), and the tensor's
        # grad_fn now for an input (none for a leaf); torch 2.13 names the forward op:
        # ExpBackward0 -> Exp
        if self._is_output:
            fn = node if view_fn is None else (view_fn() or node)
        elif self._t is not None:
            fn = self._t.grad_fn
        else:
            fn = self._hist[1] if self._unpack is not None else None
        where = ""
        if fn is not None:
            where = f", which is output {out_nr} of {forward_name(fn)},"
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{tname} {shape}]{where} is at version "
            f"{self._version_counter.version}; "
            f"expected version {self._version} instead. Hint: enable anomaly detection to "
            "find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")

    def free(self):
        """Drop the saved value (torch's release_variables): only the metadata for error
        messages stays. `_src` holds the output's storage, so it goes too."""
        self._freed = True
        self._t = self._arr = self._packed = self._src = None


def forward_name(node):
    """How torch 2.13 names a node in its error messages: ExpBackward0 -> Exp,
    ClampBackward1 -> Clamp1, MyFnBackward -> MyFn, torch::autograd::CopySlices as is."""
    m = re.fullmatch(r"(.*)Backward(\d*)", node.name())
    if m is None:
        return node.name()
    return m.group(1) + ("" if m.group(2) in ("", "0") else m.group(2))
