"""torch.nn: Upsample modules."""
__all__ = []
