"""torch.func transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, vmap, functionalize.

Each transform runs the eager function once on tensors that hold jax tracers and applies
the matching jax transform (jax.vjp, jax.jvp, jax.linearize, jax.vmap), so transforms
compose (vmap of grad, jacfwd of jacrev) and run under jax.jit. Inside, eagergrad records
no graph (tensors over tracers never require grad).

Autograd over a transform: outputs are differentiable w.r.t. the tensor ARGUMENTS that
require grad (one node whose backward is the jax vjp of the call); tensors the function
captures by closure are constants for it (pass them as arguments, e.g. functional_call). One file of ~850 lines: the transforms share the pytree, level and
autograd-over helpers.

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

from .._mode import STATE
from ..creation import from_jax
from ..engine.function import Function
from ..engine.grad_mode import no_grad
from ..size import Size
from ..tensor import FUNC, Tensor

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
    __slots__ = ("index", "kind", "randomness")

    def __init__(self, kind, randomness=None, index=None):
        self.kind, self.randomness, self.index = kind, randomness, index

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
    if kind not in _REVERSE:
        STATE.grad = False
    FUNC.levels.append(_Level(kind, randomness, index))
    try:
        yield
    finally:
        FUNC.levels.pop()
        STATE.grad = prev


_REVERSE = ("grad", "vjp")


def _wrap(a):
    return from_jax(a)


def _inputs(arrs, kind):
    """Tensors over the traced input arrays (requiring grad under grad/vjp/jacrev)."""
    ts = [from_jax(a) for a in arrs]
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
        return tuple(_wrap(o) for o in outs)

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


def _over_autograd(call, args):
    """call(*args), seen through by eagergrad's autograd when grad mode is on and a tensor
    in the pytree `args` requires grad (the tensors inside the transform never do)."""
    leaves, spec = _flatten(args)
    idx = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    # (inside another transform the graph would be dropped: jax differentiates through)
    if FUNC.levels or not (STATE.grad and any(leaves[i]._requires_grad for i in idx)):
        return call(*args)
    info = {}

    def compute(*arrs):
        new = list(leaves)
        for i, a in zip(idx, arrs):
            new[i] = _wrap(a)
        out_leaves, info["out"] = _flatten(call(*_unflatten(spec, new)))
        # arguments the call modified in place (vmap's write-back): extra outputs
        info["mutated"] = [i for i, a in zip(idx, arrs) if new[i]._storage.array is not a]
        return [t._value for t in out_leaves] + [new[i]._value for i in info["mutated"]]
    outs = _TransformOutput.apply(compute, *[leaves[i] for i in idx])
    n = len(outs) - len(info["mutated"])
    with no_grad():
        for i, o in zip(info["mutated"], outs[n:]):
            leaves[i].copy_(o)
    return _unflatten(info["out"], outs[:n])


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
        return _over_autograd(lambda *a: _grad_and_value(a, kwargs), args)

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

        value, pullback, aux = jax.vjp(pure, *[t._value for t in leaves], has_aux=True)
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
    outs, pullback, aux = jax.vjp(pure, *[t._value for t in leaves], has_aux=True)
    out_spec, meta = info["out"], info["meta"]

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        c_leaves, c_spec = _flatten(cotangents, none_leaf=True)
        if c_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{c_spec.pprint()}, primal output: {out_spec.pprint()}")
        cts = []
        for i, (c, (shape, dt)) in enumerate(zip(c_leaves, meta)):
            if c is None:  # as torch's autograd.grad: ones for a scalar output
                if len(shape):
                    raise RuntimeError("grad can be implicitly created only for scalar "
                                       "outputs")
                cts.append(jnp.ones(shape, dt.np))
                continue
            if not isinstance(c, Tensor):
                raise TypeError("gradients can be either Tensors or None, but got "
                                f"{type(c).__name__}")
            if c._shape != shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{Size(c._shape)} and output[{i}] has a shape of "
                                   f"{Size(shape)}.")
            cts.append(_conj(c._value.astype(dt.np)))
        grads = [_conj(g) for g in pullback(cts)]
        return _tensors(grads, spec)

    out = _tensors(outs, out_spec)
    if has_aux:
        return out, vjp_fn, _tensors(aux, info["aux"])
    return out, vjp_fn


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

        def pure(*arrs):
            FUNC.levels.append(_Level("jacfwd", randomness))
            try:
                return inner(*arrs)
            finally:
                FUNC.levels.pop()
        primals = [t._value for t in leaves]
        sizes = [p.size for p in primals]
        total = sum(sizes)

        def column(e):
            tans, off = [], 0
            for p, n in zip(primals, sizes):
                tans.append(e[off:off + n].reshape(p.shape).astype(p.dtype))
                off += n
            (outs, aux), (t_outs, _) = jax.jvp(pure, primals, tans)
            return outs, aux, t_outs
        _, aux, cols = jax.vmap(column, out_axes=(None, None, 0))(
            jnp.eye(total, dtype=jnp.float32))
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
            args)
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


_VMAP_INPLACE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace arithmetic. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead.")


def _batched(value, index):
    """Whether `value` is batched by the vmap whose hidden batched argument is `index`."""
    return isinstance(value, BatchTracer) and value._trace is index._trace


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
        o_leaves, o_spec = _flatten(out, none_leaf=True)
        for x in o_leaves:
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(x)}. Did you mean to set out_dims= to None for "
                                 "output?")
        o_dims = _vmap_flat_out_dims(func, out_dims, o_spec)
        for x, d in zip(o_leaves, o_dims):
            if d is None and _batched(x._value, index):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
        # inputs modified in place (also without a version bump, as BatchNorm's running
        # stats): written back to the caller's tensors afterwards
        mutated = [i for i, a in zip(tensors, arrs) if new[i]._storage.array is not a]
        for i in mutated:
            if dims[i] is None and _batched(new[i]._value, index):
                raise RuntimeError(_VMAP_INPLACE)
        info["out"], info["dims"], info["mutated"] = o_spec, o_dims, mutated
        return [x._value for x in o_leaves] + [new[i]._value for i in mutated]

    arrays = [leaves[i]._value for i in tensors]
    axes = [dims[i] for i in tensors]
    parts = []
    for a, b in _chunks(size, chunk_size):
        chunk = [x if d is None or (a, b) == (0, size) else
                 jax.lax.slice_in_dim(x, a, b, axis=d) for x, d in zip(arrays, axes)]
        parts.append(jax.vmap(pure, in_axes=(0, *axes))(jnp.arange(a, b), *chunk))
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
        result.append(_wrap(jnp.moveaxis(o, 0, d)))
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
