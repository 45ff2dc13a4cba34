"""eagergrad.utils: torch.utils' `data` (datasets, samplers, DataLoader); every other
torch.utils name raises NotImplementedError naming it."""
from .._torch_names import module_getattr
from . import checkpoint, data  # noqa: F401

__getattr__ = module_getattr("eagergrad.utils", "torch.utils")
