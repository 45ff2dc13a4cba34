"""Samples for the activation ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

rrelu's training mode draws its slopes from eagergrad's generator: compared with torch
here only with lower == upper (a deterministic slope); tests/test_nn_activation.py checks
the random case by its structure. In-place samples work on `x * 1` (a non-leaf)."""
from _samples import C, F, I, S, T, V  # noqa: F401


def _f(m):
    return m.nn.functional


# torch implements no derivative of hardsigmoid_backward
_NO_DOUBLE = {"double_backward": False}
# torch's hardsigmoid gradient is grad * float(1/6) (a float32 constant, also in float64):
# 3e-8 from the derivative jax takes, so jax checks it in float32 only
_F32_SIXTH = {"double_backward": False, "jax": False}

SAMPLES = {
    "gelu": [
        S(lambda m, x: _f(m).gelu(x), F(2, 3, lo=-3.0, hi=3.0), name="exact"),
        S(lambda m, x: _f(m).gelu(x, approximate="tanh"), F(5, lo=-3.0, hi=3.0), name="tanh"),
    ],
    "silu": [
        S(lambda m, x: _f(m).silu(x), F(2, 3)),
        S(lambda m, x: _f(m).silu(x * 1, inplace=True), F(4), name="in place"),
        S(lambda m, x: _f(m).silu(x), C(3, rg=False), nondiff=True,
          name="complex (torch: no autograd)"),
    ],
    "mish": [
        S(lambda m, x: _f(m).mish(x), F(2, 3, lo=-3.0, hi=3.0)),
        S(lambda m, x: _f(m).mish(x * 1, inplace=True), F(4), name="in place"),
    ],
    "elu": [
        S(lambda m, x: _f(m).elu(x), F(2, 3)),
        S(lambda m, x: m.selu(x), F(5), name="torch.selu"),
    ],
    "elu_": [
        S(lambda m, x: _f(m).elu(x * 1, 0.5, inplace=True), F(2, 3), name="F.elu in place"),
        S(lambda m, x: _f(m).selu_(x * 1), F(4), name="selu_"),
    ],
    "celu": [S(lambda m, x: _f(m).celu(x, 0.3), F(2, 3))],
    "celu_": [S(lambda m, x: m.celu_(x * 1, 1.5), F(4))],
    "leaky_relu": [S(lambda m, x: _f(m).leaky_relu(x, 0.2), F(2, 3))],
    "leaky_relu_": [S(lambda m, x: _f(m).leaky_relu_(x * 1), F(4))],
    "softplus": [
        S(lambda m, x: _f(m).softplus(x), F(2, 3)),
        S(lambda m, x: _f(m).softplus(x, beta=2, threshold=1.5), F(6), name="beta, threshold"),
    ],
    "hardtanh": [
        S(lambda m, x: _f(m).hardtanh(x), F(2, 3)),
        S(lambda m, x: _f(m).relu6(x * 4), F(5), name="relu6"),
        S(lambda m, x: _f(m).hardtanh(x * 1, -0.5, 1.5, inplace=True), F(4),
          name="in place"),
    ],
    "hardswish": [
        S(lambda m, x: _f(m).hardswish(x), F(2, 4, lo=-4.0, hi=4.0)),
        S(lambda m, x: _f(m).hardswish(x * 1, True), F(4, lo=-4.0, hi=4.0), name="in place"),
    ],
    "hardsigmoid": [
        S(lambda m, x: _f(m).hardsigmoid(x), F(2, 4, lo=-4.0, hi=4.0), **_F32_SIXTH),
        S(lambda m, x: _f(m).hardsigmoid(x * 1, True), F(4, lo=-4.0, hi=4.0),
          name="in place", **_F32_SIXTH),
        S(lambda m, x: _f(m).hardsigmoid(x), T("float32", 6, lo=-4.0, hi=4.0),
          name="float32", **_NO_DOUBLE),
    ],
    "log_sigmoid_forward": [S(lambda m, x: _f(m).logsigmoid(x), F(2, 3, lo=-4.0, hi=4.0))],
    "glu": [
        S(lambda m, x: _f(m).glu(x), F(2, 4)),
        S(lambda m, x: _f(m).glu(x, 0), F(2, 3), name="dim 0"),
    ],
    "threshold": [S(lambda m, x: _f(m).threshold(x, 0.1, 20.0), F(2, 3))],
    "threshold_": [S(lambda m, x: m.threshold_(x * 1, 0.5, -1.0), F(4))],
    "_prelu_kernel": [
        S(lambda m, x, w: _f(m).prelu(x, w), F(2, 3, 2), F(3), name="per channel"),
        S(lambda m, x, w: m.prelu(x, w), F(4), F(1), name="one weight"),
    ],
    "hardshrink": [
        S(lambda m, x: _f(m).hardshrink(x), F(2, 3)),
        S(lambda m, x: x.hardshrink(1.0), F(4), name="method, lambd"),
    ],
    "softshrink": [S(lambda m, x: _f(m).softshrink(x, 0.3), F(2, 3))],
    "rrelu_with_noise": [
        S(lambda m, x: _f(m).rrelu(x), F(2, 3), name="eval"),
        S(lambda m, x: m.rrelu(x, 0.2, 0.2, True), F(4), name="training, lower == upper"),
    ],
    "rrelu_with_noise_": [
        S(lambda m, x: _f(m).rrelu(x * 1, 0.1, 0.3, inplace=True), F(4), name="eval"),
        S(lambda m, x: m.rrelu_(x * 1, 0.25, 0.25, True), F(4), name="training, lower == upper"),
    ],
    # the gradients' own ops (ops/activation.py NOTE [mask backwards]), whose nodes the
    # double-backward check runs
    "threshold_backward": [
        S(lambda m, x: m.relu(x), F(2, 3), name="relu, via double backward"),
        S(lambda m, x: _f(m).threshold(x, 0.1, 20.0), F(4), name="threshold"),
    ],
    "leaky_relu_backward": [
        S(lambda m, x: _f(m).leaky_relu(x, 0.2), F(2, 3), name="via double backward"),
        S(lambda m, x: _f(m).leaky_relu_(x * 1, 0.3), F(4), name="in place (on the result)"),
    ],
    "hardtanh_backward": [S(lambda m, x: _f(m).relu6(x * 4), F(5), name="relu6")],
    "hardshrink_backward": [S(lambda m, x: _f(m).hardshrink(x), F(2, 3))],
    "softshrink_backward": [S(lambda m, x: _f(m).softshrink(x, 0.3), F(2, 3))],
    # torch's compositions
    "div": [S(lambda m, x: _f(m).softsign(x), F(2, 3), name="softsign")],
    "softmax": [S(lambda m, x: _f(m).softmin(x, 1), F(2, 3), name="softmin")],
}

SPECIAL = {
    "elu": [S(lambda m, x: _f(m).elu(x, 0.5), V([-1.0, 0.0, 1.0]), name="kink at 0")],
    "elu_": [S(lambda m, x: _f(m).elu(x * 1, 0.5, True), V([-1.0, 0.0, 1.0]),
               name="kink at 0")],
    "celu": [S(lambda m, x: _f(m).celu(x, 0.5), V([-1.0, 0.0, 1.0]), name="kink at 0")],
    "celu_": [S(lambda m, x: _f(m).celu_(x * 1, 2.0), V([-1.0, 0.0, 1.0]), name="kink at 0")],
    "leaky_relu": [S(lambda m, x: _f(m).leaky_relu(x, 0.1), V([-1.0, 0.0, 1.0]),
                     name="kink at 0")],
    "leaky_relu_": [S(lambda m, x: _f(m).leaky_relu_(x * 1, 0.1), V([-1.0, 0.0, 1.0]),
                      name="kink at 0")],
    "softplus": [S(lambda m, x: _f(m).softplus(x, 2, 1), V([0.5, 0.0, 0.6, -30.0]),
                   name="beta * x at the threshold")],
    "hardtanh": [
        S(lambda m, x: _f(m).hardtanh(x), V([-1.0, 1.0, -2.0, 2.0, 0.5]), name="at the bounds"),
        S(lambda m, x: _f(m).relu6(x), V([0.0, 6.0, 3.0, 7.0]), name="relu6 at 0 and 6"),
    ],
    "hardswish": [S(lambda m, x: _f(m).hardswish(x), V([-3.0, 3.0, 0.0, -4.0, 4.0]),
                    name="at -3 and 3")],
    "hardsigmoid": [S(lambda m, x: _f(m).hardsigmoid(x), V([-3.0, 3.0, 0.0, -4.0, 4.0]),
                      name="at -3 and 3", **_NO_DOUBLE)],
    "threshold": [S(lambda m, x: _f(m).threshold(x, 0.5, 2.0), V([0.5, 0.0, 1.0]),
                    name="x == threshold")],
    "threshold_": [S(lambda m, x: _f(m).threshold_(x * 1, 0.5, 2.0), V([0.5, 0.0, 1.0]),
                     name="x == threshold")],
    "_prelu_kernel": [S(lambda m, x, w: _f(m).prelu(x, w), V([[0.0, -1.0], [2.0, 0.0]]),
                        V([0.25, -0.5]), name="x == 0")],
    "hardshrink": [S(lambda m, x: _f(m).hardshrink(x, 0.5), V([0.5, -0.5, 0.0, 1.0]),
                     name="|x| == lambd")],
    "softshrink": [S(lambda m, x: _f(m).softshrink(x, 0.5), V([0.5, -0.5, 0.0, 1.0]),
                     name="|x| == lambd")],
    "rrelu_with_noise": [
        S(lambda m, x: _f(m).rrelu(x, 0.1, 0.3), V([0.0, -1.0, 1.0]), name="eval, kink at 0"),
        S(lambda m, x: m.rrelu(x, 0.2, 0.2, True), V([0.0, -1.0, 1.0]),
          name="training, lower == upper, kink at 0"),
    ],
    "rrelu_with_noise_": [S(lambda m, x: m.rrelu_(x * 1, 0.1, 0.3), V([0.0, -1.0, 1.0]),
                            name="eval, kink at 0")],
}

_SMOOTH = "analytic: its values at 0 and 1 are in the sweep"
SMOOTH = dict.fromkeys(("gelu", "silu", "mish", "log_sigmoid_forward", "glu"), _SMOOTH)
SMOOTH.update(dict.fromkeys(
    ("threshold_backward", "leaky_relu_backward", "hardtanh_backward", "hardshrink_backward",
     "softshrink_backward"), "linear in grad_output, a zero derivative for self: its mask's "
    "boundary points are the forward op's special points (relu, leaky_relu, ...)"))
