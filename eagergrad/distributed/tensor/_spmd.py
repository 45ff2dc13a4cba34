"""The stacked layout of a DTensor: every rank's local in one jax array, sharded over the
mesh's devices, and ops and redistributions as SPMD programs over it.

NOTE [stacked locals]
When every rank's local has the same shape and the mesh's devices are this process's, a
DTensor keeps its locals as one array of shape `root_mesh.shape + local_shape`, each
position's block on that position's device (`NamedSharding` over the mesh the DTensor's
mesh was sliced from). An op runs as one `shard_map` program: each device applies the
op's kernel to its own block, so an op on a DTensor is one sharded XLA computation and a
compiled step over DTensors is one SPMD program. A redistribution is the collectives of
torch's plan over the mesh dims' axes (`all_gather`, `psum`/`pmean`/`pmax`/`pmin`, a
device's own chunk by `axis_index`), which XLA lowers to its all-gather and all-reduce.
Uneven shards (6 rows over 4 ranks) give locals of different shapes: such a DTensor keeps
a list of locals instead, and its ops run rank by rank (NOTE [DTensor's locals]).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

# ops run as one program over stacked locals, redistributions, ops run rank by rank
RUNS = {"spmd": 0, "relayout": 0, "by_rank": 0}
_REDUCE = {"sum": jax.lax.psum, "avg": jax.lax.pmean, "max": jax.lax.pmax,
           "min": jax.lax.pmin}


def axes(mesh):
    """(the root mesh, its jax mesh, the axis name of each of `mesh`'s dims), or None when
    the stacked layout cannot hold it (a device of another process)."""
    got = mesh.__dict__.get("_stacked_axes", False)
    if got is False:
        root, dims = mesh._layout()
        jm = root.jax_mesh
        me = jax.process_index()
        got = None
        if all(d.process_index == me for d in jm.devices.flat):
            got = (root, jm, tuple(jm.axis_names[d] for d in dims))
        mesh._stacked_axes = got
    return got


def _sharding(jm):
    return NamedSharding(jm, PartitionSpec(*jm.axis_names))


def stack(arrays, mesh):
    """The stacked array of every position's local `arrays` (equal shapes), or None."""
    ax = axes(mesh)
    if ax is None or any(a.shape != arrays[0].shape or a.dtype != arrays[0].dtype
                         for a in arrays):
        return None
    root, jm, _ = ax
    shape = tuple(root.shape) + tuple(arrays[0].shape)
    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        return jax.lax.with_sharding_constraint(jnp.stack(arrays).reshape(shape), _sharding(jm))
    return jax.device_put(np.stack([np.asarray(a) for a in arrays]).reshape(shape),
                          _sharding(jm))


def unstack(array, k):
    """Every position's local of a stacked array with `k` mesh dims, row-major, each an
    array of the default device (concrete) or a slice (traced)."""
    flat = array.reshape((-1,) + array.shape[k:])
    if isinstance(array, jax.core.Tracer):
        return [flat[i] for i in range(flat.shape[0])]
    return [jnp.asarray(a) for a in np.asarray(flat)]


def _program(f, jm, n_stacked, n_other):
    spec = PartitionSpec(*jm.axis_names)
    return jax.jit(jax.shard_map(f, mesh=jm, in_specs=(spec,) * n_stacked + (PartitionSpec(),)
                                 * n_other, out_specs=spec, check_vma=False))


_OPS = {}


def run_op(op, attrs, args, kinds, mesh):
    """`op` on every position's block: `args` are stacked arrays (kind "s") and arrays
    every position shares ("r"); returns the stacked output(s)."""
    root, jm, _ = axes(mesh)
    static = op.static_of(attrs) if op.dynamic else attrs
    traced = op.traced_of(static) if op.dynamic else ()
    key = (op, static, kinds, jm)
    f = _OPS.get(key)
    if f is None:
        k = len(root.shape)
        fixed = {name: a.value if a.__class__.__name__ == "Baked" else a
                 for i, (name, a) in enumerate(zip(op.attr_names, static))
                 if i not in op.dynamic or a.__class__.__name__ == "Baked"}
        names = tuple(name for name, _ in traced)
        n = len(kinds)
        order = [i for i, c in enumerate(kinds) if c == "s"] + \
            [i for i, c in enumerate(kinds) if c != "s"]

        def block(*xs):
            ins = [None] * n
            for i, x in zip(order, xs):
                ins[i] = x.reshape(x.shape[k:]) if kinds[i] == "s" else x
            out = op.kernel(*ins, **fixed, **dict(zip(names, xs[n:])))
            return jax.tree.map(lambda o: o.reshape((1,) * k + o.shape), out)
        f = _OPS[key] = _program(block, jm, kinds.count("s"), n - kinds.count("s")
                                 + len(names))
    RUNS["spmd"] += 1
    ordered = [a for a, c in zip(args, kinds) if c == "s"] + \
        [a for a, c in zip(args, kinds) if c != "s"]
    return f(*ordered, *[attrs[i] for _, i in traced])


def plan_shape(local, mesh, src, dst):
    """The local shape after relayout(src -> dst), or None when it would be uneven."""
    local = list(local)
    sizes = mesh.shape
    for m in reversed(range(len(src))):
        a, b = src[m], dst[m]
        if a != b and a.is_shard():
            local[a.dim] *= sizes[m]
    for m in range(len(src)):
        a, b = src[m], dst[m]
        if a == b or b.is_replicate():
            continue
        if b.is_shard():
            if local[b.dim] % sizes[m]:
                return None
            local[b.dim] //= sizes[m]
        elif b.reduce_op not in _REDUCE:
            return None
    if any(p.is_partial() and p.reduce_op not in _REDUCE for p in src):
        return None
    return tuple(local)


@functools.lru_cache(maxsize=512)
def _relayout_program(jm, k, names, sizes, src, dst, dtype):
    def block(x):
        for m in reversed(range(len(src))):
            a, b = src[m], dst[m]
            if a == b or a.is_replicate():
                continue
            if a.is_shard():
                x = jax.lax.all_gather(x, names[m], axis=k + a.dim, tiled=True)
            else:
                x = _REDUCE[a.reduce_op](x, names[m])
        for m in range(len(src)):
            a, b = src[m], dst[m]
            if a == b or b.is_replicate():
                continue
            if b.is_shard():
                size = x.shape[k + b.dim] // sizes[m]
                x = jax.lax.dynamic_slice_in_dim(x, jax.lax.axis_index(names[m]) * size, size,
                                                 k + b.dim)
            elif b.reduce_op == "sum":
                x = (x / sizes[m]).astype(dtype)
        return x
    return _program(block, jm, 1, 0)


def relayout(array, mesh, src, dst):
    """The stacked array of placements `dst` made from `array`'s of `src` (torch's
    plan, as _api._transform does it rank by rank)."""
    root, jm, names = axes(mesh)
    RUNS["relayout"] += 1
    out = _relayout_program(jm, len(root.shape), names, tuple(mesh.shape), tuple(src),
                            tuple(dst), array.dtype)(array)
    if not isinstance(out, jax.core.Tracer) and any(
            a != b and not a.is_replicate() for a, b in zip(src, dst)):
        # (a collective: XLA:CPU runs each device's part of a program as a task of one
        # thread pool, and a collective's parts wait for each other, so several in
        # flight can take every thread with parts of different collectives: deadlock)
        out.block_until_ready()
    return out
