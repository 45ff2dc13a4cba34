"""Saved tensors and their hooks, differentially against torch: each scenario runs with
torch and with eagergrad, logging every pack/unpack call (and what it saw) into a list;
the lists (so the counts and the order) and the gradients must be equal."""
import gc
import os
import tempfile
import threading
import uuid

import numpy as np
import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)


from conftest import same  # noqa: E402


def hooks(log, tag=""):
    """A (pack, unpack) pair logging each call; pack keeps a detached copy."""
    def pack(t):
        log.append((tag + "pack", t))
        return t.detach().clone()

    def unpack(p):
        log.append((tag + "unpack", p))
        return p
    return pack, unpack


# ---------------------------------------------------------------------------------------
# _saved_* / _raw_saved_* on generated nodes
# ---------------------------------------------------------------------------------------

OPS = {
    "mul": lambda L, x, w: x * w,
    "div": lambda L, x, w: x / w,
    "pow_scalar": lambda L, x, w: x ** 2,
    "pow_tensor": lambda L, x, w: x ** w,
    "exp": lambda L, x, w: x.exp(),
    "sin": lambda L, x, w: x.sin(),
    "log": lambda L, x, w: x.log(),
    "tanh": lambda L, x, w: x.tanh(),
    "sigmoid": lambda L, x, w: x.sigmoid(),
    "sqrt": lambda L, x, w: x.sqrt(),
    "sum_dim": lambda L, x, w: x.sum(1),
    "mean": lambda L, x, w: x.mean(),
    "relu": lambda L, x, w: x.relu(),
    "clamp": lambda L, x, w: x.clamp(0, 2),
    "max": lambda L, x, w: x.max(),
    "softmax": lambda L, x, w: x.softmax(1),
    "select": lambda L, x, w: x[0],
    "view": lambda L, x, w: x.view(4),
    "cat": lambda L, x, w: L.cat([x, w]),
    "where": lambda L, x, w: L.where(x > 2, x, w),
    "abs": lambda L, x, w: x.abs(),
    "expand": lambda L, x, w: x[:, :1].expand(2, 3),
    "add_alpha": lambda L, x, w: L.add(x, w, alpha=3),
    "logsumexp": lambda L, x, w: x.logsumexp(1),
    "mm": lambda L, x, w: x @ w,
    "prod": lambda L, x, w: x.prod(),
    "norm": lambda L, x, w: x.norm(),
}
XFAIL_OPS = {}


@pytest.mark.parametrize("op", [pytest.param(k, marks=pytest.mark.xfail(
    strict=True, reason=XFAIL_OPS[k])) if k in XFAIL_OPS else k for k in OPS])
def test_saved_attributes_of_generated_nodes(op):
    def inputs(L):
        return (L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
                L.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True))
    # every _saved_* attribute torch's node has, with its value (tensors: also which
    # input it is) and the _raw_saved_* SavedTensor of each tensor-valued one
    names = sorted(a for a in dir(OPS[op](torch, *inputs(torch)).grad_fn)
                   if a.startswith("_saved_"))

    def f(L, log):
        x, w = inputs(L)
        fn = OPS[op](L, x, w).grad_fn
        log.append(("node", fn.name()))
        for n in names:
            v = getattr(fn, n)
            ident = "x" if v is x else "w" if v is w else None
            log.append((n, v, ident, type(v).__name__ if not isinstance(v, L.Tensor) else "T"))
            if isinstance(v, L.Tensor):
                raw = getattr(fn, n.replace("_saved_", "_raw_saved_"))
                log.append(("raw", type(raw).__name__, hasattr(raw, "register_hooks")))
    same(f)


@pytest.mark.parametrize("needs", ["self", "mat2", "both"])
def test_mm_keeps_sizes_always_and_strides_of_inputs_needing_grad(needs):
    # torch's MmBackward0: sizes of both inputs, strides only where the formula runs;
    # a transposed or sliced input reports its own (non-contiguous) strides
    def f(L, log):
        a = L.tensor(np.arange(12.0).reshape(4, 3), requires_grad=needs != "mat2")
        b = L.tensor(np.arange(10.0).reshape(5, 2), requires_grad=needs != "self")
        fn = (a.t()[:, ::2] @ b[1:3]).grad_fn
        for side in ("self", "mat2"):
            for what in ("sym_sizes", "sym_strides"):
                log.append((side, what, getattr(fn, f"_saved_{side}_{what}")))
        for bad in ("_raw_saved_self_sym_sizes", "_saved_self_layout"):
            log.append((bad, hasattr(fn, bad)))
    same(f)


def test_saved_self_and_result_identity_and_history():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        z = y.exp()
        s = z.grad_fn._saved_result
        log.append(("result", s is z, s.grad_fn is z.grad_fn, s.requires_grad, s._version))
        m = y * x
        log.append(("inputs", m.grad_fn._saved_self is y, m.grad_fn._saved_other is x))
        m.sum().backward()
        try:
            m.grad_fn._saved_self
        except RuntimeError as e:
            log.append(("freed", str(e)))
    same(f)


# ---------------------------------------------------------------------------------------
# SavedTensor.register_hooks
# ---------------------------------------------------------------------------------------

def test_register_hooks_pack_once_unpack_on_each_use():
    def f(L, log):
        x = L.tensor([3.0, 1.0], requires_grad=True)
        y = x.sin()
        pack, unpack = hooks(log)
        y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
        log.append("registered")
        log.append(("_saved_self", y.grad_fn._saved_self))
        y.sum().backward(retain_graph=True)
        log.append(("grad", x.grad))
        y.sum().backward()
        log.append(("grad", x.grad))
    log = same(f)
    assert [e[0] if isinstance(e, tuple) else e for e in log].count("pack") == 1


def test_register_hooks_on_saved_output_and_replaced_value():
    # pack sees the saved data without history; the unpacked value is what backward
    # uses, so the unpack hook can change it
    def f(L, log):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        y.grad_fn._raw_saved_result.register_hooks(
            lambda t: (log.append(("pack", t, t.grad_fn is None, t is y)), t.detach())[1],
            lambda t: (log.append(("unpack", t)), t * 2)[1])
        r = y.grad_fn._saved_result
        log.append(("_saved_result", r, r.grad_fn is y.grad_fn))
        y.sum().backward()
        log.append(("grad", x.grad))
    same(f)


def test_register_hooks_on_saved_leaf_input_keeps_gradients_flowing_to_the_leaf():
    def f(L, log):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.sin()
        y.grad_fn._raw_saved_self.register_hooks(
            lambda t: (log.append(("pack", t, t is x, t.grad_fn is None)), t * 1)[1],
            lambda t: (log.append(("unpack", t)), t)[1])
        s = y.grad_fn._saved_self
        log.append(("_saved_self", s, s is x, s.is_leaf))
        g, = L.autograd.grad(y.sum(), x, create_graph=True)
        g2, = L.autograd.grad(g.sum(), x)
        log.append(("grads", g, g2))
    same(f)


def test_register_hooks_errors():
    def f(L, log):
        x = L.tensor([3.0], requires_grad=True)
        y = x.sin()
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(lambda t: t, lambda t: t)
        try:
            raw.register_hooks(lambda t: t, lambda t: t)
        except RuntimeError as e:
            log.append(("twice", str(e)))
        y.sum().backward()
        try:
            raw.register_hooks(lambda t: t, lambda t: t)
        except RuntimeError as e:
            log.append(("after free", str(e)))
        z = x.cos()
        z.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 3)
        z.sum().backward()
    log = same(f)
    assert [e[0] for e in log] == ["twice", "after free", "raised"]
    assert log[-1][1] == "TypeError"


def test_register_hooks_with_non_callables_is_a_type_error():
    for L in LIBS:
        x = L.tensor([3.0], requires_grad=True)
        with pytest.raises(TypeError):
            x.sin().grad_fn._raw_saved_self.register_hooks(1, 2)


def test_pack_hook_modifying_its_input_in_place():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)

        def bad_pack(t):
            t.add_(1)
            return t
        with L.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t):
            q = x * 1
            q.exp()
    log = same(f)
    assert log[0][:2] == ("raised", "RuntimeError")
    assert "A saved tensor pack hook is modifying its input in place" in log[0][2]


def test_pack_hook_modifying_input_registered_later():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)
        q = (x * 1).exp()
        q.grad_fn._raw_saved_result.register_hooks(lambda t: t.mul_(2), lambda t: t)
    log = same(f)
    assert "pack hook is modifying its input in place" in log[0][2]


# ---------------------------------------------------------------------------------------
# saved_tensors_hooks: counts, nesting, thread-locality, version counters
# ---------------------------------------------------------------------------------------

def test_saved_tensors_hooks_counts_and_order():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        pack, unpack = hooks(log)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.pow(2)          # saves self
            z = y.exp()           # saves result
            w = (z * x).sum()     # saves both
        log.append("--- backward 1")
        w.backward(retain_graph=True)
        log.append(("grad", x.grad))
        log.append("--- backward 2")
        w.backward()
        log.append(("grad", x.grad))
    log = same(f)
    assert sum(1 for e in log if e[0] == "pack") == 4


def test_saved_tensors_hooks_nesting_innermost_wins():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        G = L.autograd.graph
        with G.saved_tensors_hooks(*hooks(log, "outer ")):
            a = x.sin()
            with G.saved_tensors_hooks(*hooks(log, "inner ")):
                b = a.cos()
                with G.saved_tensors_hooks(*hooks(log, "innermost ")):
                    c = b.exp()
            d = c * a
        e = d.tanh()  # no hooks: nothing logged
        e.sum().backward()
        log.append(("grad", x.grad))
    same(f)


def test_saved_tensors_hooks_with_custom_function_and_create_graph():
    def f(L, log):
        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(x)
                ctx.k = k
                return x ** 3 * k

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x ** 2 * g * ctx.k, None
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(*hooks(log)):
            y = Cube.apply(x, 2.0)
            log.append("--- first backward (create_graph) inside the context")
            g, = L.autograd.grad(y.sum(), x, create_graph=True)
        log.append("--- second order")
        g2, = L.autograd.grad(g.sum(), x)
        log.append(("grads", g, g2))
    same(f)


def test_saved_tensors_hooks_are_thread_local():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        res = {}

        def worker():
            res["y"] = x.sin()  # no hooks in this thread
            with L.autograd.graph.saved_tensors_hooks(*hooks(log, "thread ")):
                res["z"] = x.cos()
        with L.autograd.graph.saved_tensors_hooks(*hooks(log, "main ")):
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            w = x.exp()
        log.append("--- backward")
        (res["y"].sum() + res["z"].sum() + w.sum()).backward()
        log.append(("grad", x.grad))
    log = same(f)
    assert [e[0] for e in log[:2]] == ["thread pack", "main pack"]


def test_saved_tensors_hooks_skip_version_check():
    # with hooks torch does not check versions: the packed copy is used
    def f(L, log):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        with L.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            c = b.sin()
        b.add_(1)
        c.sum().backward()
        log.append(("grad", a.grad))
        d = a * 1
        e = d.sin()
        d.add_(1)
        e.sum().backward()  # no hooks: the version check raises
    log = same(f)
    assert log[-1][:2] == ("raised", "RuntimeError")
    assert "modified by an inplace operation" in log[-1][2]


def test_saved_tensors_hooks_not_called_without_grad():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(*hooks(log)):
            with L.no_grad():
                x.sin()
            L.tensor([1.0]).sin()
            x.detach().exp()
            x + 1  # nothing saved
            x * 2  # a scalar other: only... nothing needs the tensor
            log.append("--- only sin below")
            x.sin()
    same(f)


def test_unpack_hook_returning_non_tensor():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: "packed", lambda p: p):
            y = x.sin()
        y.sum().backward()
    log = same(f)
    assert log[0][:2] == ("raised", "TypeError")


def test_saved_tensors_freed_after_backward_and_register_hooks_errors():
    def f(L, log):
        x = L.tensor([1.0], requires_grad=True)
        pack, unpack = hooks(log)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp()
        y.backward()
        for call in (lambda: y.grad_fn._saved_result,
                     lambda: y.grad_fn._raw_saved_result.register_hooks(pack, unpack),
                     lambda: y.backward()):
            try:
                call()
                log.append("no error")
            except RuntimeError as e:
                log.append(("RuntimeError", str(e)))
    log = same(f)
    assert "no error" not in log


# ---------------------------------------------------------------------------------------
# disable_saved_tensors_hooks, save_on_cpu
# ---------------------------------------------------------------------------------------

def test_disable_saved_tensors_hooks():
    def f(L, log):
        G = L.autograd.graph
        x = L.tensor([1.0], requires_grad=True)
        with G.disable_saved_tensors_hooks("no hooks here"):
            x.sin().backward()  # saving itself is fine
            try:
                with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                    log.append("entered")
            except RuntimeError as e:
                log.append(("inner", str(e)))
            with G.disable_saved_tensors_hooks("nested"):
                try:
                    G.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
                except RuntimeError as e:
                    log.append(("nested", str(e)))
            try:
                with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            except RuntimeError as e:
                log.append(("restored outer message", str(e)))
        with G.saved_tensors_hooks(*hooks(log)):
            log.append("hooks usable again")
            x.cos()
            try:
                with G.disable_saved_tensors_hooks("hooks are active"):
                    log.append("entered disable")
            except RuntimeError as e:
                log.append(("disable inside hooks", str(e)))
            x.tan()

        @G.disable_saved_tensors_hooks("decorated")
        def fn():
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        try:
            fn()
        except RuntimeError as e:
            log.append(("decorator", str(e)))
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            log.append("after decorator: fine")
    same(f)


def test_save_on_cpu():
    def f(L, log):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.save_on_cpu():
            y = (x * x).exp()
            z = (y * x).sum()
        r = y.grad_fn._saved_result
        log.append(("saved", r, r.device.type, r.grad_fn.name()))
        z.backward()
        log.append(("grad", x.grad))
        with L.autograd.graph.save_on_cpu(pin_memory=False):
            w = x.sin()
        w.sum().backward()
        log.append(("grad", x.grad))
    same(f)


# ---------------------------------------------------------------------------------------
# Saving to disk through a temporary-file object
# ---------------------------------------------------------------------------------------

def _disk_hooks(L, log, tmp_dir, min_numel=0):
    class SelfDeletingTempFile:
        def __init__(self):
            self.name = os.path.join(tmp_dir, str(uuid.uuid4()) + ".npy")

        def __del__(self):
            os.remove(self.name)

    def pack_hook(tensor):
        log.append(("pack", tuple(tensor.shape)))
        if tensor.numel() < min_numel:
            return tensor  # small ones stay in memory
        temp_file = SelfDeletingTempFile()
        np.save(temp_file.name, tensor.detach().numpy())
        return temp_file

    def unpack_hook(packed):
        if isinstance(packed, L.Tensor):
            log.append(("unpack in memory",))
            return packed
        log.append(("unpack from disk",))
        return L.tensor(np.load(packed.name))
    return pack_hook, unpack_hook


def test_saving_to_disk_through_self_deleting_temp_files():
    def f(L, log):
        with tempfile.TemporaryDirectory() as tmp_dir:
            x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            w = L.tensor([0.5, -1.0], requires_grad=True)
            with L.autograd.graph.saved_tensors_hooks(*_disk_hooks(L, log, tmp_dir)):
                h = (x * w).tanh()
                loss = (h * h).sum()
            log.append(("files", len(os.listdir(tmp_dir))))
            loss.backward(retain_graph=True)
            log.append(("files after retained backward", len(os.listdir(tmp_dir))))
            log.append(("grads", x.grad, w.grad))
            loss.backward()
            gc.collect()
            log.append(("files after backward", len(os.listdir(tmp_dir))))
            log.append(("grads", x.grad, w.grad))
    log = same(f)
    assert ("files", 5) in log and ("files after backward", 0) in log


def test_saving_to_disk_only_large_tensors_and_deleting_with_the_graph():
    def f(L, log):
        with tempfile.TemporaryDirectory() as tmp_dir:
            x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
            s = L.tensor(2.0, requires_grad=True)
            with L.autograd.graph.saved_tensors_hooks(*_disk_hooks(L, log, tmp_dir, 2)):
                y = (x * s).sin()
            log.append(("files", len(os.listdir(tmp_dir))))
            y.sum().backward(retain_graph=True)
            log.append(("grads", x.grad, s.grad))
            del y
            gc.collect()
            log.append(("files after the graph died", len(os.listdir(tmp_dir))))
    same(f)
