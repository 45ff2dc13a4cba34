"""Activation functions as op-table entries (GeluBackward0, SiluBackward0, EluBackward0, ...)."""
