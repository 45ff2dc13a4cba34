"""DTensor: a tensor laid out over a DeviceMesh by one placement per mesh dimension.

NOTE [DTensor's locals]
A DTensor keeps one local tensor per mesh position (row-major over the mesh), as torch's
single-process simulation (`LocalTensorMode`) does: rank r's shard, replica or partial
term. The locals are ordinary tensors: an op on DTensors is the op on each rank's locals
(`_dispatch.py`, with torch's sharding strategies), so autograd runs on the locals and a
rank's gradient is the local one. Communication (`redistribute`) is a custom Function
whose backward is torch's (the gradient goes back to the input's placements, Partial read
as Replicate), not the adjoint of the local copies. A gradient's placements are the
duals of the forward ones: Shard stays Shard, Partial becomes Replicate, and Replicate
becomes Partial(sum) when the value fanned out into a sharded or partial result
(`_fan_out`), as a replicated weight's gradient is in torch until reduced.
"""
import numpy as np

from ... import _dtypes as D
from ...engine.engine import execute
from ...engine.function import Function
from ...engine.grad_mode import no_grad
from ...ops.shape import cat
from ...tensor import Tensor
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard


class _DTChain(tuple):
    """The `_vchain` of a DTensor: not None, so call_op hands it to `_call_views`, which
    dispatches it (ops/_table.py)."""


DT_CHAIN = _DTChain()


class _Unsupported(NotImplementedError, AttributeError):
    """What a Tensor internal a DTensor lacks raises: loud, and still False for hasattr."""


class _NoStorage:
    @property
    def array(self):
        raise _Unsupported("eagergrad does not implement this operation on a DTensor yet (it "
                           "would read the DTensor as one local array)")

    generation = 0


_NO_STORAGE = _NoStorage()


def _chunks(n_rows, n):
    """torch.chunk's (start, size) of each of `n` ranks, empty ones included."""
    size = -(-n_rows // n) if n_rows else 0
    return [(min(r * size, n_rows), max(0, min(size, n_rows - r * size))) for r in range(n)]


def _groups(shape, m):
    """The mesh positions of each group along mesh dimension `m`, in coordinate order."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    return np.moveaxis(idx, m, -1).reshape(-1, shape[m]).tolist()


def _coords(shape):
    return [np.unravel_index(i, shape) for i in range(int(np.prod(shape)))]


def _reduce(ts, op):
    out = ts[0]
    for t in ts[1:]:
        out = out + t if op in ("sum", "avg") else (
            out.maximum(t) if op == "max" else out.minimum(t))
    return out / len(ts) if op == "avg" else out


def _shard(t, n, d, c):
    start, size = _chunks(t._shape[d], n)[c]
    return t.narrow(d, start, size).clone()


def _transform(locs, shape, src, dst):
    """The locals of placements `dst` from those of `src` (no autograd: the caller's)."""
    locs = list(locs)
    coords = _coords(shape)
    for m in reversed(range(len(shape))):  # first everything that leaves a mesh dim to R
        a, b = src[m], dst[m]
        if a == b or a.is_replicate():
            continue
        if b.is_partial():
            raise RuntimeError(f"Can not redistribute from {a} to {b}, redistributing to "
                               "Partial is for internal use only!")
        for g in _groups(shape, m):
            if a.is_shard():
                full = cat([locs[i] for i in g], a.dim)
            else:
                full = _reduce([locs[i] for i in g], a.reduce_op)
            for i in g:
                locs[i] = full.clone()
    for m in range(len(shape)):
        a, b = src[m], dst[m]
        if a == b or b.is_replicate():
            continue
        for i, c in enumerate(coords):
            if b.is_shard():
                locs[i] = _shard(locs[i], shape[m], b.dim, c[m])
            elif b.reduce_op == "sum":  # R -> P(sum): each rank one n-th (torch's)
                locs[i] = locs[i] / shape[m]
    return locs


def _grad_placements(placements):
    return tuple(Replicate() if p.is_partial() else p for p in placements)


class _Redistribute(Function):
    @staticmethod
    def forward(ctx, spec, dst, *locs):
        ctx.spec, ctx.dst = spec, dst
        return tuple(_transform(locs, spec.mesh.shape, spec.placements, dst))

    @staticmethod
    def backward(ctx, *grads):
        out = ctx.out  # the DTensor made: its gradient's placements (fan-out read)
        src = out._grad_placements_now()
        back = _grad_placements(ctx.spec.placements)
        zs = [g if g is not None else _zeros_local(out, i) for i, g in enumerate(grads)]
        return (None, None, *_transform(zs, ctx.spec.mesh.shape, src, back))


def _zeros_local(dt, i):
    loc = dt._locals[i]
    return loc.new_zeros(loc._shape)


class _Spec:
    __slots__ = ("mesh", "placements")

    def __init__(self, mesh, placements):
        self.mesh, self.placements = mesh, tuple(placements)


class DTensor(Tensor):
    """A tensor over a DeviceMesh: one placement (Shard, Replicate, Partial) per mesh dim.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor import distribute_tensor, Shard
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> distribute_tensor(torch.ones(4, 2), mesh, [Shard(0)]).placements
    (Shard(dim=0),)
    """

    __module__ = "eagergrad.distributed.tensor"

    @classmethod
    def _new(cls, locs, spec, shape, dtype):
        self = object.__new__(cls)
        self._vchain = DT_CHAIN
        self._storage = _NO_STORAGE
        self._shape = tuple(shape)
        self.dtype = dtype
        self._base = None
        self._wrapped = self._inference = self._retains_grad = False
        self._fw = self._hooks = self._post_acc_hooks = None
        self._locals = list(locs)
        self._spec = spec
        self._fan = [False] * len(spec.placements)  # NOTE [DTensor's locals]
        self._rsrc = [[] for _ in spec.placements]
        return self

    def __getattr__(self, name):  # (only for Tensor internals a DTensor does not set)
        raise _Unsupported(f"eagergrad does not implement this operation on a DTensor yet (it "
                           f"reads Tensor.{name})")

    # ---- what it is ----------------------------------------------------------------
    @property
    def device_mesh(self):
        return self._spec.mesh

    @property
    def placements(self):
        return self._spec.placements

    @property
    def device(self):
        return self._locals[0].device

    def stride(self, dim=None):
        st, acc = [], 1
        for s in reversed(self._shape):
            st.append(acc)
            acc *= max(s, 1)
        st = tuple(reversed(st))
        return st if dim is None else st[dim]

    def is_contiguous(self, memory_format=None):
        return True

    def __repr__(self):
        return (f"DTensor(local_tensor={self._locals[0]!r}, device_mesh={self._spec.mesh!r}, "
                f"placements={self._spec.placements!r})")

    # ---- autograd ------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._locals[0].requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        for t in self._locals:
            t.requires_grad_(requires_grad)
        return self

    @property
    def _requires_grad(self):
        return self._locals[0]._requires_grad

    @property
    def grad_fn(self):
        return self._locals[0].grad_fn

    @property
    def is_leaf(self):
        return self._locals[0].is_leaf

    def _grad_placements_now(self):
        return tuple(Partial() if p.is_replicate() and self._fan[m] else
                     (Replicate() if p.is_partial() else p)
                     for m, p in enumerate(self._spec.placements))

    @property
    def grad(self):
        gs = [t.grad for t in self._locals]
        if all(g is None for g in gs):
            return None
        gs = [g if g is not None else _zeros_local(self, i) for i, g in enumerate(gs)]
        return DTensor._new(gs, _Spec(self._spec.mesh, self._grad_placements_now()),
                            self._shape, gs[0].dtype)

    @grad.setter
    def grad(self, value):
        if value is None:
            for t in self._locals:
                t.grad = None
            return
        value = value.redistribute(self._spec.mesh, self._grad_placements_now())
        for t, g in zip(self._locals, value._locals):
            t.grad = g

    def detach(self):
        return DTensor._new([t.detach() for t in self._locals], self._spec, self._shape,
                            self.dtype)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if inputs is not None:
            raise NotImplementedError("eagergrad does not implement DTensor.backward(inputs=) "
                                      "yet")
        if gradient is None:
            if int(np.prod(self._shape)) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seeds = [t.new_ones(t._shape) for t in self._locals]
        else:
            g = gradient.redistribute(self._spec.mesh, _grad_placements(self.placements))
            seeds = g._locals
        if not self._locals[0].requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have "
                               "a grad_fn")
        edges = [t._edge() for t in self._locals]
        execute(edges, seeds, create_graph if retain_graph is None else retain_graph,
                create_graph)

    # ---- layout --------------------------------------------------------------------
    def to_local(self, *, grad_placements=None):
        """This rank's local tensor (rank 0's in a process that holds every rank)."""
        return self._locals[0]

    def full_tensor(self, *, grad_placements=None):
        """The logical value, gathered and reduced."""
        rep = (Replicate(),) * len(self._spec.placements)
        return self.redistribute(self._spec.mesh, rep).to_local()

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        mesh = device_mesh or self._spec.mesh
        if mesh != self._spec.mesh:
            raise NotImplementedError("eagergrad does not implement redistributing a DTensor "
                                      "to another mesh yet")
        dst = _normalize(placements, mesh, len(self._shape)) if placements is not None \
            else self._spec.placements
        for a, b in zip(self._spec.placements, dst):
            if b.is_partial() and a != b:
                raise RuntimeError(f"Can not redistribute from {a} to {b}, redistributing "
                                   "to Partial is for internal use only!")
        return _redistribute(self, dst)

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """A DTensor whose every rank's local is `local_tensor` (this process holds every
        rank of the mesh)."""
        mesh = device_mesh or _default_mesh()
        pl = _normalize(placements or [Replicate()] * mesh.ndim, mesh, local_tensor.ndim)
        out_shape = list(local_tensor._shape)
        for m, p in enumerate(pl):
            if p.is_shard():
                out_shape[p.dim] *= mesh.shape[m]
        if shape is not None:
            out_shape = list(shape)
        n = int(np.prod(mesh.shape))
        locs = _FromLocal.apply(_Spec(mesh, pl), n, local_tensor)
        out = DTensor._new(locs, _Spec(mesh, pl), out_shape, local_tensor.dtype)
        _FromLocal.last_out(locs, out)
        return out


class _FromLocal(Function):
    @staticmethod
    def forward(ctx, spec, n, t):
        ctx.spec = spec
        return tuple(t.clone() for _ in range(n))

    @staticmethod
    def backward(ctx, *grads):
        out = ctx.out
        if any(not p.is_replicate() for p in ctx.spec.placements):
            raise NotImplementedError(
                "eagergrad does not implement the gradient of DTensor.from_local with Shard or "
                "Partial placements in a process that holds every rank yet (each rank's local "
                "would be this one tensor)")
        zs = [g if g is not None else _zeros_local(out, i) for i, g in enumerate(grads)]
        rep = (Replicate(),) * len(ctx.spec.placements)
        zs = _transform(zs, ctx.spec.mesh.shape, out._grad_placements_now(), rep)
        return None, None, zs[0]

    @staticmethod
    def last_out(locs, out):
        fn = locs[0].grad_fn
        if fn is not None:
            fn.out = out


def _redistribute(x, dst):
    spec = x._spec
    if tuple(dst) == spec.placements:
        return x
    locs = _Redistribute.apply(spec, tuple(dst), *x._locals)
    out = DTensor._new(locs, _Spec(spec.mesh, dst), x._shape, x.dtype)
    fn = locs[0].grad_fn
    if fn is not None:
        fn.out = out
    return out


def _default_mesh():
    raise RuntimeError("No device mesh is currently active, please create a DeviceMesh first!")


def _normalize(placements, mesh, ndim):
    pl = list(placements)
    if len(pl) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found "
                         f"placements length: {len(pl)}, and device_mesh.ndim: {mesh.ndim}.")
    out = []
    for p in pl:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be a sequence of Placement, got {type(p)}")
        if p.is_shard() and p.dim < 0:
            p = Shard(p.dim + ndim)
        out.append(p)
    return tuple(out)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """Split (or replicate) `tensor` over `device_mesh` by `placements`; a leaf that
    requires grad as `tensor` does.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor import distribute_tensor, Replicate
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> distribute_tensor(torch.ones(2), mesh, [Replicate()]).full_tensor()
    tensor([1., 1.])
    """
    mesh = device_mesh or _default_mesh()
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"device_mesh must be a DeviceMesh, got {type(mesh)}")
    pl = _normalize(placements or [Replicate()] * mesh.ndim, mesh, tensor.ndim)
    for p in pl:
        if p.is_partial():
            raise NotImplementedError("eagergrad does not implement distribute_tensor with "
                                      "Partial placements yet")
    n = int(np.prod(mesh.shape))
    with no_grad():
        base = tensor.detach()
        locs = _transform([base] * n, mesh.shape, (Replicate(),) * mesh.ndim, pl)
        locs = [t if t is not base else t.clone() for t in locs]
    out = DTensor._new(locs, _Spec(mesh, pl), tensor._shape, tensor.dtype)
    if tensor.requires_grad:
        out.requires_grad_()
    return out


def _dtype_of(t):
    return t.dtype if isinstance(t, Tensor) else D.get_default_dtype()
