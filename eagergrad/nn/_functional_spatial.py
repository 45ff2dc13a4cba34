"""torch.nn.functional: F pad/interpolate/unfold/fold/grid_sample/affine_grid/embedding_bag."""
__all__ = []
