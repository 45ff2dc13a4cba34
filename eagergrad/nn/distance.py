"""torch.nn: PairwiseDistance, CosineSimilarity."""
__all__ = []
