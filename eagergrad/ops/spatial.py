"""Spatial ops as op-table entries: upsampling, non-constant padding, unfold/fold, grid_sample, adaptive max pooling, embedding_bag."""
