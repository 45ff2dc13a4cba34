"""DataLoader: batches from a dataset, in the calling process (num_workers=0) or from worker
processes (num_workers > 0) following torch's worker protocol."""
import atexit
import ctypes
import gc
import itertools
import multiprocessing
import multiprocessing.connection
import multiprocessing.util  # (its exit handler registered first, so that ours runs first)
import os
import pickle
import signal
import time
import warnings

from ... import cuda
from . import _collate, _host, _worker
from .dataset import IterableDataset
from .sampler import (BatchSampler, RandomSampler, SequentialSampler, _draw_seed,
                      _InfiniteConstantSampler)

__all__ = ["DataLoader", "get_worker_info"]

get_worker_info = _worker.get_worker_info
_POLL = 5.0   # seconds between checks that the workers are alive (torch's interval)
_GRACE = 0.5  # seconds a worker has to stop when told, before it is terminated, then killed


class DataLoader:
    """Iterate over `dataset` in batches, with torch's options, defaults and errors.

    Shuffling draws from eagergrad's generator (reproducible under `manual_seed`, not
    torch's order). As in torch, each iteration first draws a base seed from the generator
    (`generator` or the global one).

    With `num_workers` > 0, the batches come from worker processes, as torch's: started by
    `multiprocessing_context` (a start method's name or a context; default multiprocessing's
    default, fork on Linux before Python 3.14), each with its own copy of the dataset (what
    `get_worker_info().dataset` gives, so a `worker_init_fn` may shard it) and its own
    iterator of an IterableDataset (so an unsharded one yields its data once per worker).
    Tasks go round-robin to the workers with `prefetch_factor` per worker in flight, and the
    batches come in the order of num_workers=0 (with `in_order`). Worker i seeds Python's
    random and eagergrad's generator with base_seed + i and numpy's with torch's hash of
    both (what `get_worker_info().seed` and `initial_seed()` give there). `collate_fn` runs
    in the worker; the batch comes back pickled with its tensors as numpy arrays, and the
    main process makes the tensors. A worker's exception is re-raised with its traceback
    ("Caught ValueError in DataLoader worker process 0. Original Traceback..."), a worker
    that dies is reported at once ("DataLoader worker (pid(s) ...) exited unexpectedly"),
    `timeout` bounds each wait, and the workers end when the iterator does (after an epoch,
    or with `persistent_workers` when it is collected, or at exit): a worker that does not
    stop within half a second is terminated. `pin_memory` does nothing (with torch's
    warning when there is no GPU).

    A forked worker never runs jax, which is not fork-safe (NOTE [fork workers and jax] in
    _host.py: a compile in the child hangs). There tensors hold numpy data: the dataset's
    tensors are read as numpy, `tensor`/`as_tensor`/`from_numpy` and the other factories
    that copy data make such tensors, indexing, dtype conversions, reshapes, permutes,
    `stack` and `cat` run in numpy (so TensorDataset, Subset, the default collate and the
    usual `__getitem__` work), and any other eagergrad op or random draw raises
    NotImplementedError rather than hang. Fork stays the default because it is torch's and
    cheap: the workers share the dataset without a copy, lambdas and local classes work,
    and a two-worker loader over a TensorDataset gave its first batch in 0.13 s, against
    6.9 s with "forkserver" and 7.8 s with "spawn" (2 loaded cores), whose workers import
    eagergrad and compile its kernels anew. A dataset that computes with eagergrad in
    `__getitem__` takes `multiprocessing_context="forkserver"` (or "spawn"): those workers
    run eagergrad fully and, as in torch, need a picklable dataset, collate_fn and
    worker_init_fn.

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
        """torch's warning when there are more workers than CPUs."""
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
            return _SingleProcessDataLoaderIter(self)
        if not self.persistent_workers:
            self.check_worker_number_rationality()
            return _MultiProcessingDataLoaderIter(self)
        if self._iterator is None:
            self.check_worker_number_rationality()
            self._iterator = _MultiProcessingDataLoaderIter(self)
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


class _BaseDataLoaderIter:
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
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          f"used as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
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

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


class _Workers:
    """The worker processes of one iterator with their task queues, result pipes and
    `done` flag. Held by `_LIVE` (strongly) until shut down, so never collected with a
    garbage iterator: its queues, pipes and processes are whole when it shuts them down
    (the iterator's __del__ may run after its members' own finalizers)."""

    def __init__(self, ctx):
        self.pid = os.getpid()
        self.done = ctx.RawValue(ctypes.c_bool, False)
        self.processes, self.queues, self.readers = [], [], []
        _LIVE.add(self)

    def shutdown(self):
        """Tell every worker to stop (skipping its queued tasks), give them _GRACE seconds,
        then terminate (SIGTERM) and kill (SIGKILL) the ones still running (a worker stuck
        in the dataset), and reap them all: no zombie, no wait on a stuck worker."""
        if self not in _LIVE or os.getpid() != self.pid:
            return  # (done, or in a forked child, where a copy of this object is garbage)
        _LIVE.discard(self)
        try:
            self.done.value = True
            for q in self.queues:
                q.put(None)
            deadline = time.monotonic() + _GRACE
            for w in self.processes:
                w.join(max(0.0, deadline - time.monotonic()))
            for sig in (signal.SIGTERM, signal.SIGKILL):
                alive = [w for w in self.processes if w.is_alive()]
                for w in alive:
                    w.terminate() if sig == signal.SIGTERM else w.kill()
                deadline = time.monotonic() + _GRACE
                for w in alive:
                    w.join(max(0.0, deadline - time.monotonic()) if sig == signal.SIGTERM
                           else None)
        finally:
            for q in self.queues:
                q.close()
            for r in self.readers:
                r.close()


# the live workers, shut down at exit before multiprocessing's own handler (which would
# terminate them, but wait forever on one that ignores SIGTERM)
_LIVE = set()


@atexit.register
def _shutdown_at_exit():
    for w in list(_LIVE):
        w.shutdown()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """torch's _MultiProcessingDataLoaderIter. Tasks go to each worker through its own
    multiprocessing Queue (a put never blocks), results come back through its own pipe;
    waiting on the pipes and the processes' sentinels at once reports a dead worker at
    once (torch learns it from SIGCHLD)."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent_workers = loader.persistent_workers
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        host = ctx.get_start_method() == "fork"
        if host:
            _host.prepare(self._dataset, self._collate_fn, loader.worker_init_fn)
        pool = self._pool = _Workers(ctx)
        self._workers, self._index_queues, self._readers = pool.processes, pool.queues, \
            pool.readers
        for i in range(self._num_workers):
            q = ctx.Queue()
            q.cancel_join_thread()
            reader, writer = ctx.Pipe(duplex=False)
            # (a forked child closes its copies of every main-side pipe end)
            inherited = [r for p in _LIVE for r in p.readers] + [reader] if host else ()
            w = ctx.Process(
                target=_worker.worker_loop, name=f"DataLoader worker {i}", daemon=True,
                args=(self._iterable, self._dataset, q, writer, pool.done,
                      self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, i, self._num_workers, host,
                      inherited))
            self._index_queues.append(q)
            self._readers.append(reader)
            try:
                _start(w, host)
            except (TypeError, AttributeError, pickle.PicklingError):
                warnings.warn("Got pickle error when attempting to start a worker Process. "
                              "This might be because the worker Process arguments are not "
                              "picklable. Python 3.14+ changed the multiprocessing start "
                              "method in non-Mac POSIX platforms to 'forkserver', which "
                              "requires the worker Process arguments to be picklable. You can "
                              "also try multiprocessing.set_start_method('fork').",
                              stacklevel=3)
                pool.shutdown()
                raise
            finally:
                writer.close()
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
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

    def _try_get_data(self, timeout):
        """(True, data) from any active worker within `timeout` seconds, else (False, None);
        raises torch's error if an active worker has died."""
        live = [i for i, up in enumerate(self._workers_status) if up]
        handles = [self._readers[i] for i in live] + [self._workers[i].sentinel for i in live]
        ready = multiprocessing.connection.wait(handles, timeout)
        for i in live:
            if self._readers[i] in ready:
                try:
                    return True, pickle.loads(self._readers[i].recv_bytes())
                except EOFError:  # (it closed its pipe: it is exiting)
                    self._workers[i].join(_GRACE)
        failed = [i for i in live if not self._workers[i].is_alive()]
        if failed:
            for i in failed:
                self._mark_worker_as_unavailable(i)
            pids = ", ".join(str(self._workers[i].pid) for i in failed)
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                from _death(self._workers[failed[0]])
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data(_POLL)
            if ok:
                return data

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
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker] and (
                    self._in_order or self._workers_num_tasks[worker] <
                    max_tasks // sum(self._workers_status)):
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._workers_num_tasks[worker] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        self._pool.shutdown()

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()


def _start(w, fork):
    """Start worker process `w`. A fork happens with the garbage collector's objects frozen,
    so that the child never runs the finalizers of this process's garbage (which would
    close, delete or stop this process's things from the child), and without jax's warning
    (the child does not run jax)."""
    frozen = fork and not gc.get_freeze_count()
    if frozen:
        gc.freeze()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)  # (jax's)
            warnings.filterwarnings("ignore", ".*multi-threaded.*fork", DeprecationWarning)
            w.start()
    finally:
        if frozen:
            gc.unfreeze()


def _death(w):
    """torch's message for how worker process `w` ended (the cause of its error)."""
    code = w.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code)
        except ValueError:
            name = str(-code)
        return RuntimeError(f"DataLoader worker (pid {w.pid}) is killed by signal: {name}. ")
    return RuntimeError(f"DataLoader worker (pid {w.pid}) exited unexpectedly with exit code "
                        f"{code}. Details are lost due to multiprocessing. Rerunning with "
                        "num_workers=0 may give better error trace.")
