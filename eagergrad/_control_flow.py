"""torch.cond and torch.while_loop, eagerly.

torch 2.13 runs a cond whose predicate is a tensor, and every while_loop, through
torch.compile even in eager code: it traces the functions (so they must not mutate or
return their inputs), runs the graph, and records one autograd node (CondAutogradOpBackward,
WhileLoopAutogradOpBackward) whose edges lead to the inputs and to the tensors the
functions read by closure. eagergrad runs the functions directly, with those rules:

- The functions get stand-ins for the tensor inputs: new tensors over the same arrays, so
  an in-place write reaches no caller's tensor, and raises torch's error after the call.
  Returning an input (or a view of one) raises torch's aliasing error.
- With grad mode on, what the functions record is wrapped in one node whose edges are the
  inputs' then the captured tensors' (those the recorded graph reaches outside itself, in
  the order it first used them); its backward runs that recorded graph. As torch's, cond's
  node frees it after a backward (a second one raises) and gives gradients without history
  under create_graph; while_loop's keeps it, and records under create_graph.
- cond runs the branch the predicate picks, only: unlike torch, which traces both, it
  neither checks the other branch's outputs nor reaches (and gives zero gradients to) the
  tensors only the other branch reads. Under vmap, a batched predicate runs both branches
  and selects with `where`, as torch's batching rule; under jax.jit (eagergrad.jaxify), a
  traced predicate makes a jax.lax.cond of the branches. A while_loop that runs no iteration
  returns its inputs' copies in their structure (torch's, that of body_fn's output).

>>> import eagergrad as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))
>>> y.grad_fn.name()
'CondAutogradOpBackward'
>>> torch.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t * 2), (torch.tensor(0), x))[1]
tensor([ 8., 16.], grad_fn=<WhileLoopAutogradOpBackward>)
"""
import jax

from . import autograd as _autograd
from ._dtypes import bool_, get_default_dtype
from ._mode import ANOMALY, FUNC
from .autograd.graph import GradientEdge
from .creation import from_jax
from .engine import graph as _graph
from .engine.anomaly import record as _anomaly_record
from .engine.grad_mode import STATE
from .engine.saved import _FREED
from .func._pytree import _flatten, _unflatten
from .ops import FUNCTIONS as _F
from .tensor import Tensor, _zeros_meta

# ---- torch's errors (raised by torch.compile's tracing there) ----------------------------
class UncapturedHigherOrderOpError(RuntimeError):
    """torch._dynamo.exc's error for a function cond or while_loop cannot take as it is."""


class TorchRuntimeError(RuntimeError):
    """torch._dynamo.exc's error for what fails while it runs the traced functions."""


_HOP = ("This higher order operator doesn't work unless it is captured completely with "
        "torch.compile. Got graph break/error:\n\n")


def _hop_error(op, title, explanation, *hints):
    lines = [title, f"  Higher Order Operator: torch.{op}", f"  Explanation: {explanation}"]
    return UncapturedHigherOrderOpError(
        _HOP + "\n".join(lines + [f"  Hint: {h}" for h in hints]))


def _aliasing(op):
    return _hop_error(op, "Encountered aliasing during higher order op tracing",
                      "Higher order ops do not support aliasing.",
                      "Replace `return input` with `return input.clone()` to avoid aliasing.")


def _mutation(op):
    return _hop_error(op, "Encountered input mutation during higher order op tracing",
                      "Higher order ops do not support input mutation.")


def _fake(v):
    """How torch's tracing prints a value: a tensor as its FakeTensor."""
    if not isinstance(v, Tensor):
        return str(v)
    parts = [f"size={tuple(v.shape)}"]
    if v.dtype is not get_default_dtype():
        parts.append(f"dtype={v.dtype}")
    if v.requires_grad:
        parts.append("requires_grad=True")
    return "FakeTensor(..., " + ", ".join(parts) + ")"


def _fakes(vs):
    return "[" + ", ".join(_fake(v) for v in vs) + "]"


def _is_int(v):
    return isinstance(v, int)  # (bools too, as torch's)


# ---- stand-ins, and the node over what the functions recorded --------------------------
class _Input(_graph.Node):
    """The grad_fn of a stand-in for an input that requires grad: where the gradient for
    that input is read (never run)."""

    def apply(self, grads):
        return []


def _standin(t, grad):
    """A new tensor over `t`'s array; with grad, requiring grad through an _Input."""
    s = t._fresh_copy()
    if grad and t._requires_grad:
        s._grad_fn, s._out_nr, s._requires_grad = _Input((), ((s._shape, s.dtype),)), 0, True
    return s


def _inner(node, start):
    """Whether `node` was recorded by the functions (after `start`)."""
    return node._seq >= start and not isinstance(node, (_graph.AccumulateGrad, _Input))


def _captured(roots, start, fn=None):
    """The edges by which the graph recorded since `start` reaches tensors from outside
    (closures: leaves' accumulators, nodes recorded before), each once: the tensors `fn`
    closes over first (in its closure's order, as torch lifts them), then the others in
    the order the recorded nodes were made. The recorded nodes are rewired to reach each
    through a stand-in of its own instead (an _Input), so that their backward stops there."""
    nodes, seen = [], set()
    stack = [e[0] for e in roots if _inner(e[0], start)]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        stack.extend(e[0] for e in n._next if e is not None and _inner(e[0], start))
    out, marks = [], {}
    nodes.sort(key=lambda n: n._seq)
    for n in nodes:
        edges = list(n._next)
        for k, e in enumerate(edges):
            if e is None or _inner(e[0], start) or isinstance(e[0], _Input):
                continue
            key = (id(e[0]), e[1])
            if key not in marks:
                marks[key] = _Input((), (e[0]._meta_in[e[1]],))
                out.append(e)
            edges[k] = (marks[key], 0)
        n._next = tuple(edges)
    first = {}
    for v in (c.cell_contents for c in getattr(fn, "__closure__", None) or ()
              if _full(c)):
        if isinstance(v, Tensor) and v._requires_grad:
            e = v._edge()
            if e is not None:
                first.setdefault((id(e[0]), e[1]), len(first))
    out.sort(key=lambda e: first.get((id(e[0]), e[1]), len(first)))  # (stable)
    return out, [(marks[(id(e[0]), e[1])], 0) for e in out]


def _full(cell):
    try:
        cell.cell_contents  # noqa: B018
        return True
    except ValueError:  # (an empty cell)
        return False


class _Lifted(_graph.Node):
    """The node of a cond or while_loop call: its backward runs the graph the functions
    recorded, from their outputs (`_outs`) to where each of its edges' gradients is read
    (`_caps`: per edge, the stand-ins of its tensor, or None: no gradient)."""

    _keep = False  # keep the recorded graph after a backward (while_loop's)

    def apply(self, grads):
        if self._outs is None:
            raise RuntimeError(_FREED)
        roots = [(o, g) for o, g in zip(self._outs, grads) if o is not None and g is not None]
        want = [(i, m) for i, c in enumerate(self._caps) if c is not None for m in c]
        out = [None] * len(self._next)
        if roots and want:
            got = _autograd.grad([o for o, _ in roots], [GradientEdge(*m) for _, m in want],
                                 [g for _, g in roots], retain_graph=True,
                                 create_graph=self._keep and STATE.grad, allow_unused=True)
            for (i, _), g in zip(want, got):
                if g is not None:
                    out[i] = g if out[i] is None else out[i] + g
        for i, m in want:  # (torch's: zeros for the inputs the outputs do not reach)
            if out[i] is None:
                out[i] = _zeros_meta(*m[0]._meta_in[0])
        return out

    def _release(self):
        if not self._keep:
            self._outs = self._caps = None


class CondAutogradOpBackward(_Lifted):
    pass


class WhileLoopAutogradOpBackward(_Lifted):
    _keep = True


def _record(cls, outs, start, edges, caps, fn=None, force=None):
    """The outputs `outs` (flat) of the call: those requiring grad (or `force`d, if of a
    differentiable dtype) become new tensors whose grad_fn is one `cls` node with edges
    `edges` (read at `caps`) and the captured ones."""
    force = force or [False] * len(outs)
    tens, forced = [], []
    for o, f in zip(outs, force):
        if isinstance(o, Tensor):
            tens.append(o)
            forced.append(f and o.dtype.is_differentiable)
    roots = [o._edge() for o in tens if o._requires_grad]
    roots = [e for e in roots if e is not None]
    if not roots and not any(forced):
        return outs
    edges, caps = list(edges), [None if c is None else [c] for c in caps]
    where = {(id(e[0]), e[1]): i for i, e in enumerate(edges) if e is not None}
    for e, m in zip(*_captured(roots, start, fn)):
        i = where.get((id(e[0]), e[1]))
        if i is not None and caps[i] is not None:  # (an input also read by closure: one edge)
            caps[i].append(m)
        else:
            where[(id(e[0]), e[1])] = len(edges)
            edges.append(e)
            caps.append([m])
    node = cls(tuple(edges), tuple((o._shape, o.dtype) for o in tens))
    node._caps = caps
    node._outs = [o if o._requires_grad else None for o in tens]
    if ANOMALY.enabled:
        _anomaly_record(node)
    res, k = [], 0
    for o in outs:
        if isinstance(o, Tensor):
            if o._requires_grad or forced[k]:
                r = o._fresh_copy()
                r._requires_grad, r._grad_fn, r._out_nr = True, node, k
                o = r
            k += 1
        res.append(o)
    return res


def _check_calls(op, ins, versions, outs, start):
    """After a function ran on the stand-ins `ins`: torch's errors for an input written in
    place, or an output that is an input, a view of one, or a tensor from outside."""
    for s, v in zip(ins, versions):
        if s._version_counter.version != v:
            raise _mutation(op)
    storages = {id(s._storage) for s in ins}
    for o in outs:
        if not isinstance(o, Tensor):
            continue
        if id(o._storage) in storages:
            raise _aliasing(op)
        if o._requires_grad:  # (a captured tensor returned as is)
            e = o._edge()
            if e is None or not _inner(e[0], start):
                raise _aliasing(op)


def _plain():
    """Inside a torch.func transform (or its capture) the functions run as they are: the
    transform traces and differentiates them."""
    return bool(FUNC.levels) or FUNC.capture is not None


# ---- cond ----------------------------------------------------------------------------------
def _branch_outputs(out):
    leaves, spec = _flatten(out, none_leaf=True)
    for v in leaves:
        if isinstance(v, Tensor) or (_is_int(v) and not isinstance(v, bool)):
            continue
        if v is None or isinstance(v, bool):
            raise _hop_error("cond", "torch.cond: unsupported branch return type (constant "
                             "non-int)", "Constants returned from branches must be ints.")
        raise _hop_error("cond", "HOP body output unsupported",
                         "HigherOrderOperator body's output must consist of tensors or "
                         f"ints/bools only but got {type(v)}.")
    return leaves, spec


def _select(pred, t_out, f_out):
    """A batched predicate under vmap: both branches' outputs, picked per sample."""
    t_leaves, t_spec = _branch_outputs(t_out)
    f_leaves, f_spec = _branch_outputs(f_out)
    if t_spec != f_spec:
        raise TorchRuntimeError(f"Unmatched output spec from torch.cond branches: true branch "
                           f"tree_spec {t_spec} vs false branch tree_spec {f_spec}.")
    p = pred.reshape(())
    out = []
    for a, b in zip(t_leaves, f_leaves):
        if isinstance(a, Tensor):
            out.append(_F["where"](p, a, b))
        elif a == b:
            out.append(a)
        else:
            raise NotImplementedError("eagergrad does not implement torch.cond under vmap with a "
                                      "batched predicate and int outputs that differ")
    return _unflatten(t_spec, out)


def _lax_cond(pred, true_fn, false_fn, leaves, spec):
    """A predicate that is the user's jax tracer (eagergrad.jaxify under jax.jit): one
    jax.lax.cond of both branches, whose outputs must then be tensors of one structure."""
    def branch(fn):
        def run(*arrays):
            out = fn(*_unflatten(spec, [from_jax(a) for a in arrays]))
            o_leaves, o_spec = _branch_outputs(out)
            if not all(isinstance(o, Tensor) for o in o_leaves):
                raise NotImplementedError("eagergrad does not implement torch.cond under "
                                          "jax.jit with branches returning ints")
            specs.append(o_spec)
            return [o._value for o in o_leaves]
        return run
    specs = []
    p = pred._value.reshape(()).astype(bool)
    outs = jax.lax.cond(p, branch(true_fn), branch(false_fn), *[t._value for t in leaves])
    return _unflatten(specs[0], [from_jax(o) for o in outs])


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond: `true_fn(*operands)` if `pred` else `false_fn(*operands)`, the branch
    functions held to torch's rules (no mutated or returned inputs) and recorded as one
    CondAutogradOpBackward node. `pred` is a Python bool/int/float (the branch is simply
    called) or a one-element tensor; `operands` a tuple or list of (nested) tensors.

    >>> import eagergrad as torch
    >>> torch.cond(torch.tensor(False), lambda a: a + 1, lambda a: a - 1, (torch.zeros(2),))
    tensor([-1., -1.])
    """
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    leaves, spec = _flatten(operands, none_leaf=True) if isinstance(operands, (tuple, list)) \
        else ([None], None)
    if spec is None or not all(isinstance(t, Tensor) for t in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    if isinstance(pred._value, jax.core.Tracer) and not _plain():
        return _lax_cond(pred, true_fn, false_fn, leaves, spec)
    try:
        take = bool(pred)
    except RuntimeError:  # (vmap's error for a value that differs per sample)
        if not any(lv.kind == "vmap" for lv in FUNC.levels):
            raise
        return _select(pred, true_fn(*operands), false_fn(*operands))
    fn = true_fn if take else false_fn
    if not STATE.grad or _plain():  # (torch allows writes to, and returns of, the inputs)
        out = fn(*operands)
        _branch_outputs(out)
        return out
    uniq = {}  # a stand-in per distinct tensor (torch lifts each once)
    for t in leaves:
        if id(t) not in uniq:
            uniq[id(t)] = (t, _standin(t, True))
    ins = [s for _, s in uniq.values()]
    start = next(_graph._seq)
    out = fn(*_unflatten(spec, [uniq[id(t)][1] for t in leaves]))
    out_leaves, out_spec = _branch_outputs(out)
    _check_calls("cond", ins, [0] * len(ins), out_leaves, start)
    edges = [pred._edge() if pred._requires_grad else None]
    caps = [None]
    for t, s in uniq.values():
        edges.append(t._edge() if t._requires_grad else None)
        caps.append((s._grad_fn, 0) if t._requires_grad else None)
    return _unflatten(out_spec,
                      _record(CondAutogradOpBackward, out_leaves, start, edges, caps, fn))


# ---- while_loop ----------------------------------------------------------------------------
_TYPES = "(<class 'torch.Tensor'>, <class 'int'>, <class 'torch.SymInt'>)"


def _type_repr(v):
    return "<class 'torch.Tensor'>" if isinstance(v, Tensor) else repr(type(v))


def _int_carry_error(flat):
    kinds = ", ".join("<class 'torch._subclasses.fake_tensor.FakeTensor'>" if isinstance(v, Tensor)
                      else "<class 'torch.SymInt'>" for v in flat)
    return TorchRuntimeError(f"all carried_inputs must be tensors for stack_output, got "
                             f"[{kinds}]")


def _check_carry(outs, carried):
    """torch's check that body_fn gives back what it was given: as many values, each of
    the same kind (tensor or int) and a tensor of the same shape, dtype and strides."""
    if len(outs) != len(carried):
        raise _hop_metadata(f"same number of outputs but got lhs:{_fakes(outs)} and "
                            f"rhs:{_fakes(carried)}")
    diffs = []
    for i, (a, b) in enumerate(zip(outs, carried)):
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            what = [f"'{name}: {x} vs {y}'" for name, x, y in (
                ("shape", a.shape, b.shape), ("dtype", a.dtype, b.dtype),
                ("stride", a.stride(), b.stride())) if x != y]
            diff = ", ".join(what)
        elif _is_int(a) and _is_int(b):
            diff = ""
        else:
            diff = f"type: {_fake(a)} vs {_fake(b)}"
        if diff:
            diffs.append(f"pair[{i}] differ in {diff}, where lhs is {_fake(a)} and rhs is "
                         f"{_fake(b)}")
    if diffs:
        raise _hop_metadata("same metadata but found:\n" + "\n".join(diffs))


def _hop_metadata(text):
    return UncapturedHigherOrderOpError(
        f"Expected body_fn_output and carried_inputs to have {text}")


def while_loop(cond_fn, body_fn, carried_inputs):
    """torch.while_loop: `val = carried_inputs; while cond_fn(*val): val = body_fn(*val)`,
    the functions held to torch's rules (body_fn gives back values like its inputs, neither
    function mutates or returns them) and recorded as one WhileLoopAutogradOpBackward node.
    cond_fn returns a bool or a 0-d bool tensor; the carried values are tensors or ints.

    >>> import eagergrad as torch
    >>> torch.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, torch.tensor(0)))
    (4, tensor(6))
    """
    flat, in_spec = _flatten(carried_inputs, none_leaf=True)  # (torch's pytree: None a leaf)
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not all(isinstance(v, (Tensor, int)) for v in flat):
        kinds = [_type_repr(v) for v in flat]
        kinds = "(" + ", ".join(kinds) + ("," if len(kinds) == 1 else "") + ")"
        raise AssertionError(f"{flat} can only be of {_TYPES} but got {kinds}")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    grad = STATE.grad and not _plain()
    if grad and any(isinstance(v, Tensor) and v._requires_grad for v in flat) and \
            not all(isinstance(v, Tensor) for v in flat):
        raise _int_carry_error(flat)
    vals = [_standin(v, grad) if isinstance(v, Tensor) else v for v in flat]
    first, out_spec = vals, in_spec
    start = next(_graph._seq)
    while True:
        ins = [v for v in vals if isinstance(v, Tensor)]
        versions = [s._version_counter.version for s in ins]
        args = _unflatten(in_spec, vals)
        p = cond_fn(*args)
        _check_calls("while_loop", ins, versions, [p], start)
        if isinstance(p, Tensor):
            if p.shape != () or p.dtype is not bool_:
                raise _hop_error("while_loop", "torch.while_loop: unsupported cond_fn return type",
                                 "Expected cond_fn to return a scalar tensor or a bool but got "
                                 f"{p.shape}.")
        elif not isinstance(p, bool):
            raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but "
                               f"got {p}")
        if not p:
            break
        out = body_fn(*args)
        leaves, out_spec = _flatten(out, none_leaf=True)
        _check_carry(leaves, flat)
        _check_calls("while_loop", ins, versions, leaves, start)
        vals = leaves
    if not grad:
        return _unflatten(out_spec, vals)
    if not all(isinstance(v, Tensor) for v in flat) and \
            any(isinstance(v, Tensor) and v._requires_grad for v in vals):
        raise _int_carry_error(flat)  # (a captured tensor requires grad)
    edges, caps = [], []
    for v, s in zip(flat, first):
        need = isinstance(v, Tensor) and v._requires_grad
        edges.append(v._edge() if need else None)
        caps.append((s._grad_fn, 0) if need else None)
    # (torch's node: every output of a differentiable dtype requires grad once any input
    # does)
    lifted = any(c is not None for c in caps) or any(isinstance(v, Tensor) and v._requires_grad
                                                   for v in vals)
    return _unflatten(out_spec,
                      _record(WhileLoopAutogradOpBackward, vals, start, edges, caps,
                              body_fn, [lifted] * len(vals)))


for _f in (cond, while_loop):
    _f.__module__ = "eagergrad"
del _f
