"""Custom autograd.Function: forward/backward staticmethods, ctx as the graph node."""
import functools

from .graph import Node
from .grad_mode import STATE, get_state, restore_state, set_enabled
from .._mode import ANOMALY, CAPTURING, FUNC, FWD
from .anomaly import record as anomaly_record
from .saved import SavedTensor
from ..tensor import IN_CUSTOM_FUNCTION, Tensor, _tangent, _zeros_meta


class FunctionCtx:
    """What `forward` gets as ctx; the same object is the node in the graph."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_fwd = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self.__dict__.get("_saved")
        if saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self) for s in saved)

    saved_variables = saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """The node of a custom Function call; named `<FunctionName>Backward`."""

    _fn = None
    _builtin = False  # backward returns what it returns, checked (torch's PyNode)

    def apply(self, grads):
        if getattr(self, "_materialize", True):
            grads = [g if g is not None or m[1] is None else _zeros_meta(*m)
                     for g, m in zip(grads, self._meta_in)]
        out = self._fn.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._next)
        if len(out) > n and all(g is None for g in out[n:]):
            out = out[:n]
        if len(out) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(out)})")
        for g in out:
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return list(out)  # post-hooks see them all, as torch's; the engine drops the
        # ones on edges that need no gradient

    def _release(self):
        for s in self.__dict__.get("_saved") or ():
            if s is not None:
                s.free()


class Function:
    """Base class of custom differentiable functions.

    >>> import eagergrad as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).backward(); x.grad
    tensor([6.])
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,), {"_fn": cls})

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        node = cls._backward_cls.__new__(cls._backward_cls)
        Node.__init__(node)
        is_t = [isinstance(a, Tensor) for a in args]
        record = STATE.grad and any(t and a._requires_grad for t, a in zip(is_t, args))
        if record and CAPTURING.n and FUNC.capture is not None:
            FUNC.capture.reads([a for t, a in zip(is_t, args) if t])
        # (grad mode aside)
        node.needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_t, args))
        prev = get_state()
        set_enabled(False)
        tangents = prev_gen = None
        if FWD.active:  # forward sees its inputs without tangents, as torch
            tangents = [_tangent(a) if t else None for t, a in zip(is_t, args)]
            if not any(x is not None for x in tangents):
                tangents = None
            prev_gen, FWD.gen, FWD.active = FWD.gen, object(), False
        try:
            if cls.setup_context is Function.setup_context:
                out = cls.forward(node, *args, **kwargs)
            else:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, out)
        finally:
            restore_state(prev)
            if prev_gen is not None:
                FWD.gen, FWD.active = prev_gen, True
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        node._next = tuple(a._edge() if t and a._requires_grad and record else None
                           for t, a in zip(is_t, args))
        if ANOMALY.enabled:
            anomaly_record(node)
        non_diff = {id(t) for t in node.__dict__.get("_non_diff", ())}
        dirty = node.__dict__.get("_dirty", ())
        out_ids = {id(o) for o in outs}
        for d in dirty:
            # all of them first, as torch's _mark_dirty (even if raising below)
            d._version_counter.version += 1
        for d in dirty:
            if id(d) not in out_ids:
                continue
            if record and d._grad_fn is None and d._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            if record and d._base is not None:
                raise NotImplementedError("eagergrad does not implement mark_dirty on a view "
                                          "with autograd yet")
        if any(id(d) not in out_ids for d in dirty):
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
        dirty = {id(d) for d in dirty}
        inputs = {id(a) for a, t in zip(args, is_t) if t}
        res = []
        for i, o in enumerate(outs):
            if isinstance(o, Tensor):
                diff = record and id(o) not in non_diff and o.dtype.is_differentiable
                if id(o) in inputs and id(o) not in dirty:
                    o = _view_alias(o)  # an input returned as is: a view of it, as torch
                if diff:
                    o._requires_grad, o._grad_fn, o._out_nr = True, node, i
                    if o._base is not None and id(o) not in dirty:
                        o._creation_meta = IN_CUSTOM_FUNCTION  # no in-place on it later
            res.append(o)
        node._meta_in = tuple((o._shape, o.dtype) if isinstance(o, Tensor) else ((), None)
                              for o in res)
        to_save = node.__dict__.pop("_to_save", None)
        if to_save is not None:
            for i, s in enumerate(to_save):
                if s is not None and not isinstance(s, Tensor):
                    raise TypeError("save_for_backward can only save variables, but argument "
                                    f"{i} is of type {type(s).__name__}")
            outs_ids = {id(o) for o in res if isinstance(o, Tensor)}
            node._saved = [None if s is None else SavedTensor(s, id(s) in outs_ids)
                           for s in to_save]
        if tangents is not None:
            _forward(cls, node, args, is_t, tangents, res, outs)
        return res[0] if single else tuple(res)


def _forward(cls, ctx, args, is_t, tangents, res, outs):
    """Forward mode through a custom Function: its jvp gets a tangent per input (zeros
    for a tensor without one, None for a non-tensor) and gives one per output."""
    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    tin = [x if x is not None or not t else _zeros_meta(a._shape, a.dtype)
           for x, t, a in zip(tangents, is_t, args)]
    to_save = ctx.__dict__.pop("_to_save_fwd", None)
    had = ctx.__dict__.get("_saved")
    if to_save is not None:
        ctx._saved = [None if x is None else SavedTensor(x, False) for x in to_save]
    try:
        tout = cls.jvp(ctx, *tin)
    finally:
        if to_save is not None:
            ctx._saved = had
            if had is None:
                del ctx._saved
    tout = tout if isinstance(tout, tuple) else (tout,)
    if len(tout) != len(res):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(res)} but got {len(tout)})")
    dirty = {id(d) for d in ctx.__dict__.get("_dirty", ())}
    for o, src, x in zip(res, outs, tout):
        if not isinstance(o, Tensor) or x is None or not o.dtype.is_differentiable:
            continue
        if id(src) in dirty:
            if x is not tangents[[id(a) for a in args].index(id(src))]:
                raise RuntimeError("An inplace custom Function is not modifying the forward "
                                   "mode gradients inplace. If the forward is modifying an "
                                   "input inplace, then the jvp function must modify the "
                                   "corresponding gradient inplace.")
            continue
        if x._shape != o._shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                "original Tensor, this is not supported. Tensor is of size "
                f"{list(o._shape)} while the given forward gradient is of size "
                f"{list(x._shape)}.")
        o._fw = (FWD.gen, x)


def _view_alias(t):
    """A view of `t` with an empty view chain (shares storage and version counter)."""
    v = t._alias()  # (not detach(): under a jax transform that would stop the gradient)
    v._version_counter = t._version_counter
    v._base = t._base if t._base is not None else t
    if v._vchain is None:
        v._vchain, v._arr, v._gen = (), t._value, t._storage.generation
    v._attr_version, v._creation_meta, v._view_rg = t._version_counter.version, None, False
    return v


class _Error(Node):
    """What a once_differentiable backward's outputs get as grad_fn when it runs with
    create_graph and a grad_output requiring grad: differentiating them raises."""

    def __init__(self, msg, next_edges, meta_in):
        super().__init__(next_edges, meta_in)
        self._msg = msg

    def name(self):
        return "torch::autograd::Error"

    def apply(self, grads):
        raise RuntimeError(self._msg)


def once_differentiable(fn):
    """Run a custom backward without recording it; under create_graph its outputs get
    a grad_fn that raises when differentiated (torch's DelayedError)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = get_state()
        set_enabled(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            restore_state(prev)
        if not STATE.grad or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        edges, res = [], []
        for o in outs:
            if not isinstance(o, Tensor):
                edges.append(None)
                res.append(o)
                continue
            fake = o.detach()  # torch's fake_requires_grad: a leaf for the edge
            fake.requires_grad = True
            edges.append(fake._edge())
            res.append(o.detach())
        node = _Error("trying to differentiate twice a function that was marked with "
                      "@once_differentiable", tuple(edges),
                      tuple((o._shape, o.dtype) if isinstance(o, Tensor) else ((), None)
                            for o in res))
        for i, o in enumerate(res):
            if isinstance(o, Tensor):
                o._requires_grad, o._grad_fn, o._out_nr = True, node, i
        return res[0] if single else tuple(res)
    return wrapper
