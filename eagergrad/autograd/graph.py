"""torch.autograd.graph: the Node interface, gradient edges, hooks over several tensors,
and saved-tensor hooks."""
import contextlib
import threading
import weakref
from typing import NamedTuple, Optional

import jax

from ..engine.engine import current_graph_task_id, will_execute
from ..engine.graph import AccumulateGrad, GraphRoot, Node, RemovableHandle  # noqa: F401
from ..engine.saved import HOOKS, SavedTensor, saved_tensors_hooks  # noqa: F401
from ..tensor import Tensor, _make


class GradientEdge(NamedTuple):
    """(node, output_nr): where the gradient of a tensor enters the graph; usable in
    place of the tensor as an input of autograd.grad and backward(inputs=...)."""

    node: Node
    output_nr: int
    ownership_token: Optional[Node] = None  # torch's: keeps a Python node's graph alive


def get_gradient_edge(tensor):
    """The GradientEdge of a tensor (its grad_fn, or its AccumulateGrad for a leaf)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = tensor._edge()
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Bump the version counter of `tensor` (or of each tensor in an iterable)."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._version_counter.version += 1


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call fn once per backward over `tensors`: mode "all" with the list of their
    gradients (None for those not computed) after the last one is computed; mode "any"
    with the first gradient computed."""
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "all":
        count, buffers, expected = {}, {}, {}
        edges = []
        for t in tensors:
            if not t.requires_grad:
                raise AssertionError("Expected gradient function to be set")
            edges.append(t._edge()[0])

        def inner(idx):
            def hook(grad):
                task = current_graph_task_id()
                with lock:
                    n = count.get(task, 0)
                    count[task] = n + 1
                    if n == 0:
                        buffers[task] = [None] * len(tensors)
                        expected[task] = sum(1 for e in edges if will_execute(e))
                    buffers[task][idx] = grad
                    done = n + 1 == expected[task]
                    if done:
                        buf = buffers.pop(task)
                        del count[task], expected[task]
                if done:
                    fn(buf)
            return hook
        return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))
    if mode == "any":
        seen = set()

        def hook(grad):
            task = current_graph_task_id()
            with lock:
                first = task not in seen
                seen.add(task)
            if first:
                fn(grad)
        return _MultiHandle(tuple(t.register_hook(hook) for t in tensors if t.requires_grad))
    raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")


class disable_saved_tensors_hooks:
    """Inside, entering saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = HOOKS.disabled
        HOOKS.disabled = self.error_message
        if HOOKS.stack:
            HOOKS.disabled = self._prev
            raise RuntimeError(self.error_message)

    def __exit__(self, *exc):
        HOOKS.disabled = self._prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*a, **k)
        return wrapper


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to host memory (jax.device_put to the CPU) and come back to their
    device when backward uses them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        cpu = jax.devices("cpu")[0]

        def pack(t):
            a = t._value
            dev = next(iter(a.devices())) if hasattr(a, "devices") else None
            return dev, jax.device_put(a, cpu)

        def unpack(packed):
            dev, a = packed
            return _make(jax.device_put(a, dev) if dev is not None else a)
        super().__init__(pack, unpack)


# ---- allow_mutation_on_saved_tensors ------------------------------------------------------
_allow_mutation_on_saved_tensors_enabled = False


class _Handle:
    pass


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors block: `original` maps the handle
    packed for a saved tensor to the tensor; `cloned` to its value when it was saved, once
    the tensor has been modified in place (a jax array never changes, so keeping the array
    of save time is the lazy clone torch makes on the first in-place write)."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self._saved = weakref.WeakKeyDictionary()  # handle -> (version, array) at save time

    def clear(self):
        self.cloned.clear()
        self.original.clear()
        self._saved.clear()


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx):
        def pack_hook(tensor):
            handle = _Handle()
            ctx.original[handle] = tensor
            ctx._saved[handle] = (tensor._version_counter.version, tensor._value)
            return handle

        def unpack_hook(handle):
            error_msg = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                         "contextin which the graph was originally recorded.")
            if not _allow_mutation_on_saved_tensors_enabled:
                raise AssertionError(error_msg)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(error_msg)
            t = ctx.original[handle]
            version, value = ctx._saved[handle]
            if t._version_counter.version == version:
                return t
            ctx.cloned[handle] = res = _make(value)
            del ctx.original[handle]
            return res

        super().__init__(pack_hook, unpack_hook)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside, a tensor saved for backward may be modified in place: backward sees the value
    it had when it was saved (forward and backward must both run inside).

    >>> import eagergrad as torch
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = torch.ones(2, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b ** 2).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """
    global _allow_mutation_on_saved_tensors_enabled
    ctx = _AllowMutationOnSavedContext()
    with _swap_with_cloned(ctx):
        try:
            if _allow_mutation_on_saved_tensors_enabled:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _allow_mutation_on_saved_tensors_enabled = True
            yield ctx
        finally:
            ctx.clear()
            _allow_mutation_on_saved_tensors_enabled = False
