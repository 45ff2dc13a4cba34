"""default_collate and default_convert: samples -> batched eagergrad tensors, with
torch's dtypes (Python float -> float64, int -> int64, numpy arrays keep their dtype)."""
import collections.abc
import copy
import re

import numpy as np

from ... import _dtypes as D
from ... import creation
from ...ops import FUNCTIONS as _F
from ...tensor import Tensor

__all__ = ["collate", "default_collate", "default_convert"]

_np_str_obj_array = re.compile(r"[SaUO]")
_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _collate_tensor(batch, *, collate_fn_map=None):
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return _F["stack"](batch, 0)


def _check_scalars(batch):
    """torch.tensor(batch)'s errors for a batch of numbers mixed with other things."""
    for x in batch:
        if isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        if isinstance(x, Tensor) and x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")


def _collate_numpy_array(batch, *, collate_fn_map=None):
    if _np_str_obj_array.search(batch[0].dtype.str) is not None:
        raise TypeError(_ERR.format(batch[0].dtype))
    return collate([creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_numpy_scalar(batch, *, collate_fn_map=None):
    return creation.as_tensor(np.asarray(batch))


def _collate_float(batch, *, collate_fn_map=None):
    _check_scalars(batch)
    return creation.tensor(batch, dtype=D.float64)


def _collate_int(batch, *, collate_fn_map=None):
    _check_scalars(batch)
    return creation.tensor(batch)


def _collate_str(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: _collate_tensor,
    np.ndarray: _collate_numpy_array,
    (np.bool_, np.number, np.object_): _collate_numpy_scalar,
    float: _collate_float,
    int: _collate_int,
    str: _collate_str,
    bytes: _collate_str,
}


def collate(batch, *, collate_fn_map=None):
    """Collate `batch` (a list of samples), dispatching on the first sample's type through
    `collate_fn_map` and recursing into mappings, namedtuples and sequences."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for t in collate_fn_map:
            if isinstance(elem, t):
                return collate_fn_map[t](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
                return clone
            return elem_type({k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                              for k in elem})
        except TypeError:
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                    for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(_ERR.format(elem_type))


def default_collate(batch):
    """Stack a list of samples into a batch, as torch's default_collate.

    >>> import eagergrad as torch
    >>> default_collate([(1.0, 2), (3.0, 4)])
    [tensor([1., 3.], dtype=torch.float64), tensor([2, 4])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """Numpy arrays and numbers inside `data` to tensors (no batching), as torch's.

    >>> import numpy as np
    >>> default_convert(np.zeros(2))
    tensor([0., 0.], dtype=torch.float64)
    """
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and \
                _np_str_obj_array.search(data.dtype.str) is not None:
            return data
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
