"""torch.nn.utils.convert_parameters: parameters_to_vector, vector_to_parameters."""
__all__ = []
