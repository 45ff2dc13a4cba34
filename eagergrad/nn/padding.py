"""torch.nn: padding modules."""
__all__ = []
