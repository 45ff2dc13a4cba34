"""torch.nn.modules.utils: the argument parsers torch's modules share."""
import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    """A parser of an argument to an n-tuple: an iterable as a tuple, anything else repeated
    n times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")
