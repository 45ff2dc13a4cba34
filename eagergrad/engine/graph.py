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
import weakref

from .._mode import ANOMALY, COMPILING, STATE
from ..size import can_broadcast_to, format_shape
from ..tensor import Tensor, _zeros_meta
from .anomaly import record as anomaly_record
from .hooks import HOOK_GENERATION, RemovableHandle


class _GradientOps:
    """The tensor ops the engine itself needs on gradients. The engine sits below the op
    table and never imports it: eagergrad/ops fills these in when it is imported.
    Each takes and returns Tensors, recorded under create_graph as any op."""

    __slots__ = ("add", "add_", "copy_", "sum_to_size", "real", "to", "clone")


GRAD_OPS = _GradientOps()

_seq = itertools.count()
_MAX_SEQ = sys.maxsize  # AccumulateGrad runs as soon as it is ready, as in torch


def init_node(node, next_edges, meta_in):
    """Set every Node slot (Node.__init__, and the op table's recording, which skips
    __init__ on its hot path)."""
    node._next = next_edges
    node._meta_in = meta_in
    node._seq = next(_seq)
    node._metadata = node._pre_hooks = node._post_hooks = None
    node._tensor_pre_hooks = node._retain_hooks = node._anomaly_trace = None
    node._sig = None  # see _vjp_maker


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
        init_node(self, next_edges, meta_in)

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
        if COMPILING.n and COMPILING.rec is not None:
            COMPILING.rec.hooked = True
        if self._pre_hooks is None:
            self._pre_hooks = collections.OrderedDict()
        return RemovableHandle(self._pre_hooks, fn)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) -> new grad_inputs or None, run after this node."""
        if COMPILING.n and COMPILING.rec is not None:
            COMPILING.rec.hooked = True
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
        out = _validate(self, list(self.apply(list(grads))))
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


_sigs = collections.OrderedDict()
_SIGS_MAX = 1 << 16
_sig_ids = itertools.count()
_sigs_lock = threading.Lock()


def intern_sig(key):
    """A small int standing for a hashable static signature (see Node._vjp_maker).
    Bounded: an evicted signature comes back under a new id (ids are never reused), so
    eviction only costs cache misses downstream."""
    i = _sigs.get(key)
    if i is None:
        with _sigs_lock:  # (two threads interning one key get one id)
            i = _sigs.get(key)
            if i is None:
                i = _sigs[key] = next(_sig_ids)
                if len(_sigs) > _SIGS_MAX:
                    _sigs.popitem(last=False)
    return i


_R_TO_C = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
           "grad_is_complex) to be true, but got false.  (Could this error message be "
           "improved?  If so, please report an enhancement request to PyTorch.)")


def _validate(fn, outputs):
    """torch's validate_outputs: count, then shape (sum broadcast dims) and dtype of
    every gradient against the metadata of the input it flows to."""
    edges = fn._next
    if len(outputs) != len(edges):
        raise RuntimeError(f"function {fn.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(outputs)})")
    for i, g in enumerate(outputs):
        e = edges[i]
        if g is None or e is None:
            continue
        shape, dt = e[0]._meta_in[e[1]]
        if g._shape != shape:
            if not can_broadcast_to(shape, g._shape):
                raise RuntimeError(
                    f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                    f"{format_shape(g._shape)} but expected shape compatible with "
                    f"{format_shape(shape)}")
            g = GRAD_OPS.sum_to_size(g, shape)
        if g.dtype is not dt:
            if g.dtype.is_complex and not dt.is_complex:
                if not fn._builtin:  # a custom backward's: torch's check
                    raise RuntimeError(_R_TO_C)
                g = GRAD_OPS.real(g)  # a built-in node's: torch's handle_r_to_c
            g = GRAD_OPS.to(g, dt)
        outputs[i] = g
    return outputs


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
        meta = ((variable._shape, variable.dtype),)
        init_node(self, (), meta)  # (every step makes one per parameter: no super call)
        self._seq = _MAX_SEQ
        if ANOMALY.enabled:
            anomaly_record(self)
        self._sig = intern_sig(("acc", meta))
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
        if new is None or not var._requires_grad:
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
                    g = _zeros_meta(new._shape, new.dtype)
                    GRAD_OPS.copy_(g, new)
                    var.grad = g
                else:
                    # A fresh tensor over the same immutable array: later in-place
                    # updates of .grad can never write into the caller's tensor.
                    var.grad = new._fresh_copy()
            elif STATE.grad:
                var.grad = GRAD_OPS.add(old, new)  # create_graph: out of place, recorded
            else:
                GRAD_OPS.add_(old, new)  # in place, as torch: `g = x.grad` sees it
        _post_accumulate(var)
        return []


def _post_accumulate(var):
    """torch's post-accumulate-grad hooks (_call_hooks): a hook may return its argument
    (ignored); any other value is checked as a gradient replacement, handed to the next
    hooks, then refused once all have run."""
    arg = var
    for hook in list((var._post_acc_hooks or {}).values()):
        r = hook(arg)
        if r is not None and r is not arg:
            arg = _check_single(hook, arg, r)
    if arg is not var:
        raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def _hook_name(hook):
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _check_single(hook, old, new):
    """torch's check_single_result: what a hook may put in place of a gradient."""
    if old is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"torch.{old.dtype.scalar_name}Tensor got "
                           f"torch.{new.dtype.scalar_name}Tensor)")
    if new._shape != old._shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return new


# ---- the engine's Tensor methods: where a tensor's gradient enters the graph, hooks ----
# (bound on Tensor by _tensor_methods.py)

def _edge(self):
    """The edge gradients for this tensor flow along: (grad_fn, output_nr), or the
    leaf's AccumulateGrad, created on first use and kept while the graph holds it."""
    fn = self._grad_fn if self._base is None else self.grad_fn
    if fn is not None:
        return (fn, self._out_nr)
    if self._base is not None and not getattr(self, "_view_rg", False):
        return None  # requires grad only through its base: no accumulator (as torch)
    acc = self._accumulator_ref() if self._accumulator_ref is not None else None
    if acc is None:
        acc = AccumulateGrad(self)
        if self._hooks is not None:  # a leaf's hooks run as its sink's
            acc._tensor_pre_hooks = {0: self._hooks}
        self._accumulator_ref = weakref.ref(acc)
    return (acc, 0)

def _grad_accumulator(self):
    return self._accumulator_ref() if self._accumulator_ref is not None else None


def retain_grad(self):
    """Keep `.grad` for a non-leaf tensor after backward.

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True); y = x * 2; y.retain_grad()
    >>> y.sum().backward(); y.grad
    tensor([1., 1.])
    """
    if COMPILING.n and COMPILING.rec is not None:
        COMPILING.rec.hooked = True
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None or self._retains_grad:
        return
    ref = weakref.ref(self)

    def retain(g):
        t = ref()
        if t is None:
            return
        if t.grad is None:
            t.grad = g.detach()._fresh_copy() if not STATE.grad else g.clone()
        else:
            t.grad = t.grad + g
    self._retains_grad = retain
    self._attach_retain()

def _attach_retain(self):
    fn = self._grad_fn
    if fn._retain_hooks is None:
        fn._retain_hooks = {}
    fn._retain_hooks[self._out_nr] = self._retains_grad
    HOOK_GENERATION.n += 1

def register_hook(self, hook):
    """hook(grad) -> new grad or None, run when this tensor's gradient is computed;
    it stays with the grad_fn the tensor has now (even after an in-place op).

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 3)
    >>> (x * 2).sum().backward(); x.grad
    tensor([6., 6.])
    """
    if COMPILING.n and COMPILING.rec is not None:
        COMPILING.rec.hooked = True
    if not (self._requires_grad or self._base is not None and self._base._requires_grad):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    fn = self._grad_fn if self._base is None else self.grad_fn
    if fn is None:
        if self._hooks is None:
            self._hooks = {}
            acc = self._grad_accumulator()
            if acc is not None:
                acc._tensor_pre_hooks = {0: self._hooks}
        return RemovableHandle(self._hooks, hook)
    # one hook dict per tensor, as torch: the node runs them tensor by tensor
    pre = fn._tensor_pre_hooks
    if pre is None:
        pre = fn._tensor_pre_hooks = {}
    hooks = pre.get(self._out_nr)
    if hooks is None:
        hooks = pre[self._out_nr] = {}
    return RemovableHandle(hooks, hook)

def register_post_accumulate_grad_hook(self, hook):
    """hook(tensor), run after a leaf's `.grad` was accumulated."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if self._post_acc_hooks is None:
        self._post_acc_hooks = {}
    return RemovableHandle(self._post_acc_hooks, hook)
