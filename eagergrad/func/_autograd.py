"""Autograd over a transform: a top-level call runs as a traced program
(NOTE [programs]), seen by eagergrad's autograd as one node (_TransformOutput) whose
backward is the jax vjp of the program; vjp_fn and linearize's jvp_fn run through
derived programs the same way. Also the record of what a traced call did (_CallRecord)."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._cache import EXECUTABLES
from .._mode import FUNC, STATE
from ..engine.function import Function
from ..engine.grad_mode import no_grad
from ..tensor import Tensor, _make
from ._jax_transforms import _conj
from ._program import _DERIVED, _Capture, _capturing, _Program
from ._pytree import _flatten, _unflatten
from ._trace import _reached, _used


def _wrap(a):
    return _make(a)  # (not a factory: the wrapper of a transform's own value)


def _tensor(x):
    """A transform's result as a tensor: a jax array wrapped; a tensor (an output of
    autograd over the call, _Deferred.run) as it is."""
    return x if isinstance(x, Tensor) else _make(x)


@dataclasses.dataclass(slots=True)
class _CallRecord:
    """What the user's function did in a transform's trace, filled in while it runs (the
    trace runs it later, inside jax's) and read once the trace is over; a function run
    again (a vmap's chunks) overwrites it."""
    out: object = None  # the _Spec of its output (its pytree structure)
    meta: list = None  # (shape, dtype) of each output leaf
    aux: object = None  # the _Spec of its aux output (has_aux)
    n_aux: int = 0  # the number of aux leaves
    mutated: list = ()  # which inputs it modified in place (their indices)
    versions: list = ()  # their version counts after it ran (the caller's are bumped)
    stats: list = ()  # which of them are BatchNorm running stats (for an enclosing vmap)
    error: Exception = None  # torch's saved-tensor error for its backward (_saved_error)


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
    rec = _CallRecord()  # (mutated: indices of argument leaves)

    def compute(*arrs):
        new = list(leaves)
        for i, a in zip(idx, arrs):
            new[i] = _wrap(a)
        out_leaves, rec.out = _flatten(call(*_unflatten(spec, new)))
        # arguments the call modified in place (its write-back): extra outputs
        rec.mutated = [i for i, a in zip(idx, arrs) if new[i]._storage.array is not a]
        rec.versions = [new[i]._version for i in rec.mutated]
        return [t._value for t in out_leaves] + [new[i]._value for i in rec.mutated]
    prog = _Program.trace(compute, arrays, grad)
    return _outputs(_run_program(prog, [leaves[i] for i in idx], arrays, grad), leaves, rec)


def _outputs(outs, leaves, rec):
    """The call's result from compute's outputs: the arguments it modified in place get
    their new values (the extra outputs after the call's own)."""
    n = len(outs) - len(rec.mutated)
    with no_grad():
        for i, o, v in zip(rec.mutated, outs[n:], rec.versions):
            leaves[i].copy_(o)
            leaves[i]._version_counter.version += v - 1
    return _unflatten(rec.out, outs[:n])


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
