"""torch.save / torch.load in torch's own file format, so checkpoints move both ways:
eagergrad reads what `torch.save` wrote (state dicts and containers of tensors) and
torch reads what `eagergrad.save` writes.

The format (torch >= 1.6): a zip archive `<name>/data.pkl` (a pickle whose tensors are
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` calls, storages
being persistent ids `('storage', torch.FloatStorage, key, 'cpu', numel)`),
`<name>/data/<key>` (each storage's raw little-endian bytes) and version records.
Tensors sharing a storage (a view and its base) are written with one storage, as torch
writes them, and share it again after load: a write through one is seen by the others.

Damaged files are refused as torch refuses them (a bad version record, a storage record
of the wrong size or missing, a layout outside its storage, a cut archive or pickle), with
torch's exception types and key phrases, before anything is returned.

`load(..., weights_only=True)` (the default, as in torch 2.6+) unpickles only tensors,
dtypes, containers and numbers: never arbitrary code.
"""
import collections
import io
import os
import pickle
import re
import sys
import zipfile

import numpy as np

from . import _dtypes as D
from . import cuda
from .creation import tensor as _tensor
from .ops.shape import is_conj as _is_conj
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
            except Exception as e:  # a jax tracer has no values
                raise RuntimeError("eagergrad.save: cannot save a tensor holding a jax "
                                   "tracer") from e
            # a real/imag view of a complex storage writes it as its parts, as torch
            data = data.view(obj.dtype.np) if data.dtype != obj.dtype.np else data
            entry = self.storages[id(st)] = (str(len(self.storages)), data)
        key, data = entry
        if data.dtype != obj.dtype.np:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        args = (_StorageRef(key, obj.dtype, data.size), obj.storage_offset(), tuple(obj.shape),
                tuple(obj.stride()), obj.requires_grad, collections.OrderedDict())
        if obj._vchain is not None and _is_conj(obj):  # an odd number of conj views
            if obj.is_complex():
                args += ({"conj": True},)
            elif obj._offset % 2:  # the imaginary parts of a conjugate: negated
                args += ({"neg": True},)
        return (_REBUILD_TENSOR, args)

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
_WEIGHTS_ONLY_ERROR = (
    "Weights only load failed. In PyTorch 2.6, we changed the default value of the "
    "`weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` "
    "with `weights_only` set to `False` will likely succeed, but it can result in arbitrary "
    "code execution. Do it only if you got the file from a trusted source.\nPlease file an "
    "issue with the following so that we can make `weights_only=True` compatible with your "
    "use case: WeightsUnpickler error: ")
_MINIZ = (" This is an internal miniz error. If you are seeing this error, there is a high "
          "likelihood that your checkpoint file is corrupted. This can happen if the checkpoint "
          "was not saved properly, was transferred incorrectly, or the file was modified after "
          "saving.")
_CORRUPT = ("PytorchStreamReader failed reading zip archive: failed finding central "
            "directory." + _MINIZ)
_BAD_HEADER = ("PytorchStreamReader failed reading zip archive: invalid header or archive is "
               "corrupted." + _MINIZ)
_MIN_VERSION, _MAX_VERSION = 1, 10  # the file format versions torch 2.13 reads


class _LoadedStorage:
    """A storage record read from the archive: its values (flat), and the tensor the
    tensors over it are views of (`base`, made by the first of them)."""

    __slots__ = ("flat", "dtype", "base")

    def __init__(self, flat, dtype):
        self.flat, self.dtype, self.base = flat, dtype, None


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    """torch's _rebuild_tensor_v2: a tensor over a loaded storage. The tensors of one
    storage share it as in torch: the first that covers it in order is a plain tensor (the
    common case), every other one a view of it with torch's size, stride and offset. As in
    torch, they are leaves and not views of each other (no `_base`, a version counter each,
    at version 1)."""
    size, stride = _check_layout(storage, storage_offset, size, stride)
    base = storage.base
    if base is None and storage_offset == 0 and stride == _contiguous(size) and \
            _numel(size) == storage.flat.size:
        t = storage.base = _tensor(storage.flat.reshape(size), dtype=storage.dtype)
    else:
        if base is None:
            base = storage.base = _tensor(storage.flat, dtype=storage.dtype)
        t = base.detach().as_strided(size, stride, storage_offset).data
    if metadata and metadata.get("conj"):
        t = t.conj().data
    if metadata and metadata.get("neg"):  # (eagergrad has no negative views: a copy)
        t = t.neg()
    t._version_counter.version = 1  # (torch's set_ counts)
    return t.requires_grad_() if requires_grad else t


def _numel(size):
    n = 1
    for s in size:
        n *= s
    return n


def _contiguous(size):
    out, n = [], 1
    for s in reversed(size):
        out.append(n)
        n *= max(s, 1)
    return tuple(reversed(out))


def _check_layout(storage, offset, size, stride):
    """torch's checks (Tensor.set_) of a tensor's layout over its storage, in torch's
    order, with its exception types and key phrases."""
    def ints(v):
        return isinstance(v, (tuple, list)) and all(type(n) is int for n in v)
    if not isinstance(storage, _LoadedStorage) or type(offset) is not int or \
            not ints(size) or not ints(stride):
        got = ", ".join(type(v).__name__ for v in (offset, size, stride))
        raise TypeError(f"set_() received an invalid combination of arguments - got ({got}) "
                        "as (storage_offset, size, stride), but expected (int, tuple of ints, "
                        "tuple of ints) over a storage")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size) or _numel(size) >= 2 ** 63:
        raise RuntimeError(f"numel: integer multiplication overflow (sizes={list(size)})")
    if 0 in size:
        return size, stride
    # torch computes the extent in uint64: a negative stride over 2 or more elements wraps
    need = offset + 1 + sum(s * (n - 1) for n, s in zip(size, stride))
    if any(s < 0 and n > 1 for n, s in zip(size, stride)) or \
            need * storage.dtype.itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if need > storage.flat.size:
        raise RuntimeError(f"Trying to resize storage that is not resizable: sizes "
                           f"{list(size)}, strides {list(stride)} and storage offset {offset} "
                           f"need {need} elements, the storage has {storage.flat.size}")
    return size, stride


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
         ("builtins", "complex"): complex, ("builtins", "slice"): slice,
         ("torch", "UntypedStorage"): D.uint8}


# eagergrad.nn's module paths before it followed torch's file map (whole modules pickled
# with weights_only=False name them): classes now live in nn.modules.<torch's file>,
# functions in nn._functional.<family>
_FLAT_NN = {"eagergrad.nn." + m for m in (
    "activation", "batchnorm", "container", "conv", "distance", "dropout", "layers", "lazy",
    "linear", "loss", "module", "normalization", "padding", "pooling", "rnn", "sparse",
    "transformer", "upsampling")}


def _moved_nn(module, name):
    import importlib
    import pkgutil
    for pkg in ("eagergrad.nn.modules", "eagergrad.nn._functional"):
        for info in pkgutil.iter_modules(importlib.import_module(pkg).__path__):
            if info.name == "aten":  # (torch.<name> forms, never an old nn path's)
                continue
            obj = getattr(importlib.import_module(f"{pkg}.{info.name}"), name, None)
            if obj is not None:
                return obj
    raise AttributeError(f"Can't get attribute '{name}' on <module '{module}'>")


class _Unpickler(pickle.Unpickler):
    """Unpickles data.pkl; storages come from `reader` (None: a file that is not a zip
    archive, whose first pickle is only read for torch's errors)."""

    def __init__(self, file, reader=None, weights_only=True, map_location=None, swap=False):
        super().__init__(file)
        self.reader, self.weights_only = reader, weights_only
        self.map_location, self.swap = map_location, swap
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
        if module in _FLAT_NN or module.startswith("eagergrad.nn._functional_"):
            return _moved_nn(module, name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind = pid[0] if isinstance(pid, tuple) and pid else pid
        if self.reader is None or kind != "storage":
            if self.weights_only or self.reader is None:
                raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, "
                                             f"but got {kind!r}")
            raise AssertionError(f"Unknown typename for persistent_load, expected 'storage' "
                                 f"but got '{kind}'")
        dtype, key, location, numel = pid[1:]  # (torch's ValueError when there are more)
        loaded = self.loaded.get(key)
        if loaded is None:
            loaded = self.loaded[key] = self._storage(dtype, key, location, numel)
        return loaded

    def _storage(self, dtype, key, location, numel):
        """Storage record data/<key>: numel elements of dtype, checked as torch does."""
        if not isinstance(dtype, D.dtype):
            raise pickle.UnpicklingError(f"storage data/{key}: {dtype!r} is not a storage type")
        if not isinstance(numel, int) or numel < 0:
            raise TypeError(f"get_storage_from_record(): incompatible function arguments: "
                            f"storage data/{key} cannot hold {numel!r} elements")
        raw = self.reader.record(f"data/{key}")
        nbytes = numel * dtype.itemsize
        if len(raw) != nbytes:
            raise RuntimeError(f"record size ({len(raw)} bytes) does not match expected size "
                               f"({nbytes} bytes = {nbytes} elements * 1 bytes/element) for "
                               f"dtype Byte (storage data/{key}: {numel} elements of {dtype})")
        _check_location(location if not isinstance(location, bytes) else location.decode(),
                        self.map_location)
        flat = np.frombuffer(raw, np.dtype(dtype.np), count=numel)
        if self.swap and dtype.itemsize > 1:  # big-endian bytes, swapped per (real) element
            part = dtype.itemsize // (2 if dtype.is_complex else 1)
            flat = np.frombuffer(raw, f"u{part}").byteswap().view(np.dtype(dtype.np))
        return _LoadedStorage(flat.copy(), dtype)


def _check_location(location, map_location):
    """torch's default_restore_location for a storage saved on `location` (with no
    map_location): cpu, or cuda when there is one."""
    if map_location is not None or location == "cpu":
        return
    if not isinstance(location, str) or not location.startswith("cuda"):
        raise RuntimeError(f"don't know how to restore data location of "
                           f"torch.storage.UntypedStorage (tagged with {location})")
    if not cuda.is_available():
        raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                           "torch.cuda.is_available() is False. If you are running on a "
                           "CPU-only machine, please use torch.load with "
                           "map_location=torch.device('cpu') to map your storages to the CPU.")


class _Reader:
    """A zip archive read as torch's PyTorchStreamReader reads it: the records in the
    folder of its first entry, a version record torch reads, and stored records read
    without a CRC check (torch checks none, and torch.save writes none after
    torch.serialization.set_crc32_options(False))."""

    def __init__(self, source):
        self.source = source
        if not zipfile.is_zipfile(source):
            raise RuntimeError(_CORRUPT)
        source.seek(0)
        try:
            self.zip = zipfile.ZipFile(source)
            names = self.zip.namelist()
        except Exception as e:  # any damage of the central directory
            raise RuntimeError(_BAD_HEADER) from e
        if not names:
            raise RuntimeError("archive does not contain any files")
        if "/" not in names[0]:
            raise RuntimeError(f"file in archive is not in a subdirectory: {names[0]}")
        self.prefix = names[0][: names[0].index("/") + 1]
        name = ".data/version" if self.has_record(".data/version") else "version"
        if not self.has_record(name):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false: the '
                               'archive has no version record')
        version = _parse_version(self.record(name))
        if version < _MIN_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but "
                               f"the minimum supported version for reading is {_MIN_VERSION}. "
                               "Your PyTorch script module file is too old. Please regenerate "
                               "it with latest version of PyTorch to mitigate this issue.")
        if version > _MAX_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but "
                               f"the maximum supported version for reading is {_MAX_VERSION}. "
                               "The version of your PyTorch installation may be too old, "
                               "please upgrade PyTorch to latest version to mitigate this "
                               "issue.")

    def has_record(self, name):
        return self.prefix + name in self.zip.NameToInfo

    def record(self, name):
        info = self.zip.NameToInfo.get(self.prefix + name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found." + _MINIZ)
        try:
            if info.compress_type != zipfile.ZIP_STORED:
                return self.zip.read(info)
            f = self.source
            f.seek(info.header_offset)
            head = f.read(30)
            if len(head) != 30 or head[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local file header")
            f.seek(info.header_offset + 30 + int.from_bytes(head[26:28], "little") +
                   int.from_bytes(head[28:30], "little"))
            data = f.read(info.compress_size)
            if len(data) != info.compress_size:
                raise zipfile.BadZipFile("record cut short")
            return data
        except Exception as e:  # any damage of the record
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid "
                               "header or archive is corrupted." + _MINIZ) from e


def _parse_version(raw):
    """The version record as torch parses it (C++ stoull: leading blanks, a sign, digits,
    whatever follows ignored)."""
    m = re.match(rb"\s*([+-]?)(\d+)", raw)
    if m is None:
        raise RuntimeError(f"Couldn't parse the version {raw.decode(errors='replace')} as "
                           "Long Long.")
    v = int(m.group(2))
    if v >= 2 ** 64:
        raise IndexError("stoull")
    v = (-v if m.group(1) == b"-" else v) % 2 ** 64
    return v - 2 ** 64 if v >= 2 ** 63 else v


_LEGACY_MAGIC = 0x1950a86a20f9469cfc6c


def _not_a_zip(source):
    """torch reads a file that is not a zip archive as its legacy format, whose first
    pickle is a magic number: the same read gives torch's errors for a foreign file."""
    source.seek(0)
    try:
        magic = _Unpickler(source).load()
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
        return _load(opened or f, weights_only, map_location)
    except pickle.UnpicklingError as e:
        if not weights_only or str(e).startswith("Weights only load failed"):
            raise
        raise pickle.UnpicklingError(_WEIGHTS_ONLY_ERROR + str(e)) from None
    finally:
        if opened is not None:
            opened.close()


def _load(source, weights_only, map_location):
    source.seek(0)
    if source.read(4) != b"PK\x03\x04":  # torch's test for a zip: its first local header
        _not_a_zip(source)
    reader = _Reader(source)
    with reader.zip:
        swap = False
        if reader.has_record("byteorder"):
            order = reader.record("byteorder")
            if order not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + order.decode())
            swap = order.decode() != sys.byteorder
        if reader.has_record(".storage_alignment"):
            int(reader.record(".storage_alignment"))  # (torch parses it: ValueError)
        data = reader.record("data.pkl")
        return _Unpickler(io.BytesIO(data), reader, weights_only, map_location, swap).load()
