"""In-place ops under no_grad reuse the tensor's buffer (jax donation, ops/inplace.py
_donatable) only when nothing else can see the old array. Each scenario checks that
a donation happened or not, and that values, errors and aliasing are still torch's."""
import threading

import jax
import numpy as np
import pytest
import torch

import eagergrad as eg

from conftest import same


def _ptr(t):
    return t._storage.array.unsafe_buffer_pointer()


def test_sgd_update_reuses_the_parameter_buffer():
    # (p from a kernel: a first draw of a shape is put on the device from the host, and
    # XLA:CPU may then alias numpy's memory, which it does not always take as donated)
    p = (eg.randn(64, 32) * 1).requires_grad_()
    g = eg.randn(64, 32)
    before, ptr = p.numpy(force=True).copy(), _ptr(p)
    with eg.no_grad():
        p -= 0.1 * g
        p.mul_(0.5).add_(g, alpha=2).tanh_()
    assert _ptr(p) == ptr  # one buffer throughout
    expect = np.tanh((before - 0.1 * g.numpy()) * 0.5 + 2 * g.numpy())
    np.testing.assert_allclose(p.numpy(force=True), expect, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("holder", ["jax_handle", "from_jax", "saved_output", "constant"])
def test_no_donation_while_something_else_holds_the_array(holder):
    keep = []
    if holder == "from_jax":
        a = jax.numpy.arange(6.0)
        t = eg.from_jax(a)
        keep.append(a)
    elif holder == "constant":
        t = eg.zeros(6)  # small constants are shared (creation.py _consts)
    else:
        t = eg.arange(6.0) * 1
        if holder == "jax_handle":
            keep.append(t.jax())
        else:
            x = eg.arange(6.0, requires_grad=True)
            t = x.exp()  # ExpBackward0 keeps its result's array
    old = t.numpy(force=True).copy()
    ptr = _ptr(t)
    with eg.no_grad():
        t.add_(1)
    assert _ptr(t) != ptr
    np.testing.assert_allclose(t.numpy(force=True), old + 1)
    for a in keep:
        assert not a.is_deleted()
        np.testing.assert_allclose(np.asarray(a), old)
    if holder == "constant":
        np.testing.assert_allclose(eg.zeros(6).numpy(), 0)


def test_saved_result_modified_under_no_grad_raises_torchs_error():
    def f(L, log):
        x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
        y = x.exp()
        with L.no_grad():
            y.mul_(2)
        y.sum().backward()
    r = same(f)
    assert r[-1][:2] == ("raised", "RuntimeError")
    assert "modified by an inplace operation" in r[-1][2]


def test_aliases_see_the_donated_update():
    def f(L, log):
        p = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        d, h = p.detach(), p.data
        with L.no_grad():
            p.mul_(3)
            d.add_(1)
        log.append((p, d, h, p._version, d._version, h._version))
    assert len(same(f)) == 1


def test_grad_accumulation_in_place_keeps_the_grad_tensor():
    def f(L, log):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        log.append((g is x.grad, g, x.grad))
    assert same(f)[0][0] is True


def test_training_loop_with_in_place_updates_matches_torch():
    """Updates donate parameter buffers while the (fused, asynchronous) backward of the
    same step may still be reading them."""
    rs = np.random.RandomState(0)
    data = [rs.randn(16, 8).astype(np.float32), rs.randn(8, 8).astype(np.float32) * 0.3,
            rs.randn(8).astype(np.float32), rs.randn(8, 1).astype(np.float32) * 0.3]

    def train(L):
        x = L.tensor(data[0])
        params = [L.tensor(a, requires_grad=True) for a in data[1:]]
        losses = []
        for _ in range(12):
            for p in params:
                p.grad = None
            h = (x @ params[0] + params[1]).tanh()
            loss = ((h @ params[2]) ** 2).mean()
            loss.backward()
            with L.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
            losses.append(loss.item())
        return losses, [p.detach().numpy().copy() if L is torch else p.numpy(force=True)
                        for p in params]

    lt, pt = train(torch)
    le, pe = train(eg)
    np.testing.assert_allclose(le, lt, rtol=1e-5)
    for a, b in zip(pe, pt):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_threads_donating_their_own_tensors():
    results, errors = {}, []

    def work(k):
        try:
            p = eg.full((256,), float(k))
            for _ in range(200):
                with eg.no_grad():
                    p.add_(1).mul_(0.5)
            results[k] = p.numpy(force=True)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, v in results.items():
        expect = float(k)
        for _ in range(200):
            expect = (expect + 1) * 0.5
        np.testing.assert_allclose(v, expect, rtol=1e-6)
