"""What a DataLoader worker process runs: the fetchers (indices -> collated batch), the worker
loop, `get_worker_info`, torch's seeding of a worker, torch's ExceptionWrapper (a worker's
error re-raised in the main process with the worker's traceback), and the transfer of a
batch (pickled, its tensors as numpy arrays; the main process makes the tensors)."""
import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ... import creation
from ...tensor import Tensor
from . import _host

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What `get_worker_info()` returns in a worker: its id, num_workers, its seed and its
    dataset (this process's copy); frozen, as torch's.

    >>> WorkerInfo(id=0, num_workers=2, seed=5, dataset=None).seed
    5
    """

    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """In a DataLoader worker process, its WorkerInfo (id, num_workers, seed, dataset);
    elsewhere None. An IterableDataset shards its stream with it (otherwise every worker
    yields all of it, as in torch).

    >>> get_worker_info() is None
    True
    """
    return _worker_info


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
        name = getattr(self, "type_name", None) or self.exc_type.__name__
        msg = f"Caught {name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001 - a constructor that wants other args (torch's)
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception  # (no cycle through this frame: the iterator is freed at once)


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


def _generate_state(base_seed, worker_id):
    """torch's seed of numpy's global generator in worker `worker_id`: numpy's SeedSequence
    hash of (worker_id, base_seed) (torch/utils/data/_utils/worker.py)."""
    mask = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    pool = [0] * 4
    const_a = [0x43B0D7E5]

    def hash_(value):
        value = (value ^ const_a[0]) & mask
        const_a[0] = (const_a[0] * 0x931E8875) & mask
        value = (value * const_a[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x, y):
        r = (((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)) & mask
        return (r ^ (r >> 16)) & mask

    for i in range(4):
        pool[i] = hash_(entropy[i])
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_(pool[i_src]))
    const_b = 0x8B51F9DD
    state = []
    for i_dst in range(4):
        v = (pool[i_dst] ^ const_b) & mask
        const_b = (const_b * 0x58F38DED) & mask
        v = (v * const_b) & mask
        state.append((v ^ (v >> 16)) & mask)
    return state


def _seed(base_seed, worker_id):
    """torch's worker seeding: Python's random and eagergrad's global generator get
    base_seed + worker_id, numpy's global generator torch's hash of both. eagergrad's key is
    made at the first draw (none is made in a forked worker: NOTE [fork workers and jax])."""
    seed = base_seed + worker_id
    random.seed(seed)
    creation._rng.seed = None
    creation._rng.key = None
    creation._global_seed[0] = seed
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


# ---- the transfer: a batch pickled with its tensors as numpy arrays -----------------------
class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if obj.__class__ is not Tensor:
            return NotImplemented
        if obj._requires_grad and obj._grad_fn is not None:
            raise RuntimeError(
                "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                "autograd does not support crossing process boundaries.  If you just want to "
                "transfer the data, call detach() on the tensor before serializing (e.g., "
                "putting it on the queue).")
        return _rebuild_tensor, (_host.host_array(obj),
                                 obj._requires_grad)


def _rebuild_tensor(array, requires_grad):
    """In the main process: a tensor of a worker's batch."""
    t = creation.from_numpy(array)
    return t.requires_grad_() if requires_grad else t


def dumps(obj):
    buf = io.BytesIO()
    _Pickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getbuffer()


def _send(conn, idx, data, where):
    """Send (idx, data) to the main process; what cannot be pickled is sent as the error
    pickling raised (re-raised there), and a wrapped exception whose type cannot be pickled
    (a local class) as a RuntimeError with its message."""
    try:
        payload = dumps((idx, data))
    except Exception:  # noqa: BLE001 - the user's data: re-raised in the main process
        wrapper = data if isinstance(data, ExceptionWrapper) else ExceptionWrapper(where=where)
        try:
            payload = dumps((idx, wrapper))
        except Exception:  # noqa: BLE001 - the exception's own type does not pickle
            wrapper.type_name, wrapper.exc_type = wrapper.exc_type.__name__, RuntimeError
            payload = dumps((idx, wrapper))
    conn.send_bytes(payload)


_WATCH = 1.0  # seconds between a waiting worker's checks that the main process is alive


def worker_loop(iterable, dataset, index_queue, conn, done, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers, host, inherited):
    """torch's _worker_loop, in a worker process: seed (`_seed`), set get_worker_info(), run
    init_fn, then answer (task id, indices) from index_queue with (task id, batch or
    wrapped exception) on `conn` until told to stop (None), the main process is gone, or
    `done` is set (the remaining tasks are skipped). `host`: forked (host mode, no jax);
    `inherited`: the main process's connections a forked child holds copies of, closed."""
    global _worker_info
    try:
        for c in inherited:
            c.close()
        if host:
            _host.enter()
        seed = _seed(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001 - the user's init_fn/dataset: re-raised in main
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                r = index_queue.get(timeout=_WATCH)
            except queue.Empty:
                continue
            if isinstance(r, ResumeIteration):
                _send(conn, r, None, where)
                iteration_end = False
                try:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                           drop_last)
                except Exception:  # noqa: BLE001 - the user's dataset: re-raised in main
                    init_exception = ExceptionWrapper(where=where)
                continue
            if r is None:
                break
            if done.value or iteration_end:
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
                except Exception:  # noqa: BLE001 - the user's code: re-raised in main
                    data = ExceptionWrapper(where=where)
            _send(conn, idx, data, where)
            del data, idx, index, r
    except (KeyboardInterrupt, EOFError, OSError):
        pass  # (interrupted, or the main process is gone: it raises, or is exiting)
