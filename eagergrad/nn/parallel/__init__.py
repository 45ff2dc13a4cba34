"""torch.nn.parallel: DataParallel (one device: the module itself runs)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from ..._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.nn.parallel", "torch.nn.parallel")
