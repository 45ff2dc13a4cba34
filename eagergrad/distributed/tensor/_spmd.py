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
Uneven shards (6 rows over 4 ranks: 2, 2, 2, 0) are padded with zeros to the first one's
size, as torch's FSDP pads them (`padding`): a redistribution strips the padding after
gathering and pads before chunking; a pointwise op on inputs laid out as its output zeroes
its output's padding (`zero_padding`); another op on padded DTensors runs rank by rank on
the unpadded locals (_dispatch.py). A dim split twice, once unevenly, cannot be padded so
(torch.chunk of a padded shard would split elsewhere): that DTensor keeps a list of
locals (NOTE [DTensor's locals]).
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


def padding(shape, mesh, placements):
    """The stacked layout of a DTensor of `shape` and `placements`: (its local shape, each
    shard as large as torch.chunk's first, {sharding mesh dim: the size of the dim it
    splits}), or None when padding cannot hold it (a dim split twice, once unevenly:
    torch.chunk of a padded shard would not split where torch's does)."""
    local, pre, even = list(shape), {}, {}
    for m, p in enumerate(placements):
        if p.is_shard():
            d, n = p.dim, mesh.shape[m]
            here = local[d] % n == 0
            if d in even and not (even[d] and here):
                return None
            even[d] = here
            pre[m] = local[d]
            local[d] = -(-local[d] // n)
    return tuple(local), pre


def is_padded(shape, mesh, placements):
    """Whether some rank's shard is smaller than the stacked layout's (uneven shards)."""
    lay = padding(shape, mesh, placements)
    return lay is not None and any(size % mesh.shape[m] for m, size in lay[1].items())


def logical(shape, mesh, placements):
    """Every position's local shape (torch.chunk's shards), row-major over the root
    mesh."""
    root, dims = mesh._layout()
    out = []
    for c in np.ndindex(*root.shape):
        local = list(shape)
        for m, p in enumerate(placements):
            if p.is_shard():
                s = -(-local[p.dim] // mesh.shape[m])
                local[p.dim] = max(0, min(s, local[p.dim] - c[dims[m]] * s))
        out.append(tuple(local))
    return out


def _pad(a, shape):
    if a.shape == shape:
        return a
    widths = [(0, t - s) for s, t in zip(a.shape, shape)]
    return jnp.pad(a, widths) if isinstance(a, jax.core.Tracer) else np.pad(np.asarray(a),
                                                                            widths)


def stack(arrays, mesh, layout=None):
    """The stacked array of every position's local `arrays`, or None: their shapes must
    be equal, or (`layout`: a DTensor's (shape, placements)) torch.chunk's shards, padded
    with zeros to the first's."""
    ax = axes(mesh)
    if ax is None or any(a.dtype != arrays[0].dtype for a in arrays):
        return None
    if layout is not None and is_padded(layout[0], mesh, layout[1]):
        if [tuple(a.shape) for a in arrays] != logical(layout[0], mesh, layout[1]):
            return None
        local = padding(layout[0], mesh, layout[1])[0]
        arrays = [_pad(a, local) for a in arrays]
    elif any(a.shape != arrays[0].shape for a in arrays):
        return None
    root, jm, _ = ax
    shape = tuple(root.shape) + tuple(arrays[0].shape)
    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        return jax.lax.with_sharding_constraint(jnp.stack(arrays).reshape(shape), _sharding(jm))
    return jax.device_put(np.stack([np.asarray(a) for a in arrays]).reshape(shape),
                          _sharding(jm))


def unstack(array, k, shapes=None):
    """Every position's local of a stacked array with `k` mesh dims, row-major, each an
    array of the default device (concrete) or a slice (traced); `shapes`: each one's
    shape, when padded."""
    flat = array.reshape((-1,) + array.shape[k:])
    if not isinstance(array, jax.core.Tracer):
        flat = np.asarray(flat)
    out = [flat[i] for i in range(flat.shape[0])]
    if shapes is not None:
        out = [a[tuple(slice(0, s) for s in w)] for a, w in zip(out, shapes)]
    return out if isinstance(array, jax.core.Tracer) else [jnp.asarray(a) for a in out]


@functools.lru_cache(maxsize=256)
def _mask(shape, mesh, placements):
    root, jm, _ = axes(mesh)
    local = padding(shape, mesh, placements)[0]
    m = np.zeros((int(np.prod(root.shape)),) + local, bool)
    for i, w in enumerate(logical(shape, mesh, placements)):
        m[i][tuple(slice(0, s) for s in w)] = True
    return jax.device_put(m.reshape(tuple(root.shape) + local), _sharding(jm))


@jax.jit
def _zero_padding(a, mask):
    return jnp.where(mask, a, jnp.zeros((), a.dtype))


def zero_padding(array, shape, mesh, placements):
    """The stacked `array` with its padding (beyond each rank's shard) zero."""
    return _zero_padding(array, _mask(tuple(shape), mesh, tuple(placements)))


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


@functools.lru_cache(maxsize=512)
def _relayout_program(jm, k, names, sizes, src, dst, src_pre, dst_pre, dtype):
    src_pre, dst_pre = dict(src_pre), dict(dst_pre)

    def block(x):
        for m in reversed(range(len(src))):
            a, b = src[m], dst[m]
            if a == b or a.is_replicate():
                continue
            if a.is_shard():
                x = jax.lax.all_gather(x, names[m], axis=k + a.dim, tiled=True)
                x = jax.lax.slice_in_dim(x, 0, src_pre[m], axis=k + a.dim)  # (padding)
            else:
                x = _REDUCE[a.reduce_op](x, names[m])
        for m in range(len(src)):
            a, b = src[m], dst[m]
            if a == b or b.is_replicate():
                continue
            if b.is_shard():
                axis, n = k + b.dim, sizes[m]
                size = -(-dst_pre[m] // n)
                if dst_pre[m] % n:  # (uneven: zero padding to n equal chunks)
                    widths = [(0, 0)] * x.ndim
                    widths[axis] = (0, n * size - dst_pre[m])
                    x = jnp.pad(x, widths)
                x = jax.lax.dynamic_slice_in_dim(x, jax.lax.axis_index(names[m]) * size, size,
                                                 axis)
            elif b.reduce_op == "sum":
                x = (x / sizes[m]).astype(dtype)
        return x
    return _program(block, jm, 1, 0)


def can_relayout(shape, mesh, src, dst):
    """Whether a stacked DTensor of `shape` and placements `src` can be laid out as `dst`
    stacked."""
    return padding(shape, mesh, dst) is not None and all(
        not p.is_partial() or p.reduce_op in _REDUCE for p in (*src, *dst))


def relayout(array, mesh, src, dst, shape):
    """The stacked array of placements `dst` made from `array`'s of `src` (torch's
    plan, as _api._transform does it rank by rank) for a DTensor of `shape`."""
    root, jm, names = axes(mesh)
    RUNS["relayout"] += 1
    pre = [tuple(sorted(padding(shape, mesh, p)[1].items())) for p in (src, dst)]
    out = _relayout_program(jm, len(root.shape), names, tuple(mesh.shape), tuple(src),
                            tuple(dst), *pre, array.dtype)(array)
    if not isinstance(out, jax.core.Tracer) and any(
            a != b and not a.is_replicate() for a, b in zip(src, dst)):
        # (a collective: XLA:CPU runs each device's part of a program as a task of one
        # thread pool, and a collective's parts wait for each other, so several in
        # flight can take every thread with parts of different collectives: deadlock)
        out.block_until_ready()
    return out
