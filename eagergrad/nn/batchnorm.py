"""torch.nn: BatchNorm/InstanceNorm modules."""
__all__ = []
