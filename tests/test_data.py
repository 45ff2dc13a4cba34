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


def test_workers_and_other_utils_are_not_implemented():
    with pytest.raises(NotImplementedError, match="num_workers > 0"):
        eg.utils.data.DataLoader(_ds(eg), num_workers=2)
    with pytest.raises(NotImplementedError, match="torch.utils.checkpoint"):
        eg.utils.checkpoint
    with pytest.raises(NotImplementedError, match="torch.utils.data.WeightedRandomSampler"):
        eg.utils.data.WeightedRandomSampler
