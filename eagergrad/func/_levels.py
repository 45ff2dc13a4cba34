"""Levels: the transforms active in this thread (FUNC.levels), and what .item(),
bool() and random draws do inside one; whether a value is batched by a vmap; the
randomness modes of vmap and jacfwd."""
import contextlib

import jax
import numpy as np
from jax._src.interpreters.batching import BatchTracer

from .._mode import FUNC, STATE
from ._program import _concretize


_VMAP_RANDOM = ("vmap: called random operation while in randomness error mode. Please "
                "either use the 'same' or 'different' randomness flags on vmap or perform "
                "the randomness operation out of vmap")


class _Level:
    __slots__ = ("index", "kind", "randomness", "stats")

    def __init__(self, kind, randomness=None, index=None):
        self.kind, self.randomness, self.index = kind, randomness, index
        self.stats = set()  # ids of storages BatchNorm updated in place (running stats)

    def key(self, key):
        if self.randomness == "error":
            raise RuntimeError(_VMAP_RANDOM)
        if self.randomness == "different" and self.index is not None:
            return jax.random.fold_in(key, self.index)
        return key

    def batched(self, value):
        """Whether the jax value is batched by this level (a vmap's); for ops that must
        refuse a batched update of an unbatched tensor (FUNC.levels[-1].batched(x))."""
        return self.kind == "vmap" and _batched(value, self.index)

    def item(self, value, what):
        """The Python number of a 1-element traced value (.item(), float(), bool()): read
        from the trace when it depends on known values only (NOTE [values in a trace]),
        which under vmap means not on the batched inputs (torch's errors otherwise);
        linearize's trace has none (torch's make_fx error)."""
        if self.kind == "linearize":
            raise RuntimeError(
                "It appears that you're trying to get value out of a tracing tensor with "
                "aten._local_scalar_dense.default - erroring out! It's likely that this is "
                "caused by data-dependent control flow or similar.  It may be possible to "
                "trace this with dynamic shapes; try setting tracing_mode='symbolic' in your "
                "make_fx call.")
        got = _concretize(value)
        if got is not None:
            return np.asarray(got).reshape(()).item()
        if any(lv.kind == "vmap" for lv in FUNC.levels):
            if self.kind != "vmap":
                raise RuntimeError(
                    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) "
                    "attempting to use a Tensor in some data-dependent control flow or (3) "
                    "encountering this error in PyTorch internals. For (1): we don't support "
                    "vmap over calling .item() on a Tensor, please try to rewrite what you're "
                    "doing with other operations. For (2): we don't support data-dependent "
                    "control flow in vmap yet, please file an issue at "
                    "https://github.com/pytorch/pytorch/issues . For (3): please file an "
                    "issue.")
            if what == "item":
                raise RuntimeError(
                    "vmap: It looks like you're calling .item() on a Tensor. We don't support "
                    "vmap over calling .item() on a Tensor, please try to rewrite what you're "
                    "doing with other operations. If error is occurring somewhere inside "
                    "PyTorch internals, please file a bug report.")
            raise RuntimeError(
                "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                "control flow. We don't support that yet, please file an issue at "
                "https://github.com/pytorch/pytorch/issues .")
        # grad/vjp/jvp on concrete values (as torch): the primal, a constant for them
        while hasattr(value, "primal"):
            value = value.primal
        return np.asarray(value).reshape(()).item()  # (under jax.jit: jax's error)


@contextlib.contextmanager
def _inside(kind, randomness=None, index=None):
    """Run the user's function with the level pushed. Under the reverse-mode transforms
    (grad, vjp, jacrev) the differentiated inputs require grad, as in torch (their graph
    of tracers is dropped); elsewhere nothing is recorded."""
    prev = STATE.grad
    if kind not in _REVERSE and not (FUNC.capture is not None and FUNC.capture.grad):
        STATE.grad = False  # (while autograd over the call is traced, ops still record)
    FUNC.levels.append(_Level(kind, randomness, index))
    try:
        yield
    finally:
        FUNC.levels.pop()
        STATE.grad = prev


_REVERSE = ("grad", "vjp")


@contextlib.contextmanager
def _jvp_level():
    """A forward-mode level pushed (autograd.functional's forward-mode jacobian runs the
    function under jax.jvp): .item() of a value reads its primal."""
    FUNC.levels.append(_Level("jvp"))
    try:
        yield
    finally:
        FUNC.levels.pop()


def _batched(value, index):
    """Whether `value` is batched by the vmap whose hidden batched argument is `index`."""
    return isinstance(value, BatchTracer) and value._trace is index._trace


_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
