"""torch.nn.modules.distance: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..distance import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
