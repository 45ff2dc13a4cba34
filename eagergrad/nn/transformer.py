"""torch.nn: MultiheadAttention and Transformer layers."""
__all__ = []
