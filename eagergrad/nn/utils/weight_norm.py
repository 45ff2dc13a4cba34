"""torch.nn.utils.weight_norm: the old-style weight_norm/remove_weight_norm (and spectral_norm)."""
__all__ = []
