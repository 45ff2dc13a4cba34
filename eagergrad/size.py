"""torch.Size: a tuple of ints printed as `torch.Size([2, 3])`."""


class Size(tuple):
    """The shape of a tensor.

    >>> import eagergrad as torch
    >>> torch.zeros(2, 3).shape
    torch.Size([2, 3])
    """

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def can_broadcast_to(src, dst):
    """Whether shape `src` broadcasts to shape `dst` (torch's is_expandable_to)."""
    if len(src) > len(dst):
        return False
    for a, b in zip(reversed(src), reversed(dst)):
        if a != b and a != 1:
            return False
    return True


def format_shape(shape):
    """A shape as torch prints it in messages: [2, 3]."""
    return "[" + ", ".join(map(str, shape)) + "]"
