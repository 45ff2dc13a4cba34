"""torch.nn: LazyModuleMixin and the lazy layers."""
__all__ = []
