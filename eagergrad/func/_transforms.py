"""torch.func transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, vmap, functionalize.

Each transform runs the eager function once on tensors that hold jax tracers and applies
the matching jax transform (jax.vjp, jax.jvp, jax.linearize, jax.vmap), so transforms
compose (vmap of grad, jacfwd of jacrev) and run under jax.jit.

Called eagerly (NOTE [programs]), a transform is traced anew on every call, so the
user's Python runs each time as in torch, and runs compiled: grad and vmap trace the
function at its own level and apply jax's transform to its jaxpr (_deferred), once per
distinct jaxpr; a call with autograd over it is traced whole into one program
(_Program). Arrays the function closes over are the programs' inputs, read fresh.

Autograd over a transform: outputs are differentiable w.r.t. the tensors that require
grad which it reads, arguments or captured by closure (one node whose backward is the
jax vjp of the program). In-place writes to captured tensors happen once per call.

One file: the transforms share the pytree, level, program and autograd-over helpers.

NOTE [conj convention]: torch.func, like torch.autograd, returns dL/dz* for complex
inputs: a torch vjp is conj(jax_vjp(conj(v))). Pushforwards (jvp, jacfwd) are
convention-free and equal jax's.
"""
# ruff: noqa: TRY004 - torch raises RuntimeError/ValueError on these type checks
import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters.batching import BatchTracer
from jax.extend.core import ClosedJaxpr, Literal

from .. import creation
from .._cache import put_bounded
from .._mode import STATE
from .._storage import Storage
from ..engine.function import Function
from ..engine.grad_mode import no_grad
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
        # grad/vjp/jvp (as torch): the primal value, a constant for differentiation
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


def _wrap(a):
    return _make(a)  # (not a factory: the wrapper of a transform's own value)


def _inputs(arrs, kind):
    """Tensors over the traced input arrays (requiring grad under grad/vjp/jacrev)."""
    ts = [_make(a) for a in arrs]
    if kind in _REVERSE:
        for t in ts:
            t._requires_grad = t.dtype.is_differentiable
    return ts


def _conj(a):
    return jnp.conj(a) if jnp.iscomplexobj(a) else a


def _check_tensors(leaves, msg):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(msg.format(type(x)))


# ---- autograd over a transform ---------------------------------------------------------
class _TransformOutput(Function):
    """A transform called on tensors that require grad (torch: autograd over torch.func):
    one node whose backward is the jax vjp of the whole transformed call."""

    @staticmethod
    def forward(ctx, compute, *tensors):
        outs, ctx.pullback = jax.vjp(compute, *[t._value for t in tensors])
        ctx.compute = compute
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
        if not (STATE.grad and any(t._requires_grad for t in (*tensors, *grads))):
            cts = [_conj(g._value) for g in grads]
            return (None, *[_wrap(_conj(g)) for g in ctx.pullback(cts)])
        # create_graph: the backward is itself a transformed call (double backward)
        n, compute = len(tensors), ctx.compute

        def backward(*arrs):
            pullback = jax.vjp(compute, *arrs[:n])[1]
            return [_conj(g) for g in pullback([_conj(c) for c in arrs[n:]])]
        return (None, *_TransformOutput.apply(backward, *tensors, *grads))


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
    direct: the transform defers its jax transform (_deferred): without autograd over
    it, it runs on the arguments as they are, its compiled program called directly."""
    leaves, spec = _flatten(args)
    idx = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    arrays = [leaves[i]._value for i in idx]
    if _enclosed(arrays):
        return call(*args)
    grad = STATE.grad
    if direct and not (grad and any(leaves[i]._requires_grad for i in idx)):
        out = _direct(call, args, grad)
        if out is not _NeedsAutograd:
            return out
    info = {}

    def compute(*arrs):
        new = list(leaves)
        for i, a in zip(idx, arrs):
            new[i] = _wrap(a)
        out_leaves, info["out"] = _flatten(call(*_unflatten(spec, new)))
        # arguments the call modified in place (vmap's write-back): extra outputs
        info["mutated"] = [i for i, a in zip(idx, arrs) if new[i]._storage.array is not a]
        return [t._value for t in out_leaves] + [new[i]._value for i in info["mutated"]]
    prog = _Program.trace(compute, arrays, grad)
    if prog is None:  # the call needs concrete values (.item() under grad): jax eagerly
        return _eager_over_autograd(call, args, leaves, idx, compute, info, grad)
    return _outputs(_run_program(prog, [leaves[i] for i in idx], arrays, grad), leaves, info)


def _outputs(outs, leaves, info):
    """The call's result from compute's outputs: the arguments it modified in place get
    their new values (the extra outputs after the call's own)."""
    n = len(outs) - len(info["mutated"])
    with no_grad():
        for i, o in zip(info["mutated"], outs[n:]):
            leaves[i].copy_(o)
    return _unflatten(info["out"], outs[:n])


def _run_program(prog, tensors, arrays, grad):
    """The program's outputs on `arrays` (the values of `tensors`) as tensors, through
    autograd (one node) when grad mode is on and an input or a captured tensor requires
    grad; the storages it wrote are given their new values."""
    inputs = list(tensors) + prog.captured
    if grad and any(t._requires_grad for t in inputs):
        outs = list(_TransformOutput.apply(prog, *inputs))
    else:
        outs = [_wrap(a) for a in prog(*arrays, *[t._value for t in prog.captured])]
    n = len(outs) - len(prog.written)
    for st, o in zip(prog.written, outs[n:]):
        st.array = o._value
        st.generation += 1
    return outs[:n]


def _traced_once(pure, leaves, kind=None):
    """vjp/linearize at top level: pure(*arrays) -> (output arrays, aux arrays) traced
    once into a program of the primals; (program, number of outputs, output and aux
    tensors), differentiable w.r.t. the primals and captured tensors that require grad.
    None when nested, under a jax trace, or if tracing needs values (then jax's
    transforms run on concrete values, as before)."""
    arrays = [t._value for t in leaves]
    if _enclosed(arrays):
        return None
    n_out = []

    def compute(*arrs):
        outs, aux = pure(*arrs)
        n_out[:] = [len(outs)]
        return list(outs) + list(aux or ())
    grad = STATE.grad
    prog = _Program.trace(compute, arrays, grad, kind)
    if prog is None:
        return None
    return prog, n_out[0], _run_program(prog, leaves, arrays, grad)


def _through_program(prog, leaves, extra, make, kind, n_out, create_graph=None,
                     constant_primals=False):
    """make(jaxpr, n_out)'s jitted function of (consts, primal arrays, extra arrays),
    cached per program, called on the primals, the captured tensors and the tensors
    `extra` (cotangents, tangents): through autograd as _run_program (constant_primals:
    differentiable w.r.t. `extra` only, as torch's linearize)."""
    key = prog.run.key
    f = _DERIVED.get((kind, n_out, key)) if key is not None else None
    if f is None:
        f = make(prog.jaxpr, n_out)
        if key is not None:
            put_bounded(_DERIVED, (kind, n_out, key), f, 64)
    n, m = len(leaves), len(prog.captured)

    def compute(*xs):
        return f(prog.consts_with(xs[n:n + m]), list(xs[:n]), list(xs[n + m:]))
    inputs = [*leaves, *prog.captured, *extra]
    if constant_primals:
        fixed = [t._value for t in inputs[:n + m]]
        compute = functools.partial(compute, *fixed)
        inputs = inputs[n + m:]
    if create_graph is not False and STATE.grad and any(t._requires_grad for t in inputs):
        return list(_TransformOutput.apply(compute, *inputs))
    return [_wrap(a) for a in compute(*[t._value for t in inputs])]


def _vjp_of(jaxpr, n_out):
    def g(consts, arrays, cts):
        def f(*a):
            return jax.core.eval_jaxpr(jaxpr, consts, *a)[:n_out]
        pullback = jax.vjp(f, *arrays)[1]
        return [_conj(x) for x in pullback([_conj(c) for c in cts])]
    return jax.jit(g)


def _jvp_of(jaxpr, n_out):
    def g(consts, arrays, tangents):
        def f(*a):
            return jax.core.eval_jaxpr(jaxpr, consts, *a)[:n_out]
        return jax.jvp(f, arrays, tangents)[1]
    return jax.jit(g)


_DERIVED = {}  # (kind, n_out, program key) -> _vjp_of/_jvp_of's function


@contextlib.contextmanager
def _capturing(cap):
    """FUNC.capture = cap while the block runs (CAPTURING.n counts the threads)."""
    prev, FUNC.capture = FUNC.capture, cap
    CAPTURING.n += 1
    try:
        yield
    finally:
        CAPTURING.n -= 1
        FUNC.capture = prev


class _NeedsAutograd(BaseException):  # a signal (past a user's `except Exception`)
    """_direct's call read a tensor requiring grad: autograd over the call is needed."""


def _direct(call, args, grad):
    """call(*args) under a capture, no trace around it: its deferred transforms run
    their compiled programs on concrete arrays. _NeedsAutograd (the class) if it read a
    tensor that requires grad (nothing has run then); if tracing needs concrete values,
    call(*args) without a capture."""
    key0 = creation._rng.key
    try:
        with _capturing(_Capture(grad, direct=True)):
            return call(*args)
    except _NeedsAutograd:
        creation._rng.key = key0
        return _NeedsAutograd
    except _NEEDS_VALUES:
        creation._rng.key = key0
    COUNTS["untraceable"] += 1
    return call(*args)  # jax's transforms on concrete values, primitive by primitive


def _eager_over_autograd(call, args, leaves, idx, compute, info, grad):
    """_over_autograd without a trace: jax's transforms run eagerly on concrete values;
    autograd reaches the tensor arguments (not tensors captured by closure)."""
    if not (grad and any(leaves[i]._requires_grad for i in idx)):
        return call(*args)
    return _outputs(_TransformOutput.apply(compute, *[leaves[i] for i in idx]), leaves, info)


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
        jaxpr, consts = _lean_trace(lambda a, b: (a + 1, [b * a]),
                                    (jnp.ones(2), jax.ShapeDtypeStruct((2,), jnp.float32)))
        assert len(jaxpr.outvars) == 2 and not consts
        return _lean_trace
    except Exception:  # noqa: BLE001 - any change in jax's internals
        return _make_jaxpr_trace


try:
    from jax._src import api_util as _api_util
    from jax._src import linear_util as _lu
    from jax._src.interpreters import partial_eval as _pe
    _trace_jaxpr = _pick_tracer()
except ImportError:
    _trace_jaxpr = _make_jaxpr_trace


# ---- transforms inside a program's trace: applied to the function's jaxpr, cached ----
_DEFERRED = {}  # (kind, static, jaxpr key) -> what build(jaxpr) made


def _deferred(kind, static, pure, args, build):
    """(build(jaxpr, n_writes), consts, write) for pure traced at its own level on
    `args` (arrays or ShapeDtypeStructs): the user's function runs as under the transform
    (its level pushed), but jax's transform is applied to the jaxpr, once per distinct
    jaxpr, by the jitted function build makes: tracing through vmap/vjp primitive by
    primitive cost most of a call. The consts (closed-over values) are its first
    argument. Storages from outside that pure wrote are extra outputs of the jaxpr, put
    back after the trace; write(their values) writes them at the enclosing level
    (write.born: the ids of the storages factories made in the trace)."""
    cap = FUNC.capture
    frame, through = _Frame(kind), []

    def traced(*a):
        frame.trace = inner = a[0]._trace
        outs = pure(*a)
        # storages from outside this trace that it wrote: extra outputs, written through
        through.extend(st for st, old in frame.values()
                       if not (isinstance(old, jax.core.Tracer) and old._trace is inner))
        return outs, [st.array for st in through]
    cap.frames.append(frame)
    try:
        jaxpr, consts = _trace_jaxpr(traced, args)
    finally:
        cap.frames.pop()
        for st, old in frame.values():
            st.array = old
            st.generation += 1
    try:
        key = (kind, static, len(through), _jaxpr_key(jaxpr))
    except TypeError:
        key = None
    made = None if key is None else _DEFERRED.get(key)
    if made is None:
        made = build(jaxpr, len(through))
        COUNTS["deferred_built"] += 1
        if key is not None:
            put_bounded(_DEFERRED, key, made, 128)
    else:
        COUNTS["deferred_reused"] += 1
    write = functools.partial(_write_through, cap, through)
    write.born = frame.born
    return made, consts, write


def _write_through(cap, storages, values):
    """Give the storages a _deferred trace wrote their values at the enclosing level."""
    for st, v in zip(storages, values):
        cap.writes(st)
        st.array = v
        st.generation += 1


def _grad_program(jaxpr, n_writes):
    """jit (consts, *arrays) -> (value, gradients (torch's conj convention), aux, written
    values) of a jaxpr whose outputs are the scalar value, the aux arrays and the
    written values."""
    def program(consts, *arrays):
        def f(*a):
            outs = jax.core.eval_jaxpr(jaxpr, consts, *a)
            return outs[0], outs[1:]
        value, pullback, rest = jax.vjp(f, *arrays, has_aux=True)
        grads = [_conj(g) for g in pullback(jnp.ones_like(value))]
        cut = len(rest) - n_writes
        return value, grads, rest[:cut], rest[cut:]
    return jax.jit(program)


def _vmap_program(axes, jaxpr, n_writes):
    """(jit (consts, index, *arrays) -> (outputs mapped over `axes` (moved to 0),
    written values), which outputs and written values are batched) for the jaxpr of
    vmap's per-element function."""
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
    return jax.jit(program), list(flags)


# ---- a top-level call as a traced program --------------------------------------------
class _Capture:
    """What a call's trace touches outside itself (FUNC.capture while it traces):
    tensors that require grad read by recorded ops (their arrays become consts of the
    jaxpr), and storages written in place (put back after the trace; their new values
    become extra outputs, written after the run)."""
    __slots__ = ("born", "direct", "frames", "grad", "kind", "read", "trace", "written")

    def __init__(self, grad, direct=False, kind=None):
        self.grad = grad  # grad mode was on at the call: note the reads (ops record)
        self.direct = direct  # _direct: a read means autograd over the call is needed
        # "grad": the call itself is a grad-like transform traced at its level (vjp,
        # linearize): as a _Frame's, its captured tensors must not be mutated
        self.kind, self.trace = kind, None
        self.born = set()  # ids of the storages factories made while it traced
        self.read = {}  # id(tensor) -> (tensor, the array it read)
        self.written = {}  # id(storage) -> (storage, its array before the trace)
        self.frames = []  # a _Frame per _deferred trace inside it, innermost last

    def reads(self, tensors):
        if not self.grad:
            return
        for t in tensors:
            if t._requires_grad:
                v = t._value
                if not isinstance(v, jax.core.Tracer):
                    if self.direct:
                        raise _NeedsAutograd
                    self.read.setdefault(id(t), (t, v))

    def mutates(self, t, fn):
        """An in-place op `fn` on t: under grad, t must have been made inside (torch)."""
        frame = self.frames[-1] if self.frames else self
        if frame.kind != "grad" or id(t._storage) in frame.born:
            return
        a = t._storage.array
        if not (isinstance(a, jax.core.Tracer) and a._trace is frame.trace):
            name = fn.__name__.lstrip("_")
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


_OVERLOAD = dict.fromkeys(("add", "sub", "mul", "div", "remainder", "floor_divide"), ".Tensor")
_OVERLOAD.update(dict.fromkeys(("fill", "masked_fill", "pow"), ".Scalar"))


class _Frame(dict):
    """A _deferred trace's writes (id(storage) -> (storage, array before)); its kind,
    jax trace and the storages factories made in it."""
    __slots__ = ("born", "kind", "trace")

    def __init__(self, kind):
        super().__init__()
        self.kind, self.born = kind, set()


_NEEDS_VALUES = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerIntegerConversionError)

_PROGRAMS = {}  # jaxpr key -> [sightings, compiled or None]
# what ran (tests count the fast paths): programs traced, compiled and run compiled or
# primitive by primitive; deferred transforms built or found; calls that needed values
COUNTS = {"traced": 0, "compiled": 0, "compiled_runs": 0, "eager_runs": 0,
          "deferred_built": 0, "deferred_reused": 0, "untraceable": 0}


class _Program:
    """A top-level transform call traced to a jaxpr: program(*arrays, *captured arrays)
    evaluates it. Every call is traced anew (the user's Python runs each time, as
    eagerly); equal jaxprs share one compiled executable, made on the second sighting.
    Arrays the function closes over (its consts) are inputs; `captured` are the tensors
    requiring grad among them, `written` the storages it wrote in place."""

    @staticmethod
    def trace(compute, arrays, grad, kind=None):
        """The program of compute(*arrays), or None if tracing it needs concrete values.
        grad: note the tensors requiring grad it reads (autograd over the call); kind:
        _Capture's."""
        prog = _Program()
        cap = _trace(prog, compute, arrays, grad, kind)
        if cap is None:
            return None
        if cap.read:  # another tensor may read the same array (a detached alias, a
            # factory's cached constant): retrace with arrays of their own
            cap = _trace(prog, compute, arrays, grad, kind, [t for t, _ in cap.read.values()])
        consts = {id(c): k for k, c in enumerate(prog.consts)}
        prog.cpos, prog.captured = [], []
        for t, v in cap.read.values():
            k = consts.get(id(v))
            if k is not None and prog.consts[k] is v:
                prog.cpos.append(k)
                prog.captured.append(t)
        prog.written = [st for st, _ in cap.written.values()]
        return prog

    def consts_with(self, captured, consts=None):
        """The consts (or `consts`) with the captured tensors' values `captured`."""
        out = list(self.consts if consts is None else consts)
        for k, a in zip(self.cpos, captured):
            out[k] = a
        return out

    def reached(self, mask):
        """Which outputs depend on the inputs `mask` marks (arrays, then captured)."""
        n = len(mask) - len(self.cpos)
        consts = self.consts_with(mask[n:], [False] * len(self.consts))
        return _reached(self.jaxpr, consts + list(mask[:n]))

    def __call__(self, *arrays):
        n = len(arrays) - len(self.cpos)
        return self.run(self.consts_with(arrays[n:]), *arrays[:n])


def _trace(prog, compute, arrays, grad, kind=None, distinct=()):
    """Trace compute(*arrays) into prog (jaxpr, consts, run); the _Capture, or None if
    the trace needs concrete values (the random stream and written storages are put
    back). distinct: tensors given arrays of their own while it traces."""
    cap = _Capture(grad, kind=kind)
    key0 = creation._rng.key
    swapped = [(t, t._storage) for t in distinct if t._vchain is None]
    for t, st in swapped:
        t._storage = Storage(jnp.array(st.array, copy=True))
    for t in distinct:
        if t._vchain is not None:  # a view: a distinct copy as its cached array
            t._arr = jnp.array(t._value, copy=True)

    def traced(*arrs):
        cap.trace = arrs[0]._trace if arrs else None
        outs = compute(*arrs)
        return outs + [st.array for st, _ in cap.written.values()]
    try:
        with _capturing(cap):
            jaxpr, consts = _trace_jaxpr(traced, arrays)
    except _NEEDS_VALUES:
        creation._rng.key = key0
        COUNTS["untraceable"] += 1
        return None
    finally:
        cap.undo_writes()
        for t, st in swapped:
            t._storage = st
    COUNTS["traced"] += 1
    prog.jaxpr, prog.consts = jaxpr, consts
    prog.run = _executable(jaxpr)
    return cap


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
            put_bounded(_PROGRAMS, key, [1, None], 64)
        run = _eager(jaxpr)
        run.key = key
        return run
    if entry[1] is None:
        first = jaxpr
        entry[1] = jax.jit(lambda consts, *args: jax.core.eval_jaxpr(first, consts, *args))
        COUNTS["compiled"] += 1
    compiled = entry[1]

    def run(consts, *args):
        COUNTS["compiled_runs"] += 1
        return compiled(consts, *args)
    run.key = key
    return run


def _eager(jaxpr):
    def run(consts, *args):
        COUNTS["eager_runs"] += 1
        return jax.core.eval_jaxpr(jaxpr, consts, *args)
    return run


def _jaxpr_key(jaxpr):
    """A hashable key equal for two jaxprs exactly when they compute the same: variables
    numbered by position, literals and parameters by value (an array's by its bytes),
    sub-jaxprs and functions by identity (jax hands out the same object for the same
    cached trace; the key holds it alive). TypeError: a parameter it cannot key."""
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
    return v  # by its own equality: value types by value, jaxprs and functions by identity


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


def _diff_args(args, argnums, needs_grad=True):
    """(leaves, spec, rebuild) of the arguments selected by argnums; rebuild(new leaves)
    gives the full argument tuple with those arguments replaced."""
    nums = _check_argnums(argnums, len(args))
    chosen = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
    leaves, spec = _flatten(chosen)
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if needs_grad and not x.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")

    def rebuild(new):
        tree = _unflatten(spec, new)
        full = list(args)
        if isinstance(argnums, int):
            full[nums[0]] = tree
        else:
            for i, t in zip(nums, tree):
                full[i] = t
        return tuple(full)
    return leaves, spec, rebuild


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
    return _unflatten(spec, [_wrap(a) for a in arrays])


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
        return _over_autograd(lambda *a: _grad_and_value(a, kwargs), args, direct=True)

    def _grad_and_value(args, kwargs):
        leaves, spec, rebuild = _diff_args(args, argnums)
        where = "grad_and_value(f)(*args)"
        info = {}

        def pure(*arrs):
            with _inside("grad"):
                out = func(*rebuild(_inputs(arrs, "grad")), **kwargs)
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
            if has_aux:
                aux, info["aux"] = _aux_arrays(aux)
            return out._value, aux

        arrays = [t._value for t in leaves]
        if FUNC.capture is not None:  # a program's trace: the vjp applied to f's jaxpr
            fn, consts, write = _deferred("grad", (), pure, arrays, _grad_program)
            value, grads, aux, written = fn(consts, *arrays)
            write(written)
        else:
            value, pullback, aux = jax.vjp(pure, *arrays, has_aux=True)
            grads = [_conj(g) for g in pullback(jnp.ones_like(value))]
        g = _tensors(grads, spec)
        value = _wrap(value)
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


def _traced_outputs(func, spec, has_aux, where, kind, info, real=None):
    """pure(*arrays) -> (output arrays, aux arrays) for vjp/jvp/linearize/jacobians
    (`real`: the jacobian's name, whose outputs must be real)."""
    def pure(*arrs):
        with _inside(kind):
            out = func(*_unflatten(spec, _inputs(arrs, kind)))
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
        if has_aux:
            aux, info["aux"] = _aux_arrays(aux)
        return [t._value for t in leaves], aux
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
    leaves, spec = _primals(primals)
    info = {}
    pure = _traced_outputs(lambda *a: func(*a), spec, has_aux, "vjp(f, *primals)", "vjp", info)
    traced = _traced_once(pure, leaves, "grad")  # (mutating a captured tensor: torch's error)
    if traced is not None:  # one program: outputs and vjp_fn's gradients through autograd
        prog, n_out, outs = traced
        out_spec, meta = info["out"], info["meta"]

        def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
            cts = [c if isinstance(c, Tensor) else _wrap(c)
                   for c in _cotangents(cotangents, out_spec, meta)]
            return _unflatten(spec, _through_program(prog, leaves, cts, _vjp_of, "vjp", n_out,
                                                     create_graph))
        out = _unflatten(out_spec, outs[:n_out])
        if has_aux:
            return out, vjp_fn, _unflatten(info["aux"], outs[n_out:])
        return out, vjp_fn
    outs, pullback, aux = jax.vjp(pure, *[t._value for t in leaves], has_aux=True)
    out_spec, meta = info["out"], info["meta"]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cts = [c._value if isinstance(c, Tensor) else c
               for c in _cotangents(cotangents, out_spec, meta)]
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
    pure = _traced_outputs(func, spec, has_aux, "jvp(f, primals, tangents)", "jvp", info)
    (outs, aux), (t_outs, _) = jax.jvp(pure, [t._value for t in leaves], tans)
    out, t_out = _tensors(outs, info["out"]), _tensors(t_outs, info["out"])
    if has_aux:
        return out, t_out, _tensors(aux, info["aux"])
    return out, t_out


def linearize(func, *primals):
    """torch.func.linearize: (output, jvp_fn) where jvp_fn(*tangents) is the pushforward.

    >>> import eagergrad as torch
    >>> out, fn = torch.func.linearize(lambda x: x.sin(), torch.zeros(2))
    >>> fn(torch.ones(2))
    tensor([1., 1.])
    """
    leaves, spec = _primals(primals)
    info = {}
    pure = _traced_outputs(func, spec, False, "linearize(f, *primals)", "jvp", info)
    traced = _traced_once(pure, leaves)
    if traced is not None:  # one program: outputs and jvp_fn's tangents through autograd
        prog, n_out, outs = traced

        def jvp_fn(*tangents):
            _tangents(primals, tangents)  # (torch's errors)
            tans = [t if t.dtype is p.dtype else t.to(p.dtype)
                    for p, t in zip(leaves, _flatten(tangents)[0])]
            return _unflatten(info["out"], _through_program(
                prog, leaves, tans, _jvp_of, "jvp", n_out, constant_primals=True))
        return _unflatten(info["out"], outs), jvp_fn
    outs, lin = jax.linearize(lambda *a: pure(*a)[0], *[t._value for t in leaves])
    out_spec = info["out"]

    def jvp_fn(*tangents):
        _, _, tans = _tangents(primals, tangents)
        return _tensors(lin(*tans), out_spec)
    return _tensors(outs, out_spec), jvp_fn


# ---- jacobians -------------------------------------------------------------------------
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
        return _over_autograd(lambda *a: _jacrev(a, kwargs), args)

    def _jacrev(args, kwargs):
        leaves, spec, rebuild = _diff_args(args, argnums, needs_grad=False)
        _real_only(leaves, "jacrev", "inputs")
        info = {}
        pure = _traced_outputs(
            lambda *a: func(*rebuild(a), **kwargs), _flatten(tuple(leaves))[1], has_aux,
            "vjp(f, *primals)", "vjp", info, real="jacrev")
        outs, pullback, aux = jax.vjp(pure, *[t._value for t in leaves], has_aux=True)
        sizes = [o.size for o in outs]
        total = sum(sizes)

        def row(e):  # the vjp of one basis vector of the flattened outputs
            cts, off = [], 0
            for o, n in zip(outs, sizes):
                cts.append(e[off:off + n].reshape(o.shape).astype(o.dtype))
                off += n
            return [_conj(g) for g in pullback(cts)]
        eye = jnp.eye(total, dtype=jnp.float32)
        parts = [jax.vmap(row)(eye[a:b]) for a, b in _chunks(total, chunk_size)]
        rows = [jnp.concatenate([p[j] for p in parts]) if len(parts) > 1 else parts[0][j]
                for j in range(len(leaves))]
        blocks, off = [], 0
        for o, n in zip(outs, sizes):
            blocks.append([r[off:off + n].reshape(o.shape + r.shape[1:]) for r in rows])
            off += n
        blocks = [[_wrap(b) for b in row_] for row_ in blocks]
        jac = _jacobian_tree(blocks, info["out"], spec)
        if has_aux:
            return jac, _tensors(aux, info["aux"])
        return jac
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
        leaves, spec, rebuild = _diff_args(args, argnums, needs_grad=False)
        _real_only(leaves, "jacfwd", "inputs")
        info = {}
        where = "jvp(f, primals, tangents)"
        inner = _traced_outputs(lambda *a: func(*rebuild(a), **kwargs),
                                _flatten(tuple(leaves))[1], has_aux, where, "jacfwd", info,
                                real="jacfwd")

        column_index = []  # (randomness="different": a draw per column, as vmap's)

        def pure(*arrs):
            FUNC.levels.append(_Level("jacfwd", randomness, *column_index))
            try:
                return inner(*arrs)
            finally:
                FUNC.levels.pop()
        primals = [t._value for t in leaves]
        sizes = [p.size for p in primals]
        total = sum(sizes)

        def column(e, i):
            column_index[:] = [i]
            tans, off = [], 0
            for p, n in zip(primals, sizes):
                tans.append(e[off:off + n].reshape(p.shape).astype(p.dtype))
                off += n
            (outs, aux), (t_outs, _) = jax.jvp(pure, primals, tans)
            return outs, aux, t_outs
        shared = None if randomness != "different" else 0
        _, aux, cols = jax.vmap(column, out_axes=(shared, shared, 0))(
            jnp.eye(total, dtype=jnp.float32), jnp.arange(total))
        if shared == 0 and aux is not None:  # (the first column's aux, as torch's)
            aux = [a[0] for a in aux]
        blocks = []
        for c in cols:  # (total, *out_shape) -> one block per input leaf
            row_, off = [], 0
            for p, n in zip(primals, sizes):
                b = jnp.moveaxis(c[off:off + n], 0, -1)
                row_.append(_wrap(b.reshape(c.shape[1:] + p.shape)))
                off += n
            blocks.append(row_)
        jac = _jacobian_tree(blocks, info["out"], spec)
        if has_aux:
            return jac, _tensors(aux, info["aux"])
        return jac
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
            raise RuntimeError(_BN_STATS if id(st) in info["stats"] else _VMAP_INPLACE)

    arrays = [leaves[i]._value for i in tensors]
    axes = [dims[i] for i in tensors]
    if FUNC.capture is not None:  # a program's trace: vmap applied to pure's jaxpr
        def run(index, *arrs):  # (traced per chunk: a chunk sees the previous' writes)
            one = [x if d is None else
                   jax.ShapeDtypeStruct(x.shape[:d] + x.shape[d + 1:], x.dtype)
                   for x, d in zip(arrs, axes)]
            (fn, batched), consts, write = _deferred(
                "vmap", tuple(axes), pure, [jax.ShapeDtypeStruct((), index.dtype), *one],
                functools.partial(_vmap_program, axes))
            check(batched, write.args[1], write.born, index.shape[0])
            outs, written = fn(consts, index, *arrs)
            write(written)
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
    outs = [jnp.concatenate([p[k] for p in parts]) if len(parts) > 1 else parts[0][k]
            for k in range(len(parts[0]))]
    n_out = len(outs) - len(info["mutated"])
    for i, o in zip(info["mutated"], outs[n_out:]):
        leaves[i].copy_(_wrap(o[0] if dims[i] is None else jnp.moveaxis(o, 0, dims[i])))
    result = []
    for o, d in zip(outs[:n_out], info["dims"]):
        if d is None:
            result.append(_wrap(o[0]))
            continue
        n = o.ndim
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        result.append(_wrap(o if d % n == 0 else jnp.moveaxis(o, 0, d)))
    return _unflatten(info["out"], result)


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
