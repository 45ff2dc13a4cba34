"""Samples for the batchnorm ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

Batch norm's running stats are inputs that need no grad: training updates them in place
(the sample's result does not read them), eval reads them. Feature / alpha dropout draw
random masks, so only their deterministic p = 1 case is a sample here;
tests/test_nn_batchnorm.py checks the random ones by their structure."""
from _samples import C, F, I, S, V  # noqa: F401

RV = {"lo": 0.5, "hi": 2.0, "rg": False}  # a running variance


def _bn(m, x, *args, training=True, eps=1e-5):
    w, b, rm, rv = (list(args) + [None] * 4)[:4]
    return m.nn.functional.batch_norm(x, rm, rv, w, b, training=training, eps=eps)


def _gn(m, x, *wb, groups=2, eps=1e-5):
    w, b = (list(wb) + [None, None])[:2]
    return m.nn.functional.group_norm(x, groups, w, b, eps)


SAMPLES = {
    "native_batch_norm": [
        S(_bn, F(4, 3, 2), F(3), F(3), name="training, weight, bias"),
        S(lambda m, x, rm, rv: _bn(m, x, None, None, rm, rv), F(5, 2), F(2, rg=False),
          F(2, **RV), name="training, running stats updated, 2-d"),
        S(lambda m, x, w, rm, rv: _bn(m, x, w, None, rm, rv, training=False), F(2, 3, 2, 2),
          F(3), F(3, rg=False), F(3, **RV), name="eval: the running stats, 4-d"),
    ],
    "native_batch_norm_legit": [
        S(lambda m, x, w, b, rm, rv: m._native_batch_norm_legit(x, w, b, rm, rv, True, 0.1,
                                                               1e-5),
          F(4, 3, 2), F(3), F(3), F(3, rg=False), F(3, **RV), name="training, running stats"),
        S(lambda m, x, w, rm, rv: m._native_batch_norm_legit(x, w, None, rm, rv, False, 0.1,
                                                            1e-5),
          F(2, 3, 2), F(3), F(3, rg=False), F(3, **RV), name="eval"),
    ],
    "native_batch_norm_legit_no_stats": [
        S(lambda m, x, w, b: m._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5), F(4, 3, 2),
          F(3), F(3), name="no running stats"),
    ],
    "native_group_norm": [
        S(_gn, F(2, 4, 3), F(4), F(4), name="2 groups, weight, bias"),
        S(lambda m, x: m.native_group_norm(x, None, None, 3, 6, 1, 3, 1e-3), F(3, 6),
          name="torch.native_group_norm, 2-d, no affine: mean and rstd differentiable too"),
    ],
    "repeat": [
        S(lambda m, x: x.repeat(2, 1, 3), F(2, 3), name="Tensor.repeat, a new leading dim"),
        S(lambda m, x, w, b: m.nn.functional.instance_norm(x, weight=w, bias=b),
          F(2, 3, 4), F(3), F(3), name="instance_norm's weight and bias"),
    ],
}

SPECIAL = {
    "native_batch_norm": [
        S(lambda m, x, w, b: _bn(m, x, w, b),
          V([[1.5, 0.0], [1.5, 1.0], [1.5, 2.0]]), V([0.5, -1.0]), V([0.1, 0.2]),
          name="a constant channel: invstd = 1/sqrt(eps)"),
        S(lambda m, x, rm, rv: _bn(m, x, None, None, rm, rv, training=False, eps=0.0),
          V([[1.0, -1.0], [2.0, 4.0]]), V([0.5, 0.0], rg=False), V([4.0, 1.0], rg=False),
          name="eval, eps 0"),
    ],
    "native_group_norm": [
        S(lambda m, x, w: _gn(m, x, w, groups=2),
          V([[[1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [2.0, 3.0]]]), V([0.5, -1.0, 2.0, 1.0]),
          name="a constant group: rstd = 1/sqrt(eps)"),
    ],
}

SMOOTH = {"repeat": "linear (a copy of its input): no special points"}
SMOOTH.update(dict.fromkeys(
    ("native_batch_norm_legit", "native_batch_norm_legit_no_stats"),
    "native_batch_norm's kernel and formulas under another node: its SPECIAL points"))
