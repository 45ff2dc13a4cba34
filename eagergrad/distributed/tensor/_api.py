"""DTensor: a tensor laid out over a DeviceMesh by one placement per mesh dimension.

NOTE [DTensor's locals]
A DTensor keeps one local tensor per mesh position (row-major over the mesh), as torch's
single-process simulation (`LocalTensorMode`) does: rank r's shard, replica or partial
term, all stacked into one array over the mesh's devices when they can be (NOTE [stacked
locals] in _spmd.py). The locals carry no autograd history. Autograd runs above them, as
in torch: an op on DTensors (`_dispatch.py`) records its ordinary node on the DTensors,
and the node's backward evaluates the op's formulas on DTensors (the path §5 of
docs/design.md takes for create_graph), so each backward op chooses its own sharding
strategy and a gradient's placements are the ones torch's backward gives (a replicated
weight's gradient is Partial until reduced). `redistribute`, `from_local` and `to_local`
are custom Functions with torch's backwards. A process holds every rank of the mesh, so
`to_local()` gives a LocalTensor (every rank's local; ops on it run rank by rank, as on
torch's LocalTensor) and `from_local` takes one (or a plain tensor: every rank's).
"""
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from ...engine.function import Function
from ...engine.grad_mode import no_grad
from ...ops._table import DT_CHAIN
from ...ops.shape import cat
from ..._storage import Storage, VersionCounter, contiguous_strides
from ..._mode import COMPILING
from ...device import device_of
from ...tensor import RankLocal, Tensor, _make
from ..device_mesh import DeviceMesh
from . import _spmd
from .placement_types import Placement, Replicate, Shard


class _Unsupported(NotImplementedError, AttributeError):
    """What a Tensor internal a DTensor lacks raises: loud, and still False for hasattr."""


class _NoStorage:
    generation = 0

    @property
    def array(self):
        raise _Unsupported("eagergrad does not implement this operation on a DTensor yet (it "
                           "would read the DTensor as one local array)")


_NO_STORAGE = _NoStorage()


def _chunks(n_rows, n):
    """torch.chunk's (start, size) of each of `n` ranks, empty ones included."""
    size = -(-n_rows // n) if n_rows else 0
    return [(min(r * size, n_rows), max(0, min(size, n_rows - r * size))) for r in range(n)]


def _groups(shape, m):
    """The positions of each group along dim `m` of a mesh of `shape`, in coordinate
    order."""
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    return np.moveaxis(idx, m, -1).reshape(-1, shape[m]).tolist()


def _positions(mesh):
    """How many locals a DTensor on `mesh` keeps: one per position of the mesh it was
    sliced from (a slice's DTensor is independent along the dims it leaves out)."""
    return int(np.prod(mesh._layout()[0].shape))


def _reduce(ts, op):
    out = ts[0]
    for t in ts[1:]:
        out = out + t if op in ("sum", "avg") else (
            out.maximum(t) if op == "max" else out.minimum(t))
    return out / len(ts) if op == "avg" else out


def _transform(locs, mesh, src, dst):
    """The locals of placements `dst` made from those of `src` on `mesh`: first every mesh
    dim that leaves Shard or Partial gathers or reduces (innermost first), then every mesh
    dim that becomes Shard takes its chunk, or Partial(sum) its n-th (torch's R -> P).
    Groups and coordinates are those of the mesh the locals are kept on."""
    locs = list(locs)
    root, dims = mesh._layout()
    shape = root.shape
    coords = [np.unravel_index(i, shape) for i in range(len(locs))]
    with no_grad():
        for m in reversed(range(len(dims))):
            a, b = src[m], dst[m]
            if a == b or a.is_replicate():
                continue
            if b.is_partial():
                raise RuntimeError(f"Can not redistribute from {a} to {b}, redistributing to "
                                   "Partial is for internal use only!")
            for g in _groups(shape, dims[m]):
                ts = [locs[i] for i in g]
                full = cat(ts, a.dim) if a.is_shard() else _reduce(ts, a.reduce_op)
                for i in g:
                    locs[i] = full.clone()
        for m in range(len(dims)):
            a, b = src[m], dst[m]
            if a == b or b.is_replicate():
                continue
            n = shape[dims[m]]
            for i, c in enumerate(coords):
                if b.is_shard():
                    start, size = _chunks(locs[i]._shape[b.dim], n)[c[dims[m]]]
                    locs[i] = locs[i].narrow(b.dim, start, size).clone()
                elif b.reduce_op == "sum":
                    locs[i] = locs[i] / n
    return locs


def _new_base(cls, shape, dtype):
    """A `cls` (DTensor, LocalTensor): a Tensor's fields as a new leaf's, its view chain
    the DTChain that sends its ops to the dispatch."""
    self = object.__new__(cls)
    self._vchain = DT_CHAIN
    self._version_counter = VersionCounter()
    self._shape, self.dtype = tuple(shape), dtype
    self._requires_grad = self._retains_grad = False
    self._wrapped = self._inference = False
    self._grad_fn = self._grad = self._accumulator_ref = self._base = None
    self._hooks = self._post_acc_hooks = self._fw = self._stride = None
    self._out_nr = self._offset = 0
    return self


def _write_locals(self, outs):
    """An in-place op's result: each rank's local written (its version bumped)."""
    if self._list is None:
        self._write_stack_of(outs)
        return
    for t, o in zip(self._locals, outs):
        t._write(o._value)
        t._version_counter.version += 1


class _Spec:
    __slots__ = ("mesh", "placements")

    def __init__(self, mesh, placements):
        self.mesh, self.placements = mesh, tuple(placements)

    def __eq__(self, other):
        return isinstance(other, _Spec) and (self.mesh, self.placements) == (
            other.mesh, other.placements)

    def __hash__(self):
        return hash((self.mesh, self.placements))

    def __repr__(self):
        return f"{self.placements} on {self.mesh}"


class _Ranks:
    """What DTensor and LocalTensor share: every rank's local, kept stacked (one array
    over the mesh's devices: `_storage.array`, `_list` None) when they can be, else as a
    list of tensors (`_list`; NOTE [stacked locals] in _spmd.py)."""

    _view_of = None

    @property
    def device(self):
        return device_of(self._storage.array) if self._list is None else \
            self._list[0].device

    def _guard_layout(self):
        """What a compiled call's guard keys on besides a Tensor's fields (_dynamo)."""
        if self._list is not None:
            raise NotImplementedError("eagergrad does not implement torch.compile over a "
                                      "DTensor or LocalTensor whose ranks' shapes differ")
        return (self.__class__.__name__, self._reborn_args(), self._view_of is None)

    @classmethod
    def _reborn(cls, array, meta, args):
        """A tensor a compiled call made, over its program's output `array`."""
        return cls._of_stack(Storage(array), args[0], *meta)

    @property
    def _stack(self):
        """The stacked locals (NOTE [stacked locals])."""
        if self._view_of is not None and self._view_of != self._version_counter.version:
            raise NotImplementedError(
                "eagergrad does not implement reading a view of a DTensor after an in-place "
                "op on the DTensor it views (torch's would alias it)")
        return self._storage.array

    def _write_stack(self, array):
        if self._view_of is not None:
            raise NotImplementedError("eagergrad does not implement in-place ops on a view "
                                      "of a DTensor")
        self._stack_tensor()._write(array)

    def _stack_tensor(self):
        """A plain tensor over the stacked locals, sharing their storage and version
        counter (an optimizer's pointwise update runs on it)."""
        t = _make(self._storage.array)
        t._storage, t._version_counter = self._storage, self._version_counter
        return t

    def _write_stack_of(self, locs):
        """Write every rank's local `locs` into the stacked locals."""
        st = _spmd.stack([t._value for t in locs], self._mesh, self._pad_layout())
        if st is None:
            raise NotImplementedError("eagergrad does not implement an in-place op that makes "
                                      "a DTensor's shards uneven")
        self._write_stack(st)

    @property
    def _locals(self):
        if self._list is not None:
            return self._list
        k, lay = len(self._mesh._layout()[0].shape), self._pad_layout()
        shapes = _spmd.logical(lay[0], self._mesh, lay[1]) if lay is not None and \
            _spmd.is_padded(lay[0], self._mesh, lay[1]) else None
        return [_make(a) for a in _spmd.unstack(self._stack, k, shapes)]


class DTensor(_Ranks, Tensor):
    """A tensor over a DeviceMesh: one placement (Shard, Replicate, Partial) per mesh dim.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor import distribute_tensor, Shard
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> distribute_tensor(torch.ones(4, 2), mesh, [Shard(0)]).placements
    (Shard(dim=0),)
    >>> torch.distributed.destroy_process_group()
    """

    __module__ = "eagergrad.distributed.tensor"

    @classmethod
    def _new(cls, locs, spec, shape, dtype):
        """A DTensor over every rank's locals `locs`: stacked when they can be (NOTE
        [stacked locals]), else the list."""
        st = _spmd.stack([t._value for t in locs], spec.mesh, (shape, spec.placements))
        if st is not None:
            return cls._of_stack(Storage(st), spec, shape, dtype)
        self = _new_base(cls, shape, dtype)
        self._storage = _NO_STORAGE
        self._spec, self._list = spec, list(locs)
        return self

    @classmethod
    def _of_stack(cls, storage, spec, shape, dtype, view_of=None):
        """A DTensor over the stacked locals in `storage`. A view (`view_of`: the
        DTensor it views, whose version counter it shares) is a copy: it must not be
        read after an in-place write to either (torch's would alias), nor be written."""
        self = _new_base(cls, shape, dtype)
        self._storage, self._spec, self._list = storage, spec, None
        if view_of is not None:
            self._version_counter = view_of._version_counter
            self._view_of = self._version_counter.version
        return self

    @property
    def _value(self):
        raise RankLocal("a DTensor is every rank's local, not one array")

    def __getattr__(self, name):  # (only Tensor internals a DTensor does not set)
        raise _Unsupported(f"eagergrad does not implement this operation on a DTensor yet (it "
                           f"reads Tensor.{name})")

    def _over_stack(self, t):
        """A DTensor of this one's layout over plain tensor `t` of its stacked shape (its
        storage and version counter)."""
        out = DTensor._of_stack(t._storage, self._spec, self._shape, t.dtype)
        out._version_counter = t._version_counter
        return out

    # ---- what it is ----------------------------------------------------------------
    @property
    def _mesh(self):
        return self._spec.mesh

    def _reborn_args(self):
        return (self._spec,)

    def _pad_layout(self):
        """(shape, placements): what the stacked locals' padding follows."""
        return self._shape, self._spec.placements

    @property
    def device_mesh(self):
        return self._spec.mesh

    @property
    def placements(self):
        return self._spec.placements


    def stride(self, dim=None):
        st = contiguous_strides(tuple(self._shape))
        return st if dim is None else st[dim]

    def is_contiguous(self, memory_format=None):
        return True

    def __repr__(self):
        return (f"DTensor(local_tensor={self._locals[0]!r}, device_mesh={self._spec.mesh!r}, "
                f"placements={self._spec.placements!r})")

    __str__ = __repr__

    def _assign(self, out):
        """An in-place op's result written into each rank's local (torch: the result's
        placements must be this DTensor's)."""
        if not isinstance(out, DTensor):
            raise RuntimeError("in-place op on a DTensor got a plain tensor result")
        if out.placements != self.placements:
            raise RuntimeError(f"{self.placements} != {out.placements}: an in-place op on a "
                               "DTensor must keep its placements")
        if self._list is None and out._list is None:
            self._write_stack(out._stack)
        else:
            _write_locals(self, out._locals)

    def _rank_values(self):
        return tuple(t._value for t in self._locals)

    def _with_locals(self, locs):
        """A new DTensor of this one's layout over the locals `locs`."""
        return DTensor._new(locs, self._spec, self._shape, locs[0].dtype)

    def _as_parameter(self, param_cls):
        """nn.Parameter(dtensor): the same locals, as a class that is both (torch's
        parameter of a tensor subclass)."""
        cls = _PARAMETER_CLASSES.get(param_cls)
        if cls is None:
            cls = _PARAMETER_CLASSES[param_cls] = type(
                "DTensor", (DTensor, param_cls), {"__module__": DTensor.__module__,
                                                  "__repr__": DTensor.__repr__,
                                                  "__str__": DTensor.__repr__})
        out = self._alias()
        out.__class__ = cls
        return out

    def _alias(self):
        """A new DTensor over the same locals and version counter (no history)."""
        if self._list is None:
            out = DTensor._of_stack(self._storage, self._spec, self._shape, self.dtype)
            out._view_of = self._view_of
        else:
            out = DTensor._new(self._list, self._spec, self._shape, self.dtype)
        out._version_counter = self._version_counter
        return out

    def _fresh_copy(self):
        if self._list is None:
            return DTensor._of_stack(Storage(self._stack), self._spec, self._shape, self.dtype)
        return DTensor._new([t._fresh_copy() for t in self._locals], self._spec, self._shape,
                            self.dtype)

    def detach(self):
        return self._alias()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """As Tensor.backward; the implicit gradient of a scalar is ones_like(self) (a
        Partial one is Replicate, as torch's ones_like)."""
        if gradient is None and int(np.prod(self._shape)) == 1:
            pl = tuple(Replicate() if p.is_partial() else p for p in self.placements)
            gradient = DTensor._new([t.new_ones(t._shape) for t in self._locals],
                                    _Spec(self._spec.mesh, pl), self._shape, self.dtype) \
                if self._list is not None else DTensor._of_stack(
                    Storage(jax.numpy.ones_like(self._stack)), _Spec(self._spec.mesh, pl),
                    self._shape, self.dtype)
        Tensor.backward(self, gradient, retain_graph, create_graph, inputs)

    # ---- layout --------------------------------------------------------------------
    def to_local(self, *, grad_placements=None):
        """Every rank's local: a LocalTensor (a plain tensor on a one-position mesh)."""
        return _ToLocal.apply(self, grad_placements)

    def full_tensor(self, *, grad_placements=None):
        """The logical value, gathered and reduced: one plain tensor (a LocalTensor on a
        slice of a mesh: every other slice's value)."""
        rep = (Replicate(),) * len(self._spec.placements)
        return _Full.apply(self.redistribute(self._spec.mesh, rep))

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
        return redistribute(self, dst)

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """A DTensor over every rank's local: a LocalTensor's, or `local_tensor` itself
        on every rank."""
        mesh = device_mesh or _default_mesh()
        pl = _normalize(placements or [Replicate()] * mesh.ndim, mesh, local_tensor.ndim)
        out_shape = list(local_tensor._shape)
        for m, p in enumerate(pl):
            if p.is_shard():
                out_shape[p.dim] *= mesh.shape[m]
        return _FromLocal.apply(local_tensor, _Spec(mesh, pl),
                                tuple(shape) if shape is not None else tuple(out_shape))


_PARAMETER_CLASSES = {}


def _agreed(arrays):
    """The one value of every rank's `arrays`, when they agree."""
    if any(isinstance(a, jax.core.Tracer) for a in arrays):
        raise RankLocal("eagergrad does not implement reading a LocalTensor as one tensor "
                        "while tracing (it cannot tell whether its ranks agree)")
    first = np.asarray(arrays[0])
    if any(not np.array_equal(first, np.asarray(a), equal_nan=True) for a in arrays[1:]):
        raise RankLocal(_DIFFER)
    return arrays[0]


_DIFFER = "eagergrad does not implement reading a LocalTensor whose ranks differ as one tensor"


class _LocalStorage:
    """A list of locals read as one array: rank 0's, when every rank holds the same
    values."""
    generation = 0

    def __init__(self, owner):
        self._owner = owner

    @property
    def array(self):
        return _agreed([t._value for t in self._owner._locals])


class LocalTensor(_Ranks, Tensor):
    """Every rank's value of a rank-local tensor, in a process that holds every rank of
    a mesh (as torch's LocalTensorMode): `DTensor.to_local()` gives one, and ops on it run
    rank by rank (a plain tensor among their inputs is every rank's), as one SPMD program
    when its locals are stacked. Read as one tensor (`item`, `tolist`) when all ranks
    agree."""

    __module__ = "eagergrad.distributed.tensor"

    @classmethod
    def _new(cls, locs, mesh=None):
        """(Uneven shards give ranks locals of different shapes: its `shape` is rank
        0's, where torch's LocalTensor has a symbolic size.)"""
        st = None if mesh is None else _spmd.stack([t._value for t in locs], mesh)
        if st is not None:
            return cls._of_stack(Storage(st), mesh, locs[0]._shape, locs[0].dtype)
        self = _new_base(cls, locs[0]._shape, locs[0].dtype)
        self._list, self._mesh = list(locs), mesh
        self._storage = _LocalStorage(self)
        return self

    @classmethod
    def _of_stack(cls, storage, mesh, shape, dtype):
        self = _new_base(cls, shape, dtype)
        self._storage, self._mesh, self._list = storage, mesh, None
        return self

    __getattr__ = DTensor.__getattr__

    def _reborn_args(self):
        return (self._mesh,)

    def _pad_layout(self):
        return None

    @property
    def _value(self):
        if self._list is not None:
            return self._storage.array
        st = self._stack
        if isinstance(st, jax.core.Tracer) and COMPILING.n and COMPILING.rec is not None:
            # (a compiled call: whether the ranks agree is a value the program reads)
            flat = st.reshape((-1,) + self._shape)
            agree = jnp.all((flat == flat[:1]) | (flat != flat) & (flat[:1] != flat[:1]))
            if not COMPILING.rec.read(agree, "a LocalTensor read as one tensor", check=True):
                raise RankLocal(_DIFFER)
            return flat[0]
        return _agreed(_spmd.unstack(st, len(self._mesh._layout()[0].shape)))

    def __repr__(self):
        ranks = ",\n".join(f"  {r}: {t!r}" for r, t in enumerate(self._locals))
        return f"LocalTensor(\n{ranks}\n)"

    __str__ = __repr__

    def _assign(self, out):
        if self._list is None and isinstance(out, LocalTensor) and out._list is None:
            self._write_stack(out._stack)
        else:
            _write_locals(self, _rank_locals(out, len(self._locals)))

    def _fresh_copy(self):
        if self._list is None:
            return LocalTensor._of_stack(Storage(self._stack), self._mesh, self._shape,
                                         self.dtype)
        return LocalTensor._new([t._fresh_copy() for t in self._locals], self._mesh)

    def _rank_values(self):
        return tuple(t._value for t in self._locals)

    def detach(self):
        if self._list is None:
            out = LocalTensor._of_stack(self._storage, self._mesh, self._shape, self.dtype)
        else:
            out = LocalTensor._new(self._list, self._mesh)
        out._version_counter = self._version_counter
        return out


def _local_of(x, storage=None):
    """Every rank's local of DTensor `x` as a LocalTensor (stacked: over `storage`, or
    a new one), or a plain tensor on a one-position mesh."""
    mesh = x._spec.mesh
    if x._list is None and not _spmd.is_padded(x._shape, mesh, x._spec.placements):
        st = x._stack
        local = st.shape[len(mesh._layout()[0].shape):]
        if _positions(mesh) == 1:
            return _make(st.reshape(local))
        return LocalTensor._of_stack(storage or Storage(st), mesh, local, x.dtype)
    locs = [t.detach() for t in x._locals]
    return locs[0] if len(locs) == 1 else LocalTensor._new(locs, mesh)


def _dtensor_of(t, spec, shape):
    """A DTensor of `spec` over every rank's local of `t` (a LocalTensor, or a plain
    tensor every rank holds), sharing nothing with it."""
    if isinstance(t, LocalTensor) and t._list is None and \
            _spmd.axes(t._mesh)[1] is _spmd.axes(spec.mesh)[1] and \
            not _spmd.is_padded(shape, spec.mesh, spec.placements):
        return DTensor._of_stack(Storage(t._stack), spec, shape, t.dtype)
    n = _positions(spec.mesh)
    return DTensor._new([x.detach().clone() for x in _rank_locals(t, n)], spec, shape,
                        t.dtype)


def _rank_locals(t, n):
    """Every rank's local of `t`: a LocalTensor's own, or `t` itself on every rank."""
    return list(t._locals) if isinstance(t, LocalTensor) else [t] * n


def _backward_placements(grad_pl, before):
    """torch's _redistribute_backward: the gradient goes back to the input's placements,
    except that a Partial input whose gradient is Shard or Replicate gets Replicate."""
    return tuple(Replicate() if b.is_partial() and not g.is_partial() else b
                 for g, b in zip(grad_pl, before))


def _relaid(x, dst):
    """x with placements `dst` (no autograd): stacked (NOTE [stacked locals]) when both
    layouts can be, else rank by rank."""
    spec = x._spec
    if x._list is None and _spmd.can_relayout(x._shape, spec.mesh, spec.placements, dst):
        st = _spmd.relayout(x._stack, spec.mesh, spec.placements, tuple(dst), x._shape)
        return DTensor._of_stack(Storage(st), _Spec(spec.mesh, dst), x._shape, x.dtype)
    locs = _transform(x._locals, spec.mesh, spec.placements, dst)
    return DTensor._new(locs, _Spec(spec.mesh, dst), x._shape, x.dtype)


class _Redistribute(Function):
    @staticmethod
    def forward(ctx, x, dst):
        ctx.before = x._spec.placements
        return _relaid(x, dst)

    @staticmethod
    def backward(ctx, g):
        return _relaid(g, _backward_placements(g.placements, ctx.before)), None


def redistribute(x, dst):
    """x with placements `dst`, differentiable (torch's Redistribute)."""
    if tuple(dst) == x._spec.placements:
        return x
    return _Redistribute.apply(x, tuple(dst))


class _ToLocal(Function):
    @staticmethod
    def forward(ctx, x, grad_placements):
        ctx.spec = _Spec(x._spec.mesh, grad_placements or x._spec.placements)
        ctx.shape = x._shape
        return _local_of(x, x._storage)

    @staticmethod
    def backward(ctx, g):
        return _dtensor_of(g, ctx.spec, ctx.shape), None


class _Full(Function):
    """A replicated DTensor as a plain tensor (rank 0's copy: every rank's is equal); on a
    mesh sliced from a larger one, a LocalTensor (the slices' copies may differ)."""

    @staticmethod
    def forward(ctx, x):
        ctx.spec, ctx.shape = x._spec, x._shape
        if x._spec.mesh._root is not None:
            return _local_of(x)
        if x._list is None:
            return _make(x._stack.reshape((-1,) + x._shape)[0])
        return x._locals[0]._fresh_copy()

    @staticmethod
    def backward(ctx, g):
        return _dtensor_of(g, ctx.spec, ctx.shape)


class _FromLocal(Function):
    @staticmethod
    def forward(ctx, t, spec, shape):
        ctx.spec = spec
        return _dtensor_of(t, spec, shape)

    @staticmethod
    def backward(ctx, g):
        return _local_of(_relaid(g, _backward_placements(g.placements, ctx.spec.placements))
                         ), None, None


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
    """Split (or replicate) `tensor` over `device_mesh` by `placements`: a leaf that
    requires grad as `tensor` does.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor import distribute_tensor, Replicate
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> distribute_tensor(torch.ones(2), mesh, [Replicate()]).full_tensor()
    tensor([1., 1.])
    >>> torch.distributed.destroy_process_group()
    """
    mesh = device_mesh or _default_mesh()
    if not isinstance(mesh, DeviceMesh):
        raise TypeError(f"device_mesh must be a DeviceMesh, got {type(mesh)}")
    pl = _normalize(placements or [Replicate()] * mesh.ndim, mesh, tensor.ndim)
    if any(p.is_partial() for p in pl):
        raise NotImplementedError("eagergrad does not implement distribute_tensor with "
                                  "Partial placements yet")
    n = _positions(mesh)
    with no_grad():
        rep = DTensor._new([tensor.detach()] * n, _Spec(mesh, (Replicate(),) * mesh.ndim),
                           tensor._shape, tensor.dtype)
        out = _relaid(rep, pl)
    if tensor.requires_grad:
        out.requires_grad_()
    return out


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """torch's distribute_module: `partition_fn(name, submodule, mesh)` lays out each
    submodule's parameters (what it leaves becomes Replicate DTensors), `input_fn(module,
    inputs, mesh)` and `output_fn(module, outputs, mesh)` become forward (pre-)hooks."""
    mesh = device_mesh or _default_mesh()
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError("distribute_module should only be called once on a module, but it "
                           "has already been called on this module!")
    rep = [Replicate()] * mesh.ndim

    def replicate(m):
        for key, param in list(m._parameters.items()):
            if param is not None and not isinstance(param, DTensor):
                m.register_parameter(key, type(param)(
                    distribute_tensor(param.data, mesh, rep), param.requires_grad))
        for key, buf in list(m._buffers.items()):
            if buf is not None and not isinstance(buf, DTensor):
                m._buffers[key] = distribute_tensor(buf, mesh, rep)

    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        replicate(sub)
    for fn, kind in ((input_fn, "input_fn"), (output_fn, "output_fn")):
        if fn is None:
            continue
        n = len(inspect.signature(fn).parameters)
        if n != 3:
            raise ValueError(f"{kind} should take in 3 arguments, but got {n} arguments!")
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, mesh))
    module._distribute_module_applied = True
    return module
