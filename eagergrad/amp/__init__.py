"""torch.amp: automatic mixed precision. `autocast` runs the ops torch lists in a lower
precision (bfloat16 on CPU) or in float32 (ops/_autocast.py has torch's lists and NOTE
[autocast]); `GradScaler` scales losses so that float16 gradients keep their small values,
and skips the steps whose gradients overflowed. torch.cpu.amp and torch.cuda.amp are the
deprecated aliases (`_aliases.py`).

>>> import eagergrad as torch
>>> with torch.amp.autocast("cpu"):
...     torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype
torch.bfloat16
"""
from .autocast_mode import (_enter_autocast, _exit_autocast, autocast,  # noqa: F401
                            custom_bwd, custom_fwd, is_autocast_available)
from .grad_scaler import GradScaler
from . import autocast_mode, grad_scaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
