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
