"""torch.save / torch.load in torch's own file format, so checkpoints move both ways:
eagergrad reads what `torch.save` wrote (state dicts and containers of tensors) and
torch reads what `eagergrad.save` writes.

The format (torch >= 1.6): a zip archive `<name>/data.pkl` (a pickle whose tensors are
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` calls, storages
being persistent ids `('storage', torch.FloatStorage, key, 'cpu', numel)`),
`<name>/data/<key>` (each storage's raw little-endian bytes) and version records.
Tensors sharing a storage (a view and its base) are written with one storage, as torch
writes them; eagergrad loads each tensor as a copy of its own.

`load(..., weights_only=True)` (the default, as in torch 2.6+) unpickles only tensors,
dtypes, containers and numbers: never arbitrary code.
"""
import collections
import io
import os
import pickle
import re
import zipfile

import numpy as np

from . import _dtypes as D
from .creation import tensor as _tensor
from .size import Size
from .tensor import Tensor

__all__ = ["save", "load"]

_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
            "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
            "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
            "complex128": "ComplexDoubleStorage"}
_OF_STORAGE = {v: D.as_dtype(k) for k, v in _STORAGE.items()}
_DTYPE_NAMES = {d.name: d for d in D.ALL}


class _Global:
    """A torch global written into the pickle as GLOBAL module.name, without importing
    torch (pickle would import the module to check the object)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # (pickle's save_reduce wants a callable)
        raise TypeError(f"{self.module}.{self.name} is a placeholder for pickling")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_STORAGE_TYPES = {k: _Global("torch", v) for k, v in _STORAGE.items()}


class _StorageRef:
    """A tensor's storage, written as the persistent id torch's pickler gives it."""

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel


class _Pickler(pickle._Pickler):
    """pickle's Python pickler, writing tensors as torch does; the storages' data is
    collected in `storages` (id(Storage) -> (key, flat numpy array))."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _STORAGE_TYPES[obj.dtype.name], obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        from .nn.parameter import Parameter
        if isinstance(obj, Parameter):  # torch: the data as a plain tensor, inside
            return (_REBUILD_PARAMETER, (obj.detach(), obj.requires_grad,
                                         collections.OrderedDict()))
        st = obj._storage
        entry = self.storages.get(id(st))
        if entry is None:
            try:
                data = np.ascontiguousarray(np.asarray(st.array)).reshape(-1)
            except Exception as e:  # noqa: BLE001 - a jax tracer has no values
                raise RuntimeError("eagergrad.save: cannot save a tensor holding a jax "
                                   "tracer") from e
            entry = self.storages[id(st)] = (str(len(self.storages)), data)
        key, data = entry
        return (_REBUILD_TENSOR, (_StorageRef(key, obj.dtype, data.size),
                                  obj.storage_offset(), tuple(obj.shape), tuple(obj.stride()),
                                  obj.requires_grad, collections.OrderedDict()))

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)
            return
        super().save_global(obj, name)


_Pickler.dispatch[_Global] = _Pickler.save_global
_Pickler.dispatch[D.dtype] = lambda self, obj: self.save_global(_Global("torch", obj.name))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` (tensors, state dicts, containers, numbers) to a path or file object in
    torch's zip format, readable by torch.load and eagergrad.load.

    >>> import eagergrad as torch, io
    >>> buf = io.BytesIO()
    >>> torch.save({"w": torch.ones(2)}, buf)
    >>> torch.load(io.BytesIO(buf.getvalue()))["w"]
    tensor([1., 1.])
    """
    if pickle_module is not None or not _use_new_zipfile_serialization:
        raise NotImplementedError("eagergrad does not implement torch.save(pickle_module=..., "
                                  "_use_new_zipfile_serialization=False) yet")
    buf = io.BytesIO()
    p = _Pickler(buf)
    p.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    else:
        name = "archive"
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"),
               (".storage_alignment", b"64"), ("byteorder", b"little")]
    records += [(f"data/{key}", data.tobytes()) for key, data in p.storages.values()]
    records += [("version", b"3\n"), (".data/serialization_id", b"0" * 40)]
    opened = open(f, "wb") if isinstance(f, (str, os.PathLike)) else None
    try:
        with zipfile.ZipFile(opened or f, "w", zipfile.ZIP_STORED) as z:
            for rec, data in records:
                z.writestr(f"{name}/{rec}", data)
    finally:
        if opened is not None:
            opened.close()


# ---- load ---------------------------------------------------------------------------------
_WEIGHTS_ONLY_MSG = (
    "Weights only load failed. This file can still be loaded, to do so you have two "
    "options, \x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. "
    "\n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.\n\t(2) Alternatively, to load with "
    "`weights_only=True` please check the recommended steps in the following error message."
    "\n\tWeightsUnpickler error: Unsupported global: GLOBAL {} was not an allowed global by "
    "default.")


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    """A tensor laid out over its whole storage in order is a tensor of its own; any other
    layout (a view, a transpose) is made over the storage's values, shared by the tensors
    of that layout, with torch's strides and offset."""
    loaded, dtype = storage
    size, stride = tuple(size), tuple(stride)
    if storage_offset == 0 and stride == _contiguous(size) and \
            int(np.prod(size)) == loaded.flat.size:
        t = _tensor(loaded.flat.reshape(size), dtype=dtype)
    else:
        if loaded.base is None:
            loaded.base = _tensor(loaded.flat, dtype=dtype)
        t = loaded.base.as_strided(size, stride, storage_offset).detach()
    return t.requires_grad_() if requires_grad else t


def _contiguous(size):
    out, n = [], 1
    for s in reversed(size):
        out.append(n)
        n *= max(s, 1)
    return tuple(reversed(out))


class _LoadedStorage:
    def __init__(self, flat):
        self.flat, self.base = flat, None


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    if state:
        p.__dict__.update(state)
    return p


_SAFE = {("collections", "OrderedDict"): collections.OrderedDict,
         ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
         ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
         ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
         ("torch", "Size"): Size, ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
         ("builtins", "complex"): complex, ("builtins", "slice"): slice}


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, archive, prefix, weights_only):
        super().__init__(file)
        self.archive, self.prefix, self.weights_only = archive, prefix, weights_only
        self.loaded = {}

    def find_class(self, module, name):
        hit = _SAFE.get((module, name))
        if hit is not None:
            return hit
        if module == "torch" and name in _OF_STORAGE:
            return _OF_STORAGE[name]
        if module == "torch" and name in _DTYPE_NAMES:
            return _DTYPE_NAMES[name]
        if self.weights_only:
            raise pickle.UnpicklingError(_WEIGHTS_ONLY_MSG.format(f"{module}.{name}"))
        if module == "torch" or module.startswith("torch."):
            module = "eagergrad" + module[len("torch"):]
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, dtype, key, location, numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id kind {kind!r}")
        if key not in self.loaded:
            raw = self.archive.read(f"{self.prefix}data/{key}")
            np_dtype = np.dtype(dtype.np)
            self.loaded[key] = _LoadedStorage(np.frombuffer(raw, np_dtype, count=numel).copy())
        return self.loaded[key], dtype


_CORRUPT = ("PytorchStreamReader failed reading zip archive: failed finding central "
            "directory. This is an internal miniz error. If you are seeing this error, there "
            "is a high likelihood that your checkpoint file is corrupted. This can happen if "
            "the checkpoint was not saved properly, was transferred incorrectly, or the file "
            "was modified after saving.")
_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c


def _not_a_zip(source):
    """torch reads a file that is not a zip archive as its legacy format, whose first
    pickle is a magic number: the same read gives torch's errors for a foreign file."""
    source.seek(0)
    head = source.read(6)
    source.seek(0)
    if head.startswith(b"PK"):  # a zip archive, cut short
        raise RuntimeError(_CORRUPT)
    try:
        magic = _Unpickler(source, None, "", True).load()
    except EOFError:
        raise EOFError() from None  # (torch's weights-only unpickler says nothing more)
    except pickle.UnpicklingError as e:
        memo = re.match(r"Memo value not found at index (\d+)", str(e))
        if memo:
            raise KeyError(int(memo.group(1))) from None
        raise
    if magic != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    raise NotImplementedError("eagergrad does not implement torch.load of the legacy "
                              "(before torch 1.6) format yet")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load what torch.save or eagergrad.save wrote. weights_only (default True):
    tensors, dtypes, containers and numbers only, as torch 2.6+.

    >>> import eagergrad as torch, io
    >>> buf = io.BytesIO()
    >>> torch.save([torch.arange(3)], buf)
    >>> torch.load(io.BytesIO(buf.getvalue()))
    [tensor([0, 1, 2])]
    """
    if pickle_module is not None:
        raise NotImplementedError("eagergrad does not implement torch.load(pickle_module=...) "
                                  "yet")
    weights_only = True if weights_only is None else weights_only
    opened = open(f, "rb") if isinstance(f, (str, os.PathLike)) else None
    try:
        source = opened or f
        if not zipfile.is_zipfile(source):
            _not_a_zip(source)
        source.seek(0)
        try:
            archive = zipfile.ZipFile(source)
        except zipfile.BadZipFile as e:
            raise RuntimeError(_CORRUPT) from e
        with archive:
            pkl = [n for n in archive.namelist() if n.endswith("data.pkl")]
            if not pkl:
                raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file "
                                   "not found")
            prefix = pkl[0][: -len("data.pkl")]
            try:
                data = archive.read(pkl[0])
                return _Unpickler(io.BytesIO(data), archive, prefix, weights_only).load()
            except (zipfile.BadZipFile, KeyError, EOFError) as e:
                raise RuntimeError(f"PytorchStreamReader failed reading file: {e}") from e
    finally:
        if opened is not None:
            opened.close()
