"""Ops on DTensors: torch's sharding strategies, chosen by torch's communication cost,
then the op on each rank's locals (NOTE [DTensor's locals] in _api.py).

A strategy is (the placements each DTensor input must have, the output's placements).
Like torch, an op lists its candidate strategies, drops those that would shard a dim
shorter than the mesh dim, and takes the cheapest redistribution of its inputs (the
first one on a tie). An op with no strategy here raises NotImplementedError naming it.
"""
import itertools

import numpy as np

from ...ops import _table
from ...tensor import Tensor
from ._api import DTensor, _redistribute, _Spec
from .placement_types import Partial, Replicate, Shard

_R = Replicate()
_LINEAR_UNARY = {"neg", "clone", "positive"}
_POINTWISE = {
    "add", "sub", "mul", "div", "neg", "relu", "gelu", "silu", "tanh", "sigmoid", "exp",
    "log", "sqrt", "rsqrt", "pow", "abs", "sin", "cos", "square", "reciprocal", "clone",
    "maximum", "minimum", "where", "clamp", "clamp_min", "clamp_max", "log1p", "expm1",
    "erf", "softplus", "leaky_relu", "elu", "hardtanh", "threshold", "sign", "floor",
    "ceil", "round", "trunc", "eq", "ne", "lt", "le", "gt", "ge", "logical_not",
    "rsub", "mish", "hardswish", "hardsigmoid", "sgn", "positive", "_to_copy",
}
_REDUCE = {"sum": "sum", "sum_dim": "sum", "mean": "avg", "mean_dim": "avg",
           "amax": "max", "amin": "min"}


# ---- torch's cost model (torch/distributed/tensor/_collective_utils.py) ------------------
def _topo(mesh):
    n = len(mesh.shape)
    return [87.7] * n, [0.6] * n


def _ring(bytes_gb, devices, bw, lat, hops):
    return 6.6 + hops * lat + (bytes_gb * hops / devices) / bw * 1e6


def _cost(x, dst):
    src = x._spec.placements
    if all(p.is_replicate() for p in src) or src == tuple(dst):
        return 0.0
    mesh = x._spec.mesh
    bws, lats = _topo(mesh)
    shards = int(np.prod([mesh.shape[m] for m, p in enumerate(src) if p.is_shard()] or [1]))
    gb = x.dtype.itemsize * int(np.prod(x._shape)) / shards / 1024 ** 3
    cost = 0.0
    for m, (a, b) in enumerate(zip(src, dst)):
        if a == b:
            continue
        n, bw, lat = mesh.shape[m], bws[m], lats[m]
        if a.is_shard() and b.is_replicate():
            gb *= n
            cost += _ring(gb, n, bw, lat, n - 1)
        elif a.is_shard() and b.is_shard():
            cost += _ring(gb, n, bw, lat, n - 1) + 1.0
        elif a.is_partial() and b.is_replicate():
            cost += _ring(gb, n, bw, lat, 2 * (n - 1))
        elif a.is_partial() and b.is_shard():
            cost += _ring(gb, n, bw, lat, n - 1)
            gb /= n
        elif b.is_partial():
            if not a.is_replicate():
                return float("inf")
        elif a.is_replicate() and b.is_shard():
            gb /= n
    return cost


def _shardable(shape, placements, mesh):
    sizes = list(shape)
    for m, p in enumerate(placements):
        if p.is_shard():
            if sizes[p.dim] < mesh.shape[m]:
                return False
            sizes[p.dim] = -(-sizes[p.dim] // mesh.shape[m])
    return True


def _choose(mesh, dts, candidates):
    """The cheapest candidate (inputs' placements, output's placements); ties: the first."""
    best, best_cost = None, float("inf")
    for ins, out, out_shape in candidates:
        if not _shardable(out_shape, out, mesh) or any(
                x is not None and not _shardable(x._shape, p, mesh) for x, p in zip(dts, ins)):
            continue
        c = sum(_cost(x, p) for x, p in zip(dts, ins) if x is not None)
        if c < best_cost:
            best, best_cost = (ins, out), c
    return best


# ---- strategies --------------------------------------------------------------------------
def _broadcast_shape(shapes):
    return tuple(np.broadcast_shapes(*shapes))


def _pointwise(op, tensors, attrs, mesh):
    dts = [t if isinstance(t, DTensor) else None for t in tensors]
    out_shape = _broadcast_shape([t._shape for t in tensors])
    nd = len(out_shape)
    linear = op.name in _LINEAR_UNARY or op.name in ("add", "sub", "mul", "div")

    def needs(t, out_pl):
        pl = []
        for p in out_pl:
            if p.is_shard():
                d = p.dim - (nd - len(t._shape))
                pl.append(Shard(d) if d >= 0 and t._shape[d] == out_shape[p.dim] else _R)
            elif p.is_partial():
                pl.append(p)
            else:
                pl.append(_R)
        return tuple(pl)

    def partial_ok(out_pl, src):
        """A Partial output: only for a linear op, every term Partial (add, sub, unary)
        or the one Partial factor of a product (mul, or div's numerator)."""
        if not any(p.is_partial() for p in out_pl):
            return True
        if not linear or any(p.is_partial() and p.reduce_op != "sum" for p in out_pl):
            return False
        if op.name in ("add", "sub") or op.name in _LINEAR_UNARY:
            return all(d is not None for d in dts)
        return op.name == "mul" or src is tensors[0]

    cands, seen = [], set()
    outs = [((_R,) * mesh.ndim, None)]
    for t in tensors:
        if isinstance(t, DTensor):
            outs.append((tuple(Shard(p.dim + nd - len(t._shape)) if p.is_shard() else p
                               for p in t._spec.placements), t))
    for out_pl, src in outs:
        if out_pl in seen or not partial_ok(out_pl, src):
            continue
        seen.add(out_pl)
        ins = []
        for t in tensors:
            pl = needs(t, out_pl) if isinstance(t, DTensor) else None
            if pl is not None and op.name in ("mul", "div") and t is not src:
                pl = tuple(_R if p.is_partial() else p for p in pl)  # the other factors
            ins.append(pl)
        cands.append((ins, out_pl, out_shape))
    cands[1:] = sorted(cands[1:], key=lambda c: [(0, p.dim) if p.is_shard() else (1, 0)
                                                 for p in c[1]])
    return dts, cands


def _reduction(op, tensors, attrs, mesh):
    (x,) = tensors
    names = op.attr_names
    nd = len(x._shape)
    if "dim" in names and attrs[names.index("dim")] is not None:
        dims = attrs[names.index("dim")]
        dims = {d % nd for d in ((dims,) if isinstance(dims, int) else dims)} or set(range(nd))
    else:
        dims = set(range(nd))
    keep = "keepdim" in names and attrs[names.index("keepdim")]
    red = _REDUCE[op.name]
    ins, out = [], []
    for p in x._spec.placements:
        if p.is_shard() and p.dim in dims:
            ins.append(p)
            out.append(Partial(red))
        elif p.is_shard():
            ins.append(p)
            out.append(Shard(p.dim if keep else p.dim - sum(d < p.dim for d in dims)))
        elif p.is_partial() and p.reduce_op == "sum" and red in ("sum", "avg"):
            ins.append(p)
            out.append(p)
        else:
            ins.append(_R)
            out.append(_R)
    shape = tuple(1 if d in dims else s for d, s in enumerate(x._shape)) if keep else \
        tuple(s for d, s in enumerate(x._shape) if d not in dims)
    return [x], [([tuple(ins)], tuple(out), shape)]


_MM = (((_R, _R), _R), ((Shard(0), _R), Shard(0)), ((_R, Shard(1)), Shard(1)),
       ((Shard(1), Shard(0)), Partial()), ((Partial(), _R), Partial()),
       ((_R, Partial()), Partial()))


def _mm(op, tensors, attrs, mesh):
    a, b = tensors[-2], tensors[-1]
    bias = tensors[0] if len(tensors) == 3 else None
    out_shape = (a._shape[0], b._shape[1])
    cands = []
    for per_dim in itertools.product(_MM, repeat=mesh.ndim):
        pa = tuple(s[0][0] for s in per_dim)
        pb = tuple(s[0][1] for s in per_dim)
        out = tuple(s[1] for s in per_dim)
        ins = [pa, pb]
        if bias is not None:
            nb = len(bias._shape)
            pc = []
            for p in out:
                if p.is_shard():
                    d = p.dim - (2 - nb)
                    pc.append(Shard(d) if d >= 0 and bias._shape[d] > 1 else _R)
                else:
                    pc.append(p)
            ins = [tuple(pc)] + ins
        cands.append((ins, out, out_shape))
    dts = [t if isinstance(t, DTensor) else None for t in tensors]
    return dts, cands


def _transpose(op, tensors, attrs, mesh):
    (x,) = tensors
    d0, d1 = (attrs[0] % max(len(x._shape), 1), attrs[1] % max(len(x._shape), 1))
    swap = {d0: d1, d1: d0}
    out = tuple(Shard(swap.get(p.dim, p.dim)) if p.is_shard() else p
                for p in x._spec.placements)
    shape = list(x._shape)
    if len(shape) > 1:
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return [x], [([x._spec.placements], out, tuple(shape))]


_RULES = {"mm": _mm, "addmm": _mm, "t": _transpose, "transpose": _transpose}
_RULES.update(dict.fromkeys(_POINTWISE, _pointwise))
_RULES.update(dict.fromkeys(_REDUCE, _reduction))


# ---- running an op -----------------------------------------------------------------------
def _local_attrs(op, attrs, tensors):
    """Attributes that describe an input's shape, recomputed for the local tensors."""
    if not attrs:
        return attrs
    out = list(attrs)
    for i, name in enumerate(op.attr_names):
        for suffix, get in (("_sym_sizes", lambda t: t._shape),
                            ("_sym_strides", lambda t: t.stride()),
                            ("_sym_numel", lambda t: int(np.prod(t._shape)))):
            if name.endswith(suffix):
                src = name[:-len(suffix)]
                if src in op.input_names:
                    out[i] = get(tensors[op.input_names.index(src)])
    return tuple(out)


def _fan_out(x, m):
    """x (replicated on mesh dim m) fed a sharded or partial result: its gradient, and
    that of the replicated values it came from, is Partial on m."""
    stack = [x]
    while stack:
        t = stack.pop()
        if not t._fan[m]:
            t._fan[m] = True
            stack.extend(t._rsrc[m])


def dispatch(op, tensors, attrs):
    dtensors = [t for t in tensors if isinstance(t, DTensor)]
    mesh = dtensors[0]._spec.mesh
    for t in tensors:
        if isinstance(t, DTensor):
            if t._spec.mesh != mesh:
                raise NotImplementedError(f"{op.name}: DTensor does not support cross-mesh "
                                          "operation yet!")
        elif isinstance(t, Tensor) and t.ndim > 0:
            raise RuntimeError(f"aten.{op.name}: got mixed torch.Tensor and DTensor, need to "
                               "convert all torch.Tensor to DTensor before calling "
                               "distributed operators!")
    rule = _RULES.get(op.name)
    if rule is None:
        raise NotImplementedError(f"eagergrad does not implement the operator aten.{op.name} "
                                  "on DTensors yet")
    dts, cands = rule(op, tensors, attrs, mesh)
    if op.name in _REDUCE or op.name in ("t", "transpose"):
        dts = [tensors[0]]
    chosen = _choose(mesh, dts, cands)
    if chosen is None:
        raise NotImplementedError(f"eagergrad found no sharding strategy for aten.{op.name} "
                                  "on these placements")
    ins, out_pl = chosen
    moved = []
    for t, pl in zip(tensors, ins if len(ins) == len(tensors) else [ins[0]]):
        moved.append(_redistribute(t, pl) if isinstance(t, DTensor) else t)
    moved += list(tensors[len(moved):])
    n = int(np.prod(mesh.shape))
    outs = []
    for r in range(n):
        locs = [t._locals[r] if isinstance(t, DTensor) else t for t in moved]
        o = _table.call_op(op, tuple(locs), _local_attrs(op, attrs, locs))
        if isinstance(o, tuple):
            raise NotImplementedError(f"eagergrad does not implement aten.{op.name} on "
                                      "DTensors yet (several outputs)")
        outs.append(o)
    shape = [c for c in cands if c[1] == out_pl][0][2]
    out = DTensor._new(outs, _Spec(mesh, out_pl), shape, outs[0].dtype)
    for t, pl in zip(moved, ins):
        if isinstance(t, DTensor):
            for m, p in enumerate(pl):
                if p.is_replicate():
                    if out_pl[m].is_replicate():
                        out._rsrc[m].append(t)
                    else:
                        _fan_out(t, m)
    return out
