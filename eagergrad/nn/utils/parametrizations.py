"""torch.nn.utils.parametrizations: weight_norm, spectral_norm, orthogonal as parametrizations."""
__all__ = []
