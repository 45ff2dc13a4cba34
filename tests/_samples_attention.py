"""Samples for the attention ops (merged into _samples.SAMPLES: lists under an existing op
name are appended to it), same format as _samples.py; SPECIAL: samples at their special
points (merged into test_special_points.SPECIAL); SMOOTH: op name -> why it needs
none (merged into test_special_points.SMOOTH).

The flash op is reached through F.scaled_dot_product_attention with 4-d inputs, its math
path's _safe_softmax with 3-d ones. torch's flash backward has no derivative: its samples
skip double backward, and the backward op's own sample checks torch's error."""
from _samples import C, F, I, S, V  # noqa: F401

KEEP = [[True, False, True, True], [False, False, False, False], [True, True, False, True]]


def _sdpa(m, q, k, v, **kw):
    return m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)


def _flash_grad(m, q, k, v, w):
    """The query's gradient, recorded (create_graph): the flash backward's node."""
    return m.autograd.grad(_sdpa(m, q, k, v), q, w, create_graph=True)[0]


SAMPLES = {
    "_scaled_dot_product_flash_attention_for_cpu": [
        S(_sdpa, F(2, 1, 3, 2), F(2, 1, 4, 2), F(2, 1, 4, 2), double_backward=False,
          name="4-d"),
        S(lambda m, q, k, v: _sdpa(m, q, k, v, is_causal=True, scale=0.8), F(1, 2, 3, 2),
          F(1, 2, 4, 2, rg=False), F(1, 2, 4, 2), double_backward=False,
          name="causal, scale, key without grad"),
        S(lambda m, q, k, v, a: _sdpa(m, q, k, v, attn_mask=a, enable_gqa=True),
          F(1, 2, 3, 2), F(1, 1, 4, 2), F(1, 1, 4, 2), F(3, 4, rg=False),
          double_backward=False, name="float mask, gqa"),
    ],
    "_scaled_dot_product_flash_attention_for_cpu_backward": [
        S(_flash_grad, F(1, 1, 3, 2), F(1, 1, 4, 2), F(1, 1, 4, 2), F(1, 1, 3, 2),
          backward_error="derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                         "backward is not implemented", name="create_graph"),
    ],
    "_safe_softmax": [
        S(_sdpa, F(2, 3, 2), F(2, 4, 2), F(2, 4, 2), name="sdpa 3-d (math path)"),
        S(lambda m, q, k, v: _sdpa(m, q, k, v, attn_mask=m.tensor(KEEP)), F(3, 2), F(4, 2),
          F(4, 2), jax=False,  # jax.vjp of the kernel gives nan in the masked row, torch 0
          name="sdpa 2-d, bool mask with a fully masked row"),
    ],
    "baddbmm": [
        S(lambda m, a, b, c: m.baddbmm(a, b, c), F(1, 2, 3), F(2, 2, 4), F(2, 4, 3),
          name="broadcast input"),
        S(lambda m, a, b, c: a.baddbmm(b, c, beta=0.5, alpha=-2.0), F(2, 2, 3), F(2, 2, 4),
          F(2, 4, 3), name="method, beta, alpha"),
        S(lambda m, a, b, c: m.baddbmm(a, b, c, beta=1 + 2j, alpha=0.5 - 1j), C(2, 2, 3),
          C(2, 2, 4), C(2, 4, 3), name="complex beta, alpha (conjugated in the formulas)"),
    ],
}

SPECIAL = {
    "_scaled_dot_product_flash_attention_for_cpu": [
        S(lambda m, q, k, v: _sdpa(m, q, k, v, attn_mask=m.tensor(KEEP)),
          V([[[[0.5, -1.0], [0.0, 0.0], [2.0, 1.0]]]]), V([[[[1.0, 0.0], [0.0, 1.0],
                                                            [-1.0, 0.5], [0.5, 0.5]]]]),
          V([[[[1.0, 2.0], [-1.0, 0.0], [0.5, 0.5], [0.0, -2.0]]]]), double_backward=False,
          name="a fully masked row: output 0, gradient 0"),
        S(lambda m, q, k, v: _sdpa(m, q, k, v, is_causal=True),
          V([[[[0.0, 0.0], [1.0, -1.0]]]]), V([[[[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]]]),
          V([[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]), double_backward=False,
          name="equal scores (uniform weights), causal with more keys than queries"),
    ],
    "_safe_softmax": [
        S(lambda m, q, k, v: _sdpa(m, q, k, v, attn_mask=m.tensor([[False, False, False],
                                                                   [True, False, True]])),
          V([[1.0, 0.5], [0.0, 0.0]]), V([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
          V([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
          name="an all -inf row gives 0; zero scores give uniform weights"),
    ],
}

SMOOTH = {
    "_scaled_dot_product_flash_attention_for_cpu_backward":
        "torch records no derivative for it (a NotImplemented node): nothing to sweep",
    "baddbmm": "linear in each tensor input (bilinear in the batches): the same formula at "
               "every point",
}
