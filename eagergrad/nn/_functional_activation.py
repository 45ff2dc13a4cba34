"""torch.nn.functional: F activations."""
__all__ = []
