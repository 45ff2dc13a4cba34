"""Jaxprs: tracing a function of arrays to one (jax's own tracer, or jax.make_jaxpr if
this jax's internals differ), the jax trace a function runs under, and what is read
from or rewritten in a jaxpr (which inputs its outputs use, which outputs depend on
which inputs, its equations without donation)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import ClosedJaxpr, Jaxpr, Literal


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


def _used(jaxpr):
    """Which of the jaxpr's constvars, then invars, its outputs use (jax's dead-code
    elimination, into calls); all of them if this jax's internals differ."""
    try:
        j = _pe.convert_constvars_jaxpr(jaxpr)
        return list(_pe.dce_jaxpr(j, [True] * len(j.outvars), instantiate=False)[1])
    except Exception:  # noqa: BLE001 - any change in jax's internals
        return [True] * (len(jaxpr.constvars) + len(jaxpr.invars))


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


def value_in_trace(x, frame, values, known):
    """The value of x, a tracer of the jax trace whose frame is `frame` and whose inputs
    have the values `values`: its equations so far, evaluated on those values (each
    input and const through `known`) primitive by primitive."""
    var = x.val if hasattr(x, "val") else None
    if isinstance(var, Literal):
        return var.val
    need, eqns = {var}, []
    for e in reversed(frame.get_eqns()):
        if any(v in need for v in e.outvars):
            eqns.append(e)
            need.update(v for v in e.invars if not isinstance(v, Literal))
    eqns.reverse()
    invars = [v for v in frame.invars if v in need]
    args = [known(a) for v, a in zip(frame.invars, values) if v in need]
    consts = frame.constvar_to_val
    constvars = [v for v in need if v in consts]
    jaxpr = _undonated(Jaxpr(constvars, invars, [var], eqns))
    with jax.ensure_compile_time_eval():
        return jax.core.eval_jaxpr(jaxpr, [known(consts[v]) for v in constvars], *args)[0]
