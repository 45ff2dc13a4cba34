"""torch.nn.functional: F batch/group/instance norm."""
__all__ = []
