"""Tensor.resize_, Tensor.resize_as_ and torch.resize_as_ (ops/resize.py, NOTE [resize_]),
differentially against torch: values, shapes, strides, versions and torch's errors.

The elements a growth adds are uninitialized in torch, except with deterministic
algorithms on (NaN, the largest integer): the scenarios that grow a tensor past its
memory run with them on, in both libraries.
"""
import contextlib
import functools

import pytest
import torch

import conftest
import eagergrad as eg
from conftest import attempt

same = functools.partial(conftest.same, layout=True)
same_error = functools.partial(conftest.same_error, layout=True)


@contextlib.contextmanager
def deterministic(L):
    L.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        L.use_deterministic_algorithms(False)


def test_sizes_and_versions():
    """The size forms torch takes; the version moves only when the size changes; the
    elements are read in memory order and a shrink keeps the cut ones for a later growth."""
    def f(L, log):
        x = L.arange(6.0)
        for size in [(2, 3), (2, 3), ((3, 2),), (L.Size([3, 2]),), ([6],), (L.tensor(4),),
                     (2, 2), (6,), (0,), (3, 2), ((),), (1, 1, 1)]:
            attempt(log, size, lambda: x.resize_(*size))
            log.append((x, x._version))
        attempt(log, "size 0-d", lambda: L.tensor(5.0).resize_(()))
    same(f)


def test_growth_fills_deterministically():
    """Past its memory a tensor grows with NaN / the largest integer / True (torch's fill
    with deterministic algorithms on), in every dtype; within it, the old elements."""
    def f(L, log):
        with deterministic(L):
            for dt in (L.float32, L.float64, L.complex64, L.int64, L.int32, L.uint8, L.bool):
                x = L.ones(2, dtype=dt)
                for size in [(2, 2), (3,), (1,), (5,), (2, 3)]:
                    log.append((x.resize_(*size), x._version))
            y = L.arange(6.0).reshape(2, 3).clone()
            log.append(L.resize_as_(y, L.zeros(2, 4)))
    same(f)


def test_strides_and_memory_formats():
    """A base with torch's column-major strides (linalg.qr's Q) is read in memory order;
    memory_format restrides (values moved as the memory reads), channels_last too; an
    unchanged size keeps the strides unless a format is given."""
    def f(L, log):
        q = L.linalg.qr(L.arange(6.0).reshape(3, 2) ** 2 + L.eye(3, 2)).Q
        log.append(q)
        log.append(q.resize_(3, 2))
        log.append(q.resize_(2, 3))
        q = L.linalg.qr(L.arange(6.0).reshape(3, 2) ** 2 + L.eye(3, 2)).Q
        log.append(q.resize_(3, 2, memory_format=L.contiguous_format))
        y = L.arange(24.0).resize_(2, 3, 2, 2, memory_format=L.channels_last)
        log.append((y, y._version))
        log.append(y.resize_(2, 3, 4))
        z = L.arange(48.0).resize_(1, 2, 3, 4, 2, memory_format=L.channels_last_3d)
        log.append(z)
        log.append(L.arange(6.0).resize_(2, 3, 1, 1, memory_format=L.channels_last))
        w = L.arange(24.0).reshape(2, 3, 4).clone()
        attempt(log, "cl rank", lambda: w.resize_(4, 6, memory_format=L.channels_last))
        log.append((w, w._version))  # (resized before the format's check, not bumped)
        attempt(log, "cl3d rank", lambda: w.resize_(4, 6, memory_format=L.channels_last_3d))
        attempt(log, "preserve", lambda: w.resize_(24, memory_format=L.preserve_format))
        log.append((w, w._version))
    same(f)


def test_resize_as_():
    def f(L, log):
        x = L.arange(6.0)
        log.append((x.resize_as_(L.zeros(2, 3)), x._version))
        log.append((L.resize_as_(x, L.zeros(3, 2, dtype=L.int64)), x._version))
        log.append((L.resize_as_(x, L.zeros(3, 2)), x._version))
        t = L.zeros(3, 3).t()
        log.append(L.resize_as_(L.arange(9.0), t))
        log.append(L.resize_as_(L.arange(9.0), t, memory_format=L.preserve_format))
        log.append(L.resize_as_(L.arange(9.0), t, memory_format=L.contiguous_format))
        log.append(L.resize_as_(L.arange(24.0), L.zeros(1, 2, 3, 4),
                                memory_format=L.channels_last))
        log.append(L.resize_as_(L.arange(24.0), L.zeros(1, 2, 3, 4),
                                memory_format=L.preserve_format))
        log.append(L.resize_as_(L.zeros(3), L.zeros(3, requires_grad=True)))
        attempt(log, "rank", lambda: L.resize_as_(L.arange(6.0), L.zeros(2, 3),
                                                  memory_format=L.channels_last))
    same(f)


@pytest.mark.parametrize("how", ["leaf", "leaf same size", "non-leaf", "no_grad",
                                 "view of leaf", "resize_as_"])
def test_requires_grad_refused(how):
    def f(L):
        w = L.ones(3, requires_grad=True)
        if how == "leaf":
            return w.resize_(4)
        if how == "leaf same size":
            return w.resize_(3)
        if how == "non-leaf":
            return (w * 2).resize_(3)
        if how == "no_grad":
            with L.no_grad():
                return w.resize_(2)
        if how == "view of leaf":
            return w[:2].resize_(2)
        return L.resize_as_(w, L.zeros(3))
    same_error(f, "cannot resize variables that require grad")


@pytest.mark.parametrize("args", [(2.0,), (True,), (3, [2]), ((2, 2.0),), (2.0, 2), ("a",),
                                  (-1,), (2, -3), ()])
def test_bad_sizes(args):
    def f(L):
        return L.zeros(2).resize_(*args)
    same(f)


def test_resize_as_non_tensor():
    def f(L):
        return L.zeros(2).resize_as_(3)
    same_error(f, "must be Tensor, not int", TypeError)


def test_inference_tensor():
    """Resized inside inference mode; outside it, refused as any in-place op."""
    def f(L, log):
        with L.inference_mode():
            q = L.zeros(3)
            log.append(q.resize_(4).shape)
        attempt(log, "outside", lambda: q.resize_(5))
        n = L.zeros(3)
        with L.inference_mode():
            n.resize_(2, 2)
        # (the fourth element is uninitialized memory in torch)
        log.append((n.flatten()[:3], n.shape, n._version))
    same(f)


def test_forward_grad():
    def f(L):
        import importlib
        fw = importlib.import_module(L.__name__ + ".autograd.forward_ad")
        with fw.dual_level():
            x = fw.make_dual(L.zeros(3), L.ones(3))
            return x.resize_(3)
    same_error(f, "cannot resize variables that has a forward grad")


def test_saved_tensor_resized():
    """A resize_ bumps the version: a saved input resized since fails backward."""
    def f(L, log):
        a = L.arange(3.0)
        w = L.ones(3, requires_grad=True)
        loss = (a * w).sum()
        a.resize_(3)  # (no change: no bump)
        log.append(L.autograd.grad(loss, w, retain_graph=True)[0])
        a.resize_(2)
        attempt(log, "changed", lambda: L.autograd.grad(loss, w))
    same(f)


def test_views_of_unchanged_size():
    """A view or an alias resized to its own size is left alone, as in torch."""
    def f(L, log):
        b = L.arange(16.0).reshape(4, 4).clone()
        v = b[1]
        log.append((v.resize_(4), b._version))
        d = b.detach()
        log.append((b.resize_(4, 4), d))
    same(f)


def test_after_inplace_view_ops():
    """A tensor an in-place view op changed (t_, unsqueeze_) is resized over its memory."""
    def f(L, log):
        y = L.arange(6.0).reshape(2, 3).clone()
        y.t_()
        log.append((y.resize_(3, 2), y._version))
        log.append((y.resize_(6), y._version))
        x = L.arange(3.0)
        x.unsqueeze_(0)
        log.append((x.resize_(1, 3, memory_format=L.contiguous_format), x._version))
        log.append((x.resize_(2), x._version))
    same(f)


# ---- what eagergrad does not do -----------------------------------------------------------
@pytest.mark.parametrize("how", ["view", "base of a view", "detach alias", ".data"])
def test_shared_storage_not_implemented(how):
    """torch resizes the memory other tensors share (which keep their own sizes);
    eagergrad's storage holds the base's array in its shape: refused (NOTE [resize_])."""
    b = eg.arange(16.0).reshape(4, 4).clone()
    keep = b[1] if how != "detach alias" else b.detach()
    target = {"view": keep, ".data": b.data}.get(how, b)
    tb = torch.arange(16.0).reshape(4, 4).clone()
    tkeep = tb[1] if how != "detach alias" else tb.detach()
    {"view": tkeep, ".data": tb.data}.get(how, tb).resize_(2, 2)  # torch does it
    with pytest.raises(NotImplementedError, match="resize_"):
        target.resize_(2, 2)
    assert target.shape == (4,) if how == "view" else (4, 4)
    assert keep.tolist() == eg.arange(16.0).reshape(4, 4).clone()[1].tolist() or \
        how == "detach alias"


def test_inside_torch_func_not_implemented():
    with pytest.raises(NotImplementedError, match="torch.func"):
        eg.func.vmap(lambda a: a.resize_(3))(eg.zeros(2, 3))
