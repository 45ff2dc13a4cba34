"""torch.distributed.tensor.experimental: `implicit_replication`.

>>> import eagergrad as torch
>>> from eagergrad.distributed.tensor import distribute_tensor, Shard
>>> from eagergrad.distributed.tensor.experimental import implicit_replication
>>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
>>> x = distribute_tensor(torch.ones(2, 2), mesh, [Shard(0)])
>>> with implicit_replication():
...     (x + torch.ones(2)).placements
(Shard(dim=0),)
>>> torch.distributed.destroy_process_group()
"""
from .._dispatch import IMPLICIT, counting
from ...._torch_names import module_getattr


def implicit_replication():
    """Inside, a plain tensor among a DTensor op's inputs is read as a replicated DTensor
    (outside, mixing them raises torch's error)."""
    return counting(IMPLICIT)


__getattr__ = module_getattr("eagergrad.distributed.tensor.experimental",
                             "torch.distributed.tensor.experimental")
