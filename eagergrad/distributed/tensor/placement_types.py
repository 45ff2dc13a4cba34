"""torch.distributed.tensor's placements: how a DTensor's logical value lies on one mesh
dimension. `Shard(dim)`: split along `dim` in torch.chunk's sizes (6 rows over 4 ranks:
2, 2, 2, 0); `Replicate()`: a full copy on each rank; `Partial(op)`: each rank holds a
term, the value is their reduction.

>>> from eagergrad.distributed.tensor import Shard, Partial
>>> Shard(0), str(Partial())
(Shard(dim=0), 'P(sum)')
"""


class Placement:
    """The base of the placement types."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    """Split along tensor dimension `dim` (torch.chunk's sizes)."""

    def __init__(self, dim=0):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return type(other) is Shard and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """A full copy on every rank of the mesh dimension."""

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Each rank holds a term; the value is their `reduce_op` ("sum", "avg", "max", "min")."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"
