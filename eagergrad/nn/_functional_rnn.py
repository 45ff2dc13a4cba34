"""torch.nn.functional: F recurrent helpers."""
__all__ = []
