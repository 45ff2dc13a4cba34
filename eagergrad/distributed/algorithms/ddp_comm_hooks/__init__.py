"""torch.distributed.algorithms.ddp_comm_hooks: the built-in hooks (default_hooks)."""
from . import default_hooks  # noqa: F401
