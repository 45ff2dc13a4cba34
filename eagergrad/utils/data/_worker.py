"""What a DataLoader worker runs: the fetchers (indices -> collated batch), the worker loop,
`get_worker_info`, and torch's ExceptionWrapper (a worker's error re-raised in the main
thread with the worker's traceback). Workers are threads (see DataLoader's docstring)."""
import sys
import threading
import traceback

from ... import _mode, creation
from ...device import set_default_device

__all__ = ["WorkerInfo", "get_worker_info"]


class _Local(threading.local):
    info = None


_local = _Local()


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: id, num_workers, seed and dataset
    (the worker's own copy). Read-only, as torch's."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = [f"{k}={getattr(self, k)}" for k in self.__keys]
        return f"{self.__class__.__name__}({', '.join(items)})"


def get_worker_info():
    """In a DataLoader worker, its WorkerInfo (id, num_workers, seed, dataset); elsewhere
    None. An IterableDataset shards its stream with it (otherwise every worker yields all of
    it, as in torch).

    >>> get_worker_info() is None
    True
    """
    return _local.info


class KeyErrorMessage(str):
    def __repr__(self):  # KeyError shows repr(message): keep the traceback's newlines
        return self


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback text (torch's)."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a constructor that wants other args (torch's)
            raise RuntimeError(msg) from None
        raise exception


# ---- fetchers: one task (a batch of indices, or one index) -> collated data -------------------
class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        ds = self.dataset
        if self.auto_collation:
            getitems = getattr(ds, "__getitems__", None)
            data = getitems(index) if getitems else [ds[i] for i in index]
        else:
            data = ds[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class IterableStop:
    """A worker's IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    """A persistent worker starts a new epoch."""


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, state):
    """torch's _worker_loop, in a thread: take the creating thread's grad mode and default
    device (`state`; a forked worker inherits them), seed this thread's generator with
    base_seed + worker_id, run init_fn, then answer (task id, indices) from index_queue with
    (task id, batch or wrapped exception) on data_queue until told to stop (None)."""
    _mode.restore_state(state[0])
    set_default_device(state[1])
    seed = base_seed + worker_id
    creation.seed_thread(seed)
    _local.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"
    init_exception = fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:  # noqa: BLE001 - the user's init_fn/dataset: re-raised in the main thread
        init_exception = ExceptionWrapper(where=where)
    iteration_end = False
    while True:
        r = index_queue.get()
        if isinstance(r, ResumeIteration):
            data_queue.put((r, None))
            iteration_end = False
            try:
                fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
            except Exception:  # noqa: BLE001 - the user's dataset: re-raised in the main thread
                init_exception = ExceptionWrapper(where=where)
            continue
        if r is None:
            break
        if done_event.is_set() or iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data, init_exception = init_exception, None
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not iterable:
                    data = ExceptionWrapper(where=where)
                else:
                    data = IterableStop(worker_id)
                    iteration_end = True
            except Exception:  # noqa: BLE001 - the user's code: re-raised in the main thread
                data = ExceptionWrapper(where=where)
        data_queue.put((idx, data))
        del data
