"""torch.nn.functional's distance functions (re-exported by nn.functional):
pairwise_distance, cosine_similarity and pdist, on the kernels of ops/distance.py."""
from ...ops import distance as _D


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of x1 - x2 + eps over the last dimension.

    >>> import eagergrad as torch
    >>> torch.nn.functional.pairwise_distance(torch.tensor([[3.0, 4.0]]), torch.zeros(1, 2))
    tensor([5.0000])
    """
    return _D.pairwise_distance(x1, x2, p, eps, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along `dim`.

    >>> import eagergrad as torch
    >>> torch.nn.functional.cosine_similarity(torch.tensor([[1.0, 0.0]]),
    ...                                       torch.tensor([[2.0, 0.0]]))
    tensor([1.])
    """
    return _D.cosine_similarity(x1, x2, dim, eps)


def pdist(input, p=2):
    """p-norm distances between all pairs of rows (i < j) of a matrix.

    >>> import eagergrad as torch
    >>> torch.nn.functional.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0]]))
    tensor([5.])
    """
    return _D.pdist(input, p)
