"""The jax side of each transform: what grad, jvp, jacrev, jacfwd compute, as functions
of arrays (`_*_eval`) and as program builders from a traced jaxpr (`_*_program`, which
_deferred jits), and the derived programs of vjp_fn and linearize's jvp_fn.

NOTE [conj convention]: torch.func, like torch.autograd, returns dL/dz* for complex
inputs: a torch vjp is conj(jax_vjp(conj(v))). Pushforwards (jvp, jacfwd) are
convention-free and equal jax's.
"""
import functools

import jax
import jax.numpy as jnp

from .._cache import EXECUTABLES, put_bounded


def _conj(a):
    # (of a jax array; _shapes.conj_scalar is a Python scalar's)
    return jnp.conj(a) if jnp.iscomplexobj(a) else a


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


def _eval_program(jaxpr, n_writes, static):
    def program(consts, *arrays):
        return jax.core.eval_jaxpr(jaxpr, consts, *arrays)
    return program


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


def _chunks(n, chunk_size):
    step = max(1, n if chunk_size is None else chunk_size)
    return [(s, min(n, s + step)) for s in range(0, n, step)] or [(0, 0)]


_INDICES = {}


def _indices(a, b):
    """jnp.arange(a, b), made once per range (an eager call's dispatch costs)."""
    r = _INDICES.get((a, b))
    if r is None:
        with jax.ensure_compile_time_eval():
            r = put_bounded(_INDICES, (a, b), jnp.arange(a, b), 64)
    return r
