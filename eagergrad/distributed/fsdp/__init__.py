"""torch.distributed.fsdp: FSDP2's `fully_shard` (parameters as Shard(0) DTensors,
all-gathered before forward, gradients reduce-scattered), its policies and FSDPModule.

>>> import eagergrad as torch
>>> from eagergrad.distributed.fsdp import fully_shard
>>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
>>> m = fully_shard(torch.nn.Linear(4, 2), mesh=mesh)
>>> type(m).__name__, m.weight.placements
('FSDPLinear', (Shard(dim=0),))
>>> torch.distributed.destroy_process_group()
"""
from ._fully_shard import (  # noqa: F401
    CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, UnshardHandle,
    fully_shard)
from ..._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.distributed.fsdp", "torch.distributed.fsdp")
