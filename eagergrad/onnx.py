"""torch.onnx: importable, as model code checks `torch.onnx.is_in_onnx_export()`; eagergrad
exports nothing, so `export` and the other entry points raise NotImplementedError naming
them.

>>> import eagergrad as torch
>>> torch.onnx.is_in_onnx_export()
False
"""
from ._torch_names import missing


def is_in_onnx_export():
    """False: eagergrad never runs inside an ONNX export."""
    return False


def export(*args, **kwargs):
    """Raises NotImplementedError: eagergrad has no ONNX exporter."""
    raise missing("torch.onnx.export")


def dynamo_export(*args, **kwargs):
    """Raises NotImplementedError: eagergrad has no ONNX exporter."""
    raise missing("torch.onnx.dynamo_export")


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(f"module 'eagergrad.onnx' has no attribute '{name}'")
    raise missing(f"torch.onnx.{name}")
