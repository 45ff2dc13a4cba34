"""Samplers: the order in which a DataLoader visits a map-style dataset."""
import itertools
from typing import Generic, TypeVar

import jax
import numpy as np

from ... import _dtypes as D
from ... import creation

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _randperm(n, generator=None):
    """A random permutation of range(n) as a list, from eagergrad's global generator (or
    from `generator`, passed to the key source random functions use)."""
    if generator is None:
        return creation.randperm(n).tolist()
    return np.asarray(jax.random.permutation(creation._next_key(generator), n)).tolist()


def _draw_seed(generator=None):
    """A 63-bit seed drawn from `generator` (or the global one): the bits of a fresh subkey
    (torch draws one with random_() on an int64 tensor)."""
    a, b = (int(v) for v in np.asarray(creation._next_key(generator)).reshape(-1)[:2])
    return ((a << 32) | b) >> 1


_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: `__iter__` yields dataset indices (or lists of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1.

    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order (a fresh permutation per pass; with `replacement`, independent draws),
    from eagergrad's generator: reproducible under `manual_seed`, not torch's sequence.
    As torch's, each iteration without `generator` seeds a generator of its own from the
    global one, and draws lazily: a permutation per pass over the data, or 32 indices at a
    time with replacement (so num_samples may be huge).

    >>> sorted(RandomSampler(range(4)))
    [0, 1, 2, 3]
    >>> it = iter(RandomSampler(range(4), replacement=True, num_samples=10**10))
    >>> all(0 <= next(it) < 4 for _ in range(40))
    True
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = creation.Generator()
            generator.manual_seed(_draw_seed())
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from creation.randint(0, n, (32,), generator=generator).tolist()
            yield from creation.randint(0, n, (self.num_samples % 32,),
                                        generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _randperm(n, generator)
            yield from _randperm(n, generator)[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order.

    >>> sorted(SubsetRandomSampler([5, 7]))
    [5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights` (as
    torch.multinomial; from eagergrad's generator, not torch's sequence).

    >>> s = list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    >>> s
    [1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = creation.as_tensor(weights, dtype=D.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = np.asarray(self.weights.detach().numpy(), np.float64)
        n = self.num_samples
        if not self.replacement and n > w.size:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        if (w < 0).any() or not np.isfinite(w).all():
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement and np.count_nonzero(w) < n:
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        # numpy's sampler seeded by the next key of eagergrad's stream (no jax compile)
        rng = np.random.default_rng(np.asarray(creation._next_key(self.generator)))
        yield from rng.choice(w.size, n, replace=self.replacement, p=w / w.sum()).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size.

    >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[it] * self.batch_size):
                yield [*batch]
        else:
            batch = [*itertools.islice(it, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None
