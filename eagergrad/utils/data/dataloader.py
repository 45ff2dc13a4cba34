"""DataLoader: batches from a dataset, in the calling thread (num_workers=0) or from worker
threads (num_workers > 0) following torch's worker protocol."""
import copy
import itertools
import multiprocessing
import os
import queue
import threading
import warnings

import numpy as np

from ... import _mode, creation, cuda
from ...device import default as _default_device
from . import _collate, _worker
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info
_POLL = 5.0  # seconds between checks that the workers are alive while waiting for data


class DataLoader:
    """Iterate over `dataset` in batches, with torch's options, defaults and errors.

    Shuffling draws from eagergrad's generator (reproducible under `manual_seed`, not
    torch's order). As in torch, each iteration first draws a base seed from the generator
    (`generator` or the global one); worker i seeds its own eagergrad generator with
    base_seed + i.

    With `num_workers` > 0, the workers are threads of this process, not processes: jax's
    runtime is multithreaded and cannot be forked safely, and threads need no pickling
    (lambdas, local classes, tensors all work). What torch specifies holds: batches come in
    the order of num_workers=0 (with `in_order`), tasks go round-robin to the workers with
    `prefetch_factor` per worker in flight, each worker has its own copy of the dataset
    (what `get_worker_info().dataset` gives, so a `worker_init_fn` may shard it) and its
    own iterator of an IterableDataset (so an unsharded one yields its data once per
    worker, as in torch), `worker_init_fn`, `persistent_workers`, `timeout`, and a worker's
    exception re-raised with its traceback. A worker starts with the grad mode and default
    device of the thread that made it (as a forked process would).

    The differences from torch's processes: the dataset copies are shallow (attributes
    rebound in a worker stay its own; mutable containers the dataset holds are shared);
    Python's `random` and numpy's global generator are process-wide, so workers do not
    reseed them; `multiprocessing_context` is validated as torch does, then unused; workers
    run in parallel only where the dataset releases the GIL (jax, numpy, I/O). `pin_memory`
    does nothing (with torch's warning when there is no GPU).

    >>> import eagergrad as torch
    >>> from eagergrad.utils.data import TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(5)), batch_size=2)
    >>> [b[0].tolist() for b in loader]
    [[0, 1], [2, 3], [4]]
    >>> [b[0].tolist() for b in DataLoader(TensorDataset(torch.arange(5)), 2, num_workers=2)]
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
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = _check_context(multiprocessing_context, num_workers)
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
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality()

    __initialized = False

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def check_worker_number_rationality(self):
        """torch's warning when there are more workers than CPUs (the same count here,
        though the workers are threads)."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            msg = ("DataLoader is not able to compute a suggested max number of worker in "
                   "current system.")
        else:
            msg = (f"Our suggested max number of worker in current system is {suggest}"
                   f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                   "which is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {msg} Please be aware that excessive worker creation might get "
                      "DataLoader running slow or even freeze, lower the worker number to avoid "
                      "potential slowness/freeze if necessary.", stacklevel=2)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleIter(self)
        if not self.persistent_workers:
            self.check_worker_number_rationality()
            return _WorkerIter(self)
        if self._iterator is None:
            self.check_worker_number_rationality()
            self._iterator = _WorkerIter(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


def _check_context(ctx, num_workers):
    if ctx is None:
        return None
    if num_workers == 0:
        raise ValueError("multiprocessing_context can only be used with multi-process loading "
                         f"(num_workers > 0), but got num_workers={num_workers}")
    if isinstance(ctx, str):
        methods = multiprocessing.get_all_start_methods()
        if ctx not in methods:
            raise ValueError("multiprocessing_context option should specify a valid start "
                             f"method in {methods!r}, but got multiprocessing_context={ctx!r}")
        return multiprocessing.get_context(ctx)
    if not isinstance(ctx, multiprocessing.context.BaseContext):
        raise TypeError("multiprocessing_context option should be a valid context object or a "
                        f"string specifying the start method, but got "
                        f"multiprocessing_context={ctx}")
    return ctx


def _draw_seed(generator):
    """A 63-bit seed drawn from `generator` (or the global one): the bits of a fresh subkey
    (torch draws base_seed with random_() on an int64 tensor)."""
    a, b = (int(v) for v in np.asarray(creation._next_key(generator)).reshape(-1)[:2])
    return ((a << 32) | b) >> 1


class _BaseIter:
    """torch's _BaseDataLoaderIter: draws the base seed, then walks the index sampler."""

    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _draw_seed(loader.generator)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def __iter__(self):
        return self

    def __next__(self):
        return self._next_data()

    def __len__(self):
        return len(self._index_sampler)


class _SingleIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


def _copy(dataset):
    try:
        return copy.copy(dataset)
    except Exception:  # noqa: BLE001 - an uncopyable dataset: the workers share it
        return dataset


class _WorkerIter(_BaseIter):
    """torch's _MultiProcessingDataLoaderIter over worker threads."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent_workers = loader.persistent_workers
        self._data_queue = queue.Queue()
        self._done_event = threading.Event()
        self._index_queues, self._workers = [], []
        state = (_mode.get_state(), _default_device())
        for i in range(self._num_workers):
            q = queue.Queue()
            w = threading.Thread(
                target=_worker.worker_loop, name=f"DataLoader worker {i}", daemon=True,
                args=(self._iterable, _copy(self._dataset), q, self._data_queue,
                      self._done_event, self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, i, self._num_workers, state))
            w.start()
            self._index_queues.append(q)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_worker.ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _worker.ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _get_data(self):
        if self._timeout > 0:
            try:
                return self._data_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") \
                    from None
        while True:
            try:
                return self._data_queue.get(timeout=_POLL)
            except queue.Empty:
                dead = [i for i, w in enumerate(self._workers)
                        if self._workers_status[i] and not w.is_alive()]
                if dead:
                    raise RuntimeError(f"DataLoader worker (pid(s) {dead}) exited "
                                       "unexpectedly") from None

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]  # an exhausted worker's task
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, _worker.IterableStop):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker is exhausted
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            w.join(timeout=_POLL)

    def __del__(self):
        if getattr(self, "_done_event", None) is not None:
            self._shutdown_workers()
