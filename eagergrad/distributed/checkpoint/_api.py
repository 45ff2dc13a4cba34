"""dcp.save / dcp.load.

NOTE [checkpoint format]
A checkpoint is a directory: `.metadata` (a pickle: each flattened key's kind, shape and
dtype, or its Python value) and `__0_0.distcp` (numpy's npz of the tensors' full
values). A DTensor is saved as its full value and loaded by laying that value out as the
target DTensor is laid out now, so any mesh and placements can load what any other
saved. Nested dicts flatten to dotted keys, as torch's FQNs. The format is eagergrad's own:
torch cannot read it, nor eagergrad torch's.
"""
import os
import pickle
import warnings

import numpy as np

from ...creation import tensor as _tensor
from ...engine.grad_mode import no_grad
from ...tensor import Tensor
from ..tensor._api import DTensor, distribute_tensor

_DATA = "__0_0.distcp"


class CheckpointException(Exception):
    """A checkpoint could not be saved or loaded (torch's)."""


class Metadata:
    """What a checkpoint holds: `state_dict_metadata` maps each key to its metadata."""

    def __init__(self, state_dict_metadata):
        self.state_dict_metadata = state_dict_metadata

    def __repr__(self):
        return f"Metadata(state_dict_metadata={self.state_dict_metadata!r})"


class FileSystemWriter:
    """Writes a checkpoint to the directory `path`."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, **kwargs):
        self.path = os.fspath(path)


class FileSystemReader:
    """Reads a checkpoint from the directory `path`."""

    def __init__(self, path, **kwargs):
        self.path = os.fspath(path)

    def read_metadata(self):
        with open(os.path.join(self.path, ".metadata"), "rb") as f:
            return Metadata(pickle.load(f)[0])


def _flatten(sd, prefix=""):
    out = {}
    for k, v in sd.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _path(checkpoint_id, storage, what):
    if storage is not None:
        return storage.path
    if checkpoint_id is None:
        raise RuntimeError(f"`checkpoint_id` must be specified if {what} is None.")
    return os.fspath(checkpoint_id)


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False, use_collectives=True):
    """Save `state_dict` (NOTE [checkpoint format]); returns its Metadata."""
    path = _path(checkpoint_id, storage_writer, "storage_writer")
    os.makedirs(path, exist_ok=True)
    meta, arrays = {}, {}
    for key, v in _flatten(state_dict).items():
        if isinstance(v, Tensor):
            full = v.full_tensor() if isinstance(v, DTensor) else v
            arrays[f"t{len(arrays)}"] = np.asarray(full.detach().numpy())
            meta[key] = ("tensor", tuple(v.shape), v.dtype, f"t{len(arrays) - 1}")
        else:
            meta[key] = ("object", v)
    with open(os.path.join(path, _DATA), "wb") as f:
        np.savez(f, **arrays)
    with open(os.path.join(path, ".metadata"), "wb") as f:
        pickle.dump((meta,), f)
    return Metadata(meta)


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Load into `state_dict` in place: each tensor (DTensor: in its current layout)
    takes the saved values; other values are replaced."""
    path = _path(checkpoint_id, storage_reader, "storage_reader")
    with open(os.path.join(path, ".metadata"), "rb") as f:
        (meta,) = pickle.load(f)
    with np.load(os.path.join(path, _DATA)) as data:
        arrays = {k: data[k] for k in data.files}
    for key, target in _flatten(state_dict).items():
        if key not in meta:
            raise CheckpointException(f"Missing key in checkpoint state_dict: {key}.")
        entry = meta[key]
        if entry[0] == "object":
            _assign(state_dict, key, entry[1])
            continue
        _, shape, dtype, name = entry
        value = _tensor(arrays[name], dtype=dtype)
        if not isinstance(target, Tensor):
            _assign(state_dict, key, value)
        elif tuple(target.shape) != tuple(shape):
            raise CheckpointException(f"Size mismatch for {key}: the checkpoint has "
                                      f"{list(shape)}, the state_dict {list(target.shape)}.")
        else:
            _copy_into(target, value)


def _copy_into(target, value):
    with no_grad():
        if isinstance(target, DTensor):
            laid = distribute_tensor(value.to(target.dtype), target.device_mesh,
                                     target.placements)
            target._assign(laid)
            target._version_counter.version += 1
        else:
            target.copy_(value)


def _assign(sd, key, value):
    """state_dict[key] = value, for a flattened (dotted) key of nested dicts."""
    d, parts = sd, key.split(".")
    i = 0
    while i < len(parts) - 1:  # (a dict key may itself contain dots: longest match)
        for j in range(len(parts), i, -1):
            k = ".".join(parts[i:j])
            if k in d and isinstance(d[k], dict) and j < len(parts):
                d, i = d[k], j
                break
        else:
            break
    d[".".join(parts[i:])] = value


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated: `save`."""
    warnings.warn("'save_state_dict' is deprecated and will be removed in future versions."
                  "Please use 'save' instead.", FutureWarning, stacklevel=2)
    return save(state_dict, storage_writer=storage_writer)


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    """Deprecated: `load`."""
    warnings.warn("'load_state_dict' is deprecated and will be removed in future versions. "
                  "Please use 'load' instead.", FutureWarning, stacklevel=2)
    return load(state_dict, storage_reader=storage_reader)
