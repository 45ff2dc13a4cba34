"""nn.BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, GroupNorm, Dropout1d/2d/3d, AlphaDropout,
FeatureAlphaDropout and their functionals against real torch: weights and running stats
copied from a torch-seeded state dict, training steps then eval; outputs, the grad_fn
graph with every node's _saved_* values, gradients, running stats, num_batches_tracked and
versions, reprs, state_dict keys, errors and warnings. Random dropout masks come from
eagergrad's generator: their deterministic cases are compared with torch, the random
ones checked by their structure (whole channels, 1 / (1 - p), alpha's affine map)."""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from _nn_helpers import arrays, saved, walk
from conftest import same, same_error

import eagergrad as eg

# attributes of other slices' nodes that differ from torch's (not this slice's ops):
# eagergrad's MulBackward0 shows `_saved_dtype`; its SqueezeBackward1 (squeeze(0)) shows
# `_saved_dim` as (0,) where torch's shows 0
_EXTRA = {"_saved_dtype", ("SqueezeBackward1", "_saved_dim")}


_saved = functools.partial(saved, extra=_EXTRA)
_walk = functools.partial(walk, extra=_EXTRA)


def _load(L, m, seed, dtype="float32"):
    """Parameters and running stats from seeded arrays (variances positive), through
    load_state_dict as a torch state dict would come in."""
    sd = {}
    for k, v in m.state_dict().items():
        if k.endswith("num_batches_tracked"):
            sd[k] = L.tensor(3)
            continue
        a = arrays(seed, tuple(v.shape), dtype=dtype)[0]
        seed += 1
        sd[k] = L.tensor(np.abs(a) + 0.5 if k.endswith("running_var") else a)
    m.load_state_dict(sd)
    return m


def _buffers(m):
    return [(k, b.clone(), b._version) for k, b in m.named_buffers()]


def _steps(L, m, shape, dtype="float32", steps=2):
    """`steps` training steps (forward, graph, backward, SGD update) then one eval
    forward."""
    res = [repr(m), sorted(m.state_dict())]
    for k in range(steps):
        x = L.tensor(arrays(10 + k, shape, dtype=dtype)[0] * 2 + 0.5, requires_grad=True)
        out = m(x)
        v = L.tensor(arrays(20 + k, tuple(out.shape), dtype=dtype)[0])
        (out * v).sum().backward()
        res += [out, _walk(out.grad_fn), x.grad, _buffers(m),
                {k: p.grad.clone() for k, p in m.named_parameters()}]
        with L.no_grad():  # a manual SGD step
            for p in m.parameters():
                p.sub_(0.1 * p.grad)
    m.eval()
    x = L.tensor(arrays(30, shape, dtype=dtype)[0], requires_grad=True)
    out = m(x)
    out.sum().backward()
    return res + [out, _walk(out.grad_fn), x.grad, _buffers(m)]


# ---- BatchNorm ---------------------------------------------------------------------------
BATCH_NORMS = {
    "1d (N, C)": (lambda L: L.nn.BatchNorm1d(3), (5, 3)),
    "1d (N, C, L) momentum None": (lambda L: L.nn.BatchNorm1d(3, momentum=None), (4, 3, 2)),
    "2d no affine": (lambda L: L.nn.BatchNorm2d(2, eps=1e-3, affine=False), (2, 2, 2, 3)),
    "2d no bias": (lambda L: L.nn.BatchNorm2d(2, momentum=0.3, bias=False), (3, 2, 2, 1)),
    "3d no running stats": (lambda L: L.nn.BatchNorm3d(2, track_running_stats=False),
                            (2, 2, 1, 2, 2)),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("kind", sorted(BATCH_NORMS))
def test_batch_norm_modules_match_torch(kind):
    make, shape = BATCH_NORMS[kind]
    same(lambda L: _steps(L, _load(L, make(L), 0), shape))


def test_batch_norm_float64_and_fresh_init():
    def f(L):
        m = L.nn.BatchNorm1d(2, momentum=None, dtype=L.float64)
        init = _buffers(m) + [(k, p.clone()) for k, p in m.named_parameters()]
        return init, _steps(L, m, (3, 2), dtype="float64", steps=3)
    same(f)


def test_batch_norm_functional_and_native():
    def f(L):
        x, w, b, rm = [L.tensor(a) for a in arrays(1, (4, 3), (3,), (3,), (3,),
                                                    dtype="float64")]
        x.requires_grad_()
        rv = rm.abs() + 0.5
        out, mean, invstd = L.native_batch_norm(x, w, b, rm, rv, True, 0.2, 1e-5)
        res = [out, mean, invstd, rm, rv, rm._version, _walk(out.grad_fn)]
        out, mean, invstd = L.native_batch_norm(x, w, None, rm, rv, False, 0.2, 1e-5)
        res += [out, mean, invstd, _walk(out.grad_fn)]
        res.append(L.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False))
        with L.no_grad():  # running stats still updated, no graph
            res += [L.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.5), rm, rv]
        return res
    same(f)


def test_empty_inputs():
    """An empty batch norm input is cloned (times weight[0], plus bias[0]), as ATen's
    _batch_norm_impl_index; native_batch_norm refuses it in training; group norm not."""
    def f(L):
        x, w = L.ones(0, 3, 2, requires_grad=True), L.ones(3, requires_grad=True)
        rm = L.zeros(3)
        res = []
        for out in (L.nn.functional.batch_norm(L.ones(4, 0, 2, requires_grad=True), None,
                                               None, training=True),
                    L.nn.functional.batch_norm(x, rm, L.ones(3), w, w, training=True),
                    L.nn.functional.group_norm(L.ones(2, 4, 0, requires_grad=True), 2, w[:1]
                                               .expand(4))):
            out.sum().backward()
            res += [out, _walk(out.grad_fn), rm._version]
        return res + [w.grad]
    same(f)
    same_error(lambda L: L.native_batch_norm(L.ones(0, 3), None, None, None, None, True, 0.1,
                                             1e-5), "input tensor must have at least one element")


def test_batch_norm_errors():
    def bn(*args, **kw):
        return lambda L: L.nn.functional.batch_norm(
            *[a(L) if callable(a) else a for a in args], **kw)
    x = lambda L: L.ones(4, 3, 2)
    same_error(bn(x, lambda L: L.zeros(4), lambda L: L.ones(3), training=True),
               "running_mean should contain 3 elements not 4")
    same_error(bn(x, None, None, lambda L: L.ones(2), training=True),
               "weight should contain 3 elements not 2")
    same_error(bn(x, lambda L: L.zeros(3), None, training=True), "both be None", ValueError)
    same_error(bn(x, None, None), "running_mean must be defined in evaluation mode")
    same_error(bn(lambda L: L.ones(1, 3, 1), None, None, training=True),
               "Expected more than 1 value per channel when training, got input size",
               ValueError)
    same_error(bn(x, None, None, training=True, eps=0.0), "eps must be positive", ValueError)
    same_error(bn(x, lambda L: L.zeros(3), lambda L: L.ones(3), eps=-1.0),
               "eps must be non-negative", ValueError)
    same_error(bn(lambda L: L.ones(4, 3, dtype=L.int64), None, None, training=True),
               "\"batch_norm\" not implemented for 'Long'", NotImplementedError)
    same_error(bn(x, None, None, lambda L: L.ones(3, dtype=L.float64), training=True),
               "mixed dtype (CPU)")
    same_error(lambda L: L.nn.BatchNorm1d(3)(L.ones(3)), "expected 2D or 3D input (got 1D",
               ValueError)
    same_error(lambda L: L.nn.BatchNorm2d(3)(L.ones(2, 3, 2)), "expected 4D input (got 3D",
               ValueError)
    same_error(lambda L: L.nn.BatchNorm3d(3)(L.ones(2, 3, 2, 2)), "expected 5D input (got 4D",
               ValueError)
    same_error(lambda L: L.nn.BatchNorm1d(3)(L.ones(1, 3)),
               "Expected more than 1 value per channel when training", ValueError)


def test_batch_norm_module_twice_before_backward():
    """The running-stat update bumps no version (as ATen's): a module used twice before
    backward is fine; an in-place edit of a running stat an eval node saved is caught."""
    def f(L):
        m = _load(L, L.nn.BatchNorm1d(3), 1)
        x1, x2 = [L.tensor(a, requires_grad=True) for a in arrays(7, (4, 3), (4, 3))]
        out = m(x1) * m(x2)
        out.sum().backward()
        res = [out, x1.grad, x2.grad, m.weight.grad, _buffers(m)]
        m.eval()
        y = m(x1)
        with L.no_grad():
            m.running_var.mul_(2)
        try:
            y.sum().backward()
        except RuntimeError as e:
            res.append(str(e).replace("eagergrad.", "torch."))
        return res
    same(f)


def test_batch_norm_state_dict_without_num_batches_tracked():
    """An old (version 1) state dict without num_batches_tracked loads; it stays 0."""
    def f(L):
        m = L.nn.BatchNorm1d(2)
        sd = {"weight": L.ones(2) * 2, "bias": L.zeros(2), "running_mean": L.ones(2),
              "running_var": L.ones(2) * 3}
        m.load_state_dict(sd)
        return _buffers(m)
    same(f)


def test_batch_norm_step_under_jit():
    """The in-place running-stat update is tracer-safe: a whole training step (momentum
    None: the factor is a traced 1 / num_batches_tracked) under jax.jit."""
    xs = arrays(5, (4, 3), (4, 3))

    def step(x, rm, rv, n, w):
        m = eg.nn.BatchNorm1d(3, momentum=None)
        m.running_mean, m.running_var, m.num_batches_tracked = rm, rv, n
        m.weight = eg.nn.Parameter(w)
        out = m(x)
        (out * out).sum().backward()
        return out.detach(), m.running_mean, m.running_var, m.num_batches_tracked, m.weight.grad

    jitted = jax.jit(eg.jaxify(step))
    rm, rv = jnp.zeros(3, jnp.float32), jnp.ones(3, jnp.float32)
    n, w = jnp.asarray(0, jnp.int64), jnp.asarray(xs[1][0])
    t = torch.nn.BatchNorm1d(3, momentum=None)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(xs[1][0]))
    for x in xs:
        out, rm, rv, n, gw = jitted(jnp.asarray(x), rm, rv, n, w)
        t.weight.grad = None
        want = t(torch.tensor(x))
        (want * want).sum().backward()
        for a, b in ((out, want.detach()), (rm, t.running_mean), (rv, t.running_var),
                     (gw, t.weight.grad)):
            np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-4, atol=1e-5)
        assert int(n) == int(t.num_batches_tracked)


# ---- InstanceNorm -----------------------------------------------------------------------
INSTANCE_NORMS = {
    "1d": (lambda L: L.nn.InstanceNorm1d(3), (2, 3, 4)),
    "1d unbatched, affine": (lambda L: L.nn.InstanceNorm1d(3, affine=True), (3, 4)),
    "2d affine, running stats": (
        lambda L: L.nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (3, 2, 2, 2)),
    "3d running stats, momentum 0.5": (
        lambda L: L.nn.InstanceNorm3d(2, momentum=0.5, track_running_stats=True),
        (2, 2, 1, 2, 2)),
}


@pytest.mark.parametrize("kind", sorted(INSTANCE_NORMS))
def test_instance_norm_modules_match_torch(kind):
    make, shape = INSTANCE_NORMS[kind]
    same(lambda L: _steps(L, _load(L, make(L), 0), shape, steps=1))


def test_instance_norm_functional_and_errors():
    def f(L):
        x, rm = [L.tensor(a) for a in arrays(3, (2, 3, 4), (3,), dtype="float64")]
        rv = rm.abs() + 1
        out = L.nn.functional.instance_norm(x, rm, rv, use_input_stats=False)
        return out, rm, rv, rm._version, rv._version
    same(f)
    same_error(lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 1)),
               "Expected more than 1 spatial element when training", ValueError)
    same_error(lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 2), use_input_stats=False),
               "Expected running_mean and running_var to be defined")
    same_error(lambda L: L.nn.InstanceNorm1d(4, affine=True)(L.ones(2, 3, 2)),
               "expected input's size at dim=1 to match num_features (4), but got: 3.",
               ValueError)
    same_error(lambda L: L.nn.InstanceNorm2d(3)(L.ones(3, 2)), "expected 3D or 4D input",
               ValueError)

    def warned(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = L.nn.InstanceNorm1d(4)(L.ones(2, 3, 2))
        return out, [str(x.message) for x in w]
    same(warned)


# ---- GroupNorm ----------------------------------------------------------------------------
GROUP_NORMS = {
    "2 groups": (lambda L: L.nn.GroupNorm(2, 4), (2, 4, 3)),
    "no affine, 2-d input": (lambda L: L.nn.GroupNorm(3, 6, eps=1e-3, affine=False), (2, 6)),
    "no bias, 4-d": (lambda L: L.nn.GroupNorm(1, 2, bias=False), (2, 2, 2, 2)),
}


@pytest.mark.parametrize("kind", sorted(GROUP_NORMS))
def test_group_norm_modules_match_torch(kind):
    make, shape = GROUP_NORMS[kind]
    same(lambda L: _steps(L, _load(L, make(L), 0), shape, steps=1))


def test_group_norm_errors():
    # (double backward, and mean / rstd as differentiable outputs: the op samples in
    # tests/_samples_batchnorm.py, against torch's)
    gn = lambda *a: lambda L: L.nn.functional.group_norm(
        *[x(L) if callable(x) else x for x in a])
    same_error(gn(lambda L: L.ones(2, 3, 2), 2), "Expected number of channels in input to be "
               "divisible by num_groups, but got input of shape [2, 3, 2] and num_groups=2")
    same_error(gn(lambda L: L.ones(2, 3, 2), 3, lambda L: L.ones(4)),
               "Expected weight to be a vector of size equal to the number of channels")
    same_error(gn(lambda L: L.ones(3), 1), "Expected at least 2 dimensions", RuntimeError)
    same_error(gn(lambda L: L.ones(1, 3, 1), 3), "Expected more than 1 value per channel",
               ValueError)
    same_error(gn(lambda L: L.ones(2, 3, dtype=L.complex64), 3),
               "\"GroupNormKernelImpl\" not implemented for 'ComplexFloat'", NotImplementedError)
    same_error(lambda L: L.nn.GroupNorm(2, 3), "num_channels (3) must be divisible by "
               "num_groups (2)", ValueError)


# ---- feature / alpha dropout --------------------------------------------------------------
def test_feature_dropout_deterministic_cases_match_torch():
    def f(L):
        x = L.tensor(arrays(6, (2, 3, 4))[0], requires_grad=True)
        y = x * 2
        F = L.nn.functional
        res = [F.dropout1d(y, 0.5, training=False) is y, F.dropout2d(y[None], 0.0).shape,
               F.alpha_dropout(y, 0.5) is y, F.feature_alpha_dropout(y, 0.0, True) is y,
               F.dropout3d(y, 0.5, False), F.feature_alpha_dropout(y[0, 0], 1.0, True),
               F.feature_alpha_dropout(y[0, 0], 0.5)]
        for z in (F.dropout1d(y, 1.0), F.dropout1d(y[0], 1.0), F.dropout3d(y[None], 1.0),
                  F.alpha_dropout(y, 1.0, True), F.feature_alpha_dropout(y, 1.0, True)):
            res += [z, _walk(z.grad_fn)]
        w = y * 1
        z = F.dropout1d(w, 1.0, inplace=True)
        res += [z is w, w._version, _walk(z.grad_fn)]
        mods = [L.nn.Dropout1d(), L.nn.Dropout2d(0.2, True), L.nn.Dropout3d(0.0),
                L.nn.AlphaDropout(0.3), L.nn.FeatureAlphaDropout(1.0)]
        res += [repr(m) for m in mods] + [m.eval()(y) is y for m in mods]
        res.append(mods[4].train()(y))
        return res
    same(f, quiet=True)
    same_error(lambda L: L.nn.functional.dropout1d(L.ones(2), 0.5),
               "dropout1d: Expected 2D or 3D input, but received a 1D input")
    same_error(lambda L: L.nn.functional.feature_alpha_dropout(L.ones(2), 0.5, True),
               "Feature dropout requires at least 2 dimensions in the input")
    same_error(lambda L: L.nn.functional.alpha_dropout(L.ones(2), 1.5), "between 0 and 1",
               ValueError)
    same_error(lambda L: L.nn.Dropout2d(-0.5), "between 0 and 1", ValueError)

    def warned(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.nn.functional.dropout2d(L.ones(2, 3, 4), 0.0)
            L.nn.functional.dropout3d(L.ones(2, 3, 4), 0.0)
        return [str(x.message) for x in w]
    same(warned)


@pytest.mark.parametrize("fn, batched", [("dropout1d", True), ("dropout1d", False),
                                         ("dropout2d", True), ("dropout3d", False)])
def test_feature_dropout_structure(fn, batched):
    """Whole channels zeroed, the others scaled by 1 / (1 - p); the gradient is the
    same noise (torch's graph: MulBackward0, saved noise of shape (N, C, 1, ...))."""
    p = 0.5
    dims = {"dropout1d": 1, "dropout2d": 2, "dropout3d": 3}[fn]
    shape = ((8,) if batched else ()) + (16,) + (2,) * dims
    x = eg.tensor(np.random.default_rng(0).uniform(1, 2, shape).astype(np.float32),
                  requires_grad=True)
    y = getattr(eg.nn.functional, fn)(x, p)
    ratio = (y / x).detach().numpy()
    flat = ratio.reshape(-1, 2 ** dims)
    assert np.allclose(flat, flat[:, :1])  # one value per channel
    assert set(np.round(np.unique(flat), 5)) <= {0.0, 2.0}
    assert 0 < (flat[:, 0] == 0).mean() < 1
    node = y.grad_fn if batched else y.grad_fn.next_functions[0][0]
    assert node.name() == "MulBackward0"
    assert tuple(node._saved_other.shape) == ((8,) if batched else (1,)) + (16,) + (1,) * dims
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ratio, rtol=1e-6)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_structure(feature):
    """Kept: a * x + alpha * a * p; dropped: -alpha * a * (1 - p) (per channel for the
    feature variant); graph AddBackward0 over MulBackward0 as torch records it."""
    p, alpha = 0.25, 1.7580993408473766
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x = eg.tensor(np.random.default_rng(1).uniform(1, 2, (8, 16, 3)), requires_grad=True)
    f = eg.nn.functional.feature_alpha_dropout if feature else eg.nn.functional.alpha_dropout
    y = f(x, p, True)
    xv, yv = x.detach().numpy(), y.detach().numpy()
    kept = np.isclose(yv, a * xv + alpha * a * p, rtol=1e-12)
    dropped = np.isclose(yv, -alpha * a * (1 - p), rtol=1e-12)
    assert (kept | dropped).all() and 0 < dropped.mean() < 1
    if feature:
        assert (kept == kept[:, :, :1]).all()
    assert y.grad_fn.name() == "AddBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, a, 0.0), rtol=1e-12)
    m = eg.nn.AlphaDropout(p)
    assert not bool((m(x) == y).all())  # a fresh mask each call
