"""torch.nn.modules.upsampling: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
