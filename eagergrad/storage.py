"""torch.storage: a tensor's memory as torch shows it. `UntypedStorage` is its bytes,
`TypedStorage` (deprecated in torch, with its warning) reads them as elements of a dtype,
and the legacy `FloatStorage`, `LongStorage`, ... make TypedStorages of their dtype.

NOTE [storage objects]: an UntypedStorage stands for one `_storage.Storage` (the jax array
of a base tensor, shared by its views, detach() and .data; docs/design.md §3). Its bytes are
that array's elements in memory order (the base's strides: a column-major linalg result is
read column by column) followed by the elements a resize_ to fewer kept (`Storage.spare`);
a real or imaginary view of a complex tensor reads the complex storage. Writing through a
storage (`copy_`, `fill_`, `__setitem__`, a TypedStorage's) replaces the array with the
new bytes and moves the storage's generation, so every tensor over it sees the write; as
in torch, which writes through a tensor of its own, no version counter moves.
`t.untyped_storage()` of two tensors over one Storage is one Python object while a
reference to it lives (torch keeps one per storage). `data_ptr()` is a virtual address (the
memory is XLA's, which jax may move on every write): fixed for the life of the Storage,
`storage.data_ptr() + storage_offset() * element_size()` for a tensor, 0 for no bytes, and
different for storages alive at the same time, whose address ranges are at least 2 MiB
apart (derived from the Storage object's identity: eagergrad's Storage keeps no field for
it). Values are read on the host: never on jax tracers, and writes never inside a
torch.func transform.
"""
import collections
import copy
import operator
import sys
import warnings
import weakref
from typing import TypeVar

import jax
import numpy as np
from jax.core import Tracer

from . import _dtypes as D
from ._mode import CAPTURING, FUNC
from .device import NO_ACCELERATOR, _jax_devices, device as _device, device_of
from .tensor import Tensor

__all__ = ["TypedStorage", "UntypedStorage"]

HAS_NUMPY = True
T = TypeVar("T", bound="_StorageBase | TypedStorage")


class Storage:
    """torch.types.Storage: the protocol storages follow (torch.storage re-exports it)."""

    def __deepcopy__(self, memo):
        raise NotImplementedError

    def element_size(self):
        raise NotImplementedError

    def is_shared(self):
        raise NotImplementedError

    def share_memory_(self):
        raise NotImplementedError

    def nbytes(self):
        raise NotImplementedError

    def cpu(self):
        raise NotImplementedError

    def data_ptr(self):
        raise NotImplementedError


# ---- addresses, layout and bytes of a Storage ----------------------------------------------
def _address(st):
    """The virtual address of Storage `st` (NOTE [storage objects]): two live Storage
    objects are at least 56 bytes apart, so these are at least 3 << 20 apart, below 2**63."""
    return (id(st) >> 4) << 20


def _typename(obj):
    """CPython's tp_name of obj's type, as torch's messages print it ('int', 'numpy.int64',
    'Tensor')."""
    t = type(obj)
    if t.__flags__ & (1 << 9) or t.__module__ == "builtins":  # a class defined in Python
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _is_long(v):
    """torch's THPUtils_checkLong: an int that is not a bool, or a numpy integer."""
    return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, np.integer)


def _array_perm(t):
    """The dims of t's storage array from the outermost in memory (None: row-major), read
    from the strides of the tensor whose value the array is (t, or its base)."""
    from .ops.callbacks import _positions
    from .ops.resize import _memory_order
    st = t._storage
    if not st.array.size:
        return None
    holder = t if t._vchain is None else t._base
    if holder is not None and holder._storage is st and holder._vchain is None:
        if holder._stride is None:
            return None
        perm = _memory_order(holder._shape, holder._stride)
        if perm is None or holder._offset:
            raise NotImplementedError("eagergrad does not implement the storage of a tensor "
                                      "whose memory has gaps")
        return None if perm == sorted(perm) else tuple(perm)
    # a view whose base is not at hand (detach() or .data of a view, an inference view):
    # the array is row-major when the view's strides say the same as its chain does
    if isinstance(st.array, Tracer) or not t.numel():
        return None
    pos = _positions(t)
    want = np.full(t._shape, t._offset, np.int64)
    for d, (n, s) in enumerate(zip(t._shape, t.stride())):
        want += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (t.dim() - d - 1))
    if np.array_equal(pos, want):
        return None
    raise NotImplementedError("eagergrad does not implement the storage of this view: its "
                              "base's memory layout is unknown")


def _check_host(st, what, write=False):
    if isinstance(st.array, Tracer) or (write and CAPTURING.n and FUNC.capture is not None):
        raise NotImplementedError(f"eagergrad does not implement {what} on a traced storage "
                                  "(inside a torch.func transform or a jax trace)")


def _elements(st, perm):
    """The storage's elements in memory order: a new host array of the array's dtype."""
    a = np.asarray(st.array)
    if perm is not None:
        a = a.transpose(perm)
    mem = np.array(a, order="C").reshape(-1)
    spare = getattr(st, "spare", None)
    if spare is not None:
        mem = np.concatenate([mem, np.asarray(spare)])
    return mem


def _store(st, perm, raw):
    """Make the storage's memory `raw` (all its bytes, a writable uint8 array): every
    tensor over it reads the new values (a new array, the generation moved)."""
    a = st.array
    typed = raw.view(a.dtype)
    n = a.size
    if perm is None:
        arr = typed[:n].reshape(a.shape)
    else:
        inv = [perm.index(d) for d in range(len(perm))]
        arr = typed[:n].reshape([a.shape[d] for d in perm]).transpose(inv)
    dev = next(iter(a.devices()))
    st.array = jax.device_put(np.ascontiguousarray(arr), dev)
    if getattr(st, "spare", None) is not None:
        st.spare = jax.device_put(typed[n:].copy(), dev)
    st.generation += 1


def _new_storage(raw, device=None):
    """A new Storage holding bytes `raw` (uint8), on `device`."""
    from .creation import tensor
    return tensor(np.ascontiguousarray(raw, dtype=np.uint8), dtype=D.uint8,
                  device=device)._storage


_WRAPPERS = {}  # id(Storage) -> weakref to its UntypedStorage while that lives


def _wrapper_of(st, perm=None, tensor=None):
    """The UntypedStorage of Storage `st`: the one alive, else a new one (its layout read
    from `tensor`, or `perm`)."""
    key = id(st)
    ref = _WRAPPERS.get(key)
    w = ref() if ref is not None else None
    if w is not None and w._st is st:
        return w
    w = object.__new__(UntypedStorage)
    w._st, w._off, w._len = st, 0, None
    w._perm = _array_perm(tensor) if tensor is not None else perm

    def gone(r, key=key):
        if _WRAPPERS.get(key) is r:
            del _WRAPPERS[key]
    _WRAPPERS[key] = weakref.ref(w, gone)
    return w


# ---- torch._C.StorageBase and torch.storage._StorageBase ------------------------------------
def _invalid_args(args, kwargs):
    def name(v):
        if isinstance(v, D.dtype):
            return "torch.dtype"
        if isinstance(v, _device):
            return "torch.device"
        return _typename(v)
    got = ", ".join([name(a) for a in args] + [f"{k}={name(v)}" for k, v in kwargs.items()])
    return TypeError(
        f"torch.UntypedStorage() received an invalid combination of arguments - got ({got}), "
        "but expected one of:\n * (*, int allocator = None, torch.device device = None)\n"
        " * (int size, *, int allocator = None, torch.device device = None)\n"
        " * (object sequence, *, int allocator = None, torch.device device = None)\n")


def _alloc_error(n):
    return RuntimeError("[enforce fail at alloc_cpu.cpp:98] ((ptrdiff_t)nbytes) >= 0. "
                        "alloc_cpu() seems to have been called with negative number: "
                        f"{n % 2 ** 64}")


class StorageBase:
    """torch._C.StorageBase: the bytes of a storage (UntypedStorage is the class to use)."""

    is_sparse = False
    is_sparse_csr = False

    def __new__(cls, *args, **kwargs):
        allowed = {"device", "allocator"}
        if len(args) > 1 or set(kwargs) - allowed:
            raise _invalid_args(args, kwargs)
        if kwargs.get("allocator") is not None:
            raise NotImplementedError("eagergrad does not implement torch.UntypedStorage("
                                      "allocator=...)")
        device = kwargs.get("device")
        if not args:
            raw = np.zeros(0, np.uint8)
        elif _is_long(args[0]) or isinstance(args[0], Tensor):
            n = operator.index(args[0])
            if n < 0:
                raise _alloc_error(n)
            raw = np.zeros(n, np.uint8)  # (torch's bytes are uninitialized)
        else:
            seq = args[0]
            if isinstance(seq, bool) or not isinstance(
                    seq, (collections.abc.Sequence, bytes, bytearray)):
                raise RuntimeError(f"torch.UntypedStorage(): Expected a sequence type, but "
                                   f"got {_typename(seq)}")
            for v in seq:
                if not isinstance(v, int):
                    raise RuntimeError(
                        f"torch.UntypedStorage(): tried to construct a storage from a sequence "
                        f"({_typename(seq)}), but one of the items was of type {_typename(v)} "
                        "instead of int")
            raw = np.array([v % 256 for v in seq], np.uint8)
        self = object.__new__(cls)
        self._st, self._perm, self._off, self._len = _new_storage(raw, device), None, 0, None
        return self

    # -- the bytes -------------------------------------------------------------------------
    def _whole_nbytes(self):
        st = self._st
        spare = getattr(st, "spare", None)
        n = st.array.size + (0 if spare is None else spare.size)
        return n * st.array.dtype.itemsize

    def _bytes(self, what="reading a storage"):
        """This storage's bytes (a host uint8 array)."""
        _check_host(self._st, what)
        raw = _elements(self._st, self._perm).view(np.uint8)
        return raw if self._len is None else raw[self._off:self._off + self._len]

    def _put(self, start, values, what):
        """Write uint8 `values` at byte `start` of this storage."""
        _check_host(self._st, what, write=True)
        raw = _elements(self._st, self._perm).view(np.uint8)
        at = self._off + start
        raw[at:at + len(values)] = values
        _store(self._st, self._perm, raw)

    def nbytes(self):
        return self._whole_nbytes() if self._len is None else self._len

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    @property
    def device(self):
        return device_of(self._st.array)

    @property
    def _cdata(self):
        return id(self._st) if self._len is None else id(self)

    def data_ptr(self):
        if self._len is None:
            return _address(self._st) if self.nbytes() else 0
        return (_address(self._st) if self._whole_nbytes() else 0) + self._off

    def resizable(self):
        return self._len is None

    def is_shared(self):
        return False

    def __getitem__(self, idx):
        n = self.nbytes()
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            out = object.__new__(UntypedStorage)
            out._st, out._perm = self._st, self._perm
            out._off, out._len = self._off + start, max(stop - start, 0)
            return out
        if not _is_long(idx):
            raise TypeError(f"can't index a torch.UntypedStorage with {_typename(idx)}")
        i = int(idx)
        if i < 0:
            i += n
        if i < 0 or i >= n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return int(self._bytes()[i])

    def __setitem__(self, idx, value):
        if not isinstance(value, int):
            raise RuntimeError(f"can only set storage content with a int types, but got "
                               f"{_typename(value)} instead")
        n = self.nbytes()
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            if stop > start:
                self._put(start, np.full(stop - start, value % 256, np.uint8),
                          "UntypedStorage.__setitem__")
            return
        if not _is_long(idx):
            raise RuntimeError(f"can't index a torch.UntypedStorage with {_typename(idx)}")
        if not 0 <= idx < n:
            raise RuntimeError("out of bounds")
        self._put(int(idx), np.array([value % 256], np.uint8), "UntypedStorage.__setitem__")

    def fill_(self, value):
        if not isinstance(value, int):
            raise RuntimeError(f"fill_ expects int, but got {_typename(value)}")
        n = self.nbytes()
        if n:
            self._put(0, np.full(n, value % 256, np.uint8), "UntypedStorage.fill_")
        return self

    def copy_(self, src, non_blocking=None):
        if isinstance(src, TypedStorage):
            src = src._untyped_storage
        if not isinstance(src, StorageBase):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be torch.Storage, not "
                            f"{type(src).__name__}")
        if self.nbytes() != src.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src "
                               f"was {src.nbytes()} bytes")
        if self.nbytes():
            self._put(0, np.array(src._bytes("UntypedStorage.copy_")), "UntypedStorage.copy_")
        return self

    def new(self):
        return UntypedStorage(device=self.device)

    def resize_(self, size):
        """A new size in bytes. eagergrad: a size in whole elements of the storage's
        tensors, at least theirs; or any size for a storage no tensor holds."""
        if not _is_long(size):
            raise RuntimeError(f"resize_ expects an int, but got {_typename(size)}")
        size = int(size)
        if not self.resizable():
            raise RuntimeError("Trying to resize storage that is not resizable")
        if size < 0:
            raise _alloc_error(size)
        if size == self.nbytes():
            return self
        from .ops.inplace import REFCOUNT_EXACT
        st = self._st
        a = st.array
        _check_host(st, "UntypedStorage.resize_", write=True)
        item = a.dtype.itemsize
        raw = _elements(st, self._perm).view(np.uint8)
        grown = np.concatenate([raw, np.zeros(max(size - raw.size, 0), np.uint8)])[:size]
        if size % item == 0 and size // item >= a.size:
            spare = grown[a.size * item:].view(a.dtype)
            st.spare = jax.device_put(spare, next(iter(a.devices()))) if spare.size else None
        elif REFCOUNT_EXACT and sys.getrefcount(st) == 3:  # (self._st, st, the argument)
            st.array = _new_storage(grown).array
            st.spare = None
            self._perm = None
        else:
            raise NotImplementedError("eagergrad does not implement resizing the storage of a "
                                      "tensor below the tensor's elements or to a size that is "
                                      "not a whole number of them")
        st.generation += 1
        return self

    def _byteswap(self, elem_size):
        n = self.nbytes()
        if n % elem_size:
            raise RuntimeError(f"the length of data is not a multiple of {elem_size}")
        if elem_size > 1 and n:
            raw = self._bytes("UntypedStorage.byteswap")
            self._put(0, raw.reshape(-1, elem_size)[:, ::-1].reshape(-1),
                      "UntypedStorage.byteswap")

    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, dtype=None):
        """A new storage of `count` elements of `dtype` read from a bytes-like object at byte
        `offset` (in byte order 'little', 'big' or 'native'), as torch's."""
        count, offset = operator.index(count), operator.index(offset)
        if byte_order is not None and not isinstance(byte_order, str):
            raise TypeError(f"from_buffer() argument 2 must be str, not {_typename(byte_order)}")
        if dtype is None:
            raise RuntimeError("argument 'dtype' cannot be None")
        if not isinstance(dtype, D.dtype):
            raise RuntimeError("argument 'dtype' must be of type torch.dtype")
        independent = dtype in (D.uint8, D.int8)
        if not independent and byte_order is None:
            raise RuntimeError("function missing required argument 'byte_order' (pos 2)")
        swap = False
        if not independent:
            if byte_order not in ("native", "big", "little"):
                raise ValueError(f"invalid byte_order '{byte_order}' (expected 'big', "
                                 "'little', or 'native')")
            swap = byte_order != "native" and byte_order != sys.byteorder
        try:
            view = memoryview(buffer).cast("B")
        except TypeError:
            raise TypeError(f"a bytes-like object is required, not "
                            f"'{type(buffer).__name__}'") from None
        n, es = view.nbytes, dtype.itemsize
        if offset < 0 or offset > n:
            raise ValueError(f"offset must be non-negative and no greater than buffer length "
                             f"({offset}) , but got {n}")
        if count < 0:
            if (n - offset) % es:
                raise ValueError(f"buffer size ({n}) must be a multiple of element size ({es})")
            count = (n - offset) // es
        if offset + count * es > n:
            raise ValueError(f"buffer has only {n - offset} elements after offset {offset}, "
                             f"but specified a size of {count}")
        raw = np.frombuffer(view, np.uint8, count * es, offset).copy()
        part = es // 2 if dtype.is_complex else es
        if swap and part > 1:
            raw = raw.reshape(-1, part)[:, ::-1].reshape(-1)
        if dtype is D.bool_:
            raw = (raw != 0).astype(np.uint8)
        out = object.__new__(UntypedStorage)
        out._st, out._perm, out._off, out._len = _new_storage(raw), None, 0, None
        return out

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        raise NotImplementedError("eagergrad does not implement UntypedStorage.from_file: its "
                                  "storages are jax arrays, never a memory-mapped file")

    def __reduce__(self):
        raise NotImplementedError("eagergrad does not implement pickling or saving storages "
                                  "yet")


class _StorageBase:
    """torch.storage._StorageBase: the Python half of UntypedStorage's methods."""

    is_sparse = False
    is_sparse_csr = False

    def __init__(self, *args, **kwargs):
        pass

    def size(self):
        return self.nbytes()

    def type(self, dtype=None, non_blocking=False, **kwargs):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        if isinstance(dtype, str):
            dtype = _storage_class_named(dtype)
        if dtype is type(self):
            return self
        return dtype(self.size()).copy_(self, non_blocking)

    def cuda(self, device=None, non_blocking=False):
        """A copy of this storage on the GPU (itself if it is there)."""
        device2 = _device("cuda", device) if device else _device("cuda")
        return self.to(device=device2, non_blocking=non_blocking)

    def hpu(self, device=None, non_blocking=False):
        device2 = _device("hpu", device) if device else _device("hpu")
        return self.to(device=device2, non_blocking=non_blocking)

    def get_device(self):
        return self.device.index

    def __repr__(self):
        info = f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    def __iter__(self):
        return iter(self.tolist())

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        memo = memo.setdefault("torch", {})
        if self._cdata in memo:
            return memo[self._cdata]
        new_storage = self.clone()
        memo[self._cdata] = new_storage
        return new_storage

    def __sizeof__(self):
        return super().__sizeof__() + self.size()

    def clone(self):
        """A copy of this storage (new memory)."""
        return _bytes_storage(self._bytes("UntypedStorage.clone"), self.device)

    def tolist(self):
        """The bytes, as ints."""
        return self._bytes().tolist()

    def cpu(self):
        """This storage on the CPU: itself when it is there."""
        if self.device.type != "cpu":
            return _bytes_storage(self._bytes(), "cpu")
        return self

    def mps(self):
        raise NotImplementedError("eagergrad does not implement the mps device")

    def _to(self, dtype):
        if not isinstance(dtype, D.dtype):
            raise TypeError(f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        return _bytes_tensor(self).to(dtype)._typed_storage()

    def to(self, *, device, non_blocking=False):
        if not isinstance(device, _device):
            device = _device(device)
        return _move(self, device)

    def double(self):
        """Casts this storage to double type."""
        return self._to(D.float64)

    def float(self):
        """Casts this storage to float type."""
        return self._to(D.float32)

    def half(self):
        """Casts this storage to half type."""
        return self._to(D.float16)

    def long(self):
        """Casts this storage to long type."""
        return self._to(D.int64)

    def int(self):
        """Casts this storage to int type."""
        return self._to(D.int32)

    def short(self):
        """Casts this storage to short type."""
        return self._to(D.int16)

    def char(self):
        """Casts this storage to char type."""
        return self._to(D.int8)

    def byte(self):
        """Casts this storage to byte type."""
        return self._to(D.uint8)

    def bool(self):
        """Casts this storage to bool type."""
        return self._to(D.bool_)

    def bfloat16(self):
        """Casts this storage to bfloat16 type."""
        return self._to(D.bfloat16)

    def complex_double(self):
        """Casts this storage to complex double type."""
        return self._to(D.complex128)

    def complex_float(self):
        """Casts this storage to complex float type."""
        return self._to(D.complex64)

    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        if self.device.type != "cpu":
            raise TypeError(f"cannot pin '{self.type()}' only CPU memory can be pinned")
        if not _jax_devices("gpu"):
            raise RuntimeError(NO_ACCELERATOR)
        return self  # (as eagergrad's Tensor.pin_memory: jax has no pinned host memory)

    def share_memory_(self):
        raise NotImplementedError("eagergrad does not implement share_memory_: a storage is a "
                                  "jax array of this process, which other processes cannot "
                                  "share")

    def untyped(self):
        return self

    def byteswap(self, dtype):
        """Swap bytes in underlying data."""
        elem_size = dtype.itemsize
        if dtype.is_complex:
            elem_size = max(elem_size // 2, 1)
        self._byteswap(elem_size)


def _bytes_storage(raw, device=None):
    out = object.__new__(UntypedStorage)
    out._st, out._perm, out._off, out._len = _new_storage(raw, device), None, 0, None
    return out


def _bytes_tensor(s):
    """A new uint8 tensor of storage s's bytes (torch: `torch.tensor([], uint8).set_(s)`)."""
    from .creation import tensor
    return tensor(np.array(s._bytes()), dtype=D.uint8, device=s.device)


def _move(s, device):
    """torch._utils._to for a storage: itself on `device`, else a copy there."""
    if s.device == device:
        return s
    if device.type == "cpu":
        return _bytes_storage(s._bytes(), "cpu")
    if device.type == "cuda" and not _jax_devices("gpu"):
        if device.index is None:  # (torch.cuda.device(None) on a build without CUDA)
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        raise RuntimeError("PyTorch was compiled without CUDA support")
    if device.type in ("cuda", "xla"):
        return _bytes_storage(s._bytes(), device.available())
    raise AssertionError(f"{device.type.upper()} device module is not loaded")


class UntypedStorage(StorageBase, _StorageBase):
    """A tensor's memory as bytes (NOTE [storage objects]).

    >>> import eagergrad as torch
    >>> x = torch.tensor([1, 2], dtype=torch.int16)
    >>> s = x.untyped_storage()
    >>> s.nbytes(), s.tolist(), s is x[1:].untyped_storage()
    (4, [1, 0, 2, 0], True)
    >>> s[2] = 7
    >>> x
    tensor([1, 7], dtype=torch.int16)
    """

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_hpu(self):
        return self.device.type == "hpu"

    @property
    def filename(self):
        """None: no eagergrad storage is a memory-mapped file."""
        return None

    def share_memory_(self, *args, **kwargs):
        return _StorageBase.share_memory_(self)


def _storage_class_named(name):
    """The storage class a dotted name ('torch.FloatStorage') names."""
    parts = name.split(".")
    if parts[0] not in ("torch", "eagergrad"):
        raise ModuleNotFoundError(f"No module named '{parts[0]}'")
    space = {"UntypedStorage": UntypedStorage, "TypedStorage": TypedStorage, **_LEGACY}
    if parts[-1] not in space or len(parts) > 3 or (len(parts) == 3 and parts[1] != "storage"):
        raise AttributeError(f"module '{'.'.join(parts[:-1])}' has no attribute "
                             f"'{parts[-1]}'")
    return space[parts[-1]]


# ---- the TypedStorage deprecation warning ----------------------------------------------------
_always_warn_typed_storage_removal = False


def _get_always_warn_typed_storage_removal():
    return _always_warn_typed_storage_removal


def _set_always_warn_typed_storage_removal(always_warn):
    global _always_warn_typed_storage_removal
    if not isinstance(always_warn, bool):
        raise AssertionError(f"always_warn must be bool, got {type(always_warn).__name__}")
    _always_warn_typed_storage_removal = always_warn


def _warn_typed_storage_removal(stacklevel=2):
    """torch's deprecation warning for TypedStorage: once per process (unless
    _set_always_warn_typed_storage_removal(True)), at the caller of the public method."""
    if _get_always_warn_typed_storage_removal() or not _warn_typed_storage_removal.__dict__.get(
            "has_warned", False):
        message = (
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()")
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
        _warn_typed_storage_removal.__dict__["has_warned"] = True


def _reset_warn_typed_storage_removal():
    _warn_typed_storage_removal.__dict__["has_warned"] = False


# ---- TypedStorage -----------------------------------------------------------------------------
_STORAGE_NAMES = {D.float64: "DoubleStorage", D.float32: "FloatStorage",
                  D.float16: "HalfStorage", D.int64: "LongStorage", D.int32: "IntStorage",
                  D.int16: "ShortStorage", D.int8: "CharStorage", D.uint8: "ByteStorage",
                  D.bool_: "BoolStorage", D.bfloat16: "BFloat16Storage",
                  D.complex128: "ComplexDoubleStorage", D.complex64: "ComplexFloatStorage"}


def _dtype_to_storage_type_map():
    return dict(_STORAGE_NAMES)


def _storage_type_to_dtype_map():
    return {v: k for k, v in _STORAGE_NAMES.items()}


def _get_dtype_from_pickle_storage_type(pickle_storage_type):
    try:
        return _storage_type_to_dtype_map()[pickle_storage_type]
    except KeyError as e:
        raise KeyError(f'pickle storage type "{pickle_storage_type}" is not recognized') from e


def _get_storage_from_sequence(sequence, dtype, device):
    from .creation import tensor
    return tensor(sequence, dtype=dtype, device=device)._typed_storage()._untyped_storage


def _isint(x):
    return isinstance(x, (int, np.integer))


def _get_device_from_module(module):
    last_part = module.rsplit(".", 1)[-1]
    return last_part if last_part in ("cuda", "hpu") else "cpu"


class TypedStorage:
    """Deprecated (torch warns once): a storage's bytes read as elements of `dtype`.

    >>> import eagergrad as torch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = torch.tensor([1.5, 2.0]).storage()
    ...     s.dtype, s.tolist(), s.nbytes()
    (torch.float32, [1.5, 2.0], 8)
    """

    is_sparse = False

    @property
    def _dtype(self):
        return self.dtype

    @property
    def filename(self):
        return self._untyped_storage.filename

    def fill_(self, value):
        _warn_typed_storage_removal()
        self._setitem(slice(0, self._size()), value)
        return self

    def __new__(cls, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        if cls is _LegacyStorage:
            raise RuntimeError("Only child classes of _LegacyStorage can be instantiated")
        if cls is TypedStorage:
            return super().__new__(cls)
        arg_error_msg = (
            f"{_class_repr(cls)}.__new__ received an invalid combination of arguments. "
            "Expected one of:\n * no arguments\n * (int size)\n * (Sequence data)\n"
            " * (*, UntypedStorage wrap_storage)")
        if device is not None:
            raise RuntimeError(arg_error_msg + "\nKeyword argument 'device' cannot be specified")
        if dtype is not None:
            raise RuntimeError(arg_error_msg + "\nKeyword argument 'dtype' cannot be specified")
        if wrap_storage is None:
            if len(args) > 1:
                raise RuntimeError(arg_error_msg + "\nToo many positional arguments")
            if len(args) == 1 and not _isint(args[0]) and \
                    not isinstance(args[0], collections.abc.Sequence):
                raise TypeError(arg_error_msg + f"\nArgument type not recognized: "
                                f"{type(args[0])}")
            return TypedStorage(*args, dtype=cls._dtype,
                                device=_get_device_from_module(cls.__module__), _internal=True)
        if args:
            raise RuntimeError(arg_error_msg + "\nNo positional arguments should be given when "
                               "using 'wrap_storage'")
        if not isinstance(wrap_storage, UntypedStorage):
            raise TypeError(arg_error_msg + "\nArgument 'wrap_storage' must be UntypedStorage, "
                            f"but got {type(wrap_storage)}")
        cls_device = _get_device_from_module(cls.__module__)
        if wrap_storage.device.type != cls_device:
            raise RuntimeError(arg_error_msg + f"\nDevice of 'wrap_storage' must be "
                               f"{cls_device}, but got {wrap_storage.device.type}")
        return TypedStorage(*args, wrap_storage=wrap_storage, dtype=cls.dtype, _internal=True)

    def __init__(self, *args, device=None, dtype=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed_storage_removal()
        arg_error_msg = (
            "TypedStorage.__init__ received an invalid combination of arguments. Expected one "
            "of:\n * (*, torch.device device, torch.dtype dtype)\n"
            " * (int size, *, torch.device device, torch.dtype dtype)\n"
            " * (Sequence data, *, torch.device device, torch.dtype dtype)\n"
            " * (*, UntypedStorage wrap_storage, torch.dtype dtype)")
        if wrap_storage is not None:
            if args:
                raise RuntimeError(arg_error_msg + "\nNo positional arguments should be given "
                                   "when using 'wrap_storage'")
            if dtype is None:
                raise RuntimeError(arg_error_msg + "\nArgument 'dtype' must be specified")
            if not isinstance(dtype, D.dtype):
                raise TypeError(arg_error_msg + f"\nArgument 'dtype' must be torch.dtype, not "
                                f"{type(dtype)}")
            if device is not None:
                raise RuntimeError(arg_error_msg + "\nArgument 'device' should not be specified "
                                   "when 'wrap_storage' is given")
            self.dtype = dtype
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(arg_error_msg + "\nArgument 'wrap_storage' must be "
                                f"UntypedStorage, but got {type(wrap_storage)}")
            self._untyped_storage = wrap_storage
            return
        self.dtype = D.get_default_dtype() if dtype is None else dtype
        device = _device("cpu" if device is None else device)
        if not args:
            self._untyped_storage = UntypedStorage(device=device)
        elif len(args) == 1:
            if _isint(args[0]):
                self._untyped_storage = UntypedStorage(int(args[0]) * self._element_size(),
                                                       device=device)
            elif isinstance(args[0], collections.abc.Sequence):
                self._untyped_storage = _get_storage_from_sequence(args[0], self.dtype, device)
            else:
                raise TypeError(arg_error_msg + f"\nArgument type not recognized: "
                                f"{type(args[0])}")
        else:
            raise RuntimeError(arg_error_msg + "\nToo many positional arguments")

    @property
    def is_cuda(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device.type == "cuda"

    @property
    def is_hpu(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device.type == "hpu"

    def untyped(self):
        """Return the internal :class:`UntypedStorage`."""
        _warn_typed_storage_removal()
        return self._untyped_storage

    def _new_wrapped_storage(self, untyped_storage):
        if type(untyped_storage) is not UntypedStorage:
            raise AssertionError(f"expected UntypedStorage, got {type(untyped_storage).__name__}")
        if type(self) is TypedStorage:
            return TypedStorage(wrap_storage=untyped_storage, dtype=self.dtype, _internal=True)
        return type(self)(wrap_storage=untyped_storage)

    def __len__(self):
        _warn_typed_storage_removal()
        return self._size()

    def _maybe_wrap_index(self, idx, is_stop=False):
        if idx is None:
            return self._size() if is_stop else 0
        if type(idx) is not int:
            raise TypeError(f"can't index a {type(self)} with {type(idx)}")
        if is_stop:
            if idx > self._size() or idx < -self._size():
                raise IndexError(f"index {idx} out of range for storage of size {self.size()}")
            return idx if idx > 0 else idx % self._size()
        if idx >= self._size() or idx < -self._size():
            raise IndexError(f"index {idx} out of range for storage of size {self.size()}")
        return idx % self._size()

    # -- the elements (torch reads and writes them through a tensor set_ to this storage;
    # eagergrad through a tensor of their values, written back)
    def _values(self, what="reading a storage"):
        raw = self._untyped_storage._bytes(what)
        return np.array(raw[:self._size() * self._element_size()]).view(self.dtype.np)

    def _values_tensor(self):
        from .creation import tensor
        return tensor(self._values(), dtype=self.dtype, device=self._untyped_storage.device)

    def __setitem__(self, idx, value):
        _warn_typed_storage_removal()
        return self._setitem(idx, value)

    def _setitem(self, idx, value):
        if not isinstance(idx, (int, slice)):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if is_storage(value):
            raise RuntimeError(f"cannot set item with value type {type(value)}")
        tmp = self._values_tensor()
        tmp[idx] = value
        self._untyped_storage._put(0, np.asarray(tmp._value).view(np.uint8).reshape(-1),
                                   "TypedStorage.__setitem__")

    def __getitem__(self, idx):
        _warn_typed_storage_removal()
        return self._getitem(idx)

    def _getitem(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        return self._values()[self._maybe_wrap_index(idx)].item()

    def copy_(self, source, non_blocking=None):
        _warn_typed_storage_removal()
        if isinstance(source, TypedStorage):
            self._untyped_storage.copy_(source._untyped_storage, non_blocking)
        else:
            self._untyped_storage.copy_(source, non_blocking)
        return self

    def nbytes(self):
        _warn_typed_storage_removal()
        return self._nbytes()

    def _nbytes(self):
        return self._untyped_storage.nbytes()

    def type(self, dtype=None, non_blocking=False):
        _warn_typed_storage_removal()
        if dtype is None:
            legacy_class = self._get_legacy_storage_class()
            if legacy_class is not None:
                return "torch." + legacy_class.__name__
            return "torch.storage." + type(self).__name__
        return self._untyped_storage.type(dtype, non_blocking)

    def cuda(self, device=None, non_blocking=False):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cuda(device, non_blocking))

    def hpu(self, device=None, non_blocking=False):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.hpu(device, non_blocking))

    def to(self, *, device, non_blocking=False):
        _warn_typed_storage_removal()
        if not isinstance(device, _device):
            device = _device(device)
        return self._new_wrapped_storage(
            self._untyped_storage.to(device=device, non_blocking=non_blocking))

    def element_size(self):
        _warn_typed_storage_removal()
        return self._element_size()

    def _element_size(self):
        return self.dtype.itemsize

    def get_device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.get_device()

    def __str__(self):
        _warn_typed_storage_removal()
        info = (f"[torch.storage.{type(self).__qualname__}(dtype={self.dtype}, "
                f"device={self.device}) of size {len(self)}]")
        return " " + "\n ".join(str(v) for v in self._values().tolist()) + "\n" + info

    def __repr__(self):
        _warn_typed_storage_removal()
        return str(self)

    def __iter__(self):
        _warn_typed_storage_removal()
        return iter(self._values().tolist())

    def __copy__(self):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(copy.copy(self._untyped_storage))

    def __deepcopy__(self, memo):
        _warn_typed_storage_removal()
        return self._deepcopy(memo)

    def _deepcopy(self, memo):
        return self._new_wrapped_storage(copy.deepcopy(self._untyped_storage, memo))

    def __sizeof__(self):
        _warn_typed_storage_removal()
        return super().__sizeof__() + self.nbytes()

    def clone(self):
        """Return a copy of this storage."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.clone())

    def tolist(self):
        """Return a list containing the elements of this storage."""
        _warn_typed_storage_removal()
        return self._values().tolist()

    def cpu(self):
        """Return a CPU copy of this storage if it's not already on the CPU."""
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.cpu())

    def is_pinned(self, device=None):
        _warn_typed_storage_removal()
        return self._untyped_storage.is_pinned(device)

    def pin_memory(self, device=None):
        _warn_typed_storage_removal()
        return self._new_wrapped_storage(self._untyped_storage.pin_memory(device=device))

    def share_memory_(self):
        _warn_typed_storage_removal()
        return self._share_memory_()

    def _share_memory_(self):
        self._untyped_storage.share_memory_()
        return self

    @property
    def _cdata(self):
        return self._untyped_storage._cdata

    @property
    def device(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.device

    def size(self):
        _warn_typed_storage_removal()
        return self._size()

    def _size(self):
        return self._untyped_storage.nbytes() // self._element_size()

    def pickle_storage_type(self):
        _warn_typed_storage_removal()
        return self._pickle_storage_type()

    def _pickle_storage_type(self):
        try:
            return _dtype_to_storage_type_map()[self.dtype]
        except KeyError as e:
            raise KeyError(f"dtype {self.dtype} is not recognized") from e

    def __reduce__(self):
        raise NotImplementedError("eagergrad does not implement pickling or saving storages "
                                  "yet")

    def data_ptr(self):
        _warn_typed_storage_removal()
        return self._data_ptr()

    def _data_ptr(self):
        return self._untyped_storage.data_ptr()

    def resizable(self):
        _warn_typed_storage_removal()
        return self._untyped_storage.resizable()

    def resize_(self, size):
        _warn_typed_storage_removal()
        self._resize_(size)

    def _resize_(self, size):
        self._untyped_storage.resize_(size * self._element_size())

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        _warn_typed_storage_removal()
        return cls._from_buffer(*args, **kwargs)

    @classmethod
    def _from_buffer(cls, *args, dtype=None, device=None, **kwargs):
        if cls is TypedStorage:
            dtype = D.get_default_dtype() if dtype is None else dtype
            device = _device("cpu" if device is None else device)
            if device.type != "cpu":
                raise RuntimeError(f"TypedStorage.from_buffer: Not available for device "
                                   f"{device.type}")
            untyped_storage = UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs)
        else:
            if dtype is not None or len(args) == 5:
                raise RuntimeError("from_buffer: 'dtype' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            if device is not None:
                raise RuntimeError("from_buffer: 'device' can only be specified in "
                                   "UntypedStorage.from_buffer and TypedStorage.from_buffer")
            dtype = cls._dtype
            untyped_storage = UntypedStorage.from_buffer(*args, dtype=dtype, **kwargs)
        return TypedStorage(wrap_storage=untyped_storage, dtype=dtype, _internal=True)

    def _to(self, dtype):
        if not isinstance(dtype, D.dtype):
            raise TypeError(f"Argument 'dtype' must be torch.dtype, not {type(dtype)}")
        return self._values_tensor().to(dtype)._typed_storage()

    def double(self):
        """Casts this storage to double type."""
        _warn_typed_storage_removal()
        return self._to(D.float64)

    def float(self):
        """Casts this storage to float type."""
        _warn_typed_storage_removal()
        return self._to(D.float32)

    def half(self):
        """Casts this storage to half type."""
        _warn_typed_storage_removal()
        return self._to(D.float16)

    def long(self):
        """Casts this storage to long type."""
        _warn_typed_storage_removal()
        return self._to(D.int64)

    def int(self):
        """Casts this storage to int type."""
        _warn_typed_storage_removal()
        return self._to(D.int32)

    def short(self):
        """Casts this storage to short type."""
        _warn_typed_storage_removal()
        return self._to(D.int16)

    def char(self):
        """Casts this storage to char type."""
        _warn_typed_storage_removal()
        return self._to(D.int8)

    def byte(self):
        """Casts this storage to byte type."""
        _warn_typed_storage_removal()
        return self._to(D.uint8)

    def bool(self):
        """Casts this storage to bool type."""
        _warn_typed_storage_removal()
        return self._to(D.bool_)

    def bfloat16(self):
        """Casts this storage to bfloat16 type."""
        _warn_typed_storage_removal()
        return self._to(D.bfloat16)

    def complex_double(self):
        """Casts this storage to complex double type."""
        _warn_typed_storage_removal()
        return self._to(D.complex128)

    def complex_float(self):
        """Casts this storage to complex float type."""
        _warn_typed_storage_removal()
        return self._to(D.complex64)

    @classmethod
    def from_file(cls, filename, shared, size):
        _warn_typed_storage_removal()
        if cls is TypedStorage:
            raise RuntimeError("from_file can only be called on derived classes")
        return UntypedStorage.from_file(filename, shared, size * cls._dtype.itemsize)

    def is_shared(self):
        _warn_typed_storage_removal()
        return self._is_shared()

    def _is_shared(self):
        return self._untyped_storage.is_shared()

    def _get_legacy_storage_class(self):
        name = _STORAGE_NAMES.get(self.dtype)
        if name is None or self.device.type != "cpu":
            return None
        return _LEGACY[name]


def _class_repr(cls):
    return f"<class 'torch.{cls.__name__}'>" if cls.__name__ in _STORAGE_NAMES.values() else \
        repr(cls)


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance):
        if type(instance) is TypedStorage:
            cls_device = _get_device_from_module(cls.__module__)
            return cls_device == instance.device.type and cls.dtype == instance.dtype
        return False


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    pass


class _ClassProperty:
    """torch._utils.classproperty: a property read on the class."""

    def __init__(self, fget):
        self.fget = fget

    def __get__(self, instance, owner=None):
        return self.fget(owner if owner is not None else type(instance))


def _legacy_class(name, dt):
    def dtype(cls):
        _warn_typed_storage_removal(stacklevel=3)
        return dt
    cls = _LegacyStorageMeta(name, (_LegacyStorage,), {
        "dtype": _ClassProperty(dtype), "_dtype": _ClassProperty(lambda cls: dt),
        "__module__": "eagergrad", "__qualname__": name,
        "__doc__": f"Deprecated: `{name}(n)`, `{name}(data)` make a TypedStorage of {dt!r}."})
    return cls


_LEGACY = {name: _legacy_class(name, dt) for dt, name in _STORAGE_NAMES.items()}
BFloat16Storage = _LEGACY["BFloat16Storage"]
BoolStorage = _LEGACY["BoolStorage"]
ByteStorage = _LEGACY["ByteStorage"]
CharStorage = _LEGACY["CharStorage"]
ComplexDoubleStorage = _LEGACY["ComplexDoubleStorage"]
ComplexFloatStorage = _LEGACY["ComplexFloatStorage"]
DoubleStorage = _LEGACY["DoubleStorage"]
FloatStorage = _LEGACY["FloatStorage"]
HalfStorage = _LEGACY["HalfStorage"]
IntStorage = _LEGACY["IntStorage"]
LongStorage = _LEGACY["LongStorage"]
ShortStorage = _LEGACY["ShortStorage"]

_storage_classes = {UntypedStorage, TypedStorage, *_LEGACY.values()}


def is_storage(obj, /):
    """Whether obj is a storage object (an UntypedStorage or a TypedStorage).

    >>> import eagergrad as torch
    >>> torch.is_storage(torch.tensor([1, 2]).untyped_storage()), torch.is_storage([1])
    (True, False)
    """
    return type(obj) in _storage_classes


is_storage.__module__ = "eagergrad"


def _default_storage_class():
    """torch.Storage: the legacy storage class of the default dtype (FloatStorage unless
    set_default_dtype changed it)."""
    return _LEGACY[_STORAGE_NAMES[D.get_default_dtype()]]


# ---- the Tensor methods ------------------------------------------------------------------
def untyped_storage(self):
    """The tensor's memory (shared by its views) as an UntypedStorage."""
    return _wrapper_of(self._storage, tensor=self)


def storage(self):
    """Deprecated (torch warns once): the tensor's memory as a TypedStorage of its dtype."""
    _warn_typed_storage_removal(stacklevel=2)
    return self._typed_storage()


def _typed_storage(self):
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype, _internal=True)


def storage_type(self):
    """The legacy storage class of the tensor's dtype (torch.FloatStorage)."""
    _warn_typed_storage_removal()
    return self._typed_storage()._get_legacy_storage_class()


def data_ptr(self):
    """The address of the tensor's first element: its storage's data_ptr() plus
    storage_offset() * element_size(); 0 for a tensor without elements
    (NOTE [storage objects])."""
    if not self.numel():
        return 0
    return _address(self._storage) + self._offset * self.dtype.itemsize


def is_set_to(self, tensor):
    """Whether both tensors are the same memory: one storage, offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return (self._storage is tensor._storage and self._offset == tensor._offset and
            self._shape == tensor._shape and self.stride() == tensor.stride())


TENSOR_METHODS = {"untyped_storage": untyped_storage, "storage": storage,
                  "_typed_storage": _typed_storage, "storage_type": storage_type,
                  "data_ptr": data_ptr, "const_data_ptr": data_ptr, "is_set_to": is_set_to}


def _with_storage(getattr_):
    """The package's module __getattr__ with torch.Storage, which follows the default dtype."""
    def __getattr__(name):
        return _default_storage_class() if name == "Storage" else getattr_(name)
    return __getattr__
