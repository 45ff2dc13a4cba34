"""The autograd graph: Node, AccumulateGrad, GraphRoot.

NOTE [edges]: a node's `_next` holds one entry per forward input: `(node, input_nr)`
or None when that input needs no gradient. `_meta_in` holds `(shape, dtype)` of each
forward output, i.e. of each gradient the node receives; the engine checks and
reshapes gradients flowing along an edge against the target's `_meta_in`.
"""
import collections
import itertools
import sys
import threading

from .anomaly import ANOMALY, record as anomaly_record
from .grad_mode import STATE

_seq = itertools.count()
_MAX_SEQ = sys.maxsize  # AccumulateGrad runs as soon as it is ready, as in torch


class Node:
    """A backward function in the graph (torch.autograd.graph.Node).

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> (x * 2).grad_fn.name()
    'MulBackward0'
    """

    __slots__ = ("_next", "_seq", "_meta_in", "_metadata", "_pre_hooks", "_post_hooks",
                 "_tensor_pre_hooks", "_retain_hooks", "_anomaly_trace", "_sig", "__weakref__")

    # A built-in node computes no gradient for an edge the running backward prunes
    # (torch's task_should_compute_output): its post-hooks see None there. Its complex
    # gradient for a real input means the real part (torch's handle_r_to_c).
    _builtin = True

    def __init__(self, next_edges=(), meta_in=()):
        self._next = next_edges
        self._meta_in = meta_in
        self._seq = next(_seq)
        self._metadata = None
        self._pre_hooks = self._post_hooks = self._tensor_pre_hooks = self._retain_hooks = None
        self._anomaly_trace = None
        self._sig = None  # see _pure_vjp

    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((None, 0) if e is None else e for e in self._next)

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self):
        return self._seq

    def register_prehook(self, fn):
        """fn(grad_outputs) -> new grad_outputs or None, run before this node.

        >>> import eagergrad as torch
        >>> x = torch.ones(2, requires_grad=True); y = x * 2
        >>> h = y.grad_fn.register_prehook(lambda g: (g[0] * 10,))
        >>> y.sum().backward(); x.grad
        tensor([20., 20.])
        """
        if self._pre_hooks is None:
            self._pre_hooks = collections.OrderedDict()
        return RemovableHandle(self._pre_hooks, fn)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, run after this node."""
        if self._post_hooks is None:
            self._post_hooks = collections.OrderedDict()
        return RemovableHandle(self._post_hooks, fn)

    def apply(self, grads):
        """Gradients w.r.t. the forward inputs (one per edge) from those w.r.t. outputs."""
        raise NotImplementedError

    def _release(self):
        """Free saved tensors (called after the node ran without retain_graph)."""

    def _vjp_maker(self):
        """For the fused backward (NOTE [fused segments]): a function nones -> this
        node's backward as a pure jax function of arrays (gradients that are not None,
        then saved arrays), holding no reference to the node; None when the node can only
        run by `apply`. A node that has one sets `_sig`: an interned id of everything
        static about its backward, equal for nodes whose pure functions are
        interchangeable."""
        return None

    def _fusable(self):
        """Whether this node may run inside a fused segment: a pure backward and no
        node hooks (tensor hooks are `_tapped`; they run before the segment)."""
        return self._sig is not None and not self._pre_hooks and not self._post_hooks

    def _tapped(self):
        """Whether hooks must see this node's incoming gradients first (tensor hooks,
        retain_grad)."""
        return bool(self._tensor_pre_hooks or self._retain_hooks)

    def __call__(self, *grads):
        from .engine import _validate
        out = _validate(self, list(self.apply(list(grads))))
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


_handle_ids = itertools.count()


class _HookGeneration:
    """Counts every registration and removal of a hook (any kind): a running backward
    whose plan was made under another count re-plans its remainder."""

    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


HOOK_GENERATION = _HookGeneration()


class RemovableHandle:
    """A hook's handle: `.remove()` unregisters it (also usable as a context manager)."""

    __slots__ = ("_dicts", "id")

    def __init__(self, hooks, value, extra=()):
        self.id = i = next(_handle_ids)
        self._dicts = (hooks, *extra) if extra else (hooks,)
        hooks[i] = value
        HOOK_GENERATION.n += 1

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)
        HOOK_GENERATION.n += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_sigs = collections.OrderedDict()
_SIGS_MAX = 1 << 16
_sig_ids = itertools.count()


def intern_sig(key):
    """A small int standing for a hashable static signature (see Node._vjp_maker).
    Bounded: an evicted signature comes back under a new id (ids are never reused), so
    eviction only costs cache misses downstream."""
    i = _sigs.get(key)
    if i is None:
        i = _sigs[key] = next(_sig_ids)
        if len(_sigs) > _SIGS_MAX:
            _sigs.popitem(last=False)
    return i


class GraphRoot(Node):
    """Feeds the initial gradients of several roots into the graph."""

    __slots__ = ("_grads",)

    def __init__(self, edges, grads):
        super().__init__(tuple(edges), ())
        self._grads = grads
        self._sig = intern_sig(("root", len(grads)))

    def apply(self, grads):
        return list(self._grads)

    def _fusable(self):
        return False  # it only hands out its gradients: cheaper in Python

    def name(self):
        return "torch::autograd::GraphRoot"


class AccumulateGrad(Node):
    """Sink for a leaf: adds the incoming gradient into `variable.grad`."""

    __slots__ = ("variable", "_lock")

    def __init__(self, variable):
        super().__init__((), ((variable._shape, variable.dtype),))
        self._seq = _MAX_SEQ
        if ANOMALY.enabled:
            anomaly_record(self)
        self._sig = intern_sig(("acc", self._meta_in))
        self.variable = variable
        self._lock = threading.Lock()

    def name(self):
        return "torch::autograd::AccumulateGrad"  # torch's name(); repr says AccumulateGrad

    def _fusable(self):
        # a fused segment computes its gradient; the write into .grad is Python's
        return not self._pre_hooks and not self._post_hooks and \
            not self.variable._post_acc_hooks

    def apply(self, grads):
        new = grads[0]
        var = self.variable
        if new is None or not var._rg:
            # torch still calls the post-accumulate-grad hooks (and writes no .grad for a
            # leaf that stopped requiring grad after the forward)
            _post_accumulate(var)
            return []
        with self._lock:
            old = var.grad
            if old is None:
                if STATE.grad:
                    # create_graph: a recorded copy, as torch's clone_obey_contract
                    # (grad_fn CopyBackwards); never the incoming tensor itself.
                    from ..tensor import _zeros_meta
                    g = _zeros_meta(new._shape, new.dtype)
                    g.copy_(new)
                    var.grad = g
                else:
                    # A fresh tensor over the same immutable array: later in-place
                    # updates of .grad can never write into the caller's tensor.
                    var.grad = new._fresh_copy()
            elif STATE.grad:
                var.grad = old + new   # create_graph: out of place, recorded
            else:
                old.add_(new)          # in place, as torch: `g = x.grad` sees it
        _post_accumulate(var)
        return []


def _post_accumulate(var):
    for hook in list((var._post_acc_hooks or {}).values()):
        if hook(var) is not None:
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")
