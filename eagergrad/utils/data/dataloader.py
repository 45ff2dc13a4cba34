"""DataLoader: batches from a dataset in the calling process (num_workers=0)."""
import itertools

from ..._torch_names import missing
from . import _collate
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader"]


class DataLoader:
    """Iterate over `dataset` in batches (torch's options and defaults; shuffling draws from
    eagergrad's generator, so its order is reproducible under `manual_seed` but is not
    torch's; `num_workers` > 0 is not implemented).

    >>> import eagergrad as torch
    >>> from eagergrad.utils.data import TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(5)), batch_size=2)
    >>> [b[0].tolist() for b in loader]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if num_workers > 0:
            raise missing("torch.utils.data.DataLoader with num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = (_collate.default_collate if self._auto_collation
                          else _collate.default_convert)
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self._iterable:
            return self._iter_iterable()
        return self._iter_map()

    def _iter_map(self):
        ds, auto = self.dataset, self._auto_collation
        getitems = getattr(ds, "__getitems__", None)
        for index in self._index_sampler:
            if auto:
                data = getitems(index) if getitems else [ds[i] for i in index]
            else:
                data = ds[index]
            yield self.collate_fn(data)

    def _iter_iterable(self):
        it = iter(self.dataset)
        if not self._auto_collation:
            for sample in it:
                yield self.collate_fn(sample)
            return
        while True:
            data = list(itertools.islice(it, self.batch_size))
            if not data or (self.drop_last and len(data) < self.batch_size):
                return
            yield self.collate_fn(data)
            if len(data) < self.batch_size:
                return

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)
