"""torch.distributed.device_mesh over jax.sharding.Mesh.

A mesh's "ranks" are jax's global devices, numbered in jax.devices() order: with one
device per process (torchrun on GPUs) they are torch's ranks; a process driving several
devices (simulated CPU devices, a TPU host) owns several mesh positions.
"""
import math

import numpy as np

from . import distributed_c10d as c10d

_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu", "tpu": "tpu"}


class DeviceMesh:
    """An n-dimensional grid of devices with optional dimension names; `mesh["dp"]` is the
    sub-mesh of one dimension (through this process's position), `mesh._flatten()` one
    dimension of all.

    >>> from eagergrad.distributed.device_mesh import init_device_mesh
    >>> mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    >>> mesh, mesh["dp"].size()
    (DeviceMesh((dp=1), 'cpu', stride=(1,)), 1)
    >>> import eagergrad.distributed as dist; dist.destroy_process_group()
    """

    _walk_opaque = True  # (torch.compile's guard keys a mesh by identity, not its caches)

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, backend_override=None,
                 _init_backend=True):
        self.device_type = device_type
        self._ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh,
                                 dtype=np.int64)
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        self._flattened = {}  # name -> the mesh `_flatten(name)` made
        self._jax_mesh = None
        # a slice's mesh and its dims there: a DTensor on a slice keeps a local for every
        # position of that mesh (this process holds them all: distributed/tensor/_api.py)
        self._root, self._root_dims = None, None

    # ---- shape ------------------------------------------------------------------------
    @property
    def mesh(self):
        from ..creation import tensor
        from .. import _dtypes as D
        return tensor(self._ranks.tolist(), dtype=D.int32)

    @property
    def shape(self):
        return tuple(self._ranks.shape)

    @property
    def ndim(self):
        return self._ranks.ndim

    def size(self, mesh_dim=None):
        if mesh_dim is None:
            return int(self._ranks.size)
        return self.shape[self._dim(mesh_dim)]

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if self.mesh_dim_names is None or mesh_dim not in self.mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self.mesh_dim_names}")
            return self.mesh_dim_names.index(mesh_dim)
        return mesh_dim

    def _stride(self):
        strides, acc = [], 1
        for n in reversed(self.shape):
            strides.append(acc)
            acc *= n
        first = self._ranks.flat[0] if self._ranks.size else 0
        if self._ranks.size > 1:  # a sub-mesh: the strides in the parent's numbering
            out = []
            for d in range(self.ndim):
                idx = [0] * self.ndim
                if self.shape[d] > 1:
                    idx[d] = 1
                    out.append(int(self._ranks[tuple(idx)] - first))
                else:
                    out.append(strides[self.ndim - 1 - d])
            return tuple(out)
        return tuple(reversed(strides))

    def __repr__(self):
        if self.mesh_dim_names:
            dims = ", ".join(f"{n}={s}" for n, s in zip(self.mesh_dim_names, self.shape))
            shape = f"({dims})"
        else:
            shape = str(self.shape)
        return f"DeviceMesh({shape}, '{self.device_type}', stride={self._stride()})"

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self.device_type == other.device_type
                and self.mesh_dim_names == other.mesh_dim_names
                and np.array_equal(self._ranks, other._ranks))

    def __hash__(self):
        return hash((self.device_type, self.mesh_dim_names, self.shape,
                     tuple(self._ranks.flat)))

    # ---- slicing ----------------------------------------------------------------------
    def __getitem__(self, mesh_dim_names):
        if self.mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if names == self.mesh_dim_names:
            return self
        valid = list(self.mesh_dim_names) + list(self._flattened)
        if any(n not in valid for n in names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {valid}.")
        if len(names) == 1 and names[0] in self._flattened:
            return self._flattened[names[0]]
        dims = [self.mesh_dim_names.index(n) for n in names]
        if dims != sorted(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices "
                           f"should be in ascending order.")
        coord = self._own_coordinate()
        index = tuple(slice(None) if d in dims else coord[d] for d in range(self.ndim))
        sub = DeviceMesh(self.device_type, self._ranks[index], mesh_dim_names=names)
        root, root_dims = self._layout()
        sub._root, sub._root_dims = root, tuple(root_dims[d] for d in dims)
        return sub

    def _layout(self):
        """(the mesh whose positions this one's DTensors keep, this mesh's dims there)."""
        if self._root is None:
            return self, tuple(range(self.ndim))
        return self._root, self._root_dims

    def _flatten(self, mesh_dim_name=None):
        """One dimension of all this mesh's devices (named `a_b` after the dimensions)."""
        name = mesh_dim_name or "_".join(self.mesh_dim_names or ())
        flat = DeviceMesh(self.device_type, self._ranks.reshape(-1),
                          mesh_dim_names=(name,) if name else None)
        if name:
            self._flattened[name] = flat
        return flat

    # ---- this process's place -----------------------------------------------------------
    def _own_coordinate(self):
        """The coordinate of this process's first device in the mesh (its first position if
        it has none there)."""
        import jax
        mine = {_index(d) for d in jax.local_devices(backend=_PLATFORM[self.device_type])}
        for pos in np.ndindex(*self.shape):
            if int(self._ranks[pos]) in mine:
                return pos
        return None

    def get_coordinate(self):
        coord = self._own_coordinate()
        return None if coord is None else tuple(int(c) for c in coord)

    def get_local_rank(self, mesh_dim=None):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.")
            mesh_dim = 0
        return self.get_coordinate()[self._dim(mesh_dim)]

    def get_group(self, mesh_dim=None):
        """The process group of a mesh dimension: the processes owning its devices."""
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when "
                               "device_mesh.ndim > 1.")
        return c10d.GroupMember.WORLD

    def get_all_groups(self):
        return [self.get_group(d) for d in range(self.ndim)]

    # ---- jax ----------------------------------------------------------------------------
    @property
    def jax_mesh(self):
        """This mesh as a jax.sharding.Mesh (axes named by mesh_dim_names, or dim_i)."""
        if self._jax_mesh is None:
            import jax
            by_index = {_index(d): d for d in jax.devices(_PLATFORM[self.device_type])}
            devices = np.vectorize(by_index.__getitem__, otypes=[object])(self._ranks)
            names = self.mesh_dim_names or tuple(f"dim_{i}" for i in range(self.ndim))
            self._jax_mesh = jax.sharding.Mesh(devices, names)
        return self._jax_mesh


def _index(device):
    """A device's global rank: its position in jax.devices()."""
    import jax
    return _ORDER.setdefault(device.platform, {d: i for i, d in enumerate(
        jax.devices(device.platform))})[device]


_ORDER = {}


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of `mesh_shape` over jax's devices of `device_type` ("cpu", "cuda",
    "xla"), joining a one-process default group if none was started.

    >>> mesh = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    >>> mesh.shape, mesh["tp"].mesh_dim_names
    ((1, 1), ('tp',))
    >>> import eagergrad.distributed as dist; dist.destroy_process_group()
    """
    import jax
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated "
                               f"mesh_dim_name in mesh_dim_names {tuple(mesh_dim_names)}")
        if len(mesh_dim_names) != len(mesh_shape):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if device_type not in _PLATFORM:
        raise RuntimeError(f"init_device_mesh: device type {device_type!r} has no jax backend "
                           f"(cpu, cuda, xla)")
    if not c10d.is_initialized():
        c10d.init_process_group(world_size=1, rank=0)
    try:
        devices = jax.devices(_PLATFORM[device_type])
    except RuntimeError:
        raise RuntimeError(f"init_device_mesh: no {device_type} devices") from None
    n = math.prod(mesh_shape)
    if n > len(devices):
        raise RuntimeError(f"Mesh should not be bigger than default world size "
                           f"{len(devices)}, but found {n} ranks!")
    ranks = np.arange(n, dtype=np.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)
