"""torch.functional: the home torch gives some of its top-level functions (einsum, meshgrid,
split, norm, unique, ...); each name here is the top-level function itself, as in torch.

>>> import eagergrad as torch
>>> torch.functional.einsum is torch.einsum
True
"""
import sys

from ._torch_names import missing

# (torch.functional.__all__)
_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
          "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
          "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
          "unique", "unique_consecutive", "unravel_index")


def __getattr__(name):
    if name in _NAMES:
        try:
            return getattr(sys.modules["eagergrad"], name)
        except (AttributeError, NotImplementedError):
            raise missing(f"torch.functional.{name}") from None
    raise AttributeError(f"module 'eagergrad.functional' has no attribute '{name}'")
