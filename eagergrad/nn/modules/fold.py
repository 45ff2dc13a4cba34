"""torch.nn.modules.fold: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..upsampling import Fold, Unfold

__all__ = ["Fold", "Unfold"]
