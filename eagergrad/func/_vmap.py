"""torch.func.vmap: the function traced per element and mapped with jax.vmap (applied
to its jaxpr inside a program's trace), in chunks; in_dims/out_dims, torch's errors for
batched values written into unbatched tensors."""
# torch raises RuntimeError/ValueError (not TypeError) on these type checks
import dataclasses
import functools

import jax
import jax.numpy as jnp

from ..ops.shape import cat
from .._mode import FUNC
from ..tensor import Tensor
from ._autograd import _over_autograd, _tensor, _wrap
from ._deferred import _deferred
from ._jax_transforms import _chunks, _indices
from ._levels import _batched, _check_randomness, _inside
from ._pytree import _broadcast, _flatten, _prefix_spec, _unflatten

__all__ = ["vmap"]


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


@dataclasses.dataclass(slots=True)
class _VmapRecord:
    """What the per-element function did in vmap's trace, filled in while it runs (as
    _CallRecord; each chunk's run overwrites it)."""
    stats: set = ()  # ids of the storages BatchNorm updated in place at its level
    out: object = None  # the _Spec of its output
    dims: list = None  # the out_dims of each output leaf
    mutated: list = ()  # which argument leaves it modified in place (their indices)
    versions: list = ()  # their version counts after it ran
    storages: list = ()  # their storages inside the trace


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec, dims, size = _vmap_flat_in_dims(func, in_dims, args)
    name = _fname(func)
    tensors = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    rec = _VmapRecord()

    def pure(index, *arrs):
        new = list(leaves)
        for i, a in zip(tensors, arrs):
            new[i] = _wrap(a)
        with _inside("vmap", randomness, index):
            out = func(*_unflatten(spec, new), **kwargs)
            rec.stats = FUNC.levels[-1].stats
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
        rec.out, rec.dims, rec.mutated = o_spec, o_dims, mutated
        rec.versions = [new[i]._version for i in mutated]
        rec.storages = [new[i]._storage for i in mutated]
        return [x._value for x in o_leaves] + [new[i]._value for i in mutated]

    def check(batched, written=(), born=(), size=0):
        """batched: whether each output of pure is batched, then each storage from
        outside it wrote (`written`; `born`: ids of those a factory made inside it)."""
        n = len(rec.dims)
        for b, d in zip(batched, rec.dims):
            if d is None and b:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
        targets = [(dims[i] is None, st) for i, st in zip(rec.mutated, rec.storages)]
        targets += [(True, st) for st in written]
        for b, (fixed, st) in zip(batched[n:], targets):
            if not (fixed and b):
                continue
            if id(st) in born:  # (torch: the in-place op's own shape check)
                shape = list(st.array.shape)
                raise RuntimeError(f"output with shape {shape} doesn't match the broadcast "
                                   f"shape {[size, *shape]}")
            if id(st) in rec.stats:
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
    n_out = len(outs) - len(rec.mutated)
    for i, o, v in zip(rec.mutated, outs[n_out:], rec.versions):
        leaves[i].copy_(_tensor(o[0] if dims[i] is None else _movedim0(o, dims[i])))
        leaves[i]._version_counter.version += v - 1
    result = []
    for o, d in zip(outs[:n_out], rec.dims):
        if d is None:
            result.append(_tensor(o[0]))
            continue
        n = o.ndim
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        result.append(_tensor(o if d % n == 0 else _movedim0(o, d)))
    return _unflatten(rec.out, result)


def _cat0(xs):
    """The chunks' outputs concatenated (tensors under autograd over the call)."""
    if any(isinstance(x, Tensor) for x in xs):
        return cat([_tensor(x) for x in xs])
    return jnp.concatenate(xs)


def _movedim0(o, d):
    return o.movedim(0, d) if isinstance(o, Tensor) else jnp.moveaxis(o, 0, d)
