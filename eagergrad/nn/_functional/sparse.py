"""torch.nn.functional's sparse functions (re-exported by nn.functional): embedding (one
EmbeddingBackward0, after an in-place renorm of the weight under no_grad for max_norm),
embedding_bag (ops/spatial.py's kernel, with torch's argument checks) and one_hot."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtypes as D
from ...creation import arange, from_jax
from ...engine.grad_mode import no_grad
from ...ops.norm import embedding as _embedding
from ...ops.norm import embedding_renorm_
from ...ops.spatial import embedding_bag as _embedding_bag


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of `weight` at the indices `input`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.embedding(torch.tensor([1]), torch.eye(2))
    tensor([[0., 1.]])
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():
            embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxes of bags of embedding rows: 1-D `input` split at `offsets`, or
    2-D `input` (one bag per row).

    >>> import eagergrad as torch
    >>> torch.nn.functional.embedding_bag(torch.tensor([[0, 1], [2, 2]]), torch.eye(3))
    tensor([[0.5000, 0.5000, 0.0000],
            [0.0000, 0.0000, 1.0000]])
    """
    if str(weight.dtype).endswith("int64") and \
            input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {str(type(offsets)).replace('eagergrad', 'torch')}")
        offsets = arange(0, input.numel(), input.size(1), dtype=input.dtype)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        with no_grad():
            embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    return _embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                          per_sample_weights, include_last_offset, padding_idx)[0]


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding of an int64 tensor (a new last dim of num_classes; -1: the
    largest value + 1). The range checks read the values (skipped on jax tracers).

    >>> import eagergrad as torch
    >>> torch.nn.functional.one_hot(torch.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    v = tensor._value
    if num_classes == -1:
        if v.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        if isinstance(v, jax.core.Tracer):
            raise RuntimeError("one_hot: num_classes=-1 needs the values (give num_classes "
                               "under a jax trace)")
        num_classes = int(np.asarray(v).max()) + 1
    if not isinstance(v, jax.core.Tracer) and v.size > 0:
        a = np.asarray(v)
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return from_jax(jax.nn.one_hot(v, int(num_classes), dtype=jnp.int64))
