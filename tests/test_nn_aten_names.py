"""torch.<name> forms of nn.functional ops (torch.conv2d, torch.max_pool2d, torch.dropout,
...) against real torch: ATen's signatures (pooling's `stride=[]`, dropout's positional
`train`), values, gradients and grad_fn names; dropout at p 0 and 1 and not training,
where the values are not random."""
import numpy as np
import pytest
import torch

import eagergrad as eg


def _pair(seed, shape, rg=True):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (torch.tensor(a, requires_grad=rg), eg.tensor(a, requires_grad=rg))


def _compare(call):
    outs, grads = [], []
    for L, k in ((torch, 0), (eg, 1)):
        xs = [p[k] for p in call.inputs]
        y = call.fn(L)(*xs)
        y = y[0] if isinstance(y, tuple) else y
        outs.append((np.asarray(y.detach().numpy()), None if y.grad_fn is None
                     else y.grad_fn.name()))
        if y.requires_grad:
            y.sum().backward()
            grads.append([np.asarray(x.grad.numpy()) for x in xs])
    assert outs[0][1] == outs[1][1]
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12, atol=1e-12)
    for gt, ge in zip(*grads):
        np.testing.assert_allclose(ge, gt, rtol=1e-12, atol=1e-12)


class _Call:
    def __init__(self, fn, *shapes):
        self.fn = fn
        self.inputs = [_pair(i, s) for i, s in enumerate(shapes)]


CALLS = {
    "conv1d": _Call(lambda L: lambda x, w: L.conv1d(x, w, None, 2, 1), (2, 3, 9), (4, 3, 3)),
    "conv2d": _Call(lambda L: lambda x, w, b: L.conv2d(x, w, b, 1, 0, 1, 1),
                    (1, 2, 5, 5), (3, 2, 2, 2), (3,)),
    "conv3d": _Call(lambda L: L.conv3d, (1, 2, 4, 4, 4), (2, 2, 2, 2, 2)),
    "conv_transpose2d": _Call(lambda L: lambda x, w: L.conv_transpose2d(x, w, None, 2, 1, 1),
                              (1, 2, 4, 4), (2, 3, 3, 3)),
    "bilinear": _Call(lambda L: L.bilinear, (3, 2), (3, 4), (5, 2, 4)),
    "avg_pool1d": _Call(lambda L: lambda x: L.avg_pool1d(x, 3, 2, 1), (2, 3, 8)),
    "adaptive_avg_pool1d": _Call(lambda L: lambda x: L.adaptive_avg_pool1d(x, 3), (2, 7)),
    "max_pool1d": _Call(lambda L: lambda x: L.max_pool1d(x, 2), (2, 3, 8)),
    "max_pool2d": _Call(lambda L: lambda x: L.max_pool2d(x, 2, []), (1, 2, 6, 6)),
    "max_pool2d_args": _Call(lambda L: lambda x: L.max_pool2d(x, [3, 2], [2, 1], [1, 0], 1,
                                                              True), (1, 2, 7, 6)),
    "max_pool3d": _Call(lambda L: lambda x: L.max_pool3d(x, 2, 1), (1, 1, 4, 4, 4)),
    "max_pool1d_with_indices": _Call(lambda L: lambda x: L.max_pool1d_with_indices(x, 3),
                                     (2, 9)),
}
for _name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    for _p, _train in ((0.0, True), (1.0, True), (0.5, False)):
        CALLS[f"{_name}-{_p}-{_train}"] = _Call(
            lambda L, n=_name, p=_p, t=_train: lambda x: getattr(L, n)(x * 1, p, t), (2, 3, 4))


@pytest.mark.parametrize("name", list(CALLS))
def test_torch_level_function_as_torch(name):
    _compare(CALLS[name])


@pytest.mark.parametrize("name", ["dropout_", "feature_dropout_", "alpha_dropout_",
                                  "feature_alpha_dropout_"])
def test_inplace_dropout_writes_the_input(name):
    for p in (0.0, 1.0):
        xs = [L.ones(2, 3) + 1 for L in (torch, eg)]
        ys = [getattr(L, name)(x, p, True) for L, x in zip((torch, eg), xs)]
        assert ys[1] is xs[1] and ys[0] is xs[0]
        np.testing.assert_array_equal(xs[1].numpy(), xs[0].numpy())


def test_max_pool_takes_no_return_indices_and_dropout_needs_train():
    for L in (torch, eg):
        with pytest.raises(TypeError, match="unexpected keyword argument 'return_indices'"):
            L.max_pool2d(L.ones(1, 1, 4, 4), 2, return_indices=True)
        with pytest.raises(TypeError):
            L.dropout(L.ones(3), 0.5)
