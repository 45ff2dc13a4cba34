"""torch.nn.modules.normalization: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..normalization import GroupNorm, LayerNorm, RMSNorm

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]
