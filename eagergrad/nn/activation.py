"""torch.nn: activation modules."""
__all__ = []
