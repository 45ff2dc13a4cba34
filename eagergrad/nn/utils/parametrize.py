"""torch.nn.utils.parametrize: register_parametrization, remove_parametrizations, cached."""
__all__ = []
