"""Batch and group normalization as op-table entries (NativeBatchNormBackward0, NativeGroupNormBackward0)."""
