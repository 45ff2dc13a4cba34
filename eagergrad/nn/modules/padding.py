"""torch.nn.modules.padding: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                       ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                       ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                       ZeroPad3d)
from ..padding import _ConstantPadNd, _PadNd  # noqa: F401

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]
