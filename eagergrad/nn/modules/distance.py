"""torch.nn: PairwiseDistance, CosineSimilarity (over nn.functional's distances)."""
from .. import functional as F
from .module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """p-norm of x1 - x2 + eps over the last dimension.

    >>> import eagergrad as torch
    >>> torch.nn.PairwiseDistance()(torch.tensor([[3.0, 4.0]]), torch.zeros(1, 2))
    tensor([5.0000])
    """

    __constants__ = ("norm", "eps", "keepdim")

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along `dim`.

    >>> import eagergrad as torch
    >>> torch.nn.CosineSimilarity()(torch.tensor([[1.0, 0.0]]), torch.tensor([[2.0, 0.0]]))
    tensor([1.])
    """

    __constants__ = ("dim", "eps")

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
