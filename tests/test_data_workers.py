"""DataLoader worker processes against torch's: batches, order, collate structures, sharding,
seeds, errors, a dead or stuck worker, timeout, exit with live workers; a forked worker's
host mode (no jax in the child: NOTE [fork workers and jax]); spawn and forkserver
workers; CPU-bound work in parallel. Every test starts processes: the module is slow."""
import collections
import dataclasses
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest
from conftest import same
from torch.utils.data._utils.worker import _generate_state as torch_generate_state

import eagergrad as eg

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning"),  # (jax, at torch's)
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]

rng = np.random.default_rng(1)
X = rng.standard_normal((10, 3)).astype(np.float32)
Y = rng.integers(0, 4, 10)

Point = collections.namedtuple("Point", "x y")


def _ds(L):
    return L.utils.data.TensorDataset(L.tensor(X), L.tensor(Y))


def _gone(pid):
    """The process ended and was reaped (a zombie still has its /proc entry)."""
    return not os.path.exists(f"/proc/{pid}")


# ---- batches, order, collate, sharding: against torch's workers --------------------------------
class _Rows:
    """A map-style dataset whose samples say which worker made them."""

    def __init__(self, L):
        self.L = L

    def __getitem__(self, i):
        info = self.L.utils.data.get_worker_info()
        return (self.L.tensor(X[i]), int(Y[i]), -1 if info is None else info.id,
                0 if info is None else info.num_workers)

    def __len__(self):
        return 7


def test_workers_map_style():
    def f(L, log):
        log.append(L.utils.data.get_worker_info())
        for kw in [dict(batch_size=3), dict(batch_size=None), dict(batch_size=2, drop_last=True,
                                                                     prefetch_factor=1),
                   dict(batch_size=2, num_workers=3, prefetch_factor=3)]:
            kw.setdefault("num_workers", 2)
            loader = L.utils.data.DataLoader(_Rows(L), **kw)
            log.append((len(loader), list(loader)))
        loader = L.utils.data.DataLoader(_ds(L), batch_size=4, num_workers=2,
                                         persistent_workers=True)
        log.append([list(loader), list(loader)])
        loader = L.utils.data.DataLoader(_ds(L), batch_size=3, num_workers=2, pin_memory=True)
        log.append(list(loader))
    same(f)


def _counting(L):
    class Count(L.utils.data.IterableDataset):
        """range(start, end), sharded between the workers when `shard`."""

        def __init__(self, start, end, shard):
            self.start, self.end, self.shard = start, end, shard

        def __iter__(self):
            info = L.utils.data.get_worker_info()
            if info is None or not self.shard:
                return iter(range(self.start, self.end))
            return iter(range(self.start + info.id, self.end, info.num_workers))
    return Count


def test_workers_iterable_dataset():
    def init(worker_id):  # torch's documented pattern: shard the worker's dataset copy
        import torch

        import eagergrad
        for lib in (torch, eagergrad):
            info = lib.utils.data.get_worker_info()
            if info is not None:
                ds = info.dataset
                per = (ds.end - ds.start) // info.num_workers
                ds.start, ds.end = ds.start + worker_id * per, ds.start + (worker_id + 1) * per

    def f(L, log):
        Count = _counting(L)
        for shard in (False, True):
            for kw in [dict(batch_size=2), dict(batch_size=2, drop_last=True),
                       dict(batch_size=None), dict(batch_size=3, num_workers=3)]:
                kw.setdefault("num_workers", 2)
                log.append(list(L.utils.data.DataLoader(Count(0, 7, shard), **kw)))
        ds = Count(10, 16, False)
        log.append(list(L.utils.data.DataLoader(ds, batch_size=2, num_workers=2,
                                                worker_init_fn=init)))
        log.append((ds.start, ds.end))  # the workers changed their copies only
        loader = L.utils.data.DataLoader(Count(0, 5, True), batch_size=2, num_workers=2,
                                         persistent_workers=True)
        log.append([list(loader), list(loader)])
        log.append(list(L.utils.data.DataLoader(L.utils.data.ChainDataset(
            [Count(0, 3, True), Count(5, 7, True)]), batch_size=2, num_workers=2)))
    same(f)


class _Samples:
    """Samples of every structure default_collate knows, made in __getitem__ with the
    library's factories and tensor methods (numpy-backed in an eagergrad fork worker)."""

    def __init__(self, L):
        self.L = L

    def __getitem__(self, i):
        L = self.L
        img = np.arange(24, dtype=np.uint8).reshape(2, 3, 4) + i
        return {"img": L.from_numpy(img).permute(2, 0, 1).float(),
                "t": L.tensor([i, i + 1]), "as": L.as_tensor(np.full(2, i, np.float32)),
                "z": L.zeros(2, dtype=L.int32),
                "ar": L.arange(3).unsqueeze(0).expand(2, 3).reshape(-1),
                "f": i / 3, "n": i, "b": i % 2 == 0, "s": f"s{i}", "np": img[0],
                "npf": np.float64(i), "p": Point(i, [i, 2.0]), "tup": (i, (L.tensor(i * 1.5),))}

    def __len__(self):
        return 5


def test_collate_structures_in_workers():
    def f(L, log):
        log.append(list(L.utils.data.DataLoader(_Samples(L), batch_size=2, num_workers=2)))
        log.append(list(L.utils.data.DataLoader(_Samples(L), batch_size=None, num_workers=2)))
    same(f)


def test_datasets_of_tensors_in_workers():
    """TensorDataset & co. over tensors made in the main process (views among them: a forked
    worker reads them as numpy), and collate functions calling stack, cat, t, reshape."""
    def f(L, log):
        D = L.utils.data
        x = L.tensor(X)
        ds = _ds(L)
        for d in (ds, D.Subset(ds, [4, 0, 9, 3]), D.StackDataset(ds, D.Subset(ds, range(10))),
                  D.ConcatDataset([ds, ds]), D.TensorDataset(x[:, 1:], x.t().t(), x[:, 0] > 0)):
            log.append(list(D.DataLoader(d, batch_size=3, num_workers=2)))
        log.append(list(D.DataLoader(ds, batch_size=None, num_workers=2)))
        log.append(list(D.DataLoader(ds, batch_size=4, num_workers=2, drop_last=True,
                                     collate_fn=lambda b: L.stack([s[0] for s in b]).t())))
        log.append(list(D.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=lambda b:
                                     L.cat([s[0][None] for s in b], 0).reshape(-1))))
    same(f)


def test_collate_fn_runs_in_the_worker():
    def f(L):
        return [(pid != os.getpid(), wid) for pid, wid in L.utils.data.DataLoader(
            range(8), batch_size=2, num_workers=2,
            collate_fn=lambda b: (os.getpid(), L.utils.data.get_worker_info().id))]
    same(f)


def test_workers_give_the_batches_of_num_workers_0():
    ds = eg.utils.data.TensorDataset(eg.arange(23))

    def epochs(**kw):
        g = eg.Generator().manual_seed(5)
        eg.manual_seed(1)
        loader = eg.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=g, **kw)
        return [[b[0].tolist() for b in loader] for _ in range(2)]
    want = epochs()
    assert sorted(sum(want[0], [])) == list(range(23)) and want[0] != want[1]
    assert epochs(num_workers=2) == want
    # (persistent workers draw no base seed in later epochs, as torch's: the same first one)
    assert epochs(num_workers=2, persistent_workers=True)[0] == want[0]
    assert epochs(num_workers=3, prefetch_factor=1) == want
    got = epochs(num_workers=2, in_order=False)
    assert [sorted(sum(e, [])) for e in got] == [list(range(23))] * 2


def test_workers_inherit_the_forking_state():
    """A forked worker starts with the main process's grad mode and default device."""
    class DS:
        def __init__(self, L):
            self.L = L

        def __getitem__(self, i):
            return self.L.is_grad_enabled(), str(self.L.get_default_device())

        def __len__(self):
            return 2

    def f(L):
        with L.no_grad():
            return list(L.utils.data.DataLoader(DS(L), num_workers=2))
    same(f)


def test_more_workers_than_cpus_warns_and_attributes_are_frozen():
    n = len(os.sched_getaffinity(0)) + 1

    def f(L, log):
        loader = L.utils.data.DataLoader(range(4), batch_size=2, num_workers=n)
        log.append(list(loader))
        for attr in ("batch_size", "sampler", "dataset"):
            try:
                setattr(loader, attr, None)
            except ValueError as e:
                log.append(str(e))
        loader.num_workers = 1  # (allowed)
        log.append(list(loader))
    same(f)


# ---- seeds and get_worker_info ------------------------------------------------------------
class _SeedReport:
    def __init__(self, L):
        self.L = L

    def __getitem__(self, i):  # (one item per worker: the first draws after seeding)
        info = self.L.utils.data.get_worker_info()
        base = info.seed - info.id
        try:
            info.id = 5
        except dataclasses.FrozenInstanceError as e:
            frozen = str(e)
        return dict(
            id=info.id, num_workers=info.num_workers, dataset=info.dataset is self,
            rng=info.rng, method=info.worker_method, frozen=frozen,
            initial_seed=self.L.initial_seed() == info.seed,
            random=random.random() == random.Random(info.seed).random(),
            numpy=np.random.random_sample() == np.random.RandomState(
                torch_generate_state(base, info.id)).random_sample())

    def __len__(self):
        return 2


def test_worker_info_and_seeds():
    """torch's seeding rule: Python's random and the library's generator get base_seed +
    id, numpy's global generator torch's hash of both; WorkerInfo is a frozen dataclass."""
    same(lambda L: list(L.utils.data.DataLoader(_SeedReport(L), batch_size=None,
                                                num_workers=2)))


def test_worker_seeds_follow_the_generators():
    class DS:
        def __getitem__(self, i):
            info = eg.utils.data.get_worker_info()
            return info.seed, eg.initial_seed()

        def __len__(self):
            return 2

    def seeds(**kw):
        out = list(eg.utils.data.DataLoader(DS(), batch_size=None, num_workers=2, **kw))
        assert [s for s, _ in out] == [i for _, i in out]
        assert out[1][0] == out[0][0] + 1
        return out
    eg.manual_seed(7)
    a = seeds()
    b = seeds()
    eg.manual_seed(7)
    assert seeds() == a and a != b
    assert eg.initial_seed() == 7  # the main process's generator only drew the base seed
    g = seeds(generator=eg.Generator().manual_seed(3))
    eg.manual_seed(11)
    assert seeds(generator=eg.Generator().manual_seed(3)) == g


# ---- a forked worker's host mode: no jax in the child -----------------------------------------
_X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
_A = np.arange(12, dtype=np.uint8).reshape(3, 4)
# what a forked worker computes in numpy (NOTE [fork workers and jax]), each against torch
_HOST_EXPRS = [
    lambda L, X: X[1], lambda L, X: X[-1, -2], lambda L, X: X[:, 1:3, ::2],
    lambda L, X: X[None, ..., 1], lambda L, X: X[[1, 0]], lambda L, X: X[:, L.tensor([[1, 0]])],
    lambda L, X: X[:, L.tensor([True, False, True])], lambda L, X: X[L.tensor(1)],
    lambda L, X: X[1, [0, 2], 1:], lambda L, X: X[5], lambda L, X: X[:, [0, 7]],
    lambda L, X: X[::-1], lambda L, X: X[L.tensor([0.5])], lambda L, X: X[0, 0, 0][0],
    lambda L, X: L.from_numpy(_A).float(), lambda L, X: L.from_numpy(_A).to(L.int16),
    lambda L, X: X.double(), lambda L, X: X[0].long(), lambda L, X: X.bool(),
    lambda L, X: X.half(), lambda L, X: X.type(L.int32), lambda L, X: L.from_numpy(_A).t(),
    lambda L, X: X.view(-1, 4), lambda L, X: X.reshape(4, 6), lambda L, X: X.flatten(1),
    lambda L, X: X.unsqueeze(0), lambda L, X: X[:, :1].squeeze(), lambda L, X: X.squeeze(0),
    lambda L, X: X.transpose(0, 2).contiguous(), lambda L, X: X.permute(2, 0, 1),
    lambda L, X: X[0].T, lambda L, X: X.clone(), lambda L, X: X.detach(),
    lambda L, X: X[0, :1].expand(3, 4), lambda L, X: X.narrow(1, 1, 2),
    lambda L, X: X.select(2, -1), lambda L, X: X.unbind(1), lambda L, X: list(X[0]),
    lambda L, X: X.split(2, 2), lambda L, X: X.chunk(3, 1),
    lambda L, X: L.stack([X[0], X[1]], 1), lambda L, X: L.cat([X[0], X[1].long()], 0),
    lambda L, X: L.tensor([[1, 2], [3, 4]], dtype=L.float64),
    lambda L, X: L.tensor([1.5, -2.7], dtype=L.int64), lambda L, X: L.tensor([True, False]),
    lambda L, X: L.as_tensor(_A), lambda L, X: L.asarray([1.0, 2.0]),
    lambda L, X: L.zeros(2, 3), lambda L, X: L.ones(2, dtype=L.int32),
    lambda L, X: L.full((2,), 7), lambda L, X: L.empty(2, 2).shape, lambda L, X: L.arange(5),
    lambda L, X: L.arange(0, 1, 0.25), lambda L, X: L.linspace(0, 1, 5), lambda L, X: L.eye(3),
    lambda L, X: L.zeros_like(X), lambda L, X: float(X.numpy().sum()),
    lambda L, X: X[0].tolist(), lambda L, X: X[1, 2, 3].item(), lambda L, X: len(X),
    lambda L, X: repr(X[0]), lambda L, X: (X.shape, X.size(1), X.dim(), X.numel(), X.dtype),
    lambda L, X: int(X[0, 0, 3]), lambda L, X: (L.manual_seed(3), L.initial_seed())[1],
    lambda L, X: L.Generator().manual_seed(5).initial_seed(),
]


class _Exprs:
    def __init__(self, L, exprs):
        self.L, self.exprs, self.x = L, exprs, L.tensor(_X)

    def __getitem__(self, i):
        try:
            return self.exprs[i](self.L, self.x)
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return type(e).__name__, str(e)

    def __len__(self):
        return len(self.exprs)


def test_host_mode_computes_as_torch():
    """What a forked eagergrad worker runs in numpy gives torch's values, dtypes and errors
    (torch computing in its own workers)."""
    same(lambda L: list(L.utils.data.DataLoader(_Exprs(L, _HOST_EXPRS), batch_size=None,
                                                num_workers=2, collate_fn=lambda s: s)))


_REFUSED = [
    ("add", lambda X: X + 1), ("sum", lambda X: X.sum()), ("add", lambda X: X.add_(1)),
    ("mul", lambda X: eg.mul(X, X)), ("relu", lambda X: eg.nn.functional.relu(X)),
    ("random draw", lambda X: eg.rand(2)),
    ("random draw", lambda X: eg.randn(2, generator=eg.Generator().manual_seed(1))),
    ("random draw", lambda X: eg.utils.data.RandomSampler(range(3)).__iter__().__next__()),
    ("random state", lambda X: eg.get_rng_state()),
    ("a jax computation", lambda X: eg.argmax(X, 1)),  # (a jax function in a closure)
    ("a jax computation", lambda X: jax.numpy.ones(3) * 2),  # (the dataset's own jax)
]


def test_fork_worker_refuses_jax():
    """Anything else eagergrad (or the dataset) would run with jax raises in a forked
    worker, naming it, instead of hanging there (kernels the main process compiled too)."""
    x = eg.tensor(_X)
    for _, fn in _REFUSED:  # (compiled here first: the child must not run these either)
        try:
            fn(x.clone())
        except NotImplementedError:
            pass
    exprs = [lambda L, X, fn=fn: fn(X) for _, fn in _REFUSED]
    got = list(eg.utils.data.DataLoader(_Exprs(eg, exprs), batch_size=None, num_workers=2,
                                        collate_fn=lambda s: s))
    for (what, _), (exc, msg) in zip(_REFUSED, got):
        assert exc == "NotImplementedError", (what, exc, msg)
        assert what in msg and "DataLoader worker process started by fork" in msg, msg
        assert "multiprocessing_context='forkserver'" in msg


class _Computing:
    """A dataset computing with eagergrad in __getitem__ (picklable: spawn, forkserver)."""

    def __getitem__(self, i):
        x = eg.arange(6.0).reshape(2, 3) * i
        return (x.exp().sum(0) - 1).round(), eg.utils.data.get_worker_info() is not None

    def __len__(self):
        return 6


@pytest.mark.parametrize("ctx", ["spawn", multiprocessing.get_context("forkserver")],
                         ids=["spawn", "forkserver"])
def test_spawn_and_forkserver_workers_run_eagergrad(ctx):
    want = [(a.tolist(), b.tolist()) for a, b in
            eg.utils.data.DataLoader(_Computing(), batch_size=4)]
    got = [(a.tolist(), b.tolist()) for a, b in eg.utils.data.DataLoader(
        _Computing(), batch_size=4, num_workers=2, multiprocessing_context=ctx)]
    assert [a for a, _ in got] == [a for a, _ in want]
    assert [b for _, b in got] == [[True] * 4, [True] * 2]
    with pytest.raises(NotImplementedError, match="'mul' cannot run in a DataLoader worker "
                                                  "process started by fork"):
        list(eg.utils.data.DataLoader(_Computing(), batch_size=4, num_workers=1,
                                      multiprocessing_context="fork"))


def test_unpicklable_arguments_of_a_spawn_worker():
    def f(L):
        class Local:
            def __getitem__(self, i):
                return i

            def __len__(self):
                return 2
        return list(L.utils.data.DataLoader(Local(), num_workers=1,
                                            multiprocessing_context="spawn"))
    want = same(f)
    assert want[1] is AttributeError and "Can't pickle local object" in want[2]


# ---- errors --------------------------------------------------------------------------------
def test_worker_error_carries_the_worker_traceback():
    """torch re-raises a worker's exception as the same type, with the message "Caught
    ValueError in DataLoader worker process 1.\\nOriginal Traceback (most recent call
    last):\\n..." (checked here without torch: its worker processes take ~10 s to shut
    down after an error)."""
    class Bad:
        def __getitem__(self, i):
            if i == 3:
                raise ValueError(f"bad sample {i}")
            return i

        def __len__(self):
            return 6

    loader = eg.utils.data.DataLoader(Bad(), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError) as info:
        next(it)
    got = str(info.value)
    assert got.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback "
                          "(most recent call last):\n")
    assert 'raise ValueError(f"bad sample {i}")' in got and got.endswith("ValueError: bad sample "
                                                                          "3\n")

    def init(worker_id):
        raise KeyError(worker_id)
    with pytest.raises(KeyError) as info:
        list(eg.utils.data.DataLoader(range(4), num_workers=2, worker_init_fn=init))
    assert str(info.value).startswith("Caught KeyError in DataLoader worker process 0.\n")
    assert str(info.value).endswith("KeyError: 0\n")  # (KeyError's message is not repr'd)

    class LocalError(Exception):
        pass

    class Stream(eg.utils.data.IterableDataset):
        def __iter__(self):
            yield 1
            raise LocalError("stream broke")
    with pytest.raises(RuntimeError) as info:  # (a local class cannot travel: its message does)
        list(eg.utils.data.DataLoader(Stream(), num_workers=1))
    assert str(info.value).startswith("Caught LocalError in DataLoader worker process 0.\n")
    assert str(info.value).endswith("LocalError: stream broke\n")

    # a batch that cannot be pickled: the pickling error (torch's queue thread prints it)
    with pytest.raises(AttributeError, match="Caught AttributeError in DataLoader worker "
                                             "process 0.\nOriginal Traceback"):
        list(eg.utils.data.DataLoader(range(2), num_workers=1, collate_fn=lambda b: Bad))


@pytest.mark.parametrize("how", ["kill", "exit"])
def test_dead_worker_is_reported_at_once(how):
    """torch's errors for a worker killed by a signal or ending on its own, within moments
    (measured ~0.05 s; 3 s leave room for a loaded machine)."""
    class Dying:
        def __getitem__(self, i):
            if i == 3:
                if how == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                os._exit(3)
            time.sleep(0.01)
            return i

        def __len__(self):
            return 10

    it = iter(eg.utils.data.DataLoader(Dying(), batch_size=2, num_workers=2))
    pid = it._workers[1].pid
    start = time.perf_counter()
    with pytest.raises(RuntimeError) as info:
        for _ in it:
            pass
    assert time.perf_counter() - start < 3.0
    assert str(info.value) == f"DataLoader worker (pid(s) {pid}) exited unexpectedly"
    assert str(info.value.__cause__) == (
        f"DataLoader worker (pid {pid}) is killed by signal: Killed. " if how == "kill" else
        f"DataLoader worker (pid {pid}) exited unexpectedly with exit code 3. Details are "
        "lost due to multiprocessing. Rerunning with num_workers=0 may give better error "
        "trace.")
    pids = [w.pid for w in it._workers]
    del it, info  # (the traceback holds the iterator too)
    assert all(_gone(p) for p in pids)


class _Stuck:
    def __init__(self, ignore_term=False):
        self.ignore_term = ignore_term

    def __getitem__(self, i):
        if i == 2:
            if self.ignore_term:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                pass
        return i

    def __len__(self):
        return 10


@pytest.mark.parametrize("ignore_term", [False, True])
def test_stuck_worker_does_not_block_del(ignore_term):
    it = iter(eg.utils.data.DataLoader(_Stuck(ignore_term), num_workers=2))
    assert [next(it).item(), next(it).item()] == [0, 1]
    pids = [w.pid for w in it._workers]
    time.sleep(0.2)  # (the worker is in its loop)
    start = time.perf_counter()
    del it
    assert time.perf_counter() - start < 2.0  # (measured 0.5 s, 1.0 s ignoring SIGTERM)
    assert all(_gone(p) for p in pids)


def test_del_of_a_persistent_loader_ends_its_workers():
    loader = eg.utils.data.DataLoader(range(6), batch_size=2, num_workers=2,
                                      persistent_workers=True)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    pids = [w.pid for w in it._workers]
    assert not any(_gone(p) for p in pids)
    del loader, it
    assert all(_gone(p) for p in pids)


def test_timeout():
    """torch's error after `timeout` seconds without a batch (message checked against
    torch's; timing out torch's workers costs seconds more at its shutdown)."""
    it = iter(eg.utils.data.DataLoader(_Stuck(), num_workers=1, timeout=1.0))
    assert [next(it).item(), next(it).item()] == [0, 1]
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 1.0 seconds$"):
        next(it)
    assert 0.99 < time.perf_counter() - start < 4.0


_EXIT_SCRIPT = """
import sys
import eagergrad as torch
from eagergrad.utils.data import DataLoader

class DS:
    def __getitem__(self, i):
        if sys.argv[1] == "stuck" and i == 5:
            while True:
                pass
        return i

    def __len__(self):
        return 8

loader = DataLoader(DS(), batch_size=2, num_workers=2, persistent_workers=True)
if sys.argv[1] != "stuck":
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
it = iter(loader)
next(it)
if sys.argv[1] == "cycle":
    loader.me = loader  # (collected at exit only)
print(*[w.pid for w in loader._iterator._workers], flush=True)
"""


@pytest.mark.parametrize("case", ["idle", "stuck", "cycle"])
def test_exit_with_live_persistent_workers(case, tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(_EXIT_SCRIPT))
    r = subprocess.run([sys.executable, str(script), case], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    pids = [int(p) for p in r.stdout.split()]
    assert len(pids) == 2 and all(_gone(p) for p in pids)
    assert "Traceback" not in r.stderr, r.stderr


# ---- parallelism -----------------------------------------------------------------------------
def _spin(n):
    s = 0
    for k in range(n):
        s += k * k % 7
    return s


class _Heavy:
    """~20 ms of pure Python per item."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return _spin(self.n) + i

    def __len__(self):
        return 40


def _two_processes(n):
    """Wall time of 20 items' work in each of two plain processes (what the machine gives
    two processes now)."""
    ctx = multiprocessing.get_context("fork")
    start = time.perf_counter()
    ps = [ctx.Process(target=_spin, args=(20 * n,)) for _ in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    return time.perf_counter() - start


def test_two_workers_run_cpu_bound_items_in_parallel():
    """Two workers beat the main process alone on pure-Python items (~20 ms each), when the
    machine has two cores to give (checked first with two plain processes: a loaded
    machine, or an autogroup sharing one core's time, skips)."""
    start = time.perf_counter()
    _spin(100_000)
    n = int(100_000 * 0.02 / (time.perf_counter() - start))
    seen = []
    for _ in range(3):
        start = time.perf_counter()
        want = [b.tolist() for b in eg.utils.data.DataLoader(_Heavy(n), batch_size=2)]
        alone = time.perf_counter() - start
        raw = _two_processes(n) / alone
        if raw > 0.7:  # (no second core to give now)
            seen.append(("two processes / one", raw))
            continue
        start = time.perf_counter()
        got = [b.tolist() for b in eg.utils.data.DataLoader(_Heavy(n), batch_size=2,
                                                              num_workers=2)]
        ratio = (time.perf_counter() - start) / alone
        assert got == want
        if ratio < 0.8:
            return
        seen.append(("two workers / none", ratio, "two processes / one", raw))
    if all(len(s) == 2 for s in seen):
        pytest.skip(f"two processes get no second core here now: {seen}")
    pytest.fail(f"no speedup: {seen}")
