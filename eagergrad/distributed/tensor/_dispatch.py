"""Ops on DTensors: torch's sharding strategies, chosen by torch's communication cost,
then the op on each rank's locals (NOTE [DTensor's locals] in _api.py), as one SPMD
program over stacked locals (NOTE [stacked locals] in _spmd.py).

A strategy is (the placements each DTensor input must have, the output's placements).
Like torch, an op lists its candidate strategies (mm drops those that would shard a dim
shorter than the mesh dim) and takes the cheapest redistribution of its inputs by
torch's cost model over torch's greedy plan (the first one on a tie). The op then runs
on each rank's locals with grad mode off, and its node is recorded on the DTensors. An op
with no strategy here raises NotImplementedError naming it.
"""
import contextlib
import itertools
import threading

import numpy as np

from ... import _dtypes as D
from ..._storage import Storage, contiguous_strides
from ...ops import _table
from ...tensor import Tensor
from ...engine.grad_mode import STATE, no_grad
from . import _spmd
from ._api import DTensor, LocalTensor, _relaid, _Spec, distribute_tensor
from .placement_types import Partial, Replicate, Shard

_R = Replicate()
_LINEAR_UNARY = {"neg", "clone", "positive", "mul_scalar", "div_scalar", "conj_physical"}
_POINTWISE = {
    "add", "sub", "mul", "div", "neg", "relu", "gelu", "silu", "tanh", "sigmoid", "exp",
    "log", "sqrt", "rsqrt", "pow", "abs", "sin", "cos", "square", "reciprocal", "clone",
    "maximum", "minimum", "where", "clamp", "clamp_min", "clamp_max", "log1p", "expm1",
    "erf", "softplus", "leaky_relu", "elu", "hardtanh", "threshold", "sign", "floor",
    "ceil", "round", "trunc", "eq", "ne", "lt", "le", "gt", "ge", "logical_not",
    "rsub", "mish", "hardswish", "hardsigmoid", "sgn", "positive", "_to_copy",
    "rsub_scalar", "mul_scalar", "add_scalar", "div_scalar", "threshold_backward",
    "hardtanh_backward", "leaky_relu_backward", "conj_physical", "bitwise_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
    "gelu_backward", "silu_backward", "sigmoid_backward", "tanh_backward", "where_scalar",
}
_REDUCE = {"sum": "sum", "sum_dim": "sum", "mean": "avg", "mean_dim": "avg",
           "amax": "max", "amin": "min"}


# ---- torch's cost model (torch/distributed/tensor/_collective_utils.py) ------------------
def _topo(mesh):
    n = len(mesh.shape)
    return [87.7] * n, [0.6] * n


def _ring(bytes_gb, devices, bw, lat, hops):
    return 6.6 + hops * lat + (bytes_gb * hops / devices) / bw * 1e6


def _steps(src, dst, shards):
    """torch's greedy redistribution plan: (mesh dim, from, to) steps, innermost mesh dim
    first when the source is sharded (a nested shard that would be misaligned goes
    through Replicate), then what remains outermost first."""
    cur, steps = list(src), []
    if shards > 1:
        for m in reversed(range(len(cur))):
            c, t = cur[m], dst[m]
            if t.is_shard() and [i for i in range(m) if cur[i].is_shard(t.dim)] != \
                    [i for i in range(m) if dst[i].is_shard(t.dim)]:
                t = _R
            if c != t:
                steps.append((m, c, t))
                cur[m] = t
    for m, (c, t) in enumerate(zip(cur, dst)):
        if c != t:
            steps.append((m, c, t))
            cur[m] = t
    return steps


def _cost(x, dst):
    src = x._spec.placements
    if all(p.is_replicate() for p in src) or src == tuple(dst):
        return 0.0
    mesh = x._spec.mesh
    bws, lats = _topo(mesh)
    shards = int(np.prod([mesh.shape[m] for m, p in enumerate(src) if p.is_shard()] or [1]))
    gb = x.dtype.itemsize * int(np.prod(x._shape)) / shards / 1024 ** 3
    cost = 0.0
    for m, a, b in _steps(src, dst, shards):
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
        c = sum(_cost(x, p) for x, p in zip(dts, ins) if isinstance(x, DTensor))
        if c < best_cost:
            best, best_cost = (ins, out, out_shape), c
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
    return [x], [([tuple(ins)], tuple(out), shape)]  # (x: the op's one tensor)


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
        # (torch's mm strategies drop those that would shard a dim shorter than the mesh)
        if _shardable(out_shape, out, mesh) and all(
                _shardable(t._shape, p, mesh) for t, p in zip(tensors, ins)):
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


def _expand(op, tensors, attrs, mesh):
    """expand: a shard keeps its dim (shifted by the new leading dims) unless that dim
    broadcasts (then Replicate); Partial and Replicate stay."""
    (x,) = tensors
    size = tuple(attrs[op.attr_names.index("size")])
    lead = len(size) - len(x._shape)
    shape = tuple(s if s != -1 else x._shape[i - lead] for i, s in enumerate(size))
    ins, out = [], []
    for p in x._spec.placements:
        if p.is_shard() and x._shape[p.dim] == shape[p.dim + lead]:
            ins.append(p)
            out.append(Shard(p.dim + lead))
        elif p.is_shard():
            ins.append(_R)
            out.append(_R)
        else:
            ins.append(p)
            out.append(p)
    return [x], [([tuple(ins)], tuple(out), shape)]


def _view_groups(a, b):
    """The dims of shapes a and b grouped so each group's sizes have equal products
    (size-1 dims join the group at hand)."""
    groups, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        gi, gj, pa, pb = [], [], 1, 1
        while True:
            if pa == pb and gi and gj:
                while i < len(a) and a[i] == 1 and (j >= len(b) or b[j] != 1):
                    gi.append(i)
                    i += 1
                while j < len(b) and b[j] == 1 and (i >= len(a) or a[i] != 1):
                    gj.append(j)
                    j += 1
                break
            if i < len(a) and (pa <= pb or j >= len(b)):
                gi.append(i)
                pa *= a[i]
                i += 1
            elif j < len(b):
                gj.append(j)
                pb *= b[j]
                j += 1
            else:
                break
        groups.append((gi, gj))
    return groups


def _view(op, tensors, attrs, mesh):
    """view/reshape: a shard stays on its group's first real dim when the group keeps
    it whole (same size) or splits it evenly; anything else raises."""
    (x,) = tensors
    shape = tuple(attrs[op.attr_names.index("size")])
    groups = _view_groups(x._shape, shape)
    out = []
    for m, p in enumerate(x._spec.placements):
        if not p.is_shard():
            out.append(p)
            continue
        gi, gj = next(g for g in groups if p.dim in g[0])
        real_in = [d for d in gi if x._shape[d] != 1]
        real_out = [d for d in gj if shape[d] != 1]
        n = mesh.shape[m]
        if real_in and real_out and p.dim == real_in[0] and (
                len(real_in) == len(real_out) == 1 or shape[real_out[0]] % n == 0 and
                x._shape[p.dim] % n == 0):
            out.append(Shard(real_out[0]))
        else:
            raise NotImplementedError(f"eagergrad does not implement aten.{op.name} of a "
                                      f"DTensor sharded as {p} to shape {list(shape)} yet")
    return [x], [([x._spec.placements], tuple(out), shape)]


def _local_view(attrs, x, names, global_in):
    """The local target shape of a view: each group's sharded output dim takes what the
    local input leaves."""
    size = list(attrs[names.index("size")])
    for gi, gj in _view_groups(global_in, tuple(size)):
        local = int(np.prod([x._shape[d] for d in gi])) if gi else 1
        full = int(np.prod([global_in[d] for d in gi])) if gi else 1
        if local != full:
            real = [d for d in gj if size[d] != 1]
            rest = int(np.prod([size[d] for d in real[1:]])) if real[1:] else 1
            size[real[0]] = local // rest
    return tuple(size)


def _local_expand(attrs, x, names, global_in):
    """The local target of an expand: a dim that is not broadcast keeps the local size."""
    size = list(attrs[names.index("size")])
    lead = len(size) - len(x._shape)
    for i in range(len(x._shape)):
        if size[i + lead] in (-1, global_in[i]):
            size[i + lead] = x._shape[i]
    return size


def _unsqueeze(op, tensors, attrs, mesh):
    (x,) = tensors
    d = attrs[0] % (len(x._shape) + 1)
    out = tuple(Shard(p.dim + (p.dim >= d)) if p.is_shard() else p for p in x._spec.placements)
    shape = x._shape[:d] + (1,) + x._shape[d:]
    return [x], [([x._spec.placements], out, shape)]


def _permute(op, tensors, attrs, mesh):
    (x,) = tensors
    dims = [d % len(x._shape) for d in attrs[0]]
    out = tuple(Shard(dims.index(p.dim)) if p.is_shard() else p for p in x._spec.placements)
    return [x], [([x._spec.placements], out, tuple(x._shape[d] for d in dims))]


class _Multi(list):
    """The placements (or shapes) of an op's several outputs."""


def _unshard(placements, dims):
    """Placements with a Shard on any of `dims` (and a Partial) made Replicate."""
    return tuple(_R if p.is_partial() or p.is_shard() and p.dim in dims else p
                 for p in placements)


def _softmax(op, tensors, attrs, mesh):
    """softmax / log_softmax: the softmax dim replicated, the rest followed."""
    (x,) = tensors
    d = attrs[op.attr_names.index("dim")] % max(len(x._shape), 1)
    pl = _unshard(x._spec.placements, {d})
    return [x], [([pl], pl, x._shape)]


def _layer_norm(op, tensors, attrs, mesh):
    """native_layer_norm: the normalized dims replicated (and a shard the mesh cannot
    split evenly enough, as torch's); weight and bias replicated; mean and rstd follow."""
    x = tensors[0]
    k = len(attrs[op.attr_names.index("normalized_shape")])
    nd = len(x._shape)
    pl = _unshard(x._spec.placements, set(range(nd - k, nd)))
    if not _shardable(x._shape, pl, mesh):
        pl = (_R,) * mesh.ndim
    stat = x._shape[:nd - k] + (1,) * k
    ins = [pl] + [(_R,) * mesh.ndim if isinstance(t, DTensor) else None for t in tensors[1:]]
    return list(tensors), [(ins, _Multi([pl, pl, pl]), _Multi([x._shape, stat, stat]))]


def _cat(op, tensors, attrs, mesh):
    """cat: the first input's placements, its cat dim replicated; every input follows."""
    d = attrs[op.attr_names.index("dim")]
    first = next(t for t in tensors if isinstance(t, DTensor) and len(t._shape))
    d %= len(first._shape)
    pl = _unshard(first._spec.placements, {d})
    shape = list(first._shape)
    shape[d] = sum(t._shape[d] for t in tensors if len(t._shape))
    return list(tensors), [([pl if isinstance(t, DTensor) else None for t in tensors], pl,
                            tuple(shape))]


def _split(op, tensors, attrs, mesh):
    (x,) = tensors
    d = attrs[op.attr_names.index("dim")] % len(x._shape)
    sizes = attrs[op.attr_names.index("sizes")]
    pl = _unshard(x._spec.placements, {d})
    shapes = _Multi(x._shape[:d] + (n,) + x._shape[d + 1:] for n in sizes)
    return [x], [([pl], _Multi([pl] * len(sizes)), shapes)]


def _embedding(op, tensors, attrs, mesh):
    """embedding: a weight sharded by columns gives an output sharded on its last dim,
    a replicated one follows the indices' placements."""
    w, idx = tensors
    out_shape = idx._shape + (w._shape[1],)
    wp, ip, out = [], [], []
    for m, p in enumerate(w._spec.placements):
        q = idx._spec.placements[m] if isinstance(idx, DTensor) else _R
        if p.is_shard(1):
            wp.append(p)
            ip.append(_R)
            out.append(Shard(len(out_shape) - 1))
        elif p.is_shard():
            raise NotImplementedError("eagergrad does not implement embedding with a weight "
                                      "sharded by rows (torch's _MaskPartial) yet")
        else:
            wp.append(_R)
            ip.append(q if q.is_shard() else _R)
            out.append(q if q.is_shard() else _R)
    if not _shardable(out_shape, out, mesh):  # (torch's: an index shard too short)
        ip, out = [_R if p.is_shard() else p for p in ip], [
            _R if p.is_shard() and not w._spec.placements[m].is_shard(1) else p
            for m, p in enumerate(out)]
    ins = [tuple(wp), tuple(ip) if isinstance(idx, DTensor) else None]
    return list(tensors), [(ins, tuple(out), out_shape)]


def _nll_loss(op, tensors, attrs, mesh):
    """nll_loss (loss, total_weight): a batch-sharded input and target give partial
    results (the loss's mean a Partial(avg), as torch's); a class-sharded one is
    replicated first."""
    x, target = tensors[0], tensors[1]
    red = attrs[op.attr_names.index("reduction")]
    xp, tp_, out, tw = [], [], [], []
    for p in x._spec.placements:
        if p.is_shard(0) and len(x._shape) > 1:
            xp.append(p)
            tp_.append(Shard(0))
            out.append(Shard(0) if red == 0 else Partial("avg" if red == 1 else "sum"))
            tw.append(Partial("sum"))
        else:
            xp.append(_R)
            tp_.append(_R)
            out.append(_R)
            tw.append(_R)
    shape = (x._shape[0],) if red == 0 else ()
    ins = [tuple(xp), tuple(tp_) if isinstance(target, DTensor) else None] + [
        (_R,) * mesh.ndim if isinstance(t, DTensor) else None for t in tensors[2:]]
    return list(tensors), [(ins, _Multi([tuple(out), tuple(tw)]), _Multi([shape, ()]))]


def _copy(op, tensors, attrs, mesh):
    """copy_ (and its out-of-place op): the result keeps self's layout, src is laid out
    as self (torch's)."""
    self, src = tensors
    if not isinstance(src, DTensor):
        return [self, None], [([self._spec.placements, None], self._spec.placements,
                               self._shape)]
    pl, off = self._spec.placements, len(self._shape) - len(src._shape)
    src_pl = []
    for p in pl:
        d = p.dim - off if p.is_shard() else -1
        if p.is_shard():
            src_pl.append(Shard(d) if d >= 0 and src._shape[d] == self._shape[p.dim] else _R)
        else:
            src_pl.append(p)
    return [self, src], [([pl, tuple(src_pl)], pl, self._shape)]


_RULES = {"mm": _mm, "copy": _copy, "softmax": _softmax, "log_softmax": _softmax,
          "native_layer_norm": _layer_norm, "cat": _cat, "split": _split,
          "embedding": _embedding, "nll_loss": _nll_loss, "addmm": _mm,
          "unsqueeze": _unsqueeze, "permute": _permute, "expand": _expand, "view": _view,
          "_unsafe_view": _view, "t": _transpose, "transpose": _transpose}
_RULES.update(dict.fromkeys(_POINTWISE, _pointwise))
_RULES.update(dict.fromkeys(_REDUCE, _reduction))


# ---- running an op -----------------------------------------------------------------------
class _LocalShape:
    """What _local_attrs reads of a local: its shape (and contiguous strides)."""

    def __init__(self, shape):
        self._shape = shape

    def stride(self):
        return contiguous_strides(tuple(self._shape))


def _stacked(op, tensors, attrs, moved, mesh, out_pl, shape):
    """The op as one SPMD program over the stacked locals (NOTE [stacked locals]), or
    None when shards are uneven (padded) and the op is not pointwise on inputs laid out
    as its output (whose padding it then zeroes)."""
    multi = isinstance(out_pl, _Multi)
    padded = any(_spmd.is_padded(t._shape, mesh, t._spec.placements) for t in moved
                 if isinstance(t, DTensor)) or any(
        _spmd.is_padded(sh, mesh, pl) for sh, pl in (zip(shape, out_pl) if multi else
                                                     ((shape, out_pl),)))
    if padded and (multi or op.name not in _POINTWISE or any(
            t._shape != shape or t._spec.placements != out_pl for t in moved
            if isinstance(t, DTensor))):
        return None
    k = len(mesh._layout()[0].shape)
    kinds = tuple("s" if isinstance(t, DTensor) else "r" for t in moved)
    args = [t._stack if c == "s" else t._value for t, c in zip(moved, kinds)]
    shapes = tuple(_LocalShape(a.shape[k:]) if c == "s" else t
                   for a, t, c in zip(args, moved, kinds))
    out = _spmd.run_op(op, _local_attrs(op, attrs, shapes, tensors[0]._shape), args, kinds,
                       mesh)
    if isinstance(out, (tuple, list)) != multi:
        raise NotImplementedError(f"eagergrad does not implement aten.{op.name} on "
                                  "DTensors yet (several outputs)")
    if padded:
        out = _spmd.zero_padding(out, shape, mesh, out_pl)
    base = tensors[0] if op.view is not None and moved[0] is tensors[0] else None
    outs = [DTensor._of_stack(Storage(a), _Spec(mesh, pl), sh, D.FROM_NP[a.dtype], base)
            for a, pl, sh in zip(out if multi else (out,), out_pl if multi else (out_pl,),
                                 shape if multi else (shape,))]
    result = tuple(outs) if multi else outs[0]
    _record(op, tensors, attrs, tuple(outs))
    return result


def _local_attrs(op, attrs, tensors, global_in=None):
    """Attributes that describe an input's shape, recomputed for the local tensors."""
    if not attrs:
        return attrs
    out = list(attrs)
    if op.name == "expand":
        out[op.attr_names.index("size")] = tuple(_local_expand(attrs, tensors[0],
                                                               op.attr_names, global_in))
    elif op.name in ("view", "_unsafe_view"):
        out[op.attr_names.index("size")] = _local_view(attrs, tensors[0], op.attr_names,
                                                       global_in)
    for i, name in enumerate(op.attr_names):
        for suffix, get in (("_sym_sizes", lambda t: t._shape),
                            ("_sym_strides", lambda t: t.stride()),
                            ("_sym_numel", lambda t: int(np.prod(t._shape)))):
            if name.endswith(suffix):
                src = name[:-len(suffix)]
                if src in op.input_names:
                    out[i] = get(tensors[op.input_names.index(src)])
    return tuple(out)


def _node_class(op):
    """op's node class, run by evaluating its formulas on tensors (DTensors): the same
    class name as torch's (MmBackward0), never fused."""
    cls = _NODES.get(op)
    if cls is None:
        def apply(self, grads):
            if all(g is None for g in grads):
                return [None] * len(self._next)
            with counting(IMPLICIT):  # (a formula's own constants, arange(c), replicated)
                return self._apply_recorded(grads)
        cls = _NODES[op] = type(op.Node.__name__, (op.Node,), {"__slots__": (),
                                                               "apply": apply})
    return cls


_NODES = {}


def _record(op, tensors, attrs, outs):
    """The op's node on the DTensors / LocalTensors (evaluated on them in backward)."""
    if STATE.grad and op.diff_inputs and any(
            tensors[i]._requires_grad for i in op.diff_index if i < len(tensors)):
        _table._record(op, tensors, attrs, outs, None, keep_outputs=True)
        node = next((o._grad_fn for o in outs if o._grad_fn is not None), None)
        if node is not None:
            node.__class__ = _node_class(op)
            node._sig = None


def _rank_by_rank(op, tensors, attrs):
    """An op on LocalTensors: each rank's locals (a plain tensor is every rank's), as one
    SPMD program when they are stacked over one mesh (NOTE [stacked locals])."""
    ranked = [t for t in tensors if isinstance(t, LocalTensor)]
    mesh = ranked[0]._mesh
    if all(t._list is None and _spmd.axes(t._mesh)[1] is _spmd.axes(mesh)[1]
           for t in ranked):
        kinds = tuple("s" if isinstance(t, LocalTensor) else "r" for t in tensors)
        out = _spmd.run_op(op, attrs, [t._stack if c == "s" else t._value
                                       for t, c in zip(tensors, kinds)], kinds, mesh)
        k = len(mesh._layout()[0].shape)
        outs = tuple(LocalTensor._of_stack(Storage(a), mesh, a.shape[k:], D.FROM_NP[a.dtype])
                     for a in (out if isinstance(out, (tuple, list)) else (out,)))
        _record(op, tensors, attrs, outs)
        return outs if isinstance(out, (tuple, list)) else outs[0]
    _spmd.RUNS["by_rank"] += 1
    n = max(len(t._locals) for t in ranked)
    per = []
    with no_grad():
        for r in range(n):
            locs = tuple(t._locals[r] if isinstance(t, LocalTensor) else t for t in tensors)
            per.append(_table.call_op(op, locs, attrs))
    if isinstance(per[0], tuple):
        result = tuple(LocalTensor._new([p[j] for p in per], mesh) for j in range(len(per[0])))
        _record(op, tensors, attrs, result)
        return result
    out = LocalTensor._new(per, mesh)
    _record(op, tensors, attrs, (out,))
    return out


class _Implicit(threading.local):
    n = 0  # > 0: a plain tensor among a DTensor op's inputs is replicated (implicit_replication)


IMPLICIT = _Implicit()


class _LossParallel(threading.local):
    n = 0  # > 0: inside parallel/loss.py's loss_parallel(), whose handler comes first
    handler = None


LOSS_PARALLEL = _LossParallel()


@contextlib.contextmanager
def counting(flag):
    """Inside, `flag.n` (a thread's IMPLICIT or LOSS_PARALLEL) counts one more."""
    flag.n += 1
    try:
        yield
    finally:
        flag.n -= 1


def dispatch(op, tensors, attrs):
    """call_op for an op with a DTensor or LocalTensor input (NOTE [DTensor's locals])."""
    dtensors = [t for t in tensors if isinstance(t, DTensor)]
    if not dtensors:
        return _rank_by_rank(op, tensors, attrs)
    mesh = dtensors[0]._spec.mesh
    if LOSS_PARALLEL.n:  # (its target may be a plain tensor: every rank's)
        out = LOSS_PARALLEL.handler(op, tensors, attrs)
        if out is not None:
            return out
    for t in tensors:
        if isinstance(t, DTensor):
            if t._spec.mesh != mesh:
                raise NotImplementedError(f"{op.name}: DTensor does not support cross-mesh "
                                          "operation yet!")
        elif isinstance(t, Tensor) and (t.ndim > 0 and t.numel() > 0 or
                                        isinstance(t, LocalTensor)):
            # (a 0-dim tensor is a wrapped scalar; an empty one an absent optional input)
            if IMPLICIT.n and not isinstance(t, LocalTensor):
                rep = (_R,) * mesh.ndim
                tensors = tuple(distribute_tensor(x, mesh, rep) if x is t else x
                                for x in tensors)
                continue
            raise RuntimeError(f"aten.{op.name}: got mixed torch.Tensor and DTensor, need to "
                               "convert all torch.Tensor to DTensor before calling "
                               "distributed operators!")
    rule = _RULES.get(op.name)
    if rule is None:
        raise NotImplementedError(f"eagergrad does not implement the operator aten.{op.name} "
                                  "on DTensors yet")
    dts, cands = rule(op, tensors, attrs, mesh)
    chosen = _choose(mesh, dts, cands)
    if chosen is None:
        raise NotImplementedError(f"eagergrad found no sharding strategy for aten.{op.name} "
                                  "on these placements")
    ins, out_pl, shape = chosen
    moved = [_relaid(t, pl) if isinstance(t, DTensor) and pl != t._spec.placements else t
             for t, pl in zip(tensors, ins)]
    if all(t._list is None for t in moved if isinstance(t, DTensor)):
        out = _stacked(op, tensors, attrs, moved, mesh, out_pl, shape)
        if out is not None:
            return out
    _spmd.RUNS["by_rank"] += 1
    outs = []
    with no_grad():
        for r in range(len(dtensors[0]._locals)):
            locs = tuple(t._locals[r] if isinstance(t, DTensor) else t for t in moved)
            o = _table.call_op(op, locs, _local_attrs(op, attrs, locs, tensors[0]._shape))
            if isinstance(o, tuple) != isinstance(out_pl, _Multi):
                raise NotImplementedError(f"eagergrad does not implement aten.{op.name} on "
                                          "DTensors yet (several outputs)")
            outs.append(o)
    if isinstance(out_pl, _Multi):
        result = tuple(DTensor._new([o[j] for o in outs], _Spec(mesh, pl), sh, outs[0][j].dtype)
                       for j, (pl, sh) in enumerate(zip(out_pl, shape)))
        _record(op, tensors, attrs, result)
        return result
    out = DTensor._new(outs, _Spec(mesh, out_pl), shape, outs[0].dtype)
    _record(op, tensors, attrs, (out,))
    return out
