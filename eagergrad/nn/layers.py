"""Layers that need no op of their own: Identity, Flatten, Unflatten and activations."""
from . import functional as F
from .module import Module


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments.

    >>> import eagergrad as torch
    >>> torch.nn.Identity(54, unused="x")(torch.ones(1))
    tensor([1.])
    """

    __module__ = "eagergrad.nn.modules.linear"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """input.flatten(start_dim, end_dim).

    >>> import eagergrad as torch
    >>> torch.nn.Flatten()(torch.ones(2, 3, 4)).shape
    torch.Size([2, 12])
    """

    __module__ = "eagergrad.nn.modules.flatten"
    __constants__ = ("start_dim", "end_dim")

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """input.unflatten(dim, unflattened_size).

    >>> import eagergrad as torch
    >>> torch.nn.Unflatten(1, (2, 3))(torch.ones(4, 6)).shape
    torch.Size([4, 2, 3])
    """

    __module__ = "eagergrad.nn.modules.flatten"
    __constants__ = ("dim", "unflattened_size")

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError("unflattened_size must be tuple of ints, but found element "
                                f"of type {type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class ReLU(Module):
    """Elementwise max(x, 0) (ReluBackward0).

    >>> import eagergrad as torch
    >>> torch.nn.ReLU()(torch.tensor([-1.0, 1.0]))
    tensor([0., 1.])
    """

    __module__ = "eagergrad.nn.modules.activation"
    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Elementwise tanh.

    >>> import eagergrad as torch
    >>> torch.nn.Tanh()(torch.zeros(1))
    tensor([0.])
    """

    __module__ = "eagergrad.nn.modules.activation"

    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    """Elementwise sigmoid.

    >>> import eagergrad as torch
    >>> torch.nn.Sigmoid()(torch.zeros(1))
    tensor([0.5000])
    """

    __module__ = "eagergrad.nn.modules.activation"

    def forward(self, input):
        return input.sigmoid()


class _DimModule(Module):
    __module__ = "eagergrad.nn.modules.activation"
    __constants__ = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_DimModule):
    """softmax along `dim` (None: torch's deprecated implicit choice, with its warning).

    >>> import eagergrad as torch
    >>> torch.nn.Softmax(dim=0)(torch.zeros(2))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_DimModule):
    """log_softmax along `dim`.

    >>> import eagergrad as torch
    >>> torch.nn.LogSoftmax(dim=0)(torch.zeros(2)).exp()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)
