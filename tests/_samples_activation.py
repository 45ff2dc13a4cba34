"""Samples for the activation ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH)."""
from _samples import S, F, C, V, I  # noqa: F401

SAMPLES = {}

SPECIAL = {}

SMOOTH = {}
