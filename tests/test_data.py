"""eagergrad.utils.data against torch.utils.data: datasets, samplers, DataLoader batches and
default_collate's dtypes/shapes/values on every deterministic path; shuffling (a different
RNG from torch's) is checked to be a permutation, reproducible under manual_seed."""
import collections

import numpy as np
import pytest
from conftest import same, same_error

import eagergrad as eg

rng = np.random.default_rng(1)
X = rng.standard_normal((10, 3)).astype(np.float32)
Y = rng.integers(0, 4, 10)

Point = collections.namedtuple("Point", "x y")


def _ds(L):
    return L.utils.data.TensorDataset(L.tensor(X), L.tensor(Y))


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=10),
                                dict(batch_size=4, shuffle=False)],
                         ids=lambda kw: str(kw))
def test_loader_batches(kw):
    def f(L):
        loader = L.utils.data.DataLoader(_ds(L), **kw)
        return len(loader), list(loader)
    same(f)


SAMPLES = [
    [1.5, 2.0, -3.25],
    [1, 2, 3],
    [True, False],
    [np.float32(1.5), np.float32(2.5)],
    [np.int32(3), np.int32(4)],
    [np.arange(3, dtype=np.int16), np.arange(3, 6, dtype=np.int16)],
    [np.ones((2, 2)), np.zeros((2, 2))],
    ["a", "b"],
    [{"x": 1.0, "y": np.float32(2), "z": [1, 2]}, {"x": 3.0, "y": np.float32(4), "z": [3, 4]}],
    [(1, 2.0, "s"), (3, 4.0, "t")],
    [[1, 2.0], [3, 4.0]],
    [Point(1, np.ones(2)), Point(2, np.zeros(2))],
]


@pytest.mark.parametrize("batch", SAMPLES, ids=range(len(SAMPLES)))
def test_default_collate(batch):
    same(lambda L: L.utils.data.default_collate(batch))


def test_default_collate_tensors():
    def f(L):
        c = L.utils.data.default_collate
        return (c([L.tensor(X[0]), L.tensor(X[1])]),
                c([(L.tensor(X[0]), L.tensor(1)), (L.tensor(X[1]), L.tensor(2))]),
                c([{"a": L.tensor([1, 2], dtype=L.int32)}] * 3))
    same(f)


def test_default_convert():
    def f(L):
        conv = L.utils.data.default_convert
        return (conv(np.arange(3)), conv({"a": np.float32(2.0), "b": (1, np.ones(2))}),
                conv([np.int8(1), "x"]), conv(Point(np.ones(1), 2)))
    same(f)


@pytest.mark.parametrize("batch,exc,phrase", [
    ([object(), object()], TypeError, "default_collate: batch must contain tensors"),
    ([[1, 2], [3]], RuntimeError, "each element in list of batch should be of equal size"),
    ([np.array(["a"]), np.array(["b"])], TypeError, "default_collate: batch must contain"),
])
def test_default_collate_errors(batch, exc, phrase):
    same_error(lambda L: L.utils.data.default_collate(batch), phrase, exc)


def test_collate_fn_and_dict_dataset():
    class DS:
        def __init__(self, L):
            self.L = L

        def __getitem__(self, i):
            return {"x": X[i], "y": int(Y[i]), "w": float(i) / 3}

        def __len__(self):
            return 7

    def f(L, log):
        log.append(list(L.utils.data.DataLoader(DS(L), batch_size=3)))
        log.append(list(L.utils.data.DataLoader(DS(L), batch_size=2,
                                                collate_fn=lambda b: [s["y"] for s in b])))
    same(f)


def test_iterable_dataset():
    def make(L):
        class Stream(L.utils.data.IterableDataset):
            def __iter__(self):
                return iter([(float(i), i) for i in range(7)])

            def __len__(self):
                return 7
        return Stream()

    def f(L, log):
        for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                   dict(batch_size=None), dict()]:
            loader = L.utils.data.DataLoader(make(L), **kw)
            log.append((len(loader), list(loader)))
    same(f)


def test_subset_concat_and_samplers():
    def f(L, log):
        ds = _ds(L)
        sub = L.utils.data.Subset(ds, [4, 0, 9])
        log.append((len(sub), sub[1], sub.__getitems__([0, 2])))
        cat = L.utils.data.ConcatDataset([sub, ds])
        log.append((len(cat), cat.cumulative_sizes, cat[2], cat[3], cat[-1]))
        cat2 = sub + ds
        log.append((len(cat2), cat2[5]))
        log.append(list(L.utils.data.SequentialSampler(range(4))))
        bs = L.utils.data.BatchSampler(L.utils.data.SequentialSampler(range(7)), 3, False)
        log.append((list(bs), len(bs)))
        bs = L.utils.data.BatchSampler(range(7), 3, True)
        log.append((list(bs), len(bs)))
        loader = L.utils.data.DataLoader(ds, batch_sampler=[[3, 1], [0]])
        log.append(list(loader))
        loader = L.utils.data.DataLoader(ds, sampler=[9, 8, 7], batch_size=2)
        log.append(list(loader))
        log.append(list(L.utils.data.DataLoader(sub, batch_size=2)))
    same(f)


def test_random_split_lengths():
    def f(L, log):
        for lengths in ([3, 7], [0.5, 0.5], [0.3, 0.3, 0.4], [0.33, 0.33, 0.34], [10, 0]):
            parts = L.utils.data.random_split(range(10), lengths)
            log.append([len(p) for p in parts])
    same(f, quiet=True)


def test_random_split_is_a_reproducible_partition():
    eg.manual_seed(3)
    parts = eg.utils.data.random_split(range(10), [0.3, 0.7])
    idx = [i for p in parts for i in p.indices]
    assert sorted(idx) == list(range(10))
    eg.manual_seed(3)
    assert [p.indices for p in eg.utils.data.random_split(range(10), [0.3, 0.7])] == \
        [p.indices for p in parts]


def test_shuffle_is_a_reproducible_permutation():
    ds = eg.utils.data.TensorDataset(eg.arange(20))

    def epoch():
        return [int(i) for b in eg.utils.data.DataLoader(ds, batch_size=6, shuffle=True)
                for i in b[0].tolist()]
    eg.manual_seed(0)
    a, b = epoch(), epoch()
    assert sorted(a) == sorted(b) == list(range(20))
    assert a != b  # a fresh permutation per epoch
    eg.manual_seed(0)
    assert epoch() == a and epoch() == b
    s = list(eg.utils.data.SubsetRandomSampler([5, 7, 9, 11]))
    assert sorted(s) == [5, 7, 9, 11]
    r = list(eg.utils.data.RandomSampler(range(5), replacement=True, num_samples=12))
    assert len(r) == 12 and set(r) <= set(range(5))
    r = list(eg.utils.data.RandomSampler(range(5), num_samples=12))
    assert sorted(r[:5]) == sorted(r[5:10]) == list(range(5))


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda L, ds: L.utils.data.DataLoader(ds, num_workers=-1), ValueError,
     "num_workers option should be non-negative"),
    (lambda L, ds: L.utils.data.DataLoader(ds, sampler=[0], shuffle=True), ValueError,
     "sampler option is mutually exclusive with shuffle"),
    (lambda L, ds: L.utils.data.DataLoader(ds, batch_sampler=[[0]], batch_size=2), ValueError,
     "batch_sampler option is mutually exclusive"),
    (lambda L, ds: L.utils.data.DataLoader(ds, batch_size=None, drop_last=True), ValueError,
     "batch_size=None option disables auto-batching"),
    (lambda L, ds: L.utils.data.DataLoader(ds, prefetch_factor=2), ValueError,
     "prefetch_factor option could only be specified"),
    (lambda L, ds: L.utils.data.DataLoader(ds, persistent_workers=True), ValueError,
     "persistent_workers option needs num_workers > 0"),
    (lambda L, ds: L.utils.data.BatchSampler(range(3), 0, False), ValueError,
     "batch_size should be a positive integer value"),
    (lambda L, ds: L.utils.data.RandomSampler(ds, num_samples=0), ValueError,
     "num_samples should be a positive integer value"),
    (lambda L, ds: L.utils.data.TensorDataset(L.zeros(3), L.zeros(4)), AssertionError,
     "Size mismatch between tensors"),
    (lambda L, ds: L.utils.data.ConcatDataset([]), AssertionError,
     "datasets should not be an empty iterable"),
    (lambda L, ds: L.utils.data.random_split(ds, [3, 3]), ValueError,
     "Sum of input lengths does not equal"),
    (lambda L, ds: L.utils.data.random_split(ds, [1.5, -0.5]), ValueError,
     "Fraction at index 0 is not between 0 and 1"),
    (lambda L, ds: L.utils.data.ConcatDataset([ds])[-11], ValueError,
     "absolute value of index should not exceed dataset length"),
])
def test_errors(make, exc, phrase):
    same_error(lambda L: make(L, _ds(L)), phrase, exc)


def test_iterable_dataset_rejects_shuffle():
    def f(L):
        class S(L.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))
        L.utils.data.DataLoader(S(), shuffle=True)
    same_error(f, "DataLoader with IterableDataset: expected unspecified shuffle option",
               ValueError)


def test_other_utils_are_not_implemented():
    with pytest.raises(NotImplementedError, match="torch.utils.dlpack"):
        eg.utils.dlpack


# ---- workers (threads here, processes in torch: the batches must agree) ----------------------
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
                                                                     prefetch_factor=1)]:
            loader = L.utils.data.DataLoader(_Rows(L), num_workers=2, **kw)
            log.append((len(loader), list(loader)))
        loader = L.utils.data.DataLoader(_ds(L), batch_size=4, num_workers=2,
                                         persistent_workers=True)
        log.append([list(loader), list(loader)])
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
                       dict(batch_size=None)]:
                log.append(list(L.utils.data.DataLoader(Count(0, 7, shard), num_workers=2,
                                                        **kw)))
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


def test_worker_error_carries_the_worker_traceback():
    """torch re-raises a worker's exception as the same type, with the message "Caught
    ValueError in DataLoader worker process 1.\nOriginal Traceback (most recent call
    last):\n..." (checked here without torch: its worker processes take ~10 s to shut
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
    assert epochs(num_workers=3, prefetch_factor=1) == want
    got = epochs(num_workers=2, in_order=False)
    assert [sorted(sum(e, [])) for e in got] == [list(range(23))] * 2


def test_worker_seeds_and_info():
    seen = []

    def init(worker_id):
        info = eg.utils.data.get_worker_info()
        seen.append((worker_id, info.id, info.num_workers, info.seed, eg.initial_seed(),
                     eg.rand(1).item(), info.dataset is not ds, type(info.dataset)))
        with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo"):
            info.id = 5
    ds = eg.utils.data.TensorDataset(eg.arange(8))
    eg.manual_seed(7)
    list(eg.utils.data.DataLoader(ds, num_workers=2, worker_init_fn=init))
    seen.sort()
    assert [s[:3] for s in seen] == [(0, 0, 2), (1, 1, 2)]
    base = seen[0][3]
    assert seen[1][3] == base + 1 and [s[4] for s in seen] == [base, base + 1]
    assert all(s[6] and s[7] is eg.utils.data.TensorDataset for s in seen)
    assert eg.initial_seed() == 7  # the main thread's generator is untouched
    first = sorted(seen)
    seen.clear()
    eg.manual_seed(7)
    list(eg.utils.data.DataLoader(ds, num_workers=2, worker_init_fn=init))
    assert sorted(seen) == first  # the base seed comes from the seeded generator


def test_worker_timeout():
    import time

    class Slow:
        def __getitem__(self, i):
            time.sleep(0.5)
            return i

        def __len__(self):
            return 2
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.05 seconds$"):
        list(eg.utils.data.DataLoader(Slow(), num_workers=1, timeout=0.05))


def test_pin_memory_warns_on_cpu():
    same(lambda L: list(L.utils.data.DataLoader([1, 2], pin_memory=True)))


@pytest.mark.parametrize("make,exc,phrase", [
    (lambda L: L.utils.data.DataLoader([1], num_workers=2, multiprocessing_context="bad"),
     ValueError, "multiprocessing_context option should specify a valid start method"),
    (lambda L: L.utils.data.DataLoader([1], num_workers=2, multiprocessing_context=5),
     TypeError, "multiprocessing_context option should be a valid context object"),
    (lambda L: L.utils.data.DataLoader([1], multiprocessing_context="spawn"), ValueError,
     "multiprocessing_context can only be used with multi-process loading"),
    (lambda L: L.utils.data.DataLoader([1], num_workers=2, prefetch_factor=-1), ValueError,
     "prefetch_factor option should be non-negative"),
    (lambda L: L.utils.data.DataLoader([1, "a"], batch_size=2).__iter__().__next__(),
     TypeError, "new(): invalid data type 'str'"),
    (lambda L: next(iter(L.utils.data.DataLoader([L.zeros(2), 1], batch_size=2))), TypeError,
     "expected Tensor as element 1 in argument 0, but got int"),
    (lambda L: next(iter(L.utils.data.DataLoader([1, L.zeros(2)], batch_size=2))), ValueError,
     "only one element tensors can be converted to Python scalars"),
    (lambda L: next(iter(L.utils.data.DataLoader([{"a": 1}, {"b": 2}], batch_size=2))),
     KeyError, "'a'"),
    (lambda L: next(iter(L.utils.data.DataLoader([np.zeros(2), 1], batch_size=2))),
     RuntimeError, "stack expects each tensor to be equal size"),
    (lambda L: L.utils.data.WeightedRandomSampler([0.1, 0.9], 0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
    (lambda L: L.utils.data.WeightedRandomSampler([0.1, 0.9], 2, replacement=1), ValueError,
     "replacement should be a boolean value, but got replacement=1"),
    (lambda L: L.utils.data.WeightedRandomSampler([[0.1, 0.9]], 2), ValueError,
     "weights should be a 1d sequence but given weights have shape (1, 2)"),
    (lambda L: list(L.utils.data.WeightedRandomSampler([0.1, 0.9], 5, False)), RuntimeError,
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    (lambda L: list(L.utils.data.WeightedRandomSampler([0.0, 0.0], 1)), RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    (lambda L: list(L.utils.data.WeightedRandomSampler([1.0, -1.0], 1)), RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda L: L.utils.data.StackDataset([1, 2], [3]), ValueError,
     "Size mismatch between datasets"),
    (lambda L: L.utils.data.StackDataset([1, 2], b=[3, 4]), ValueError,
     "Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``)"),
    (lambda L: L.utils.data.StackDataset(), ValueError, "At least one dataset should be passed"),
    (lambda L: list(L.utils.data.ChainDataset([range(2)])), AssertionError,
     "ChainDataset only supports IterableDataset"),
    (lambda L: L.utils.data.ConcatDataset([L.utils.data.ChainDataset([])]), AssertionError,
     "ConcatDataset does not support IterableDataset"),
])
def test_more_errors(make, exc, phrase):
    same_error(make, phrase, exc)


def test_more_workers_than_cpus_warns_and_attributes_are_frozen():
    import os
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


def test_iterable_dataset_rejects_samplers():
    def f(L, log):
        Count = _counting(L)
        for kw in [dict(sampler=[0]), dict(batch_sampler=[[0]])]:
            try:
                L.utils.data.DataLoader(Count(0, 3, False), **kw)
            except ValueError as e:
                log.append(str(e).split(" option, but got")[0])
    same(f)


def test_stack_chain_and_weighted_sampler():
    def f(L, log):
        Count = _counting(L)
        s = L.utils.data.StackDataset(_ds(L), [i * 10 for i in range(10)])
        log.append((len(s), s[2], s.__getitems__([1, 3])))
        d = L.utils.data.StackDataset(x=_ds(L), y=list(range(10)))
        log.append((d[4], d.__getitems__([0, 9]), list(L.utils.data.DataLoader(d, 4))))
        c = Count(0, 2, False) + Count(5, 7, False)
        log.append((type(c).__name__, list(c), len(L.utils.data.ChainDataset([]))))
        w = L.utils.data.WeightedRandomSampler([0.0, 2.0, 0.0], 4)
        log.append((len(w), list(w), w.weights, w.num_samples, w.replacement))
        log.append(sorted(L.utils.data.WeightedRandomSampler([1, 0, 3, 2], 3, False)))
    same(f)


def test_weighted_sampler_follows_the_weights():
    eg.manual_seed(0)
    r = list(eg.utils.data.WeightedRandomSampler([1.0, 3.0], 4000))
    assert 0.72 < sum(r) / 4000 < 0.78
    g = eg.Generator().manual_seed(2)
    a = list(eg.utils.data.WeightedRandomSampler([1, 1, 1, 1], 4, False, generator=g))
    assert sorted(a) == [0, 1, 2, 3]


def test_workers_inherit_grad_mode_and_default_device():
    seen = []

    class DS:
        def __getitem__(self, i):
            seen.append((eg.is_grad_enabled(), eg.get_default_device()))
            return i

        def __len__(self):
            return 2
    with eg.no_grad(), eg.device("cpu"):
        list(eg.utils.data.DataLoader(DS(), num_workers=2))
    assert seen == [(False, eg.device("cpu"))] * 2


def test_generic_and_abstract_base_classes():
    def f(L, log):
        D = L.utils.data

        class A(D.Dataset[int]):
            def __getitem__(self, i):
                return i * 2

        class S(D.Sampler[int]):
            def __iter__(self):
                return iter([2, 0])

        class NoIter(D.IterableDataset[int]):
            pass
        log.append((A()[3], list(S()), list(D.DataLoader(A(), sampler=S()))))
        for make in (NoIter, D.IterableDataset):
            try:
                make()
            except TypeError as e:
                log.append(str(e))
    same(f)
