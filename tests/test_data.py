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


def test_random_sampler_draws_lazily_as_torch():
    """torch 2.13's RandomSampler draws 32 indices at a time with replacement (and a
    permutation per pass without): num_samples may be huge, and the stream is the
    generator's randint chunks (randperms), which both libraries check of themselves."""
    def f(L, log):
        D = L.utils.data
        s = D.RandomSampler(range(10), replacement=True, num_samples=int(1e10))
        it = iter(s)
        first = [next(it) for _ in range(100)]
        log.append((len(s), all(type(i) is int and 0 <= i < 10 for i in first)))
        for n, num, repl in [(7, 70, True), (7, 32, True), (7, 5, True), (5, 12, False),
                             (5, 3, False)]:
            got = list(D.RandomSampler(range(n), repl, num,
                                       generator=L.Generator().manual_seed(3)))
            g = L.Generator().manual_seed(3)
            if repl:
                want = [i for k in range(num // 32) for i in L.randint(0, n, (32,),
                                                                      generator=g).tolist()]
                want += L.randint(0, n, (num % 32,), generator=g).tolist()
            else:
                want = [i for k in range(num // n) for i in L.randperm(n, generator=g).tolist()]
                want += L.randperm(n, generator=g).tolist()[:num % n]
            log.append((len(got), got == want))
        g = L.Generator().manual_seed(4)
        got = list(D.SubsetRandomSampler([5, 7, 9, 11], generator=g))
        g = L.Generator().manual_seed(4)
        log.append(got == [[5, 7, 9, 11][i] for i in L.randperm(4, generator=g).tolist()])
    same(f)


def test_random_sampler_without_generator_is_reproducible():
    eg.manual_seed(0)
    a = list(eg.utils.data.RandomSampler(range(9), replacement=True, num_samples=40))
    b = list(eg.utils.data.RandomSampler(range(9), replacement=True, num_samples=40))
    eg.manual_seed(0)
    assert list(eg.utils.data.RandomSampler(range(9), replacement=True, num_samples=40)) == a
    assert a != b and set(a) <= set(range(9))  # each pass seeds a generator of its own


def test_worker_numpy_seed_is_torchs():
    from torch.utils.data._utils.worker import _generate_state
    from eagergrad.utils.data._worker import _generate_state as ours
    r = np.random.default_rng(0)
    for _ in range(300):
        base, wid = int(r.integers(0, 2**63 - 1)), int(r.integers(0, 64))
        assert ours(base, wid) == _generate_state(base, wid)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # (torch's __del__)
def test_worker_options_errors():
    same_error(lambda L: iter(L.utils.data.DataLoader([1, 2], num_workers=2, prefetch_factor=0)),
               "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter",
               AssertionError)
    same_error(lambda L: L.utils.data.DataLoader([1, 2], num_workers=2, timeout=-1),
               "timeout option should be non-negative", ValueError)
    same_error(lambda L: iter(L.utils.data.DataLoader([1, 2], timeout=1)),
               "_SingleProcessDataLoaderIter requires timeout == 0", AssertionError)
    same(lambda L: list(L.utils.data.DataLoader([1, 2], pin_memory=True,
                                                pin_memory_device="cuda")))

    import dataclasses
    from torch.utils.data._utils.worker import WorkerInfo
    assert eg.utils.data.get_worker_info() is None
    assert [(f.name, f.default) for f in dataclasses.fields(eg.utils.data.WorkerInfo)] == \
        [(f.name, f.default) for f in dataclasses.fields(WorkerInfo)]


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
