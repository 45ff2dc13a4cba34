"""Datasets: map-style `Dataset`, `IterableDataset`, `TensorDataset`, `Subset`,
`ConcatDataset`, and `random_split`."""
import bisect
import itertools
import math
import warnings
from collections.abc import Iterable
from typing import Generic, TypeVar

from .sampler import _randperm

_T_co = TypeVar("_T_co", covariant=True)

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "StackDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset(Generic[_T_co]):
    """A map-style dataset: `__getitem__(index)` (and usually `__len__`); `a + b` concatenates.

    >>> class Squares(Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable):
    """A dataset given by `__iter__` (a stream of samples).

    >>> class Count(IterableDataset):
    ...     def __iter__(self): return iter(range(3))
    >>> list(Count())
    [0, 1, 2]
    """

    def __add__(self, other):
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """IterableDatasets one after another (lazily, at each iteration).

    >>> class R(IterableDataset):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n))
    >>> list(ChainDataset([R(2), R(3)])), list(R(1) + R(2))
    ([0, 1, 0, 1, 2], [0, 0, 1])
    """

    def __init__(self, datasets):
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Samples of several datasets of one length side by side: a tuple (positional
    datasets) or a dict (keyword datasets) per index.

    >>> StackDataset([1, 2], [3, 4])[1], StackDataset(a=[1, 2], b=[3, 4])[0]
    ((2, 4), {'a': 1, 'b': 3})
    """

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            batch = [{} for _ in indices]
            for k, d in self.datasets.items():
                items = self._items(d, indices)
                for data, s in zip(batch, items):
                    data[k] = s
            return batch
        batch = [[] for _ in indices]
        for d in self.datasets:
            for data, s in zip(batch, self._items(d, indices)):
                data.append(s)
        return [tuple(s) for s in batch]

    @staticmethod
    def _items(d, indices):
        if callable(getattr(d, "__getitems__", None)):
            items = d.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. Expected "
                                 f"{len(indices)}, got {len(items)}")
            return items
        return [d[i] for i in indices]

    def __len__(self):
        return self._length


class TensorDataset(Dataset):
    """Samples are tuples of the tensors' rows: `ds[i] == (t[i] for t in tensors)`.

    >>> import eagergrad as torch
    >>> ds = TensorDataset(torch.arange(3), torch.zeros(3, 2))
    >>> len(ds), ds[1][0]
    (3, tensor(1))
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class ConcatDataset(Dataset):
    """The datasets one after another.

    >>> len(ConcatDataset([[1, 2], [3]]))
    3
    """

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets):
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if d == 0 else idx - self.cumulative_sizes[d - 1]
        return self.datasets[d][sample_idx]


class Subset(Dataset):
    """The samples of `dataset` at `indices`.

    >>> Subset([10, 11, 12], [2, 0])[0]
    12
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into non-overlapping random Subsets of the given lengths (or
    fractions summing to 1), drawn from eagergrad's generator (or `generator`).

    >>> a, b = random_split(range(10), [0.7, 0.3])
    >>> len(a), len(b)
    (7, 3)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        remainder = len(dataset) - sum(sizes)
        for i in range(remainder):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(sum(lengths), generator)
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]


