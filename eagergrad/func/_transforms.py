"""torch.func transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, vmap, functionalize.

Each transform runs the eager function once on tensors that hold jax tracers and applies
the matching jax transform (jax.vjp, jax.jvp, jax.vmap), so transforms compose (vmap of
grad, jacfwd of jacrev) and run under jax.jit.

Called eagerly (NOTE [programs]), a transform is traced anew on every call, so the
user's Python runs each time as in torch, exactly once per call (torch's linearize runs
it twice, and so does ours): every transform traces the function at its own level and
applies jax's transform to its jaxpr (_deferred), compiled once per distinct jaxpr; a
call with autograd over it is traced whole into one program (_Program). Arrays the
function closes over are the programs' inputs, read fresh.

Autograd over a transform: outputs are differentiable w.r.t. the tensors that require
grad which it reads, arguments or captured by closure (one node whose backward is the
jax vjp of the program; NOTE [captured tensors]). In-place writes to captured tensors
and to arguments happen once per call, under torch's rules (_Capture.mutates).

A function that reads values (.item(), float(), bool() on a traced tensor) gets them
from the trace itself (NOTE [values in a trace]); the trace goes on.

One file: the transforms share the pytree, level, program and autograd-over helpers.

NOTE [conj convention]: torch.func, like torch.autograd, returns dL/dz* for complex
inputs: a torch vjp is conj(jax_vjp(conj(v))). Pushforwards (jvp, jacfwd) are
convention-free and equal jax's.
"""
# ruff: noqa: TRY004 - torch raises RuntimeError/ValueError on these type checks
import contextlib
import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters.batching import BatchTracer
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal

from .._cache import EXECUTABLES, put_bounded
from .._mode import STATE
from ..engine.function import Function
from ..engine.grad_mode import no_grad
from ..engine.saved import HOOKS, SavedTensor
from ..ops.shape import cat
from ..size import Size
from ..tensor import CAPTURING, FUNC, Tensor, _make

__all__ = [
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
    "vmap",
]


# ---- pytrees (tuples, lists, dicts, None) of tensors, flattened as torch's pytree -----
class _Spec:
    """A pytree structure: a leaf (`kind is None`) or a container and its children."""
    __slots__ = ("children", "context", "kind")

    def __init__(self, kind=None, context=None, children=()):
        self.kind, self.context, self.children = kind, context, children

    def __eq__(self, other):
        return (self.kind, self.context, self.children) == \
            (other.kind, other.context, other.children)

    def num_leaves(self):
        return 1 if self.kind is None else sum(c.num_leaves() for c in self.children)

    def __repr__(self, indent=0):  # torch's TreeSpec repr
        if self.kind is None:
            return "*"
        out = f"TreeSpec({self.kind.__name__}, {self.context}, ["
        if self.children:
            indent += 2
            out += self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            out += ",".join("\n" + " " * indent + c.__repr__(indent)
                            for c in self.children[1:])
        return out + "])"

    def pprint(self):  # torch's treespec_pprint
        if self.kind is None:
            return "*"
        parts = [c.pprint() for c in self.children]
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.context, parts)) + "}"
        if self.kind is list:
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _flatten(tree, leaves=None, none_leaf=False):
    """(leaves, spec) of a pytree."""
    leaves = [] if leaves is None else leaves
    if isinstance(tree, (tuple, list)):
        spec = _Spec(type(tree), None,
                     tuple(_flatten(x, leaves, none_leaf)[1] for x in tree))
    elif isinstance(tree, dict):
        spec = _Spec(dict, list(tree),
                     tuple(_flatten(x, leaves, none_leaf)[1] for x in tree.values()))
    elif tree is None and not none_leaf:
        spec = _Spec(type(None), None, ())
    else:
        leaves.append(tree)
        spec = _Spec()
    return leaves, spec


def _unflatten(spec, leaves):
    return _build(spec, iter(leaves))


def _build(s, it):
    # (module-level: a closure over itself would be a reference cycle that keeps the
    # leaves, e.g. large outputs, alive until the garbage collector runs)
    if s.kind is None:
        return next(it)
    kids = [_build(c, it) for c in s.children]
    if s.kind is dict:
        return dict(zip(s.context, kids))
    if s.kind is type(None):
        return None
    if hasattr(s.kind, "_fields"):  # namedtuple
        return s.kind(*kids)
    return s.kind(kids)


def _broadcast(prefix, spec):
    """Leaves of the prefix tree `prefix` repeated over the subtrees of `spec` (None if
    the structures do not match). An int or None in the prefix covers a whole subtree."""
    out = []

    def walk(p, s):
        if p is None or isinstance(p, int) or not isinstance(p, (tuple, list, dict)):
            out.extend([p] * s.num_leaves())
            return True
        ps = _flatten(p)[1] if isinstance(p, dict) else None
        if s.kind is None or (type(p) is not s.kind and not (
                isinstance(p, tuple) and issubclass(s.kind, tuple))):
            return False
        if isinstance(p, dict):
            if ps.context != s.context:
                return False
            kids = list(p.values())
        else:
            kids = list(p)
        if len(kids) != len(s.children):
            return False
        return all(walk(k, c) for k, c in zip(kids, s.children))
    return out if walk(prefix, spec) else None


def _prefix_spec(prefix):
    """The spec of an in_dims/out_dims tree (ints and None as leaves)."""
    if isinstance(prefix, (tuple, list)):
        return _Spec(type(prefix), None, tuple(_prefix_spec(x) for x in prefix))
    if isinstance(prefix, dict):
        return _Spec(dict, list(prefix), tuple(_prefix_spec(x) for x in prefix.values()))
    return _Spec()


# ---- levels: what .item(), bool() and random draws do inside a transform ------------------
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


def _wrap(a):
    return _make(a)  # (not a factory: the wrapper of a transform's own value)


def _tensor(x):
    """A transform's result as a tensor: a jax array wrapped; a tensor (an output of
    autograd over the call, _Deferred.run) as it is."""
    return x if isinstance(x, Tensor) else _make(x)


def _inputs(arrs, n_grad=0):
    """Tensors over the traced input arrays; the first n_grad require grad (the
    differentiated inputs of grad/vjp/jacrev; the others are inputs all the same, which
    the function may modify in place, as torch wraps every tensor argument)."""
    ts = [_make(a) for a in arrs]
    for t in ts[:n_grad]:
        t._requires_grad = t.dtype.is_differentiable
    return ts


def _mutated(ins, arrs):
    """Indices of the inputs the function modified in place (their storage's array is
    no longer the input's, also for a write without a version bump)."""
    return [i for i, (t, a) in enumerate(zip(ins, arrs)) if t._storage.array is not a]


def _write_back(tensors, which, values, info=None):
    """Give the caller's tensors the new values of the inputs the function modified in
    place (once per call, as torch's writes through its wrappers); BatchNorm's running
    stats among them stay known as such to an enclosing vmap (its error). info: the
    trace's; its saved-tensor error (_saved_error) is raised then, as torch's backward
    raises it after the forward's writes."""
    with no_grad():
        for k, (i, v) in enumerate(zip(which, values)):
            tensors[i].copy_(_tensor(v))
            if info is not None:  # (torch's wrappers share the version counter)
                tensors[i]._version_counter.version += info["versions"][k] - 1
    if info is None:
        return
    if FUNC.levels and info.get("stats"):
        FUNC.levels[-1].stats.update(id(tensors[i]._storage) for i in info["stats"])
    if info.get("error") is not None:
        raise info["error"]


def _saved_error(outs):
    """Under grad/vjp/jacrev, after the function ran: torch's backward would unpack the
    tensors saved in the outputs' graph, and raise its error for one modified in place
    since (jax's vjp of the trace sees no versions). The error (raised by the caller
    where torch's backward runs, after the write-back of modified arguments), or None.
    Walked only when an in-place op ran in the trace."""
    cap = FUNC.capture
    if cap is None or not (cap.frames[-1] if cap.frames else cap).inplace:
        return None
    try:
        _check_saved(outs)
    except RuntimeError as e:
        return e
    return None


def _check_saved(outs):
    seen, stack = set(), [t._grad_fn for t in outs]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for s in (getattr(node, "_saved", None) or {}).values():
            for x in (s if isinstance(s, list) else (s,)):
                if type(x) is SavedTensor and not x._freed and x._unpack is None and \
                        x._version_counter.version != x._version:
                    x._version_error(node)
        stack.extend(e[0] for e in node._next or () if e is not None)


def _no_saved_hooks():
    """torch's reverse-mode transforms refuse to start under saved_tensors_hooks."""
    if HOOKS.stack:
        raise RuntimeError("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved "
                           "tensor hooks. Please open an issue with your use case.")


def _conj(a):
    return jnp.conj(a) if jnp.iscomplexobj(a) else a


def _check_tensors(leaves, msg):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(msg.format(type(x)))


# ---- autograd over a transform ---------------------------------------------------------
class _TransformOutput(Function):
    """A transform called on tensors that require grad (torch: autograd over torch.func):
    one node whose backward is the jax vjp of the whole transformed call. An input gets
    no gradient (None, as from torch's graph, which has no path) unless it reaches an
    output that got one (compute.reached, when known)."""

    @staticmethod
    def forward(ctx, compute, *tensors):
        outs, ctx.pullback = jax.vjp(compute, *[t._value for t in tensors])
        ctx.compute, ctx.avals, ctx.reach = compute, [(o.shape, o.dtype) for o in outs], None
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(*tensors)
        outs = tuple(_wrap(o) for o in outs)
        # outputs no input that requires grad reaches, as torch's (a program knows them)
        reached = getattr(compute, "reached", None)
        if reached is not None:
            ctx.mark_non_differentiable(*[o for o, r in zip(outs, reached(
                [t._requires_grad for t in tensors])) if not r])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        tensors = ctx.saved_tensors
        n, compute, avals = len(tensors), ctx.compute, ctx.avals
        given = [i for i, g in enumerate(grads) if g is not None]
        keep = _TransformOutput._keep(ctx, n, given)
        if not (STATE.grad and any(t._requires_grad for t in (*tensors, *grads)
                                   if t is not None)):
            cts = [_zero_cotangent(*a) for a in avals]
            for i in given:
                cts[i] = _conj(grads[i]._value)
            return (None, *[_wrap(_conj(g)) if k else None
                            for g, k in zip(ctx.pullback(cts), keep)])
        # create_graph: the backward is itself a transformed call (double backward)

        def backward(*arrs):
            cts = [_zero_cotangent(*a) for a in avals]
            for i, c in zip(given, arrs[n:]):
                cts[i] = _conj(c)
            pullback = jax.vjp(compute, *arrs[:n])[1]
            return [_conj(g) for g in pullback(cts)]
        outs = _TransformOutput.apply(backward, *tensors, *[grads[i] for i in given])
        return (None, *[o if k else None for o, k in zip(outs, keep)])

    @staticmethod
    def _keep(ctx, n, given):
        """Which inputs reach an output with a gradient (all, if unknown)."""
        reached = getattr(ctx.compute, "reached", None)
        if reached is None:
            return [True] * n
        if ctx.reach is None:
            ctx.reach = [reached([j == i for j in range(n)]) for i in range(n)]
        return [any(r[i] for i in given) for r in ctx.reach]


def _zero_cotangent(shape, dtype):
    if jnp.issubdtype(dtype, jnp.inexact):
        return jnp.zeros(shape, dtype)
    return np.zeros(shape, jax.dtypes.float0)


def _enclosed(arrays):
    """Inside another transform, or under the user's jax trace: that one traces the call
    (jax composes the transforms), no program of its own."""
    return bool(FUNC.levels) or any(isinstance(a, jax.core.Tracer) for a in arrays)


def _over_autograd(call, args, direct=False):
    """call(*args): a transform called at top level (the pytree `args` holds no tracer)
    runs as a traced program (_Program: compiled from its second sighting on); seen
    through by eagergrad's autograd when grad mode is on and a tensor it reads requires
    grad, argument or captured by closure. Nested in another transform, or under the
    user's jax trace, it is traced by the enclosing one: jax composes them.
    direct: the transform defers its jax transform (_deferred): when no argument
    requires grad, it runs on the arguments as they are, its compiled program called
    directly (autograd over it, for captured tensors, at _Deferred.run)."""
    leaves, spec = _flatten(args)
    idx = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    arrays = [leaves[i]._value for i in idx]
    if _enclosed(arrays):
        return call(*args)
    grad = STATE.grad
    if direct and not (grad and any(leaves[i]._requires_grad for i in idx)):
        with _capturing(_Capture(grad, direct=True)):
            return call(*args)
    info = {}

    def compute(*arrs):
        new = list(leaves)
        for i, a in zip(idx, arrs):
            new[i] = _wrap(a)
        out_leaves, info["out"] = _flatten(call(*_unflatten(spec, new)))
        # arguments the call modified in place (its write-back): extra outputs
        info["mutated"] = [i for i, a in zip(idx, arrs) if new[i]._storage.array is not a]
        info["versions"] = [new[i]._version for i in info["mutated"]]
        return [t._value for t in out_leaves] + [new[i]._value for i in info["mutated"]]
    prog = _Program.trace(compute, arrays, grad)
    return _outputs(_run_program(prog, [leaves[i] for i in idx], arrays, grad), leaves, info)


def _outputs(outs, leaves, info):
    """The call's result from compute's outputs: the arguments it modified in place get
    their new values (the extra outputs after the call's own)."""
    n = len(outs) - len(info["mutated"])
    with no_grad():
        for i, o, v in zip(info["mutated"], outs[n:], info["versions"]):
            leaves[i].copy_(o)
            leaves[i]._version_counter.version += v - 1
    return _unflatten(info["out"], outs[:n])


def _run_program(prog, tensors, arrays, grad):
    """The program's outputs on `arrays` (the values of `tensors`) as tensors, through
    autograd (one node) when grad mode is on and an input or a captured tensor requires
    grad; the storages it wrote are given their new values."""
    inputs = list(tensors) + prog.captured
    if grad and any(t._requires_grad for t in inputs):
        outs = _autograd_over(prog, inputs, prog.used(), prog.reached)
    else:
        outs = [_wrap(a) for a in prog(*arrays, *[t._value for t in prog.captured])]
    n = len(outs) - len(prog.written)
    for st, o in zip(prog.written, outs[n:]):
        st.array = o._value
        st.generation += 1
    return outs[:n]


def _autograd_over(f, tensors, used, reached):
    """f(*values of tensors) -> arrays, as tensors through one autograd node over the
    tensors that require grad and that the outputs use (`used`, per tensor): the others
    are constants of it, as torch's graph has no edge to them (and may be modified in
    place after the call, a write-back). reached(mask over tensors): which outputs the
    marked tensors reach."""
    vals = [t._value for t in tensors]
    sel = [i for i, (t, u) in enumerate(zip(tensors, used)) if u and t._requires_grad]
    if not sel:
        return [_wrap(a) for a in f(*vals)]

    def compute(*xs):
        v = list(vals)
        for i, x in zip(sel, xs):
            v[i] = x
        return f(*v)

    def reached_sel(mask):
        full = [False] * len(tensors)
        for i, m in zip(sel, mask):
            full[i] = m
        return reached(full)
    compute.reached = reached_sel
    return list(_TransformOutput.apply(compute, *[tensors[i] for i in sel]))


def _used(jaxpr):
    """Which of the jaxpr's constvars, then invars, its outputs use (jax's dead-code
    elimination, into calls); all of them if this jax's internals differ."""
    try:
        j = _pe.convert_constvars_jaxpr(jaxpr)
        return list(_pe.dce_jaxpr(j, [True] * len(j.outvars), instantiate=False)[1])
    except Exception:  # noqa: BLE001 - any change in jax's internals
        return [True] * (len(jaxpr.constvars) + len(jaxpr.invars))


def _traced_once(pure, leaves, kind=None):
    """vjp/linearize at top level: pure(*arrays) -> (output arrays, aux arrays, arrays of
    inputs modified in place) traced once into a program of the primals; (program,
    number of outputs, output, aux and modified-input tensors), differentiable w.r.t. the
    primals and captured tensors that require grad. None when nested or under a jax
    trace."""
    arrays = [t._value for t in leaves]
    if _enclosed(arrays):
        return None
    n = []

    def compute(*arrs):
        outs, aux, muts = pure(*arrs)
        n[:] = [len(outs), len(aux)]
        return list(outs) + list(aux) + list(muts)
    grad = STATE.grad
    prog = _Program.trace(compute, arrays, grad, kind)
    outs = _run_program(prog, leaves, arrays, grad)
    n_out, n_aux = n
    return prog, n_out, outs[:n_out], outs[n_out:n_out + n_aux], outs[n_out + n_aux:]


def _through_program(prog, leaves, extra, make, kind, n_out, create_graph=None,
                     constant_primals=False):
    """make(jaxpr, n_out)'s jitted function of (consts, primal arrays, extra arrays),
    cached per program, called on the primals, the captured tensors and the tensors
    `extra` (cotangents, tangents): through autograd as _run_program (constant_primals:
    differentiable w.r.t. `extra` only, as torch's linearize)."""
    key = prog.run.key
    if key is None:
        f = make(prog.jaxpr, n_out)
    else:
        f = EXECUTABLES.get(_DERIVED, (kind, n_out, key), lambda: make(prog.jaxpr, n_out))
    n, m = len(leaves), len(prog.captured)

    def compute(*xs):
        return f(prog.consts_with(xs[n:n + m]), list(xs[:n]), list(xs[n + m:]))
    inputs = [*leaves, *prog.captured, *extra]
    if constant_primals:
        fixed = [t._value for t in inputs[:n + m]]
        compute = functools.partial(compute, *fixed)
        inputs = inputs[n + m:]
    if create_graph is not False and STATE.grad and any(t._requires_grad for t in inputs):
        closed = jax.make_jaxpr(compute)(*[t._value for t in inputs])
        k = len(closed.jaxpr.constvars)
        return _autograd_over(compute, inputs, _used(closed.jaxpr)[k:],
                              lambda mask: _reached(closed.jaxpr, [False] * k + mask))
    return [_wrap(a) for a in compute(*[t._value for t in inputs])]


def _vjp_of(jaxpr, n_out):
    def g(consts, arrays, cts):
        def f(*a):
            return jax.core.eval_jaxpr(jaxpr, consts, *a)[:n_out]
        pullback = jax.vjp(f, *arrays)[1]
        return [_conj(x) for x in pullback([_conj(c) for c in cts])]
    return EXECUTABLES.track(jax.jit(g))


def _jvp_of(jaxpr, n_out):
    def g(consts, arrays, tangents):
        def f(*a):
            return jax.core.eval_jaxpr(jaxpr, consts, *a)[:n_out]
        return jax.jvp(f, arrays, tangents)[1]
    return EXECUTABLES.track(jax.jit(g))


_DERIVED = EXECUTABLES.owner({})  # (kind, n_out, program key) -> [its jitted function, stamp]


@contextlib.contextmanager
def _capturing(cap):
    """FUNC.capture = cap while the block runs (CAPTURING.n counts the threads)."""
    prev, FUNC.capture = FUNC.capture, cap
    CAPTURING.enter()
    try:
        yield
    finally:
        CAPTURING.leave()
        FUNC.capture = prev


# ---- tracing to a jaxpr ----------------------------------------------------------------
def _aval(x):
    if isinstance(x, jax.ShapeDtypeStruct):
        return jax.core.ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)
    return jax.typeof(x)


def _lean_trace(fun, args):
    """(jaxpr, consts) of fun(*args) (a pytree of arrays out): jax's own tracer, without
    jax.make_jaxpr's jit wrapper, which cost a third of a torch.func call's trace."""
    flat, tree = jax.tree_util.tree_flatten(args)

    def flat_fun(*xs):
        return jax.tree_util.tree_leaves(fun(*jax.tree_util.tree_unflatten(tree, xs)))
    avals = [_aval(x) for x in flat]
    dbg = _api_util.debug_info("eagergrad", flat_fun, tuple(avals), {})
    jaxpr, _, consts = _pe.trace_to_jaxpr_dynamic(_lu.wrap_init(flat_fun, debug_info=dbg),
                                                  avals)[:3]
    return jaxpr, consts


def _make_jaxpr_trace(fun, args):
    closed = jax.make_jaxpr(fun)(*args)
    return closed.jaxpr, closed.consts


def _pick_tracer():
    """_lean_trace if this jax's internals take it (a probe), else jax.make_jaxpr."""
    try:
        jaxpr, consts = _lean_trace(lambda a, b: (a + 1, [b * a]),  # (numpy: no compile)
                                    (np.ones(2, np.float32),
                                     jax.ShapeDtypeStruct((2,), jnp.float32)))
        assert len(jaxpr.outvars) == 2 and not consts
        return _lean_trace
    except Exception:  # noqa: BLE001 - any change in jax's internals
        return _make_jaxpr_trace


try:
    from jax._src import api_util as _api_util
    from jax._src import linear_util as _lu
    from jax._src.core import trace_ctx as _trace_ctx
    from jax._src.interpreters import partial_eval as _pe
    _trace_jaxpr = _pick_tracer()
    _DYNAMIC = _pe.DynamicJaxprTracer
except ImportError:
    _trace_jaxpr = _make_jaxpr_trace
    _trace_ctx = None
    _DYNAMIC = ()


def _current_trace():
    """The jax trace the user's function runs under, while a capture traces it: one with
    a frame of consts (NOTE [captured tensors]); None if this jax has none."""
    tr = getattr(_trace_ctx, "trace", None)
    return tr if hasattr(getattr(tr, "frame", None), "constvar_to_val") else None


class _Fresh(dict):
    """A jax trace frame's cache of consts by id that never hits: every use of a
    concrete array becomes a const of its own (NOTE [captured tensors]). pending: id of
    an array -> (array, placeholder) whose next consts are noted in `hits` (var,
    placeholder), for _Capture.flush."""
    __slots__ = ("hits", "pending")

    def __init__(self):
        super().__init__()
        self.pending, self.hits = {}, []

    def get(self, key, default=None):
        return default

    def __setitem__(self, key, tracer):  # (jax's: a const was made for array id `key`)
        e = self.pending.get(key)
        if e is not None:
            self.hits.append((tracer.val, e[1]))


def _alias(v):
    """A jax array object of its own over v's buffer (a copy where jax cannot alias):
    a captured tensor's placeholder in the consts (NOTE [captured tensors])."""
    try:
        if len(v.addressable_shards) == 1:
            return jax.make_array_from_single_device_arrays(v.shape, v.sharding, [v])
    except Exception:  # noqa: BLE001, S110 - any array jax cannot alias: a copy
        pass
    with jax.ensure_compile_time_eval():
        return jnp.array(v, copy=True)


# NOTE [captured tensors]: autograd over a transform must send gradients to the tensors
# requiring grad that the function captures by closure, through the ops that recorded on
# them, as torch does, and not through another tensor that holds the same jax array (a
# detached alias shares the storage; a factory's cached constant is shared by every
# tensor made from it) nor through a use that recorded nothing (under no_grad). jax
# identifies a concrete array in a trace by its id, once. So in a capture's traces every
# use of a concrete array is a const of its own (_Fresh): an op's kernel is one jitted
# call, whose arguments jax lifts in order, so right after it ran the last consts of the
# frame are its concrete arguments; when the op records a node (_Capture.reads) those of
# tensors requiring grad get, as their value, a placeholder of their own (_alias: one per
# tensor, sharing its buffer). The placeholder, not the array, travels out through the
# enclosing traces and marks where the tensor enters each program (_Program.cpos,
# _Deferred); it is fed the tensor's value on every run. An op whose kernel lifted its
# arguments otherwise (a custom autograd.Function, which reads before its forward runs)
# marks the array's next uses instead, until the next recorded op (_Fresh.pending,
# counted as `loose`). One trace; the user's Python runs once.
#
# NOTE [values in a trace]: .item()/float()/bool() on a traced tensor read its value from
# the trace so far (_Capture.evaluate): the equations it depends on are evaluated on the
# known inputs of the frames (the call's arrays; an enclosing frame's values, in turn),
# and the number is a constant from then on, as torch's item() is for autograd. A value
# that depends on a batched input of vmap has none (torch's vmap error). The jaxpr then
# holds the value or the branch taken; such a frame is compiled from the second sighting
# of its jaxpr on, as a program (_built), not on every new value.


def _concretize(value):
    """The value of a tracer of a capture's trace (NOTE [values in a trace]), or None."""
    cap = FUNC.capture
    while hasattr(value, "primal"):  # (under jax.jvp: the primal's)
        value = value.primal
    if cap is None or not isinstance(value, jax.core.Tracer):
        return None
    try:
        return cap.evaluate(value)
    except _NoValue:
        return None


class _NoValue(Exception):  # noqa: N818 - an internal signal
    """The traced value depends on an input with no value (a batched one of vmap's)."""


# ---- transforms inside a program's trace: applied to the function's jaxpr, cached ----
_DEFERRED = EXECUTABLES.owner({})  # (kind, static, jaxpr key) -> [[made, compiled], stamp]


def _deferred(kind, pure, args, static, build):
    """The _Deferred of `pure` traced at its own level on `args` (arrays, tracers of the
    enclosing trace or ShapeDtypeStructs): the user's function runs as under the
    transform (its level pushed), but jax's transform is applied to the jaxpr, once per
    distinct jaxpr, by the function build(jaxpr, n_writes, static()) makes (jitted):
    tracing through vmap/vjp primitive by primitive cost most of a call. static() is
    evaluated after the trace (counts the trace found). The consts (closed-over values)
    are its first argument. Storages from outside that pure wrote are extra outputs of
    the jaxpr, put back after the trace; _Deferred.write(their values) writes them at the
    enclosing level."""
    cap = FUNC.capture
    frame, through = _Frame(kind), []
    flat = jax.tree_util.tree_leaves(args)

    def traced(*a):
        frame.trace = inner = cap.enter(flat)
        outs = pure(*a)
        cap.flush()
        # storages from outside this trace that it wrote: extra outputs, written through
        through.extend(st for st, old in frame.values()
                       if not (isinstance(old, jax.core.Tracer) and old._trace is inner))
        return outs, [st.array for st in through]
    cap.frames.append(frame)
    try:
        jaxpr, consts = _trace_jaxpr(traced, args)
    finally:
        cap.frames.pop()
        cap.leave(frame.trace)
        for st, old in frame.values():
            st.array = old
            st.generation += 1
    consts = _resolve(frame.loose, consts)
    if frame.concrete:  # (the enclosing frames' jaxprs hold the value too)
        cap.concrete = True
        for f in cap.frames:
            f.concrete = True
    s = static()
    try:
        key = (kind, s, len(through), _jaxpr_key(jaxpr))
    except TypeError:
        key = None
    if frame.concrete:  # (run primitive by primitive on its first sighting: _built)
        jaxpr = _undonated(jaxpr)
    made = _built(_DEFERRED, key, lambda: build(jaxpr, len(through), s), frame.concrete)
    return _Deferred(made, consts, through, frame.born, cap)


def _jit(made):
    """jax.jit of a build's program (the first of a tuple); a vmapped program compiles
    once per batch size inside it, so it is tracked (NOTE [executable cache])."""
    if isinstance(made, tuple):
        return (EXECUTABLES.track(jax.jit(made[0])), *made[1:])
    return EXECUTABLES.track(jax.jit(made))


def _built(cache, key, build, concrete):
    """What build() makes, jitted, cached by key (None: never cached). A jaxpr that holds
    values read from the trace (concrete) runs primitive by primitive on its first
    sighting and is compiled on its second, as a program is (NOTE [values in a trace])."""
    entry = None if key is None else cache.get(key)
    if entry is None:
        made = build()
        COUNTS["deferred_built"] += 1
        if not concrete:
            made = _jit(made)
        if key is not None:
            EXECUTABLES.put(cache, key, [made, not concrete])
        return made
    COUNTS["deferred_reused"] += 1
    entry[1] = EXECUTABLES.now
    EXECUTABLES.poll()  # (a vmapped program compiles per batch size: tracked)
    entry = entry[0]  # [what was made, whether it is jitted]
    if not entry[1]:
        entry[0], entry[1] = _jit(entry[0]), True
    return entry[0]


class _Deferred:
    """A _deferred trace's result: `made` (what its build made), the consts, and how to
    run it. At the top of a call with no trace around it (_over_autograd's direct path),
    a run reaching captured tensors that require grad goes through autograd (one node,
    NOTE [captured tensors]): its outputs are tensors then."""
    __slots__ = ("born", "cap", "consts", "cpos", "made", "through", "captured")

    def __init__(self, made, consts, through, born, cap):
        self.made, self.consts, self.through, self.born, self.cap = \
            made, consts, through, born, cap
        self.cpos, self.captured = ([], []) if not (cap.direct and not cap.frames) else \
            _captured_in(consts, cap)

    def run(self, fn, *args):
        """fn(consts, *args): a pytree of arrays, or of tensors (autograd over it)."""
        if not self.captured:
            return fn(self.consts, *args)
        consts, cpos, tree = self.consts, self.cpos, []

        def compute(*caps):
            cs = list(consts)
            for k, j in cpos:
                cs[k] = caps[j]
            flat, treedef = jax.tree_util.tree_flatten(fn(cs, *args))
            tree[:] = [treedef]
            return flat
        closed = jax.make_jaxpr(compute)(*[t._value for t in self.captured])
        k = len(closed.jaxpr.constvars)
        outs = _autograd_over(compute, self.captured, _used(closed.jaxpr)[k:],
                              lambda mask: _reached(closed.jaxpr, [False] * k + mask))
        return jax.tree_util.tree_unflatten(tree[0], outs)

    def write(self, values):
        """Give the storages the trace wrote their values at the enclosing level."""
        for st, v in zip(self.through, values):
            self.cap.writes(st)
            st.array = v._value if isinstance(v, Tensor) else v
            st.generation += 1


def _resolve(loose, consts):
    """The consts with the placeholders of the tensors marked by identity (`loose`,
    NOTE [captured tensors])."""
    if not loose:
        return consts
    out = []
    for c in consts:
        e = loose.get(id(c))
        out.append(e[1] if e is not None and e[0] is c else c)
    return out


def _captured_in(consts, cap):
    """(cpos, captured): the tensors whose placeholders the consts hold (captured[j]) and
    where (const k is captured[j]'s value for each (k, j) in cpos)."""
    owner = {id(vt): t for t, _, vt in cap.read.values()}
    cpos, captured, index = [], [], {}
    for k, c in enumerate(consts):
        t = owner.get(id(c))
        if t is not None:
            j = index.get(id(t))
            if j is None:
                j = index[id(t)] = len(captured)
                captured.append(t)
            cpos.append((k, j))
    return cpos, captured


def _grad_eval(f, arrays, n):
    """(value, gradients w.r.t. the first n arrays (torch's conj convention), the other
    outputs) of f(*arrays) -> [scalar value, *others]."""
    rest = arrays[n:]

    def g(*a):
        outs = f(*a, *rest)
        return outs[0], outs[1:]
    value, pullback, others = jax.vjp(g, *arrays[:n], has_aux=True)
    grads = [_conj(x) for x in pullback(jnp.ones_like(value))]
    return value, grads, others


def _grad_program(jaxpr, n_writes, n):
    """(consts, *arrays) -> _grad_eval's for a jaxpr whose outputs are the scalar value
    and the others (aux, inputs modified in place, written values)."""
    def program(consts, *arrays):
        return _grad_eval(functools.partial(jax.core.eval_jaxpr, jaxpr, consts), arrays, n)
    return program


def _jvp_eval(f, primals, tangents, n_out):
    """(outputs, their tangents, the other outputs) of f(*primals) -> [*outputs,
    *others] pushing `tangents` forward."""
    outs, t_outs = jax.jvp(lambda *a: f(*a), list(primals), list(tangents))
    return outs[:n_out], t_outs[:n_out], outs[n_out:]


def _jvp_program(jaxpr, n_writes, n_out):
    def program(consts, primals, tangents):
        return _jvp_eval(functools.partial(jax.core.eval_jaxpr, jaxpr, consts), primals,
                         tangents, n_out)
    return program


def _jacrev_eval(f, arrays, n, n_out, chunk_size):
    """(blocks, other outputs): blocks[k][j] the jacobian of output k w.r.t. array j < n
    of f(*arrays) -> [*outputs, *others], by vjps of the basis batched with jax.vmap in
    chunks of `chunk_size` rows (n_out: a number, or a function giving it once f ran)."""
    rest = arrays[n:]

    def g(*a):
        outs = f(*a, *rest)
        k = n_out() if callable(n_out) else n_out
        return outs[:k], outs[k:]
    outs, pullback, others = jax.vjp(g, *arrays[:n], has_aux=True)
    sizes = [o.size for o in outs]
    total = sum(sizes)

    def row(e):  # the vjp of one basis vector of the flattened outputs
        cts, off = [], 0
        for o, m in zip(outs, sizes):
            cts.append(e[off:off + m].reshape(o.shape).astype(o.dtype))
            off += m
        return [_conj(x) for x in pullback(cts)]
    eye = jnp.eye(total, dtype=jnp.float32)
    parts = [jax.vmap(row)(eye[a:b]) for a, b in _chunks(total, chunk_size)]
    rows = [jnp.concatenate([p[j] for p in parts]) if len(parts) > 1 else parts[0][j]
            for j in range(n)]
    blocks, off = [], 0
    for o, m in zip(outs, sizes):
        blocks.append([r[off:off + m].reshape(o.shape + r.shape[1:]) for r in rows])
        off += m
    return blocks, others


def _jacobian_program(evaluate):
    """The program builder for jacrev or jacfwd: (jaxpr, n_writes, static) -> a function
    of (consts, *arrays) that runs `evaluate(jaxpr's function, arrays, *static)`."""
    def build(jaxpr, n_writes, static):
        def program(consts, *arrays):
            return evaluate(functools.partial(jax.core.eval_jaxpr, jaxpr, consts), arrays,
                            *static)
        return program
    return build


def _jacfwd_eval(f, arrays, n, n_out, randomness):
    """(blocks, other outputs): blocks[k][j] the jacobian of output k w.r.t. array j < n
    of f(column index, *arrays) -> [*outputs, *others], by jvps of the basis batched with
    jax.vmap (randomness="different": a draw per column, as vmap's; the other outputs
    of the first column)."""
    primals, rest = list(arrays[:n]), arrays[n:]
    sizes = [p.size for p in primals]
    total = sum(sizes)

    def column(e, i):
        tans, off = [], 0
        for p, m in zip(primals, sizes):
            tans.append(e[off:off + m].reshape(p.shape).astype(p.dtype))
            off += m
        outs, t_outs = jax.jvp(lambda *p: f(i, *p, *rest), primals, tans)
        k = n_out() if callable(n_out) else n_out
        return outs[k:], t_outs[:k]
    shared = None if randomness != "different" else 0
    others, cols = jax.vmap(column, out_axes=(shared, 0))(
        jnp.eye(total, dtype=jnp.float32), _indices(0, total))
    if shared == 0:  # (the first column's, as torch's)
        others = [x[0] for x in others]
    blocks = []
    for c in cols:  # (total, *out_shape) -> one block per input leaf
        row_, off = [], 0
        for p, m in zip(primals, sizes):
            b = jnp.moveaxis(c[off:off + m], 0, -1)
            row_.append(b.reshape(c.shape[1:] + p.shape))
            off += m
        blocks.append(row_)
    return blocks, others


_jacrev_program = _jacobian_program(_jacrev_eval)
_jacfwd_program = _jacobian_program(_jacfwd_eval)


def _vmap_program(jaxpr, n_writes, axes):
    """((consts, index, *arrays) -> (outputs mapped over `axes` (moved to 0), written
    values), which outputs and written values are batched) for the jaxpr of vmap's
    per-element function."""
    flags = []

    def program(consts, index, *arrays):
        def one(index, *a):
            outs = jax.core.eval_jaxpr(jaxpr, consts, index, *a)
            flags[:] = [_batched(o, index) for o in outs]
            return outs
        outs = jax.vmap(one, in_axes=(0, *axes))(index, *arrays)
        cut = len(outs) - n_writes
        return outs[:cut], [w[0] for w in outs[cut:]]

    def shaped(aval, d=None):
        shape = aval.shape if d is None else aval.shape[:d] + (1,) + aval.shape[d:]
        return jax.ShapeDtypeStruct(shape, aval.dtype)
    index, *ins = jaxpr.invars
    jax.eval_shape(program, [shaped(v.aval) for v in jaxpr.constvars], shaped(index.aval, 0),
                   *[shaped(v.aval, d) for v, d in zip(ins, axes)])
    return program, list(flags)


# ---- a top-level call as a traced program --------------------------------------------
class _Capture:
    """What a call's traces touch outside themselves (FUNC.capture while they trace):
    tensors that require grad read by recorded ops (NOTE [captured tensors]), storages
    written in place (put back after the trace; their new values become extra outputs,
    written after the run), and the known inputs of each trace (NOTE [values in a
    trace])."""
    __slots__ = ("born", "concrete", "direct", "frames", "grad", "inplace", "inputs", "kind",
                 "loose", "ops", "pending", "read", "trace", "written")

    def __init__(self, grad, direct=False, kind=None):
        self.grad = grad  # grad mode was on at the call: note the reads (ops record)
        self.direct = direct  # no trace around the call (_over_autograd's direct path)
        # "grad": the call itself is a grad-like transform traced at its level (vjp): as
        # a _Frame's, its captured tensors must not be mutated
        self.kind, self.trace = kind, None
        self.born = set()  # ids of the storages factories made while it traced
        self.read = {}  # (id(tensor), id(array)) -> (tensor, array, placeholder)
        self.loose = {}  # id(array) -> (array, placeholder): marked by identity
        self.pending = []  # frames with marks pending (_mark, flush)
        self.written = {}  # id(storage) -> (storage, its array before the trace)
        self.frames = []  # a _Frame per _deferred trace inside it, innermost last
        self.inputs = {}  # id(jax trace) -> (trace, its flat input values)
        self.concrete = False  # a value was read from the trace (NOTE [values in a trace])
        self.ops = {}  # id(storage) -> (in-place op, tensor shape, depth): the first on it
        self.inplace = False  # an in-place op ran at this level (outside _deferred traces)

    def enter(self, values):
        """At the start of a trace of the call (its own or a _deferred one) on the flat
        input values `values`: the jax trace, its consts one per use when reads are
        noted (NOTE [captured tensors])."""
        tr = _current_trace()
        if tr is not None:
            if self.grad:
                tr.frame.constid_to_tracer = _Fresh()
            self.inputs[id(tr)] = (tr, values)
        return tr

    def leave(self, tr):
        self.inputs.pop(id(tr), None)

    def reads(self, tensors):
        """A recorded op read `tensors` (called right after its kernel ran)."""
        if not self.grad:
            return
        if self.pending:
            self.flush()
        for t in tensors:
            if t._requires_grad and not isinstance(t._value, jax.core.Tracer):
                self._mark(tensors)
                return

    def _mark(self, tensors):
        """NOTE [captured tensors]: the consts the op's kernel just lifted, for its
        concrete inputs that require grad, take their tensors' placeholders."""
        lv = self.frames[-1] if self.frames else self
        if lv.trace is None and lv is self and self.direct:
            return  # (no trace: a direct call's own autograd node)
        tr = lv.trace
        # what the kernel lifted as consts: concrete arrays, and an enclosing trace's
        # tracers (jax's closure conversion); not this trace's values, nor those of a
        # jax transform inside it (jax.jvp's, which binds this trace's)
        conc = [(x, x._value) for x in tensors]
        conc = [(x, v) for x, v in conc if not isinstance(v, jax.core.Tracer) or (
            isinstance(v, _DYNAMIC) and v._trace is not tr)]
        fresh = None if tr is None else tr.frame.constid_to_tracer
        cv, recent = None, None
        if type(fresh) is _Fresh:
            cv = lv.trace.frame.constvar_to_val
            recent = list(itertools.islice(reversed(cv), len(conc)))[::-1]
            if len(recent) != len(conc) or any(cv[var] is not v
                                               for var, (_, v) in zip(recent, conc)):
                recent = None
        for i, (x, v) in enumerate(conc):
            if not x._requires_grad or isinstance(v, jax.core.Tracer):
                continue
            e = self.read.get((id(x), id(v)))
            if e is None:
                e = self.read[(id(x), id(v))] = (x, v, _alias(v))
            if recent is not None:
                cv[recent[i]] = e[2]
                continue
            COUNTS["loose"] += 1
            if cv is not None:  # (the array's next uses, until the next recorded op)
                fresh.pending[id(v)] = (v, e[2])
                self.pending.append(lv.trace.frame)
            else:  # (this jax's frames cannot be followed: every use in the frame)
                lv.loose[id(v)] = (v, e[2])

    def flush(self):
        """The consts lifted for pending marks (_mark) take their placeholders."""
        for frame in self.pending:
            fresh = frame.constid_to_tracer
            for var, vt in fresh.hits:
                if var in frame.constvar_to_val:
                    frame.constvar_to_val[var] = vt
            fresh.hits.clear()
            fresh.pending.clear()
        self.pending.clear()

    def mutates(self, t, fn):
        """An in-place op `fn` on t: under a grad-like transform (grad, vjp, jvp, jacrev,
        jacfwd) t must have been made inside it, or be one of its inputs, as torch's;
        counting from the level where t's storage was made or last written."""
        levels = [self, *self.frames]
        st = t._storage
        a = st.array
        made = -1
        for j in range(len(levels) - 1, -1, -1):
            lv = levels[j]
            if id(st) in lv.born or (isinstance(a, jax.core.Tracer) and lv.trace is not None
                                     and a._trace is lv.trace):
                made = j
                break
        name = fn.__name__.lstrip("_")
        self.ops.setdefault(id(st), (name, t._shape, len(self.frames)))
        levels[-1].inplace = True
        if any(lv.kind in _GRAD_LIKE for lv in levels[made + 1:]):
            raise RuntimeError(
                "During a grad (vjp, jvp, grad, etc) transform, the function provided "
                f"attempted to call in-place operation (aten::{name}_{_OVERLOAD.get(name, '')})"
                " that would mutate a captured Tensor. This is not supported; please rewrite "
                "the function being transformed to explicitly accept the mutated Tensor(s) "
                "as inputs.")

    def made(self, st):
        """A factory made a tensor over storage `st` (a constant array: inside the
        trace, though not a tracer)."""
        (self.frames[-1] if self.frames else self).born.add(id(st))

    def writes(self, st):
        if self.frames:
            self.frames[-1].setdefault(id(st), (st, st.array))
        elif id(st) not in self.written and not isinstance(st.array, jax.core.Tracer):
            self.written[id(st)] = (st, st.array)

    def undo_writes(self):
        for st, old in self.written.values():
            st.array = old
            st.generation += 1

    def evaluate(self, x):
        """The value of the tracer x of one of the call's traces, from the equations it
        depends on (NOTE [values in a trace]); _NoValue if it depends on an input with
        none."""
        entry = self.inputs.get(id(x._trace))
        if entry is None:
            raise _NoValue
        tr, values = entry
        var = x.val if hasattr(x, "val") else None
        if isinstance(var, Literal):
            return var.val
        frame = tr.frame
        need, eqns = {var}, []
        for e in reversed(frame.get_eqns()):
            if any(v in need for v in e.outvars):
                eqns.append(e)
                need.update(v for v in e.invars if not isinstance(v, Literal))
        eqns.reverse()
        invars = [v for v in frame.invars if v in need]
        args = [self._known(a) for v, a in zip(frame.invars, values) if v in need]
        consts = frame.constvar_to_val
        constvars = [v for v in need if v in consts]
        jaxpr = _undonated(Jaxpr(constvars, invars, [var], eqns))
        with jax.ensure_compile_time_eval():
            out = jax.core.eval_jaxpr(jaxpr, [self._known(consts[v]) for v in constvars],
                                      *args)[0]
        COUNTS["concretized"] += 1
        (self.frames[-1] if self.frames else self).concrete = True
        return out

    def _known(self, a):
        if isinstance(a, jax.ShapeDtypeStruct):
            raise _NoValue
        if isinstance(a, jax.core.Tracer):
            return self.evaluate(a)
        return a


_GRAD_LIKE = ("grad", "jvp", "jacrev", "jacfwd")  # (their captured tensors: read-only)
_OVERLOAD = dict.fromkeys(("add", "sub", "mul", "div", "remainder", "floor_divide"), ".Tensor")
_OVERLOAD.update(dict.fromkeys(("fill", "masked_fill", "pow"), ".Scalar"))


class _Frame(dict):
    """A _deferred trace's writes (id(storage) -> (storage, array before)); its kind,
    jax trace, the storages factories made in it, the tensors marked by identity,
    whether a value was read from it and whether an in-place op ran in it."""
    __slots__ = ("born", "concrete", "inplace", "kind", "loose", "trace")

    def __init__(self, kind):
        super().__init__()
        self.kind, self.born, self.loose, self.trace, self.concrete = \
            kind, set(), {}, None, False
        self.inplace = False  # an in-place op ran in it (saved versions are checked)


_PROGRAMS = EXECUTABLES.owner({})  # jaxpr key -> [[sightings, compiled or None], stamp]
# what ran (tests count the fast paths): programs traced, compiled and run compiled or
# primitive by primitive; deferred transforms built or found; values read from a trace;
# captured tensors marked by their array's identity (NOTE [captured tensors])
COUNTS = {"traced": 0, "compiled": 0, "compiled_runs": 0, "eager_runs": 0,
          "deferred_built": 0, "deferred_reused": 0, "concretized": 0, "loose": 0}


class _Program:
    """A top-level transform call traced to a jaxpr: program(*arrays, *captured arrays)
    evaluates it. Every call is traced anew (the user's Python runs each time, as
    eagerly); equal jaxprs share one compiled executable, made on the second sighting.
    Arrays the function closes over (its consts) are inputs; `captured` are the tensors
    requiring grad among them (at the consts `cpos`, NOTE [captured tensors]), `written`
    the storages it wrote in place."""

    @staticmethod
    def trace(compute, arrays, grad, kind=None):
        """The program of compute(*arrays), traced once. grad: note the tensors
        requiring grad it reads (autograd over the call); kind: _Capture's."""
        prog = _Program()
        cap = _Capture(grad, kind=kind)

        def traced(*arrs):
            cap.trace = cap.enter(arrays)
            outs = compute(*arrs)
            cap.flush()
            return outs + [st.array for st, _ in cap.written.values()]
        try:
            with _capturing(cap):
                jaxpr, consts = _trace_jaxpr(traced, arrays)
        finally:
            cap.leave(cap.trace)
            cap.undo_writes()
        COUNTS["traced"] += 1
        prog.jaxpr, prog.consts = jaxpr, _resolve(cap.loose, consts)
        prog.run = _executable(jaxpr)
        prog.cpos, prog.captured = _captured_in(prog.consts, cap)
        prog.written = [st for st, _ in cap.written.values()]
        return prog

    def consts_with(self, captured, consts=None):
        """The consts (or `consts`) with the captured tensors' values `captured`."""
        out = list(self.consts if consts is None else consts)
        for k, j in self.cpos:
            out[k] = captured[j]
        return out

    def used(self):
        """Which inputs (arrays, then captured) the outputs use."""
        used = _used(self.jaxpr)
        n = len(self.consts)
        cap = [False] * len(self.captured)
        for k, j in self.cpos:
            cap[j] = cap[j] or used[k]
        return used[n:] + cap

    def reached(self, mask):
        """Which outputs depend on the inputs `mask` marks (arrays, then captured)."""
        n = len(mask) - len(self.captured)
        consts = self.consts_with(mask[n:], [False] * len(self.consts))
        return _reached(self.jaxpr, consts + list(mask[:n]))

    def __call__(self, *arrays):
        n = len(arrays) - len(self.captured)
        return self.run(self.consts_with(arrays[n:]), *arrays[:n])


def _reached(jaxpr, mask):
    """Which outputs of the jaxpr depend on the variables `mask` marks (its constvars,
    then invars): forward through the equations, into the jaxprs of calls."""
    dep = {v for v, m in zip((*jaxpr.constvars, *jaxpr.invars), mask) if m}
    for e in jaxpr.eqns:
        ins = [not isinstance(x, Literal) and x in dep for x in e.invars]
        if not any(ins):
            continue
        sub = e.params.get("jaxpr", e.params.get("call_jaxpr"))
        if isinstance(sub, ClosedJaxpr) and len(sub.jaxpr.invars) == len(ins):
            outs = _reached(sub.jaxpr, [False] * len(sub.jaxpr.constvars) + ins)
        else:  # (any other primitive: each output depends on every input)
            outs = [True] * len(e.outvars)
        dep.update(v for v, o in zip(e.outvars, outs) if o)
    return [not isinstance(v, Literal) and v in dep for v in jaxpr.outvars]


def _executable(jaxpr):
    """run(consts, *args) for the jaxpr: eval_jaxpr, primitive by primitive, on its
    first sighting; a jitted eval_jaxpr of the first jaxpr seen from the second on."""
    try:
        key = _jaxpr_key(jaxpr)
    except TypeError:  # a parameter that is neither hashable nor an array: never cached
        key = None
    entry = None if key is None else _PROGRAMS.get(key)
    if entry is None:
        if key is not None:
            EXECUTABLES.put(_PROGRAMS, key, [1, None])
        run = _eager(jaxpr)
        run.key = key
        return run
    entry[1] = EXECUTABLES.now
    EXECUTABLES.poll()
    entry = entry[0]  # [sightings, compiled or None]
    if entry[1] is None:
        first = jaxpr
        entry[1] = EXECUTABLES.track(
            jax.jit(lambda consts, *args: jax.core.eval_jaxpr(first, consts, *args)))
        COUNTS["compiled"] += 1
    compiled = entry[1]

    def run(consts, *args):
        COUNTS["compiled_runs"] += 1
        return compiled(consts, *args)
    run.key = key
    return run


def _undonated(jaxpr):
    """The jaxpr with no argument of its equations donated. Run primitive by primitive,
    a kernel staged with donation (an in-place op on a captured tensor's array) would
    free a const the program keeps, or the tensor's own array; jitted whole, jax ignores
    the inner donation."""
    eqns, changed = [], False
    for e in jaxpr.eqns:
        d = e.params.get("donated_invars")
        if d and any(d):
            e = e.replace(params={**e.params, "donated_invars": (False,) * len(d)})
            changed = True
        eqns.append(e)
    return jaxpr.replace(eqns=eqns) if changed else jaxpr


def _eager(jaxpr):
    jaxpr = _undonated(jaxpr)

    def run(consts, *args):
        COUNTS["eager_runs"] += 1
        return jax.core.eval_jaxpr(jaxpr, consts, *args)
    return run


def _jaxpr_key(jaxpr):
    """A hashable key equal for two jaxprs exactly when they compute the same: variables
    numbered by position, literals and parameters by value (an array's by its bytes),
    sub-jaxprs by their own keys (a jitted kernel's trace is a new object after jax's
    caches are cleared, NOTE [executable cache]: by identity, every program that calls
    it would be rebuilt), functions by identity. TypeError: a parameter it cannot key."""
    ids = {}
    for v in (*jaxpr.constvars, *jaxpr.invars):
        ids[v] = len(ids)

    def atom(x):
        if isinstance(x, Literal):
            return ("lit", x.aval, _param_key(x.val))
        return ids[x]
    parts = [tuple(v.aval for v in jaxpr.constvars), tuple(v.aval for v in jaxpr.invars)]
    for e in jaxpr.eqns:
        ins = tuple(atom(x) for x in e.invars)
        for v in e.outvars:
            ids[v] = len(ids)
        parts.append((e.primitive, ins, tuple(v.aval for v in e.outvars),
                      _param_key(e.params), frozenset(e.effects)))
    parts.append(tuple(atom(x) for x in jaxpr.outvars))
    key = tuple(parts)
    hash(key)
    return key


def _param_key(v):
    if isinstance(v, dict):
        return tuple((k, _param_key(x)) for k, x in v.items())
    if isinstance(v, (tuple, list)):
        return (type(v), *map(_param_key, v))
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return (type(v), repr(v))  # (1 == 1.0 == True; NaN != NaN)
    if isinstance(v, np.ndarray):
        return (np.ndarray, v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, ClosedJaxpr):
        return (ClosedJaxpr, _jaxpr_key(v.jaxpr), tuple(_param_key(c) for c in v.consts))
    if isinstance(v, Jaxpr):
        return (Jaxpr, _jaxpr_key(v))
    if isinstance(v, jax.Array) and not isinstance(v, jax.core.Tracer):
        return _param_key(np.asarray(v))
    return v  # by its own equality: value types by value, functions by identity


# ---- argnums -------------------------------------------------------------------------
def _check_argnums(argnums, nargs):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in nums)


class _Args:
    """The tensor arguments of a call to grad/jacrev/jacfwd as inputs of the traced
    function, as torch wraps every tensor argument at the transform's level: `tensors`
    the differentiated ones (argnums, in its order: `leaves`, of structure `spec`) then
    the other tensor leaves, which the function may modify in place; rebuild(new) is
    the argument tuple with `new` in their places."""
    __slots__ = ("flat", "full", "leaves", "n_diff", "pos", "spec", "tensors")

    def __init__(self, args, argnums, needs_grad=True):
        nums = _check_argnums(argnums, len(args))
        chosen = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
        self.leaves, self.spec = _flatten(chosen)
        for x in self.leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got "
                                 f"{type(x)}")
            if needs_grad and not x.dtype.is_differentiable:
                raise RuntimeError("only Tensors of floating point dtype can require "
                                   "gradients")
        self.flat, self.full = _flatten(tuple(args))
        starts, k = [], 0
        for c in self.full.children:
            starts.append(k)
            k += c.num_leaves()
        diff = [p for i in nums
                for p in range(starts[i], starts[i] + self.full.children[i].num_leaves())]
        seen = set(diff)
        self.pos = diff + [p for p, x in enumerate(self.flat)
                           if p not in seen and isinstance(x, Tensor)]
        self.n_diff = len(diff)
        self.tensors = [self.flat[p] for p in self.pos]

    def rebuild(self, new):
        flat = list(self.flat)
        for p, t in zip(self.pos, new):
            flat[p] = t
        return _unflatten(self.full, flat)


def _split_aux(out, has_aux, where):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return out


def _aux_arrays(aux):
    leaves, spec = _flatten(aux)
    _check_tensors(leaves, "Expected tensors, got unsupported type {}")
    return [t._value for t in leaves], spec


def _tensors(arrays, spec):
    return _unflatten(spec, [_tensor(a) for a in arrays])


def _flat_outputs(pure):
    """pure(*arrays) -> (outputs, aux, modified inputs) as one flat list."""
    def f(*arrs):
        outs, aux, muts = pure(*arrs)
        return [*outs, *aux, *muts]
    return f


def _others(others, info):
    """(aux, values of the modified inputs, written values): a transform's outputs after
    its own, in that order (pure's, then _deferred's)."""
    a, m = info["n_aux"], len(info["mutated"])
    return others[:a], others[a:a + m], others[a + m:]


# ---- grad, grad_and_value, vjp ------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: (gradient, value) of a scalar function; with has_aux,
    (gradient, (value, aux)).

    >>> import eagergrad as torch
    >>> g, v = torch.func.grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1., 2.]))
    >>> g, v
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _no_saved_hooks()
        return _over_autograd(lambda *a: _grad_and_value(a, kwargs), args, direct=True)

    def _grad_and_value(args, kwargs):
        a = _Args(args, argnums)
        where = "grad_and_value(f)(*args)"
        info = {"n_aux": 0}

        def pure(*arrs):
            ins = _inputs(arrs, a.n_diff)
            with _inside("grad"):
                out = func(*a.rebuild(ins), **kwargs)
                stats = FUNC.levels[-1].stats
            out, aux = _split_aux(out, has_aux, where)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use "
                                   "the vjp or jacrev APIs instead?")
            if out.dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            info["error"] = _saved_error([out])
            auxv = []
            if has_aux:
                auxv, info["aux"] = _aux_arrays(aux)
            info["n_aux"], info["mutated"] = len(auxv), _mutated(ins, arrs)
            info["stats"] = [i for i in info["mutated"] if id(ins[i]._storage) in stats]
            info["versions"] = [ins[i]._version for i in info["mutated"]]
            return [out._value], auxv, [ins[i]._value for i in info["mutated"]]

        arrays = [t._value for t in a.tensors]
        if FUNC.capture is not None:  # a call's trace: the vjp applied to f's jaxpr
            d = _deferred("grad", pure, arrays, lambda: a.n_diff, _grad_program)
            value, grads, others = d.run(d.made, *arrays)
        else:
            value, grads, others = _grad_eval(_flat_outputs(pure), arrays, a.n_diff)
        aux, muts, written = _others(others, info)
        if FUNC.capture is not None:
            d.write(written)
        _write_back(a.tensors, info["mutated"], muts, info)
        g = _tensors(grads, a.spec)
        value = _tensor(value)
        if has_aux:
            return g, (value, _tensors(aux, info["aux"]))
        return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of a scalar function w.r.t. argument(s) `argnums`.

    >>> import eagergrad as torch
    >>> torch.func.grad(lambda x: x.sin().sum())(torch.zeros(2))
    tensor([1., 1.])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _real_only(tensors, name, what):
    for i, t in enumerate(tensors):
        if t.dtype.is_complex:
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _traced_outputs(call, n_grad, has_aux, where, kind, info, real=None):
    """pure(*arrays) -> (output arrays, aux arrays, arrays of the inputs modified in
    place) for vjp/jvp/linearize/jacobians: call(input tensors) runs the user's function
    (the first n_grad inputs require grad; `real`: the jacobian's name, whose outputs
    must be real)."""
    def pure(*arrs):
        ins = _inputs(arrs, n_grad)
        with _inside(kind):
            out = call(ins)
            stats = FUNC.levels[-1].stats
        out, aux = _split_aux(out, has_aux, where)
        if out is None and kind == "vjp":
            raise RuntimeError(f"{where}: Expected f to be a function that has non-empty "
                               "output (got output = [None])")
        leaves, info["out"] = _flatten(out, none_leaf=True)
        _check_tensors(leaves, where + ": expected f(*primals) to "
                       "return only tensors, got unsupported type {}")
        if real:
            _real_only(leaves, real, "outputs")
        info["meta"] = [(t._shape, t.dtype) for t in leaves]
        info["error"] = _saved_error(leaves) if kind in _REVERSE else None
        auxv = []
        if has_aux:
            auxv, info["aux"] = _aux_arrays(aux)
        info["n_aux"], info["mutated"] = len(auxv), _mutated(ins, arrs)
        info["stats"] = [i for i in info["mutated"] if id(ins[i]._storage) in stats]
        info["versions"] = [ins[i]._version for i in info["mutated"]]
        return [t._value for t in leaves], auxv, [ins[i]._value for i in info["mutated"]]
    return pure


def _primals(primals):
    leaves, spec = _flatten(primals)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    return leaves, spec


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: (output, vjp_fn) (and aux); vjp_fn(cotangents) is a tuple of
    gradients, one per primal.

    >>> import eagergrad as torch
    >>> out, fn = torch.func.vjp(lambda x: x * 3, torch.ones(2))
    >>> fn(torch.tensor([1., 2.]))
    (tensor([3., 6.]),)
    """
    _no_saved_hooks()
    leaves, spec = _primals(primals)
    info = {}
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), len(leaves), has_aux,
                           "vjp(f, *primals)", "vjp", info)
    traced = _traced_once(pure, leaves, "grad")  # (mutating a captured tensor: torch's error)
    if traced is not None:  # one program: outputs and vjp_fn's gradients through autograd
        prog, n_out, outs, aux, muts = traced
        _write_back(leaves, info["mutated"], muts, {**info, "error": None})
        out_spec, meta = info["out"], info["meta"]

        def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
            cts = [c if isinstance(c, Tensor) else _wrap(c)
                   for c in _cotangents(cotangents, out_spec, meta)]
            if info["error"] is not None:  # (torch's backward: a saved tensor modified)
                raise info["error"]
            return _unflatten(spec, _through_program(prog, leaves, cts, _vjp_of, "vjp", n_out,
                                                     create_graph))
        out = _unflatten(out_spec, outs)
        if has_aux:
            return out, vjp_fn, _unflatten(info["aux"], aux)
        return out, vjp_fn
    flat, d = _nested(pure, [t._value for t in leaves], "vjp")

    def f(*arrs):
        outs = flat(*arrs)
        n_out = len(info["meta"])
        return outs[:n_out], outs[n_out:]
    outs, pullback, others = jax.vjp(f, *[t._value for t in leaves], has_aux=True)
    aux, muts, written = _others(others, info)
    if d is not None:
        d.write(written)
    _write_back(leaves, info["mutated"], muts, {**info, "error": None})
    out_spec, meta = info["out"], info["meta"]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cts = [c._value if isinstance(c, Tensor) else c
               for c in _cotangents(cotangents, out_spec, meta)]
        if info["error"] is not None:
            raise info["error"]
        grads = [_conj(g) for g in pullback([_conj(c) for c in cts])]
        return _tensors(grads, spec)

    out = _tensors(outs, out_spec)
    if has_aux:
        return out, vjp_fn, _tensors(aux, info["aux"])
    return out, vjp_fn


def _cotangents(cotangents, out_spec, meta):
    """vjp_fn's cotangents checked against the outputs (torch's errors): a tensor of the
    output's dtype, or an array of ones for None (a scalar output), per output."""
    c_leaves, c_spec = _flatten(cotangents, none_leaf=True)
    if c_spec != out_spec:
        raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                           "pytree structure of outputs to the function. cotangents: "
                           f"{c_spec.pprint()}, primal output: {out_spec.pprint()}")
    cts = []
    for i, (c, (shape, dt)) in enumerate(zip(c_leaves, meta)):
        if c is None:  # as torch's autograd.grad: ones for a scalar output
            if len(shape):
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            cts.append(jnp.ones(shape, dt.np))
            continue
        if not isinstance(c, Tensor):
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(c).__name__}")
        if c._shape != shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{Size(c._shape)} and output[{i}] has a shape of "
                               f"{Size(shape)}.")
        cts.append(c if c.dtype is dt else c.to(dt))
    return cts


# ---- jvp, linearize -------------------------------------------------------------------
def _tangents(primals, tangents):
    where = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    p_leaves, p_spec = _flatten(primals)
    t_leaves, t_spec = _flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{p_spec!r} and tangents with structure {t_spec!r}")
    if not p_leaves:
        raise RuntimeError(f"{where}: Expected primals to contain at least one Tensor.")
    for p, t in zip(p_leaves, t_leaves):
        for x in (p, t):
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got "
                                 f"{type(x)}")
        if not p.dtype.is_differentiable:
            raise ValueError(f"Expected primal to be floating point or complex, but got: "
                             f"{p.dtype}")
        if p._shape != t._shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size "
                               "than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(p._shape)} while the given forward "
                               f"gradient is of size {list(t._shape)}.")
    return p_leaves, p_spec, [t._value.astype(p.dtype.np) for p, t in zip(p_leaves, t_leaves)]


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: (output, jvp_out) (and aux): the pushforward of `tangents`.

    >>> import eagergrad as torch
    >>> torch.func.jvp(lambda x: x ** 2, (torch.tensor([3.]),), (torch.tensor([1.]),))
    (tensor([9.]), tensor([6.]))
    """
    if isinstance(primals, tuple):
        return _over_autograd(lambda p, t: _jvp(func, p, t, has_aux), (primals, tangents))
    return _jvp(func, primals, tangents, has_aux)


def _jvp(func, primals, tangents, has_aux):
    leaves, spec, tans = _tangents(primals, tangents)
    info = {}
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), 0, has_aux,
                           "jvp(f, primals, tangents)", "jvp", info)
    arrays = [t._value for t in leaves]
    if FUNC.capture is not None:  # a call's trace: jax.jvp applied to f's jaxpr
        d = _deferred("jvp", pure, arrays, lambda: len(info["meta"]), _jvp_program)
        outs, t_outs, others = d.run(d.made, arrays, tans)
    else:
        flat = _flat_outputs(pure)
        alls, t_alls = jax.jvp(flat, arrays, tans)
        n = len(info["meta"])
        outs, t_outs, others = alls[:n], t_alls[:n], alls[n:]
    aux, muts, written = _others(others, info)
    if FUNC.capture is not None:
        d.write(written)
    _write_back(leaves, info["mutated"], muts, info)
    out, t_out = _tensors(outs, info["out"]), _tensors(t_outs, info["out"])
    if has_aux:
        return out, t_out, _tensors(aux, info["aux"])
    return out, t_out


def linearize(func, *primals):
    """torch.func.linearize: (output, jvp_fn) where jvp_fn(*tangents) is the pushforward.
    As torch's, the function runs twice: called as it is for the output, then traced
    for jvp_fn (whose primals are constants).

    >>> import eagergrad as torch
    >>> out, fn = torch.func.linearize(lambda x: x.sin(), torch.zeros(2))
    >>> fn(torch.ones(2))
    tensor([1., 1.])
    """
    leaves, spec = _primals(primals)
    output = func(*primals)
    info = {}
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), 0, False,
                           "linearize(f, *primals)", "linearize", info)
    arrays = [t._value for t in leaves]
    if not _enclosed(arrays):  # one program, its outputs unused: jvp_fn's tangents
        n = []

        def compute(*arrs):
            outs, _, muts = pure(*arrs)
            n[:] = [len(outs)]
            return list(outs) + list(muts)
        prog = _Program.trace(compute, arrays, STATE.grad)
        res = [_wrap(r) for r in prog(*arrays, *[t._value for t in prog.captured])]
        k = len(res) - len(prog.written)
        for st, o in zip(prog.written, res[k:]):
            st.array = o._value
            st.generation += 1
        _write_back(leaves, info["mutated"], res[n[0]:k])
        held = []

        def jvp_fn(*tangents):
            _tangents(primals, tangents)  # (torch's errors)
            tans = [t if t.dtype is p.dtype else t.to(p.dtype)
                    for p, t in zip(leaves, _flatten(tangents)[0])]
            outs = _through_program(prog, leaves, tans, _jvp_of, "jvp", n[0],
                                    constant_primals=True)
            return _unflatten(info["out"], _held_constants(prog, leaves, tans, outs, held))
        return output, jvp_fn
    flat, d = _nested(pure, arrays, "linearize")
    outs, lin = jax.linearize(flat, *arrays)
    n, m = len(info["meta"]), len(info["mutated"])
    if d is not None:
        d.write(outs[n + m:])
    _write_back(leaves, info["mutated"], outs[n:n + m])

    def jvp_fn(*tangents):
        _, _, tans = _tangents(primals, tangents)
        return _tensors(lin(*tans)[:n], info["out"])
    return output, jvp_fn


def _held_constants(prog, leaves, tans, outs, held):
    """torch's linearize keeps, in jvp_fn's graph, the values it derived from the primals
    and captured tensors as constants, which require grad when those do: an output of
    jvp_fn that uses one requires grad, though autograd reaches no tensor through it
    (its node leads to a leaf of its own). held: [which outputs], found once."""
    if not STATE.grad:
        return outs
    mask = [t._requires_grad for t in leaves] + [True] * len(prog.captured)
    if not any(mask):
        return outs
    if not held:
        n = len(outs)

        def pushed(arrays, caps, tangents):
            def f(*a):
                return jax.core.eval_jaxpr(prog.jaxpr, prog.consts_with(caps), *a)[:n]
            return jax.jvp(f, list(arrays), list(tangents))[1]
        closed = jax.make_jaxpr(pushed)([t._value for t in leaves],
                                        [t._value for t in prog.captured],
                                        [t._value for t in tans])
        held.append(_reached(closed.jaxpr, [False] * len(closed.jaxpr.constvars) + mask
                             + [False] * len(tans)))
    anchor = _make(jnp.zeros((), jnp.float32))
    anchor._requires_grad = True
    return [_TransformOutput.apply(lambda a, o=o: [o._value], anchor)[0]
            if h and not o._requires_grad else o for o, h in zip(outs, held[0])]


# ---- jacobians -------------------------------------------------------------------------
def _nested(pure, arrays, kind):
    """(f, _Deferred or None) for vjp/linearize nested in a transform or under a jax
    trace: f(*arrays) -> pure's outputs flat (then written values), for jax's vjp or
    linearize. Inside a call's trace the function is traced at its own level first, as
    the other transforms' (NOTE [captured tensors]: jax's residuals are then the
    placeholders of the captured tensors, not their arrays)."""
    if FUNC.capture is None:
        return _flat_outputs(pure), None
    d = _deferred(kind, _flat_outputs(pure), arrays, tuple, _eval_program)
    return (lambda *a: d.made(d.consts, *a)), d


def _eval_program(jaxpr, n_writes, static):
    def program(consts, *arrays):
        return jax.core.eval_jaxpr(jaxpr, consts, *arrays)
    return program


def _jacobian_result(blocks, others, d, a, info, has_aux):
    """jacrev's and jacfwd's ending: write back what the call modified (through the
    deferred program `d` when traced), then the jacobian blocks as torch's tree."""
    aux, muts, written = _others(others, info)
    if FUNC.capture is not None:
        d.write(written)
    _write_back(a.tensors, info["mutated"], muts, info)
    blocks = [[_tensor(b) for b in row_] for row_ in blocks]
    jac = _jacobian_tree(blocks, info["out"], a.spec)
    if has_aux:
        return jac, _tensors(aux, info["aux"])
    return jac


def _jacobian_tree(blocks, out_spec, in_spec):
    """The jacobian pytree: the output structure, each output leaf replaced by the
    structure of the differentiated arguments (blocks[k][j]: output k, input leaf j)."""
    return _unflatten(out_spec, [_unflatten(in_spec, row) for row in blocks])


def _chunks(n, chunk_size):
    step = max(1, n if chunk_size is None else chunk_size)
    return [(s, min(n, s + step)) for s in range(0, n, step)] or [(0, 0)]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None,
           _preallocate_and_copy=False):
    """torch.func.jacrev: the jacobian by reverse mode (vjps of the basis, batched with
    jax.vmap, in chunks of `chunk_size` rows).

    >>> import eagergrad as torch
    >>> torch.func.jacrev(lambda x: x ** 2)(torch.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _no_saved_hooks()
        return _over_autograd(lambda *a: _jacrev(a, kwargs), args)

    def _jacrev(args, kwargs):
        a = _Args(args, argnums, needs_grad=False)
        _real_only(a.leaves, "jacrev", "inputs")
        info = {}
        pure = _traced_outputs(lambda ins: func(*a.rebuild(ins), **kwargs), a.n_diff,
                               has_aux, "vjp(f, *primals)", "vjp", info, real="jacrev")
        arrays = [t._value for t in a.tensors]
        if FUNC.capture is not None:  # a call's trace: the jacobian of f's jaxpr
            d = _deferred("jacrev", pure, arrays,
                          lambda: (a.n_diff, len(info["meta"]), chunk_size), _jacrev_program)
            blocks, others = d.run(d.made, *arrays)
        else:  # (the number of outputs is known once the function ran)
            d = None
            blocks, others = _jacrev_eval(_flat_outputs(pure), arrays, a.n_diff,
                                          lambda: len(info["meta"]), chunk_size)
        return _jacobian_result(blocks, others, d, a, info, has_aux)
    return wrapper


_RANDOMNESS = ("error", "different", "same")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the jacobian by forward mode (jvps of the basis, batched with
    jax.vmap).

    >>> import eagergrad as torch
    >>> torch.func.jacfwd(lambda x: x.sum() * x)(torch.tensor([1., 2.]))
    tensor([[4., 1.],
            [2., 5.]])
    """
    _check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _over_autograd(lambda *a: _jacfwd(a, kwargs), args)

    def _jacfwd(args, kwargs):
        a = _Args(args, argnums, needs_grad=False)
        _real_only(a.leaves, "jacfwd", "inputs")
        info = {}
        inner = _traced_outputs(lambda ins: func(*a.rebuild(ins), **kwargs), 0, has_aux,
                                "jvp(f, primals, tangents)", "jacfwd", info, real="jacfwd")

        def pure(index, *arrs):  # (randomness="different": a draw per column, as vmap's)
            FUNC.levels.append(_Level("jacfwd", randomness, index))
            try:
                return inner(*arrs)
            finally:
                FUNC.levels.pop()
        arrays = [t._value for t in a.tensors]
        if FUNC.capture is not None:  # a call's trace: the jacobian of f's jaxpr
            index = jax.ShapeDtypeStruct((), _indices(0, 1).dtype)
            d = _deferred("jacfwd", pure, [index, *arrays],
                          lambda: (a.n_diff, len(info["meta"]), randomness), _jacfwd_program)
            blocks, others = d.run(d.made, *arrays)
        else:
            d = None
            flat = _flat_outputs(inner)

            def f(i, *arrs):
                FUNC.levels.append(_Level("jacfwd", randomness, i))
                try:
                    return flat(*arrs)
                finally:
                    FUNC.levels.pop()
            blocks, others = _jacfwd_eval(f, arrays, a.n_diff, lambda: len(info["meta"]),
                                          randomness)
        return _jacobian_result(blocks, others, d, a, info, has_aux)
    return wrapper


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func, argnums), argnums).

    >>> import eagergrad as torch
    >>> torch.func.hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap ----------------------------------------------------------------------------
def _fname(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: `func` mapped over dimension `in_dims` of its inputs (jax.vmap of
    the traced function); the mapped dimension of the outputs goes to `out_dims`.

    >>> import eagergrad as torch
    >>> torch.func.vmap(torch.dot)(torch.ones(2, 3), torch.ones(2, 3))
    tensor([3., 3.])
    """
    _check_randomness(randomness)
    if chunk_size is not None and not chunk_size > 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _over_autograd(
            lambda *a: _vmap_call(func, in_dims, out_dims, randomness, chunk_size, a, kwargs),
            args, direct=True)
    return wrapped


def _vmap_flat_in_dims(func, in_dims, args):
    name = _fname(func)
    head = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    leaves, spec = _flatten(args)
    dims = _broadcast(in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args), spec)
    if dims is None:
        raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {_prefix_spec(in_dims)!r} but inputs has "
                         f"structure {spec!r}.")
    sizes, norm = [], []
    for x, d in zip(leaves, dims):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"{head}: Got in_dim={d} for an input but in_dim must be either "
                             "an integer dimension or None.")
        if d is not None and not isinstance(x, Tensor):
            raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if d is not None:
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is "
                                 f"a Tensor of dimensionality {n} so expected in_dim to "
                                 f"satisfy -{n} <= in_dim < {n}.")
            d %= n
            sizes.append(x._shape[d])
        norm.append(d)
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return leaves, spec, norm, sizes[0]


def _vmap_flat_out_dims(func, out_dims, spec):
    name = _fname(func)
    ok = out_dims is None or (isinstance(out_dims, int) and not isinstance(out_dims, bool)) \
        or isinstance(out_dims, (tuple, list))
    if not ok:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         "None or a python collection of ints representing where in the "
                         "outputs the vmapped dimension should appear.")
    if isinstance(out_dims, (tuple, list)) and spec.kind is None and len(out_dims) == 1:
        out_dims = out_dims[0]  # a single output and out_dims=(d,), as torch
    dims = _broadcast(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{_prefix_spec(out_dims)!r} but outputs has structure {spec!r}.")
    return dims


_BN_STATS = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on "
    "how to patch your module to work with vmap")
_VMAP_INPLACE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace arithmetic. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead.")


def _vmap_inplace(op, size):
    """torch's error for an in-place write of a batched value into an unbatched tensor
    under vmap, which is its batching rule's for the op: `op` (name, tensor shape,
    transform depth) is the first in-place op on the storage (None: unknown)."""
    if op is None:
        return _VMAP_INPLACE
    name, shape, depth = op
    if name in ("add", "atan2"):  # (their rule writes the broadcast result: the shape check)
        return (f"output with shape {list(shape)} doesn't match the broadcast shape "
                f"{[size, *shape]}")
    if name in ("addcmul", "addcdiv", "pow", "lerp"):  # (the batching fallback's)
        return (f"vmap: aten::{name}_(self, *extra_args) is not possible because there "
                "exists a Tensor `other` in extra_args that has more elements than `self`. "
                "This happened due to `other` being vmapped over but `self` not being "
                f"vmapped over at level {depth}. Please try to use out-of-place operators "
                f"instead of aten::{name}_. If said operator is being called inside the "
                "PyTorch framework, please file a bug report instead.")
    if name == "fill":
        return _VMAP_INPLACE.replace("inplace arithmetic", "fill_")
    return _VMAP_INPLACE


def _batched(value, index):
    """Whether `value` is batched by the vmap whose hidden batched argument is `index`."""
    return isinstance(value, BatchTracer) and value._trace is index._trace


_INDICES = {}


def _indices(a, b):
    """jnp.arange(a, b), made once per range (an eager call's dispatch costs)."""
    r = _INDICES.get((a, b))
    if r is None:
        with jax.ensure_compile_time_eval():
            r = put_bounded(_INDICES, (a, b), jnp.arange(a, b), 64)
    return r


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec, dims, size = _vmap_flat_in_dims(func, in_dims, args)
    name = _fname(func)
    tensors = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    info = {}

    def pure(index, *arrs):
        new = list(leaves)
        for i, a in zip(tensors, arrs):
            new[i] = _wrap(a)
        with _inside("vmap", randomness, index):
            out = func(*_unflatten(spec, new), **kwargs)
            info["stats"] = FUNC.levels[-1].stats
        o_leaves, o_spec = _flatten(out, none_leaf=True)
        for x in o_leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(x)}. Did you mean to set out_dims= to None for "
                                 "output?")
        o_dims = _vmap_flat_out_dims(func, out_dims, o_spec)
        # inputs modified in place (also without a version bump, as BatchNorm's running
        # stats): written back to the caller's tensors afterwards
        mutated = [i for i, a in zip(tensors, arrs) if new[i]._storage.array is not a]
        info["out"], info["dims"], info["mutated"] = o_spec, o_dims, mutated
        info["versions"] = [new[i]._version for i in mutated]
        info["storages"] = [new[i]._storage for i in mutated]
        return [x._value for x in o_leaves] + [new[i]._value for i in mutated]

    def check(batched, written=(), born=(), size=0):
        """batched: whether each output of pure is batched, then each storage from
        outside it wrote (`written`; `born`: ids of those a factory made inside it)."""
        n = len(info["dims"])
        for b, d in zip(batched, info["dims"]):
            if d is None and b:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
        targets = [(dims[i] is None, st) for i, st in zip(info["mutated"], info["storages"])]
        targets += [(True, st) for st in written]
        for b, (fixed, st) in zip(batched[n:], targets):
            if not (fixed and b):
                continue
            if id(st) in born:  # (torch: the in-place op's own shape check)
                shape = list(st.array.shape)
                raise RuntimeError(f"output with shape {shape} doesn't match the broadcast "
                                   f"shape {[size, *shape]}")
            if id(st) in info["stats"]:
                raise RuntimeError(_BN_STATS)
            cap = FUNC.capture
            raise RuntimeError(_vmap_inplace(None if cap is None else cap.ops.get(id(st)), size))

    arrays = [leaves[i]._value for i in tensors]
    axes = [dims[i] for i in tensors]
    if FUNC.capture is not None:  # a call's trace: vmap applied to pure's jaxpr
        def run(index, *arrs):  # (traced per chunk: a chunk sees the previous' writes)
            one = [x if d is None else
                   jax.ShapeDtypeStruct(x.shape[:d] + x.shape[d + 1:], x.dtype)
                   for x, d in zip(arrs, axes)]
            d = _deferred("vmap", pure, [jax.ShapeDtypeStruct((), index.dtype), *one],
                          lambda: tuple(axes), _vmap_program)
            fn, batched = d.made
            check(batched, d.through, d.born, index.shape[0])
            outs, written = d.run(fn, index, *arrs)
            d.write(written)
            return outs
    else:
        def run(index, *arrs):
            flags = []

            def checked(index, *arrs):
                outs = pure(index, *arrs)
                flags.extend(_batched(o, index) for o in outs)
                return outs
            outs = jax.vmap(checked, in_axes=(0, *axes))(index, *arrs)
            check(flags)
            return outs
    parts = []
    for a, b in _chunks(size, chunk_size):
        chunk = [x if d is None or (a, b) == (0, size) else
                 jax.lax.slice_in_dim(x, a, b, axis=d) for x, d in zip(arrays, axes)]
        parts.append(run(_indices(a, b), *chunk))
    outs = [_cat0([p[k] for p in parts]) if len(parts) > 1 else parts[0][k]
            for k in range(len(parts[0]))]
    n_out = len(outs) - len(info["mutated"])
    for i, o, v in zip(info["mutated"], outs[n_out:], info["versions"]):
        leaves[i].copy_(_tensor(o[0] if dims[i] is None else _movedim0(o, dims[i])))
        leaves[i]._version_counter.version += v - 1
    result = []
    for o, d in zip(outs[:n_out], info["dims"]):
        if d is None:
            result.append(_tensor(o[0]))
            continue
        n = o.ndim
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        result.append(_tensor(o if d % n == 0 else _movedim0(o, d)))
    return _unflatten(info["out"], result)


def _cat0(xs):
    """The chunks' outputs concatenated (tensors under autograd over the call)."""
    if any(isinstance(x, Tensor) for x in xs):
        return cat([_tensor(x) for x in xs])
    return jnp.concatenate(xs)


def _movedim0(o, d):
    return o.movedim(0, d) if isinstance(o, Tensor) else jnp.moveaxis(o, 0, d)


# ---- functionalize ----------------------------------------------------------------------
def functionalize(func, *, remove="mutations"):
    """torch.func.functionalize: in eager mode the same values as `func` (mutations of the
    inputs included), so this runs `func`.

    >>> import eagergrad as torch
    >>> torch.func.functionalize(lambda x: x.add_(1))(torch.zeros(1))
    tensor([1.])
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n     remove='mutations': all inplace and "
            "out= operators will be removed from the program, and replaced with their "
            "out-of-place equivalents.\n     remove='mutations_and_views': In addition to "
            "the above, all aliasing operators {view} will be replaced with their "
            "non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped
