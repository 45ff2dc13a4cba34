"""torch.nn.parallel: DataParallel (one device: the module itself runs) and
DistributedDataParallel (one replica per process)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from ..._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.nn.parallel", "torch.nn.parallel")
