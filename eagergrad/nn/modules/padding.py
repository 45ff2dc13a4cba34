"""torch.nn: padding modules (constant/zero, reflection, replication, circular; 1-3 d), each
F.pad with its mode, with torch's attributes and reprs."""
from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]


class _PadNd(Module):
    __constants__ = ("padding",)
    _mode = None
    _n = 0

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._n)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def _check_input_dim(self, input):
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Circular (wrap-around) padding of the last dimension.

    >>> import eagergrad as torch
    >>> torch.nn.CircularPad1d(1)(torch.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 1., 2., 3., 1.]])
    """
    _n = 1


class CircularPad2d(_CircularPadNd):
    """Circular padding of the last two dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.CircularPad2d((1, 0, 0, 1))
    CircularPad2d((1, 0, 0, 1))
    """
    _n = 2


class CircularPad3d(_CircularPadNd):
    """Circular padding of the last three dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.CircularPad3d(1)(torch.ones(1, 2, 2, 2)).shape
    torch.Size([1, 4, 4, 4])
    """
    _n = 3


class _ConstantPadNd(Module):
    __constants__ = ("padding", "value")
    _n = 0

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _ntuple(2 * self._n)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with `value`.

    >>> import eagergrad as torch
    >>> torch.nn.ConstantPad1d((1, 0), 9.0)(torch.tensor([1.0, 2.0]))
    tensor([9., 1., 2.])
    """
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with `value`.

    >>> import eagergrad as torch
    >>> torch.nn.ConstantPad2d(1, 0.5)
    ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)
    """
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with `value`.

    >>> import eagergrad as torch
    >>> torch.nn.ConstantPad3d(1, 0.0)(torch.ones(1, 1, 1, 1)).shape
    torch.Size([1, 3, 3, 3])
    """
    _n = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dimension with zeros.

    >>> import eagergrad as torch
    >>> torch.nn.ZeroPad1d((0, 2))(torch.tensor([1.0]))
    tensor([1., 0., 0.])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dimensions with zeros.

    >>> import eagergrad as torch
    >>> torch.nn.ZeroPad2d(1)
    ZeroPad2d((1, 1, 1, 1))
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dimensions with zeros.

    >>> import eagergrad as torch
    >>> torch.nn.ZeroPad3d(1)(torch.ones(1, 1, 1)).shape
    torch.Size([3, 3, 3])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dimension with its reflection (the border not repeated).

    >>> import eagergrad as torch
    >>> torch.nn.ReflectionPad1d(2)(torch.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 2., 1., 2., 3., 2., 1.]])
    """
    _n = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Reflection padding of the last two dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.ReflectionPad2d((1, 1, 2, 0))
    ReflectionPad2d((1, 1, 2, 0))
    """
    _n = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Reflection padding of the last three dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.ReflectionPad3d(1)(torch.ones(1, 2, 2, 2)).shape
    torch.Size([1, 4, 4, 4])
    """
    _n = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dimension by repeating its border values.

    >>> import eagergrad as torch
    >>> torch.nn.ReplicationPad1d((2, 1))(torch.tensor([[1.0, 2.0]]))
    tensor([[1., 1., 1., 2., 2.]])
    """
    _n = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Replication padding of the last two dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.ReplicationPad2d(1)
    ReplicationPad2d((1, 1, 1, 1))
    """
    _n = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Replication padding of the last three dimensions.

    >>> import eagergrad as torch
    >>> torch.nn.ReplicationPad3d(1)(torch.ones(1, 1, 1, 1)).shape
    torch.Size([1, 3, 3, 3])
    """
    _n = 3
