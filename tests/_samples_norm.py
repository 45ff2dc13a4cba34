"""Samples for the normalization / embedding / dropout ops (merged into _samples.SAMPLES:
lists under an existing op name are appended to it), same format as _samples.py; SPECIAL:
samples at their special points (merged into test_special_points.SPECIAL).

Dropout draws its mask from eagergrad's generator, so only its deterministic cases
(p = 0, p = 1, not training) are compared with torch here; tests/test_nn_norm.py checks
the random ones by their structure."""
from _samples import S, F, C, V, I


def _ln(m, x, *wb, ns=None, eps=1e-5):
    w, b = (list(wb) + [None, None])[:2]
    return m.nn.functional.layer_norm(x, ns or x.shape[-1:], w, b, eps)


def _rms(m, x, w=None, eps=None, ns=None):
    return m.nn.functional.rms_norm(x, ns or x.shape[-1:], w, eps)


def _emb(m, i, w, **kw):
    return m.nn.functional.embedding(i, w, **kw)


IDX = [[0, 2, 4], [4, 1, 2]]

SAMPLES = {
    "native_layer_norm": [
        S(_ln, F(3, 4), F(4), F(4), name="weight, bias"),
        S(_ln, F(3, 4), name="no affine"),
        S(_ln, F(2, 3, 4), F(4), name="weight only, 3-d"),
        # torch's own double backward fails without a weight ("Expected a proper Tensor")
        S(lambda m, x, b: _ln(m, x, None, b), F(2, 3), F(3), name="bias only",
          double_backward=False),
        S(lambda m, x, w, b: _ln(m, x, w, b, ns=(3, 4)), F(2, 3, 4), F(3, 4), F(3, 4),
          name="2-d normalized_shape"),
        S(_ln, F(3, 4, rg=False), F(4), F(4), name="weight and bias grads only"),
        S(_ln, F(4), F(4, rg=False), F(4, rg=False), name="1-d input, input grad only"),
        S(lambda m, x, w, b: m.native_layer_norm(x, [4], w, b, 1e-3), F(3, 4), F(4), F(4),
          name="torch.native_layer_norm: mean and rstd"),
    ],
    "embedding": [
        S(_emb, I(IDX), F(5, 3), name="2-d indices"),
        # padding_idx and scale_grad_by_freq: torch's gradient is not the function's
        # derivative (no jax.vjp / finite-difference comparison)
        S(lambda m, i, w: _emb(m, i, w, padding_idx=2), I(IDX), F(5, 3), jax=False, fd=False,
          name="padding_idx"),
        S(lambda m, i, w: _emb(m, i, w, padding_idx=-1, scale_grad_by_freq=True),
          I([4, 2, 2, 0, 2]), F(5, 3), jax=False, fd=False,
          name="negative padding_idx, scale_grad_by_freq"),
        S(lambda m, i, w: _emb(m, i, w), I(3), F(5, 2), name="0-dim index"),
        S(lambda m, i, w: m.embedding(w, i.int()), I([1, 1, 3]), F(4, 2), name="int32"),
        S(lambda m, i, w: _emb(m, i, w * 1, max_norm=1.0), I([0, 3, 3]),
          F(4, 3, lo=-2.0, hi=2.0), jax=False, fd=False,
          name="max_norm (renormed in place under no_grad)"),
        S(lambda m, i, w: _emb(m, i, w), I(IDX), C(5, 3, rg=False), nondiff=True,
          name="complex (torch: no autograd)"),
    ],
    "native_dropout": [
        # (p 0, p 1 and eval draw no random mask that differs between runs: jax can check)
        S(lambda m, x: m.native_dropout(x, 0.0, True), F(3, 4), name="p 0: mask all True"),
        S(lambda m, x: m.native_dropout(x, 1.0, True), F(3, 4), name="p 1: all zeroed"),
        S(lambda m, x: m.native_dropout(x, 0.5, False), F(3, 4), name="not training"),
    ],
    "mul": [
        S(lambda m, x: m.nn.functional.dropout(x, 1.0), F(3, 4),
          name="dropout p 1: x * zeros(())"),
        S(lambda m, x: m.nn.functional.dropout(x * 2, 0.5, training=False) * 1, F(3, 4),
          name="dropout not training: the input itself"),
        S(lambda m, x: m.nn.functional.dropout(x * 2, 0.0) * 1, F(3, 4),
          name="dropout p 0: the input itself"),
        S(lambda m, x: m.nn.functional.dropout(x * 1, 1.0, inplace=True), C(3, 4),
          name="dropout p 1 in place, complex"),
    ],
    "rsqrt": [
        S(_rms, F(3, 4), F(4), name="rms_norm with weight"),
        S(_rms, F(2, 3, 4), name="rms_norm, default eps"),
        S(lambda m, x, w: _rms(m, x, w, eps=1e-3, ns=(3, 4)), F(2, 3, 4), F(3, 4),
          name="rms_norm 2-d normalized_shape, eps"),
        S(_rms, C(3, 4), C(4), name="rms_norm complex"),
    ],
}

SPECIAL = {
    "native_layer_norm": [
        S(lambda m, x, w, b: _ln(m, x, w, b),
          V([[1.5, 1.5, 1.5], [0.0, 1.0, 2.0]]), V([0.5, -1.0, 2.0]), V([0.1, 0.2, 0.3]),
          name="a constant row: rstd = 1/sqrt(eps)"),
        S(lambda m, x: _ln(m, x, eps=0.0), V([[1.0, -1.0], [2.0, 4.0]]),
          name="eps 0"),
    ],
    "embedding": [
        S(lambda m, i, w: _emb(m, i, w, padding_idx=1, scale_grad_by_freq=True),
          I([[1, 1, 3], [3, 3, 0]]), V([[0.5, 1.0], [2.0, -1.0], [0.0, 0.0], [1.0, 3.0]]),
          name="repeated indices, padding_idx, scale_grad_by_freq"),
        S(lambda m, i, w: _emb(m, i, w, padding_idx=0), I([0, 0]),
          V([[0.5, 1.0], [2.0, -1.0]]), name="only the padding row"),
    ],
    "native_dropout": [
        S(lambda m, x: m.native_dropout(x, 1.0, True), V([1.0, -2.0, 0.0]),
          name="p 1: scale 0, not inf"),
    ],
}

# aten::norm.Scalar (NormBackward0): norm_except_dim over every dim (dim -1)
SAMPLES["norm_scalar"] = [
    S(lambda m, x: m.norm_except_dim(x, 2, -1), F(3, 4), name="norm_except_dim dim -1"),
    S(lambda m, x: m.norm_except_dim(x, 3, -1), F(2, 3), name="p 3"),
    S(lambda m, z: m.norm_except_dim(z, 2, -1), C(3, 4), name="complex"),
]
SPECIAL["norm_scalar"] = [
    S(lambda m, x: m.norm_except_dim(x, 2, -1), V([[0.0, 0.0], [0.0, 0.0]]),
      name="the zero tensor, p 2"),
    S(lambda m, x: m.norm_except_dim(x, 3, -1), V([0.0, 0.0, 0.0]),
      name="the zero tensor, p 3"),
]
