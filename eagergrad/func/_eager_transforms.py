"""torch.func's eager transforms (as torch's _functorch/eager_transforms.py): grad,
grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, functionalize; their
arguments (argnums, primals, tangents, cotangents) with torch's errors; the function's
inputs at the transform's level and the write-back of those it modified in place."""
# torch raises RuntimeError/ValueError (not TypeError) on these type checks
import functools

import jax
import jax.numpy as jnp

from .._mode import FUNC, STATE
from ..engine.grad_mode import no_grad
from ..engine.saved import HOOKS, SavedTensor
from ..size import Size
from ..tensor import Tensor, _make
from ._autograd import (_CallRecord, _enclosed, _over_autograd, _tensor, _through_program,
                        _traced_once, _TransformOutput, _wrap)
from ._deferred import _deferred
from ._jax_transforms import (_conj, _eval_program, _grad_eval, _grad_program,
                              _indices, _jacfwd_eval, _jacfwd_program, _jacrev_eval,
                              _jacrev_program, _jvp_of, _jvp_program, _vjp_of)
from ._levels import _REVERSE, _check_randomness, _inside, _Level
from ._program import _Program
from ._pytree import _flatten, _unflatten
from ._trace import _reached

__all__ = ["functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "vjp"]


# ---- the function's inputs at the transform's level, and their write-back ----------
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


def _write_back(tensors, which, values, rec=None, saved_error=True):
    """Give the caller's tensors the new values of the inputs the function modified in
    place (once per call, as torch's writes through its wrappers); BatchNorm's running
    stats among them stay known as such to an enclosing vmap (its error). rec: the
    trace's _CallRecord; its saved-tensor error (_saved_error) is raised then, as torch's
    backward raises it after the forward's writes (unless saved_error is False: vjp
    raises it from vjp_fn)."""
    with no_grad():
        for k, (i, v) in enumerate(zip(which, values)):
            tensors[i].copy_(_tensor(v))
            if rec is not None:  # (torch's wrappers share the version counter)
                tensors[i]._version_counter.version += rec.versions[k] - 1
    if rec is None:
        return
    if FUNC.levels and rec.stats:
        FUNC.levels[-1].stats.update(id(tensors[i]._storage) for i in rec.stats)
    if saved_error and rec.error is not None:
        raise rec.error


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


def _check_tensors(leaves, msg):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise RuntimeError(msg.format(type(x)))


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


def _others(others, rec):
    """(aux, values of the modified inputs, written values): a transform's outputs after
    its own, in that order (pure's, then _deferred's)."""
    a, m = rec.n_aux, len(rec.mutated)
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
        rec = _CallRecord()

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
            rec.error = _saved_error([out])
            auxv = []
            if has_aux:
                auxv, rec.aux = _aux_arrays(aux)
            rec.n_aux, rec.mutated = len(auxv), _mutated(ins, arrs)
            rec.stats = [i for i in rec.mutated if id(ins[i]._storage) in stats]
            rec.versions = [ins[i]._version for i in rec.mutated]
            return [out._value], auxv, [ins[i]._value for i in rec.mutated]

        arrays = [t._value for t in a.tensors]
        if FUNC.capture is not None:  # a call's trace: the vjp applied to f's jaxpr
            d = _deferred("grad", pure, arrays, lambda: a.n_diff, _grad_program)
            value, grads, others = d.run(d.made, *arrays)
        else:
            value, grads, others = _grad_eval(_flat_outputs(pure), arrays, a.n_diff)
        aux, muts, written = _others(others, rec)
        if FUNC.capture is not None:
            d.write(written)
        _write_back(a.tensors, rec.mutated, muts, rec)
        g = _tensors(grads, a.spec)
        value = _tensor(value)
        if has_aux:
            return g, (value, _tensors(aux, rec.aux))
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


def _traced_outputs(call, n_grad, has_aux, where, kind, rec, real=None):
    """pure(*arrays) -> (output arrays, aux arrays, arrays of the inputs modified in
    place) for vjp/jvp/linearize/jacobians: call(input tensors) runs the user's function
    (the first n_grad inputs require grad; `real`: the jacobian's name, whose outputs
    must be real), filling in the _CallRecord `rec`."""
    def pure(*arrs):
        ins = _inputs(arrs, n_grad)
        with _inside(kind):
            out = call(ins)
            stats = FUNC.levels[-1].stats
        out, aux = _split_aux(out, has_aux, where)
        if out is None and kind == "vjp":
            raise RuntimeError(f"{where}: Expected f to be a function that has non-empty "
                               "output (got output = [None])")
        leaves, rec.out = _flatten(out, none_leaf=True)
        _check_tensors(leaves, where + ": expected f(*primals) to "
                       "return only tensors, got unsupported type {}")
        if real:
            _real_only(leaves, real, "outputs")
        rec.meta = [(t._shape, t.dtype) for t in leaves]
        rec.error = _saved_error(leaves) if kind in _REVERSE else None
        auxv = []
        if has_aux:
            auxv, rec.aux = _aux_arrays(aux)
        rec.n_aux, rec.mutated = len(auxv), _mutated(ins, arrs)
        rec.stats = [i for i in rec.mutated if id(ins[i]._storage) in stats]
        rec.versions = [ins[i]._version for i in rec.mutated]
        return [t._value for t in leaves], auxv, [ins[i]._value for i in rec.mutated]
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
    rec = _CallRecord()
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), len(leaves), has_aux,
                           "vjp(f, *primals)", "vjp", rec)
    traced = _traced_once(pure, leaves, "grad")  # (mutating a captured tensor: torch's error)
    if traced is not None:  # one program: outputs and vjp_fn's gradients through autograd
        prog, n_out, outs, aux, muts = traced
        _write_back(leaves, rec.mutated, muts, rec, saved_error=False)
        out_spec, meta = rec.out, rec.meta

        def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
            cts = [c if isinstance(c, Tensor) else _wrap(c)
                   for c in _cotangents(cotangents, out_spec, meta)]
            if rec.error is not None:  # (torch's backward: a saved tensor modified)
                raise rec.error
            return _unflatten(spec, _through_program(prog, leaves, cts, _vjp_of, "vjp", n_out,
                                                     create_graph))
        out = _unflatten(out_spec, outs)
        if has_aux:
            return out, vjp_fn, _unflatten(rec.aux, aux)
        return out, vjp_fn
    flat, d = _nested(pure, [t._value for t in leaves], "vjp")

    def f(*arrs):
        outs = flat(*arrs)
        n_out = len(rec.meta)
        return outs[:n_out], outs[n_out:]
    outs, pullback, others = jax.vjp(f, *[t._value for t in leaves], has_aux=True)
    aux, muts, written = _others(others, rec)
    if d is not None:
        d.write(written)
    _write_back(leaves, rec.mutated, muts, rec, saved_error=False)
    out_spec, meta = rec.out, rec.meta

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cts = [c._value if isinstance(c, Tensor) else c
               for c in _cotangents(cotangents, out_spec, meta)]
        if rec.error is not None:
            raise rec.error
        grads = [_conj(g) for g in pullback([_conj(c) for c in cts])]
        return _tensors(grads, spec)

    out = _tensors(outs, out_spec)
    if has_aux:
        return out, vjp_fn, _tensors(aux, rec.aux)
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
    rec = _CallRecord()
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), 0, has_aux,
                           "jvp(f, primals, tangents)", "jvp", rec)
    arrays = [t._value for t in leaves]
    if FUNC.capture is not None:  # a call's trace: jax.jvp applied to f's jaxpr
        d = _deferred("jvp", pure, arrays, lambda: len(rec.meta), _jvp_program)
        outs, t_outs, others = d.run(d.made, arrays, tans)
    else:
        flat = _flat_outputs(pure)
        alls, t_alls = jax.jvp(flat, arrays, tans)
        n = len(rec.meta)
        outs, t_outs, others = alls[:n], t_alls[:n], alls[n:]
    aux, muts, written = _others(others, rec)
    if FUNC.capture is not None:
        d.write(written)
    _write_back(leaves, rec.mutated, muts, rec)
    out, t_out = _tensors(outs, rec.out), _tensors(t_outs, rec.out)
    if has_aux:
        return out, t_out, _tensors(aux, rec.aux)
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
    rec = _CallRecord()
    pure = _traced_outputs(lambda ins: func(*_unflatten(spec, ins)), 0, False,
                           "linearize(f, *primals)", "linearize", rec)
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
        _write_back(leaves, rec.mutated, res[n[0]:k])
        held = []

        def jvp_fn(*tangents):
            _tangents(primals, tangents)  # (torch's errors)
            tans = [t if t.dtype is p.dtype else t.to(p.dtype)
                    for p, t in zip(leaves, _flatten(tangents)[0])]
            outs = _through_program(prog, leaves, tans, _jvp_of, "jvp", n[0],
                                    constant_primals=True)
            return _unflatten(rec.out, _held_constants(prog, leaves, tans, outs, held))
        return output, jvp_fn
    flat, d = _nested(pure, arrays, "linearize")
    outs, lin = jax.linearize(flat, *arrays)
    n, m = len(rec.meta), len(rec.mutated)
    if d is not None:
        d.write(outs[n + m:])
    _write_back(leaves, rec.mutated, outs[n:n + m])

    def jvp_fn(*tangents):
        _, _, tans = _tangents(primals, tangents)
        return _tensors(lin(*tans)[:n], rec.out)
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


def _jacobian_result(blocks, others, d, a, rec, has_aux):
    """jacrev's and jacfwd's ending: write back what the call modified (through the
    deferred program `d` when traced), then the jacobian blocks as torch's tree."""
    aux, muts, written = _others(others, rec)
    if FUNC.capture is not None:
        d.write(written)
    _write_back(a.tensors, rec.mutated, muts, rec)
    blocks = [[_tensor(b) for b in row_] for row_ in blocks]
    jac = _jacobian_tree(blocks, rec.out, a.spec)
    if has_aux:
        return jac, _tensors(aux, rec.aux)
    return jac


def _jacobian_tree(blocks, out_spec, in_spec):
    """The jacobian pytree: the output structure, each output leaf replaced by the
    structure of the differentiated arguments (blocks[k][j]: output k, input leaf j)."""
    return _unflatten(out_spec, [_unflatten(in_spec, row) for row in blocks])


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
        rec = _CallRecord()
        pure = _traced_outputs(lambda ins: func(*a.rebuild(ins), **kwargs), a.n_diff,
                               has_aux, "vjp(f, *primals)", "vjp", rec, real="jacrev")
        arrays = [t._value for t in a.tensors]
        if FUNC.capture is not None:  # a call's trace: the jacobian of f's jaxpr
            d = _deferred("jacrev", pure, arrays,
                          lambda: (a.n_diff, len(rec.meta), chunk_size), _jacrev_program)
            blocks, others = d.run(d.made, *arrays)
        else:  # (the number of outputs is known once the function ran)
            d = None
            blocks, others = _jacrev_eval(_flat_outputs(pure), arrays, a.n_diff,
                                          lambda: len(rec.meta), chunk_size)
        return _jacobian_result(blocks, others, d, a, rec, has_aux)
    return wrapper


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
        rec = _CallRecord()
        inner = _traced_outputs(lambda ins: func(*a.rebuild(ins), **kwargs), 0, has_aux,
                                "jvp(f, primals, tangents)", "jacfwd", rec, real="jacfwd")

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
                          lambda: (a.n_diff, len(rec.meta), randomness), _jacfwd_program)
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
            blocks, others = _jacfwd_eval(f, arrays, a.n_diff, lambda: len(rec.meta),
                                          randomness)
        return _jacobian_result(blocks, others, d, a, rec, has_aux)
    return wrapper


def hessian(func, argnums=0):
    """torch.func.hessian: jacfwd(jacrev(func, argnums), argnums).

    >>> import eagergrad as torch
    >>> torch.func.hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ---- functionalize -------------------------------------------------------------------
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
