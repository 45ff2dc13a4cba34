"""torch.return_types: the named tuples of the ops with several results (`max(dim)`, `sort`,
`linalg.svd`, ...). Each is defined beside its op, naming this module as its home; here
they are found under their names, so results pickle (and load from torch's files, whose
structseq pickles call `cls(values, {})`) as torch's.

>>> import eagergrad as torch
>>> r = torch.tensor([[1.0, 3.0]]).max(1)
>>> isinstance(r, torch.return_types.max), r.indices
(True, tensor([1]))
"""
from . import ops as _ops  # noqa: F401  (the ops define the classes)


def _structseq_new(cls, sequence, dict=None):
    # (a structseq's constructor: one sequence of the fields, and a dict torch leaves empty)
    return tuple.__new__(cls, sequence)


def _classes():
    return {c.__name__: c for c in tuple.__subclasses__() if c.__module__ == __name__}


for _name, _cls in _classes().items():
    _cls.__new__ = staticmethod(_structseq_new)
    globals()[_name] = _cls

__all__ = sorted(_classes())
del _name, _cls
