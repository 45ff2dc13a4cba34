"""torch.distributed.tensor.parallel: tensor parallelism of nn modules by DTensor layouts.

>>> import eagergrad as torch
>>> from eagergrad.distributed.tensor.parallel import parallelize_module, ColwiseParallel
>>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
>>> lin = parallelize_module(torch.nn.Linear(4, 2), mesh, ColwiseParallel())
>>> lin.weight.placements
(Shard(dim=0),)
>>> torch.distributed.destroy_process_group()
"""
from .api import parallelize_module  # noqa: F401
from .loss import loss_parallel  # noqa: F401
from .style import (  # noqa: F401
    ColwiseParallel, ParallelStyle, PrepareModuleInput, PrepareModuleOutput, RowwiseParallel,
    SequenceParallel)
from ...._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.distributed.tensor.parallel",
                             "torch.distributed.tensor.parallel")
