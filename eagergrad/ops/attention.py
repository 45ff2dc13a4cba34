"""Attention as op-table entries (ScaledDotProductFlashAttentionForCpuBackward0, as torch records on CPU)."""
