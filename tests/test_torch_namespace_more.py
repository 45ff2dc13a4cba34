"""torch.jit (its eager-mode semantics), torch.futures, torch.compiler (what means something
without a compiler), torch.multiprocessing (spawn, queues, sharing strategies; tensors sent
by value, where torch shares memory), torch.version and torch.torch_version (TorchVersion's
comparisons), against torch; the processes-starting tests are slow."""
import multiprocessing
import operator
import pickle
import sys
import threading
import typing
import warnings
from multiprocessing.reduction import ForkingPickler
from typing import Dict, List, Optional, Tuple, Union

import pytest
import torch
import torch.torch_version
from torch._vendor.packaging.version import Version

import eagergrad as eg
import eagergrad.torch_version
from conftest import attempt, msg, same, same_error

LIBS = (torch, eg)


def _warned(fn):
    """fn()'s result (or its exception's type and message) and the warnings it gave, as
    (category name, message)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn()
        except Exception as e:  # noqa: BLE001 - compared with torch's
            out = (type(e).__name__, msg(e))
    return out, [(x.category.__name__, str(x.message)) for x in w]


# ---- torch.version, torch.torch_version -------------------------------------------------------
def test_version_module():
    same(lambda L: (L.version.__all__, L.version.debug, L.version.cuda, L.version.hip,
                    L.version.rocm, L.version.xpu, type(L.version.git_version).__name__,
                    type(L.__version__).__name__, isinstance(L.__version__, str),
                    type(L.version.__version__).__name__, L.torch_version.__all__))
    # eagergrad's own version, the package's, not torch's
    import importlib.metadata
    assert eg.__version__ == eg.version.__version__ == importlib.metadata.version("eagergrad")
    assert eg.__version__ != torch.__version__
    assert eg.version.git_version == "Unknown"  # (a torch built outside git says so too)


VERSIONS = ["2.13.0+cpu", "2.13.0", "2.13", "2.9.1", "2.10", "1.10.0a", "1.10.0a0", "1.10.0b2",
            "1.10.0rc1", "1.10.0c1", "1.10.0.dev20230101", "1.10.0.post1", "1.10.0-1",
            "1.10.0.dev1", "1.10.0a1.dev1", "1.10.0.post1.dev2", "1!0.1", "0.1.0", "v2.0",
            "2.0+cu118", "2.0+cu118.1", "2.0+abc.5", "2.0+5", "parrot", "", " 2.0 ", "2.0.0.0",
            "1.10.0alpha", "1.10.0-beta.3", "1.10.0pre4", "1.10.0preview", "1.10.0r",
            "1.10.0rev3", "1.10.0_post", "1.10.0dev", "2.0.0+CPU"]
OTHERS = VERSIONS + [(2, 0), (1, 10), (2, 13, 0), [1, 10, 0], (0, 1), Version("2.0"),
                     Version("1.10.0a0"), Version("2.13.0+cpu"), 5, None, 2.0]
OPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def _cmp(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__


@pytest.mark.parametrize("left", VERSIONS)
def test_torch_version_compares_as_torch(left):
    TT, ET = torch.torch_version.TorchVersion, eagergrad.torch_version.TorchVersion
    for right in OTHERS:
        for op in OPS:
            assert _cmp(lambda: op(ET(left), right)) == _cmp(lambda: op(TT(left), right)), \
                (left, op.__name__, right)
            assert _cmp(lambda: op(right, ET(left))) == _cmp(lambda: op(right, TT(left))), \
                (right, op.__name__, left)
    assert hash(ET(left)) == hash(left) and str(ET(left)) == left


def test_dunder_version_compares_as_a_torch_version():
    TT = torch.torch_version.TorchVersion
    v = eg.__version__
    for right in ("0.1", "0.1.0", "0.0.9", "0.2", "2.0", (0, 1), (0, 1, 0), (2,), "1.0.0a0"):
        for op in OPS:
            assert op(v, right) == op(TT(str(v)), right), (op.__name__, right)
    assert not v >= "2.0" and v >= (0, 1) and v == "0.1"  # honest: eagergrad 0.1.0
    assert f"{v}" == "0.1.0" and pickle.loads(pickle.dumps(v)) == v


# ---- torch.futures ----------------------------------------------------------------------------
def test_future_result_and_state():
    def f(L, log):
        F = L.futures.Future
        fut = F()
        log.append((fut.done(), isinstance(fut, L.Future), L.jit.Future is F, F is not L.Future,
                    issubclass(F, L.Future), type(fut.then(lambda f: 1)) is L.Future,
                    type(L.futures.collect_all([fut])) is L.Future))
        attempt(log, "torch.Future", lambda: L.Future([L.device("cpu", 0)]).done())
        attempt(log, "set", lambda: fut.set_result([1, 2]))
        log.append((fut.done(), fut.value(), fut.wait()))
        attempt(log, "again", lambda: fut.set_result(3))
        attempt(log, "exc after", lambda: fut.set_exception(ValueError("x")))
        attempt(log, "not an exception", lambda: F().set_exception(3))
        attempt(log, "positional", lambda: F(3))
        log.append(F[int] is not None)
    same(f)


def test_future_value_before_completion_raises():
    for L in LIBS:
        with pytest.raises(RuntimeError):
            L.futures.Future().value()


def test_future_exception():
    def f(L, log):
        err = ValueError("boom")
        fut = L.futures.Future()
        fut.set_exception(err)
        log.append(fut.done())
        for method in (fut.wait, fut.value):
            try:
                method()
            except ValueError as e:
                log.append(e is err)
        attempt(log, "set after", lambda: fut.set_result(1))
    same(f)


def _first_line(e):
    return type(e).__name__, str(e).split("\n")[0]


def test_then_and_callbacks():
    def f(L, log):
        F = L.futures.Future
        a = F()
        b = a.then(lambda fut: fut.wait() * 2)
        log.append((b.done(), isinstance(b, L.Future)))
        a.set_result(5)
        log.append((b.done(), b.value()))
        c = a.then(lambda fut: 1 / 0)  # done already: runs at once
        log.append(c.done())
        try:
            c.wait()
        except RuntimeError as e:
            log.append(_first_line(e))
            log.append(str(e).split("\n")[1:3])
        failed = F()
        failed.set_exception(ValueError("lost"))
        log.append(failed.then(lambda fut: "handled").wait())
        for read in (lambda fut: fut.wait(), lambda fut: fut.value()):
            try:
                failed.then(read).wait()
            except RuntimeError as e:
                log.append(_first_line(e))
        log.append(type(a.then(lambda fut: F()).value()) is F)  # not flattened
        order, z = [], F()
        z.add_done_callback(lambda fut: order.append(1))
        z.then(lambda fut: order.append(2))
        z.add_done_callback(lambda fut: order.append(3))
        z.set_result(0)
        z.add_done_callback(lambda fut: order.append("inline"))
        log.append(order)
        quiet = F()
        quiet.add_done_callback(lambda fut: 1 / 0)  # logged and dropped
        quiet.set_result(1)
        log.append(quiet.value())
    same(f)
    for L in LIBS:
        for call in (lambda: L.futures.Future().then(3),
                     lambda: L.futures.Future().add_done_callback(3),
                     lambda: L.futures.collect_all([1])):
            with pytest.raises(TypeError):
                call()


def test_then_error_names_the_frames():
    fut = eg.futures.Future()
    fut.set_result(1)

    def callback(f):
        return 1 / 0
    with pytest.raises(RuntimeError) as info:
        fut.then(callback).wait()
    frames = str(info.value).split("At:\n")[1]
    assert frames.startswith(f"  {__file__}(") and "): callback\n" in frames
    assert f"): {sys._getframe().f_code.co_name}\n" in frames


def test_collect_all_and_wait_all():
    def f(L, log):
        F = L.futures.Future
        a, b, c = F(), F(), F()
        both = L.futures.collect_all([a, b])
        log.append(both.done())
        b.set_result(2)
        log.append(both.done())
        a.set_result(1)
        log.append((both.done(), [x.value() for x in both.value()]))
        log.append(L.futures.wait_all([a, b, a]))
        log.append((L.futures.wait_all([]), L.futures.collect_all([]).value()))
        # an error: the whole list completes first; the first failed future's error (in the
        # list's order, not in time) is the result's
        x, y, z = F(), F(), F()
        every = L.futures.collect_all([x, y, z])
        z.set_exception(KeyError("k"))
        log.append(every.done())
        y.set_exception(TypeError("t"))
        x.set_result(0)
        attempt(log, "collect_all", every.wait)
        attempt(log, "wait_all", lambda: L.futures.wait_all([x, z, y]))
        c.set_result(3)
        attempt(log, "ok", lambda: L.futures.wait_all([c]))
    same(f)


def test_future_across_threads():
    def f(L, log):
        futs = [L.futures.Future() for _ in range(4)]
        doubled = [fut.then(lambda g: g.wait() * 2) for fut in futs]
        threads = [threading.Timer(0.05 * (4 - i), futs[i].set_result, (i,)) for i in range(4)]
        for t in threads:
            t.start()
        log.append(L.futures.wait_all(doubled))
        log.append([fut.wait() for fut in futs])
        for t in threads:
            t.join()
    same(f)


def test_future_devices_and_pickling():
    def f(L, log):
        for devices in (None, [], ["cpu:0"], [L.device("cpu", 0)], ["meta:0"], ["cpu"],
                        [L.device("cpu")], ["cuda:0"], ["bogus:0"], [0]):
            attempt(log, repr(devices), lambda: L.futures.Future(devices=devices).done())
        attempt(log, "pickle", lambda: pickle.dumps(L.futures.Future()))
    same(f)


# ---- torch.jit ------------------------------------------------------------------------------
def test_jit_eager_answers():
    def f(L, log):
        def fn(x):
            return x + 1
        prop = property(lambda self: 1)
        log.append((L.jit.is_scripting(), L.jit.is_tracing(), L.jit.Final is typing.Final))
        d = {}
        log.append((L.jit.annotate(Dict[str, int], d) is d, L.jit.export(fn) is fn,
                    L.jit.unused(fn) is fn, L.jit.unused(prop) is prop,
                    L.jit.ignore(fn) is fn))
        for kw in ({"drop": False}, {"drop": True}, {"drop_on_export": True}):
            out, warned = _warned(lambda: L.jit.ignore(**kw)(fn) is fn)
            log.append((kw, out, warned))
        log.append(_warned(lambda: L.jit.ignore(3)))
        a = L.jit.Attribute(0.5, float)
        log.append((a.value, a.type, a._fields, tuple(a), type(a).__name__))
        w = L.jit.script_if_tracing(fn)
        log.append((w(L.ones(2)), w.__name__, w.__wrapped__ is fn))
    same(f)


def test_jit_interface():
    class Plain:
        def run(self, x):
            pass

    class Derived(Plain):
        pass

    def f(L, log):
        class Mod(L.nn.Module):
            def forward(self, x):
                pass
        for obj in (3, Derived, type("Sub", (Mod,), {})):
            log.append(_warned(lambda: L.jit.interface(obj)))
        log.append(_warned(lambda: L.jit.interface(Mod) is Mod)[1])  # (torch: no source)
    same(f)
    with pytest.warns(DeprecationWarning, match="torch.jit.interface` is deprecated"):
        assert eg.jit.interface(Plain) is Plain  # (torch compiles it: needs annotations)


ISINSTANCE_CASES = [
    ([1, 2], List[int]), ([1, "a"], List[int]), ([], List[str]), ([[1], [2]], List[List[int]]),
    ([[1], ["a"]], List[List[int]]), ({"a": 1}, Dict[str, int]), ({"a": 1}, Dict[str, str]),
    ({1: [1.0]}, Dict[int, List[float]]), ({}, Dict[str, int]), ((1, "a"), Tuple[int, str]),
    ((1, "a"), Tuple[int, int]), ((1,), Tuple[int, str]), ((), Tuple[()]), (None, Optional[int]),
    (3, Optional[int]), ("s", Optional[int]), ([1], Optional[List[int]]),
    (3, Union[str, int]), (3.0, Union[str, int]), (3, int | None), ([1], list[int]),
    ({"a": (1,)}, dict[str, tuple[int]]), (3, (str, int)), (3, (str, List[int])),
    ([3], (str, List[int])), (3, int), (True, int), ("s", str), ([1], list), ({}, dict),
    ((1,), tuple), ([1], List), ({}, Dict), ((1,), Tuple), (None, Optional), (3, [int]),
    ("ab", "ab"),
]


@pytest.mark.parametrize("case", range(len(ISINSTANCE_CASES)))
def test_jit_isinstance(case):
    obj, target = ISINSTANCE_CASES[case]
    same(lambda L: _warned(lambda: L.jit.isinstance(obj, target)))


def test_jit_isinstance_of_tensors():
    same(lambda L: [L.jit.isinstance(x, t) for x in ([L.ones(1), L.zeros(2)], {"w": L.ones(1)})
                    for t in (List[L.Tensor], Dict[str, L.Tensor], Optional[L.Tensor])])


def test_jit_fork_and_wait():
    def f(L, log):
        fut, warned = _warned(lambda: L.jit.fork(lambda *a, **k: (a, k), 1, b=2))
        log.append((fut.done(), type(fut) is L.Future, isinstance(fut, L.futures.Future),
                    warned, _warned(lambda: L.jit.wait(fut))))
        log.append(_warned(lambda: L.wait(L.fork(L.add, L.ones(2), L.ones(2)))))

        def bad():
            raise ValueError("inner")
        attempt(log, "raises at once", lambda: L.fork(bad))
        log.append((L.JITException is L.jit.Error, issubclass(L.jit.Error, Exception),
                    L.jit.Error.__name__, msg(L.jit.Error.__module__ + ".")))
    same(f)
    for L in LIBS:
        with pytest.raises(TypeError), pytest.warns(DeprecationWarning):
            L.jit.wait(3)


class _TorchvisionStyle:
    """A model in the style of torchvision's (densenet's memory-efficient block): the
    TorchScript annotations around code that runs eagerly."""

    @staticmethod
    def make(L):
        class Block(L.nn.Module):
            __constants__ = ["scale"]
            scale: L.jit.Final[float]

            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(3, 3)
                self.scale = 0.5

            @L.jit.unused
            def call_checkpoint(self, x: List[L.Tensor]) -> L.Tensor:
                return self.bottleneck(x)

            def bottleneck(self, x: List[L.Tensor]) -> L.Tensor:
                return self.lin(L.cat(x, 0)) * self.scale

            @L.jit._overload_method
            def forward(self, x: List[L.Tensor]) -> L.Tensor:
                pass

            @L.jit._overload_method
            def forward(self, x: L.Tensor) -> L.Tensor:  # noqa: F811
                ...

            def forward(self, x):  # noqa: F811
                prev = [x] if isinstance(x, L.Tensor) else x
                if not L.jit.is_scripting() and not L.compiler.is_compiling():
                    out = self.call_checkpoint(prev)
                else:
                    out = self.bottleneck(prev)
                acc = L.jit.annotate(List[L.Tensor], [])
                acc.append(out)
                return self.helper(acc[0])

            @L.jit.ignore
            def helper(self, y):
                return y.relu()

            @L.jit.export
            def extra(self, y):
                return y - 1
        return Block


def test_model_with_jit_annotations_runs_eagerly():
    def f(L, log):
        L.manual_seed(0)
        m = _TorchvisionStyle.make(L)()
        with L.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(L.arange(p.numel(), dtype=L.float32).reshape(p.shape) / 7 - i)
        x = L.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
        y = m(x) + m([x, x]).sum(0) + m.extra(x)
        y.sum().backward()
        log.append((y, x.grad, m.lin.weight.grad))
    same(f)


def test_overload_body_must_be_empty():
    def f(L, log):
        def decl(x: int) -> int:
            return x
        attempt(log, "body", lambda: L.jit._overload(decl))

        def ok(x: int) -> int:
            pass
        log.append(L.jit._overload(ok) is ok)
    out = same(f)
    assert "Only `pass` statement or `...` can be the body of overload declaration" in out[0][2]


def test_no_torchscript():
    for name, args in (("script", (None,)), ("trace", (None, ())), ("save", (None, "m.pt")),
                       ("load", ("m.pt",)), ("freeze", (None,))):
        with pytest.raises(NotImplementedError, match=f"torch.jit.{name}"):
            getattr(eg.jit, name)(*args)
    for name in ("ScriptModule", "trace_module", "CompilationUnit"):
        assert hasattr(torch.jit, name) and not hasattr(eg.jit, name)
        with pytest.raises(NotImplementedError, match=f"torch.jit.{name}"):
            getattr(eg.jit, name)


# ---- torch.compiler ---------------------------------------------------------------------------
def test_compiler_without_a_compiler():
    def f(L, log):
        def fn(x, y=2):
            """doc of fn"""
            return (x * y).exp()
        log.append((L.compiler.is_compiling(), L.compiler.is_dynamo_compiling(),
                    L.compiler.is_exporting(), L.compiler.reset()))
        for wrapped in (L.compiler.disable(fn), L.compiler.disable()(fn),
                        L.compiler.disable(reason="r")(fn),
                        L.compiler.disable(fn, recursive=False),
                        L.compiler.disable(recursive=False)(fn),
                        L.compiler.disable(L.compiler.disable(fn))):
            x = L.tensor([0.5, -1.0], requires_grad=True)
            y = wrapped(x, y=3)
            y.sum().backward()
            log.append((wrapped is fn, wrapped.__name__, wrapped.__doc__,
                        wrapped.__wrapped__ is fn, y, x.grad))

        class K:
            def __init__(self, a):
                self.a = a

            @L.compiler.disable
            def add(self, x):
                return x + self.a
        log.append((L.compiler.disable(K) is K, K(1).add(2),
                    L.compiler.disable(K, recursive=False)(2).a))
        log.append((L.compiler.assume_constant_result(fn) is fn,
                    L.compiler.allow_in_graph(fn) is fn,
                    L.compiler.allow_in_graph([fn, abs]) == [fn, abs]))
        attempt(log, "disable(3)", lambda: L.compiler.disable(3))
        attempt(log, "disable(3, recursive=False)",
                lambda: L.compiler.disable(3, recursive=False))
        attempt(log, "allow_in_graph(3)", lambda: L.compiler.allow_in_graph(3))
    same(f)


def test_compiler_namespace_over_compile():
    """torch.compiler.compile is torch.compile; set_stance("force_eager") runs a compiled
    function as it is (no trace), and back to "default" it traces once and replays; an
    unknown stance and disable of a module are torch's NotImplementedError here."""
    counts = eg._dynamo.COUNTERS
    c = eg.compiler.compile(lambda x: x * 2)
    before = dict(counts)
    eg.compiler.set_stance("force_eager")
    try:
        assert c(eg.ones(2)).tolist() == [2.0, 2.0]
    finally:
        eg.compiler.set_stance("default")
    assert counts == before and not c._compiled.entries
    for _ in range(3):
        assert c(eg.ones(2)).tolist() == [2.0, 2.0]
    assert (counts["traced"] - before["traced"], counts["replayed"] - before["replayed"]) == \
        (1, 2)
    with pytest.raises(NotImplementedError, match="torch.compiler.set_stance"):
        eg.compiler.set_stance("eager_on_recompile")
    with pytest.raises(NotImplementedError, match="torch.compiler.disable of an nn.Module"):
        eg.compiler.disable(eg.nn.Linear(2, 2))


# ---- torch.multiprocessing ----------------------------------------------------------------------
def test_multiprocessing_api():
    same(lambda L: sorted(L.multiprocessing.__all__))
    for name in multiprocessing.__all__:  # Python's, re-exported as torch does
        assert getattr(eg.multiprocessing, name) is getattr(multiprocessing, name), name
    public = {n for n in dir(torch.multiprocessing) if not n.startswith("_")}
    lacking = {n for n in public if not hasattr(eg.multiprocessing, n)}
    assert lacking <= {"reductions", "torch", "sys", "multiprocessing", "init_reductions"}

    def f(L, log):
        mp = L.multiprocessing
        log.append((mp.get_sharing_strategy(), sorted(mp.get_all_sharing_strategies())))
        try:
            attempt(log, "set", lambda: mp.set_sharing_strategy("file_system"))
            log.append(mp.get_sharing_strategy())
            attempt(log, "bad", lambda: mp.set_sharing_strategy("shm"))
        finally:
            mp.set_sharing_strategy("file_descriptor")
        log.append(issubclass(mp.ProcessRaisedException, Exception))
        e = mp.ProcessExitedException("m", 1, 2, 3, "SIGX")
        back = pickle.loads(pickle.dumps(e))
        log.append((type(back).__name__, back.msg, back.error_index, back.error_pid,
                    back.exit_code, back.signal_name, str(back)))
        log.append(_warned(lambda: type(mp.SpawnContext([], [])).__name__))
    same(f)


def _forked(L, x):
    return ForkingPickler.loads(ForkingPickler.dumps(x))


def test_tensors_through_the_multiprocessing_pickler():
    def f(L, log):
        for x in (L.arange(6.0).reshape(2, 3), L.tensor([1, 2], dtype=L.int16),
                  L.tensor([True, False]), L.ones(2, dtype=L.bfloat16), L.tensor(3 + 1j),
                  L.ones(2, requires_grad=True), L.nn.Parameter(L.ones(2)),
                  L.nn.Parameter(L.ones(2), requires_grad=False), L.zeros(0, 3)):
            y = _forked(L, x)
            log.append((y, type(y).__name__, y is x))
        attempt(log, "non-leaf", lambda: _forked(L, L.ones(2, requires_grad=True) * 2))
        log.append(_forked(L, (L.ones(1) * 2).detach()))
    same(f)


def test_sent_tensors_are_copies_not_shared_memory():
    # torch shares: the sender's storage moves to shared memory and the received tensor is a
    # second view of it; eagergrad sends the values (documented in multiprocessing/__init__.py)
    for L, shares in ((torch, True), (eg, False)):
        x = L.arange(3.0)
        y = _forked(L, x)
        y.add_(10)
        assert x.is_shared() is shares
        assert x.tolist() == ([10.0, 11.0, 12.0] if shares else [0.0, 1.0, 2.0])


# the processes' entry points (the children import this module to find them)
def _lib(name):
    return torch if name == "torch" else eg


def _worker_values(i, lib, queue):
    L = _lib(lib)
    queue.put((i, (L.arange(3.0) * (i + 1)).tolist(), multiprocessing.current_process().name))


def _worker_send(i, lib, queue, done):
    L = _lib(lib)
    queue.put((i, L.arange(3.0) * (i + 1), L.nn.Parameter(L.ones(2) * i),
               L.tensor([i, -i], dtype=L.int64), L.ones(1, requires_grad=True)))
    done.wait(120)  # (torch: a tensor's shared memory is fetched from its live sender)


def _worker_fail(i, lib, bad):
    if i == bad:
        raise ValueError(f"worker {i} failed on purpose")


def _worker_exit(i, lib, code):
    if i == 0:
        sys.exit(code)


def _worker_add_one(q_in, q_out):
    t = q_in.get(timeout=120)
    t.add_(1)
    q_out.put(t.tolist())


@pytest.mark.slow
def test_spawn_runs_fn_in_each_process():
    got = []
    for L in LIBS:
        queue = multiprocessing.get_context("spawn").Queue()
        assert L.multiprocessing.spawn(_worker_values, args=(L.__name__, queue),
                                       nprocs=2) is None
        got.append(sorted(queue.get(timeout=60)[:2] for _ in range(2)))
    assert got[0] == got[1] == [(0, [0.0, 1.0, 2.0]), (1, [0.0, 2.0, 4.0])]


@pytest.mark.slow
def test_tensors_through_a_queue_from_started_processes():
    got = []
    for L in LIBS:
        ctx = multiprocessing.get_context("spawn")
        queue, done = ctx.Queue(), ctx.Event()
        procs = L.multiprocessing.start_processes(_worker_send, args=(L.__name__, queue, done),
                                                  nprocs=2, join=False)
        assert type(procs).__name__ == "ProcessContext" and len(procs.pids()) == 2
        items = sorted((queue.get(timeout=120) for _ in range(2)), key=lambda r: r[0])
        got.append([(i, a.tolist(), type(p).__name__, p.requires_grad, p.tolist(),
                     str(c.dtype), c.tolist(), g.requires_grad, g.is_leaf)
                    for i, a, p, c, g in items])
        done.set()
        while not procs.join(timeout=60):
            pass
        assert procs.join() is True
    assert got[0] == got[1]


@pytest.mark.slow
def test_spawn_raises_the_childs_error():
    for L in LIBS:
        with pytest.raises(L.multiprocessing.ProcessRaisedException) as info:
            L.multiprocessing.spawn(_worker_fail, args=(L.__name__, 1), nprocs=2)
        text = str(info.value)
        assert text.startswith("\n\n-- Process 1 terminated with the following error:\n"
                               "Traceback (most recent call last):")
        assert text.endswith("ValueError: worker 1 failed on purpose\n")
        assert info.value.error_index == 1
        with pytest.raises(L.multiprocessing.ProcessExitedException,
                           match="process 0 terminated with exit code 3") as info:
            L.multiprocessing.spawn(_worker_exit, args=(L.__name__, 3), nprocs=1)
        assert info.value.exit_code == 3 and info.value.signal_name is None


@pytest.mark.slow
def test_a_queue_copies_where_torch_shares():
    seen = {}
    for L in LIBS:
        ctx = L.multiprocessing.get_context("spawn")
        q_in, q_out = ctx.Queue(), ctx.Queue()
        p = ctx.Process(target=_worker_add_one, args=(q_in, q_out))
        p.start()
        x = L.zeros(3)
        q_in.put(x)
        child = q_out.get(timeout=120)
        p.join(60)
        seen[L.__name__] = (child, x.tolist())
    # the child received the values and changed them in both; only torch's parent, whose
    # tensor the child's shares, sees the change
    assert seen["torch"] == ([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    assert seen["eagergrad"] == ([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])


def test_new_names_are_top_level():
    for name in ("jit", "futures", "compiler", "multiprocessing", "version", "torch_version",
                 "Future", "fork", "wait", "JITException"):
        assert hasattr(eg, name) and hasattr(torch, name), name
    same_error(lambda L: L.futures.Future().set_exception("s"), "is of type <class 'str'>",
               AssertionError)
