"""torch.distributed.tensor: DTensor, its placements, distribute_tensor.

>>> import eagergrad as torch
>>> from eagergrad.distributed.tensor import distribute_tensor, Shard
>>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
>>> (distribute_tensor(torch.ones(4), mesh, [Shard(0)]) * 2).full_tensor()
tensor([2., 2., 2., 2.])
>>> torch.distributed.destroy_process_group()
"""
from ...ops import _table
from ..device_mesh import DeviceMesh, init_device_mesh  # noqa: F401
from ._api import DTensor, LocalTensor, distribute_module, distribute_tensor  # noqa: F401
from ._dispatch import dispatch
from .placement_types import Partial, Placement, Replicate, Shard  # noqa: F401
from ..._torch_names import module_getattr

_table.DTENSOR_DISPATCH[0] = dispatch

__getattr__ = module_getattr("eagergrad.distributed.tensor", "torch.distributed.tensor")
