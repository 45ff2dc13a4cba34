"""Samples for the ops behind torch.nn (merged into _samples.SAMPLES: lists under an
existing op name are appended to it), same format as _samples.py; SPECIAL: samples at
non-differentiable points (merged into test_special_points.SPECIAL)."""
from _samples import S, F, C, T, V, I, POS, UNIT  # noqa: F401

def _linear(m, x, w, b=None):
    return m.nn.functional.linear(x, w, b)


def _bilinear(m, x1, x2, w, b=None):
    return m.nn.functional.bilinear(x1, x2, w, b)


SAMPLES = {
    # ---- linear layers: torch.addmm and the graphs nn.functional.linear records ----
    "addmm": [
        S(lambda m, s, a, b: m.addmm(s, a, b), F(3), F(2, 4), F(4, 3)),
        S(lambda m, s, a, b: m.addmm(s, a, b, beta=0.5, alpha=2), F(2, 3), F(2, 4), F(4, 3),
          name="beta, alpha"),
        S(lambda m, s, a, b: s.addmm(a, b, beta=0, alpha=-1.5), F(1, 3), F(2, 4), F(4, 3),
          name="method, beta 0"),
        S(lambda m, s, a, b: m.addmm(s, a.t(), b.t()), F(3), F(4, 2), F(3, 4),
          name="column-major matrices"),
        S(lambda m, s, a, b: (s * 1).addmm_(a, b, alpha=3), F(2, 3), F(2, 4), F(4, 3),
          name="addmm_"),
        S(lambda m, s, a, b: m.addmm(s, a, b), F(3, rg=False), F(2, 4), F(4, 3, rg=False),
          name="only mat1 needs grad"),
        S(lambda m, s, a, b: m.addmm(s, a, b), T("int64", 3), T("int64", 2, 4),
          T("int64", 4, 3), nondiff=True, name="int"),
        S(lambda m, s, a, b: m.addmm(s, a, b, beta=0.5j, alpha=2 - 1j), C(2, 3), C(2, 4),
          C(4, 3), name="complex beta, alpha"),
        S(lambda m, s, a, b: m.addmm(s, a.t(), b), C(3), C(4, 2), C(4, 3),
          name="complex column-major mat1"),
        S(_linear, F(2, 4), F(3, 4), F(3), name="linear 2-d"),
        S(_linear, F(2, 4), F(3, 4), F(2, 3), name="linear 2-d, 2-d bias"),
        S(_linear, F(2, 4), F(3, 4, rg=False), F(3, rg=False), name="linear, input grad only"),
        S(_linear, C(2, 4), C(3, 4), C(3), name="linear complex"),
    ],
    "view": [
        S(_linear, F(4), F(3, 4), F(3), name="linear 1-d (view, addmm, view)"),
        S(_linear, F(5, 2, 4), F(3, 4), F(3), name="linear 3-d contiguous"),
        S(_linear, F(2, 1, 2, 4), F(3, 4), F(1, 3), name="linear 4-d, bias (1, 3)"),
        S(_linear, C(2, 2, 4), C(3, 4), C(3), name="linear complex 3-d"),
    ],
    "add": [
        S(lambda m, x, w, b: _linear(m, x.transpose(0, 1), w, b), F(2, 5, 4), F(3, 4), F(3),
          name="linear non-contiguous 3-d (matmul, add_)"),
        S(_linear, F(5, 2, 4), F(3, 4), F(2, 3), name="linear 3-d, 2-d bias"),
        S(_linear, F(2, 2, 4), F(4), F(), name="linear 1-d weight, 0-dim bias"),
        S(lambda m, x, w, b: _linear(m, x.transpose(0, 1), w, b), C(2, 2, 4), C(3, 4), C(3),
          name="linear complex non-contiguous"),
        S(_bilinear, F(2, 4), F(2, 3), F(5, 4, 3), F(5), name="bilinear"),
    ],
    "mm": [
        S(_linear, F(2, 4), F(3, 4), name="linear without bias"),
        S(_linear, C(2, 4), C(3, 4), name="linear complex without bias"),
    ],
    "_unsafe_view": [
        S(_linear, F(5, 2, 4), F(3, 4), name="linear 3-d without bias"),
        S(_linear, F(2, 2, 2, 4), F(3, 4), name="linear 4-d without bias"),
    ],
    "squeeze4": [
        S(_linear, F(4), F(3, 4), name="linear 1-d without bias"),
    ],
    "mv": [
        S(_linear, F(2, 4), F(4), name="linear 1-d weight without bias"),
    ],
    "_trilinear": [
        S(_bilinear, F(2, 4), F(2, 3), F(5, 4, 3), name="bilinear"),
        S(_bilinear, F(3, 2, 4), F(3, 2, 3), F(5, 4, 3), F(5), name="bilinear 3-d, bias"),
        S(_bilinear, F(4), F(3), F(2, 4, 3), F(2), name="bilinear 1-d"),
        S(lambda m, x1, x2, w: _bilinear(m, x1.t(), x2, w), F(4, 2), F(2, 3), F(5, 4, 3),
          name="bilinear non-contiguous input"),
        S(_bilinear, F(2, 4, rg=False), F(2, 3), F(5, 4, 3, rg=False),
          name="bilinear, input2 grad only"),
        # torch refuses complex _trilinear under autograd: complex runs forward only
        S(_bilinear, C(2, 4, rg=False), C(2, 3, rg=False), C(5, 4, 3, rg=False),
          C(5, rg=False), nondiff=True, name="bilinear complex (no grad)"),
    ],
}

SPECIAL = {
    # ---- losses: kinks and boundaries ----
    "smooth_l1_loss": [S(lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y, reduction="sum",
                                                                        beta=0.5),
                         V([0.5, -0.5, 0.0, 2.0]), V([0.0, 0.0, 0.0, 1.5]),
                         name="|diff| == beta, diff 0")],
    "huber_loss": [S(lambda m, x, y: m.nn.functional.huber_loss(x, y, reduction="none",
                                                                delta=0.5),
                     V([0.5, -0.5, 0.0, 2.0]), V([0.0, 0.0, 0.0, 1.5]),
                     name="|diff| == delta, diff 0")],
    "abs": [S(lambda m, x, y: m.nn.functional.l1_loss(x, y), V([1.0, 0.0, -2.0]),
              V([1.0, 0.0, 1.0]), name="l1_loss at zero difference")],
    "nll_loss": [
        S(lambda m, x, t: m.nn.functional.nll_loss(x, t), F(3, 4), I([1, -100, 3]),
          name="ignore_index rows"),
        S(lambda m, x, t: m.nn.functional.nll_loss(x, t), F(3, 4), I([-100, -100, -100]),
          name="all ignored: nan mean"),
        S(lambda m, x, t: m.nn.functional.nll_loss(x, t, reduction="sum", ignore_index=2),
          F(3, 4), I([2, 2, 2]), name="all ignored, sum"),
        S(lambda m, x, t, w: m.nn.functional.nll_loss(x, t, weight=w), F(3, 4), I([0, 0, 3]),
          V([0.0, 1.0, 1.0, 0.0], rg=False), name="zero total weight"),
    ],
    "nll_loss2d": [S(lambda m, x, t: m.nn.functional.nll_loss(x, t), F(2, 3, 2, 2),
                     I([[[0, -100], [2, 1]], [[-100, -100], [1, 1]]]), name="ignored pixels")],
    "binary_cross_entropy": [
        S(lambda m, x, y: m.nn.functional.binary_cross_entropy(x, y, reduction="none"),
          V([0.0, 1.0, 0.0, 1.0, 0.5]), V([0.3, 0.6, 0.0, 1.0, 0.5]),
          name="inputs 0 and 1: log clamped at -100",
          # torch's second order at 0/1 is its own eps formula (relative 4e-9 off here)
          double_backward=False),
    ],
    "binary_cross_entropy_with_logits": [
        S(lambda m, x, y, p: m.nn.functional.binary_cross_entropy_with_logits(
          x, y, pos_weight=p, reduction="none"), V([-800.0, 800.0, 0.0]),
          V([0.2, 0.7, 1.0]), V([2.0, 3.0, 0.5], rg=False), name="saturated logits")],
    "xlogy": [S(lambda m, x, y: m.nn.functional.kl_div(x, y, reduction="sum"),
                V([0.5, -1.0, 2.0]), V([0.0, 1.0, 0.5]), name="kl_div at target 0")],
}


# ---- losses (ops/loss.py, margin.py, ctc.py; appended here, merged into SAMPLES below) --
def _nnf(m):
    return m.nn.functional


LOSS_SAMPLES = {
    "mse_loss": [
        S(lambda m, x, y: _nnf(m).mse_loss(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: _nnf(m).mse_loss(x, y, reduction="none"), F(3, 4), F(3, 4),
          name="none"),
        S(lambda m, x, y: _nnf(m).mse_loss(x, y, reduction="sum"), F(3, 4), F(3, 4, rg=False),
          name="sum, constant target"),
    ],
    "smooth_l1_loss": [
        S(lambda m, x, y: _nnf(m).smooth_l1_loss(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: _nnf(m).smooth_l1_loss(x, y, reduction="none", beta=0.5), F(3, 4),
          F(3, 4), name="none, beta"),
        S(lambda m, x, y: _nnf(m).smooth_l1_loss(x, y, reduction="sum", beta=2.0), F(3, 4),
          F(3, 4), name="sum"),
    ],
    "huber_loss": [
        S(lambda m, x, y: _nnf(m).huber_loss(x, y), F(3, 4), F(3, 4)),
        S(lambda m, x, y: _nnf(m).huber_loss(x, y, reduction="none", delta=0.5), F(3, 4),
          F(3, 4), name="none, delta"),
        S(lambda m, x, y: _nnf(m).huber_loss(x, y, reduction="sum", delta=2.0), F(3, 4),
          F(3, 4), name="sum"),
    ],
    "nll_loss": [
        S(lambda m, x, t: _nnf(m).nll_loss(x, t), F(3, 4), I([0, 3, 1])),
        S(lambda m, x, t, w: _nnf(m).nll_loss(x, t, weight=w, reduction="none"), F(3, 4),
          I([0, 3, 1]), F(4, lo=0.5, hi=2.0, rg=False), name="weight, none"),
        S(lambda m, x, t, w: _nnf(m).nll_loss(x, t, weight=w), F(3, 4), I([0, 3, 1]),
          F(4, lo=0.5, hi=2.0, rg=False), name="weight, mean"),
        S(lambda m, x, t: _nnf(m).nll_loss(x, t, reduction="sum", ignore_index=1), F(3, 4),
          I([0, 1, 2]), name="sum, ignore_index"),
        S(lambda m, x, t: _nnf(m).nll_loss(x, t), F(4), I(2), name="1-D input"),
        S(lambda m, x, t: _nnf(m).cross_entropy(x, t), F(3, 4), I([0, 3, 1]),
          name="cross_entropy"),
    ],
    "nll_loss2d": [
        S(lambda m, x, t: _nnf(m).nll_loss(x, t), F(2, 3, 2, 2),
          I([[[0, 1], [2, 1]], [[0, 0], [1, 2]]])),
        S(lambda m, x, t, w: _nnf(m).nll_loss(x, t, weight=w, reduction="none"), F(2, 3, 4),
          I([[0, 1, 2, 1], [0, 0, 1, 2]]), F(3, lo=0.5, hi=2.0, rg=False),
          name="3-D input via views, none"),
        S(lambda m, x, t: _nnf(m).cross_entropy(x, t, reduction="sum"), F(2, 3, 4),
          I([[0, 1, 2, 1], [0, 0, 1, 2]]), name="cross_entropy 3-D"),
    ],
    "mul_scalar": [
        S(lambda m, x, t: _nnf(m).cross_entropy(x, t, label_smoothing=0.1), F(3, 4),
          I([0, 3, 1]), name="cross_entropy label_smoothing"),
        S(lambda m, x, t, w: _nnf(m).cross_entropy(x, t, weight=w, label_smoothing=0.2,
                                                   ignore_index=3, reduction="none"),
          F(3, 4), I([0, 3, 1]), F(4, lo=0.5, hi=2.0, rg=False),
          name="label_smoothing, weight, ignore_index, none"),
    ],
    "div_scalar": [
        S(lambda m, x, y: _nnf(m).cross_entropy(x, y.softmax(1)), F(3, 4), F(3, 4),
          name="cross_entropy probabilities"),
    ],
    "add_scalar": [
        S(lambda m, x, y, w: _nnf(m).cross_entropy(x, y.softmax(1), weight=w,
                                                   label_smoothing=0.2),
          F(3, 4), F(3, 4), F(4, lo=0.5, hi=2.0, rg=False),
          name="cross_entropy probabilities, label_smoothing, weight"),
    ],
    "binary_cross_entropy": [
        S(lambda m, x, y: _nnf(m).binary_cross_entropy(x, y), F(3, 4, lo=0.05, hi=0.95),
          F(3, 4, lo=0.0, hi=1.0)),
        S(lambda m, x, y, w: _nnf(m).binary_cross_entropy(x, y, weight=w, reduction="none"),
          F(3, 4, lo=0.05, hi=0.95), F(3, 4, lo=0.0, hi=1.0), F(4, lo=0.5, hi=2.0, rg=False),
          name="weight, none"),
        S(lambda m, x, y: _nnf(m).binary_cross_entropy(x, y, reduction="sum"),
          F(3, 4, lo=0.05, hi=0.95), F(3, 4, lo=0.0, hi=1.0, rg=False), name="sum"),
    ],
    "binary_cross_entropy_with_logits": [
        S(lambda m, x, y: _nnf(m).binary_cross_entropy_with_logits(x, y), F(3, 4),
          F(3, 4, lo=0.0, hi=1.0)),
        S(lambda m, x, y, w, p: _nnf(m).binary_cross_entropy_with_logits(
          x, y, weight=w, pos_weight=p, reduction="none"), F(3, 4), F(3, 4, lo=0.0, hi=1.0),
          F(3, 1, lo=0.5, hi=2.0, rg=False), F(4, lo=0.5, hi=2.0, rg=False),
          name="weight, pos_weight, none"),
        S(lambda m, x, y, p: m.binary_cross_entropy_with_logits(x, y, pos_weight=p,
                                                                  reduction=2),
          F(3, 4), F(3, 4, lo=0.0, hi=1.0), F(4, lo=0.5, hi=2.0, rg=False),
          name="torch.binary_cross_entropy_with_logits, sum"),
    ],
    "xlogy": [
        S(lambda m, x, y: _nnf(m).kl_div(x, y, reduction="batchmean"), F(3, 4),
          F(3, 4, lo=0.1, hi=1.0), name="kl_div"),
        S(lambda m, x, y: m.kl_div(x, y, reduction=0), F(3, 4), F(3, 4, lo=0.1, hi=1.0),
          name="torch.kl_div, none"),
    ],
}
SAMPLES.update(LOSS_SAMPLES)


# ---- margin / embedding losses and distances ----------------------------------------------
def _mm_grad(m, x, **kw):
    """The first-order gradient of multi_margin_loss, recorded (its backward's node)."""
    loss = _nnf(m).multi_margin_loss(x, m.tensor([0, 3, 1]), **kw)
    # a grad_output requiring grad: torch's NotImplemented node lists only edges that do
    v = m.ones((), dtype=x.dtype, requires_grad=True)
    return m.autograd.grad(loss, x, v, create_graph=True)[0]


def _smb_grad(m, x, y):
    """The first-order gradient of soft_margin_loss, recorded (SoftMarginLossBackward...)."""
    loss = _nnf(m).soft_margin_loss(x, y)
    return m.autograd.grad(loss, x, create_graph=True)[0]


_MLM_T = [[0, 3, -1, 1], [1, 1, -1, 0], [2, 1, 0, 3]]


def _mlm_grad(m, x):
    loss = _nnf(m).multilabel_margin_loss(x, m.tensor(_MLM_T))
    v = m.ones((), dtype=x.dtype, requires_grad=True)
    return m.autograd.grad(loss, x, v, create_graph=True)[0]


MARGIN_SAMPLES = {
    "sub_scalar": [
        S(lambda m, a, b, y: _nnf(m).cosine_embedding_loss(a, b, y, margin=0.2), F(3, 4),
          F(3, 4), V([1.0, -1.0, -1.0], rg=False), name="cosine_embedding_loss"),
        S(lambda m, a, b, y: _nnf(m).cosine_embedding_loss(a, b, y, reduction="none"), F(4),
          F(4), V(-1.0, rg=False), name="cosine_embedding_loss 1-D, none"),
    ],
    "norm_scalaropt_dim": [
        S(lambda m, a, b: _nnf(m).pairwise_distance(a, b), F(3, 4), F(3, 4),
          name="pairwise_distance"),
        S(lambda m, a, b: _nnf(m).pairwise_distance(a, b, p=1.5, keepdim=True), F(3, 4), F(4),
          name="pairwise_distance p 1.5, broadcast, keepdim"),
        S(lambda m, a, p, n: _nnf(m).triplet_margin_loss(a, p, n, swap=True, reduction="sum"),
          F(3, 4), F(3, 4), F(3, 4), name="triplet_margin_loss swap"),
        S(lambda m, x: m.frobenius_norm(x, (0, 1)), F(3, 4), name="frobenius_norm"),
        S(lambda m, x: m.frobenius_norm(x, (-1,), True), F(2, 3, 4),
          name="frobenius_norm last dim, keepdim"),
    ],
    "soft_margin_loss": [
        S(lambda m, x, y: _nnf(m).soft_margin_loss(x, y), F(3, 4),
          V([[1.0, -1.0, 1.0, 1.0], [-1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]], rg=False)),
        S(lambda m, x, y: _nnf(m).soft_margin_loss(x, y, reduction="none"), F(2, 3),
          F(2, 3, rg=False), name="none, real-valued target"),
    ],
    "soft_margin_loss_backward": [
        S(lambda m, x, y: _nnf(m).soft_margin_loss(x, y, reduction="sum"), F(3, 4),
          F(3, 4, rg=False), name="sum (double backward runs it)"),
    ],
    "multi_margin_loss": [
        S(lambda m, x: _nnf(m).multi_margin_loss(x, m.tensor([0, 3, 1])), F(3, 4),
          double_backward=False),
        S(lambda m, x, w: _nnf(m).multi_margin_loss(x, m.tensor([2, 2, 0]), p=2, margin=0.5,
                                                    weight=w, reduction="none"),
          F(3, 4), F(4, lo=0.5, hi=2.0, rg=False), double_backward=False,
          name="p 2, margin, weight, none"),
        S(lambda m, x: _nnf(m).multi_margin_loss(x, m.tensor(1), reduction="sum"), F(3),
          double_backward=False, name="1-D input, sum"),
    ],
    "multi_margin_loss_backward": [
        S(_mm_grad, F(3, 4), backward_error="derivative for aten::multi_margin_loss_backward "
          "is not implemented", name="its double backward is torch's NotImplemented"),
    ],
    "multilabel_margin_loss": [
        S(lambda m, x: _nnf(m).multilabel_margin_loss(x, m.tensor(_MLM_T)), F(3, 4),
          double_backward=False),
        S(lambda m, x: _nnf(m).multilabel_margin_loss(x, m.tensor([2, 0, -1, 3]),
                                                      reduction="none"),
          F(4), double_backward=False, name="1-D, none"),
    ],
    "multilabel_margin_loss_backward": [
        S(_mlm_grad, F(3, 4), backward_error="derivative for aten::multilabel_margin_loss_"
          "backward is not implemented", name="its double backward is torch's "
          "NotImplemented"),
    ],
    "clamp_min": [
        S(lambda m, x, y: _nnf(m).hinge_embedding_loss(x, y, margin=0.5), F(3, 4),
          V([[1.0, -1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [1.0, 1.0, -1.0, -1.0]],
            rg=False), name="hinge_embedding_loss"),
        S(lambda m, a, p, n: _nnf(m).triplet_margin_with_distance_loss(
          a, p, n, distance_function=lambda x, y: 1 - _nnf(m).cosine_similarity(x, y)),
          F(3, 4), F(3, 4), F(3, 4), name="triplet_margin_with_distance_loss, cosine"),
    ],
    "div": [
        S(lambda m, x, y: _nnf(m).multilabel_soft_margin_loss(x, y), F(3, 4),
          F(3, 4, lo=0.0, hi=1.0, rg=False), name="multilabel_soft_margin_loss"),
        S(lambda m, a, b: _nnf(m).cosine_similarity(a, b, dim=0), F(3, 4), F(1, 4),
          name="cosine_similarity dim 0, broadcast"),
    ],
}
for _k, _v in MARGIN_SAMPLES.items():
    SAMPLES.setdefault(_k, []).extend(_v)

SPECIAL.update({
    "sub_scalar": [S(lambda m, a, b, y: _nnf(m).cosine_embedding_loss(a, b, y, margin=0.5,
                                                                       reduction="none"),
                     V([[1.0, 0.0], [1.0, 1.0]]), V([[0.5, 0.8660254037844386], [1.0, 1.0]]),
                     V([-1.0, -1.0], rg=False), jax=False, fd=False,
                     name="cos == margin (kink), cos 1")],
    "norm_scalaropt_dim": [S(lambda m, a, b: _nnf(m).pairwise_distance(a, b, eps=0.0),
                             V([[1.0, 2.0], [0.0, 1.0]]), V([[1.0, 2.0], [1.0, 1.0]]),
                             jax=False, fd=False, name="zero distance")],
    "soft_margin_loss": [S(lambda m, x, y: _nnf(m).soft_margin_loss(x, y, reduction="none"),
                           V([0.0, 40.0, -40.0]), V([1.0, 1.0, 1.0], rg=False),
                           name="0 and saturated")],
    "soft_margin_loss_backward": [S(_smb_grad, V([0.0, 30.0]), V([-1.0, 1.0], rg=False),
                                    name="first-order gradient at 0 and saturated")],
    "multi_margin_loss": [S(lambda m, x: _nnf(m).multi_margin_loss(x, m.tensor([0, 1]),
                                                                   reduction="none"),
                            V([[1.0, 0.0, 2.0], [0.5, 0.5, -1.0]]), jax=False, fd=False,
                            double_backward=False, name="z == 0 (no gradient), ties")],
    "multi_margin_loss_backward": [S(_mm_grad, V([[1.0, 0.0, 2.0, 0.0]] * 3), jax=False,
                                     fd=False, backward_error="is not implemented",
                                     name="kinks")],
    "multilabel_margin_loss": [S(lambda m, x: _nnf(m).multilabel_margin_loss(
                                 x, m.tensor([[0, -1, 1], [-1, 0, 0]]), reduction="none"),
                                 V([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]]), jax=False, fd=False,
                                 double_backward=False,
                                 name="z == 0, empty label set")],
    "multilabel_margin_loss_backward": [S(_mlm_grad, V([[1.0, 0.0, 0.0, 1.0]] * 3),
                                          jax=False, fd=False,
                                          backward_error="is not implemented",
                                          name="kinks")],
})


# ---- ctc_loss: log_softmax inside, so the composite gradient is the true one (torch's
# CtcLossBackward0 alone returns exp(lp) - ..., a gradient w.r.t. logits) ------------------
def _ctc(m, x, targets, il, tl, **kw):
    # lengths as lists: static sizes, also when the sample is traced (tensor lengths are
    # read as data, in test_nn_loss.py)
    return _nnf(m).ctc_loss(x.log_softmax(2), m.tensor(targets), il, tl, **kw)


def _ctc_grad(m, x, targets=((1, 2, 2), (2, 1, 0)), il=(5, 4), tl=(3, 2), **kw):
    """The first-order gradient w.r.t. the log-probabilities: CtcLossBackward0's output."""
    lp = x.log_softmax(2)
    loss = _nnf(m).ctc_loss(lp, m.tensor(targets), il, tl, reduction="sum", **kw)
    v = m.ones((), dtype=x.dtype, requires_grad=True)
    return m.autograd.grad(loss, lp, v, create_graph=True)[0]


SAMPLES["_ctc_loss"] = [
    S(lambda m, x: _ctc(m, x, [[1, 2, 2], [3, 1, 0]], [5, 4], [3, 2]), F(5, 2, 4),
      double_backward=False, name="mean, padded targets, repeats"),
    S(lambda m, x: _ctc(m, x, [1, 2, 0, 0, 1], [5, 3, 5], [2, 1, 2], reduction="none",
                        blank=3), F(5, 3, 4), double_backward=False,
      name="none, concatenated targets, blank 3"),
    S(lambda m, x: _nnf(m).ctc_loss(x.log_softmax(1), m.tensor([2, 1]), [4], [2],
                                    reduction="sum"), F(4, 3), double_backward=False,
      name="unbatched, sum, list lengths"),
]
SAMPLES["_ctc_loss_backward"] = [
    S(_ctc_grad, F(5, 2, 4), backward_error="derivative for aten::_ctc_loss_backward is not "
      "implemented", name="its double backward is torch's NotImplemented"),
]
SPECIAL["_ctc_loss"] = [
    S(lambda m, x: _ctc(m, x, [[1, 1], [2, 0], [1, 2]], [3, 2, 0], [2, 0, 2],
                        reduction="none", zero_infinity=True), F(3, 3, 3),
      double_backward=False, jax=False, fd=False,
      name="zero_infinity: impossible alignment (inf), empty target, empty input"),
]
SPECIAL["_ctc_loss_backward"] = [
    S(lambda m, x: _ctc_grad(m, x, ((1, 1), (2, 0)), (2, 2), (2, 1), zero_infinity=True),
      F(2, 2, 3),
      backward_error="is not implemented", jax=False, fd=False,
      name="zero_infinity gradient of an impossible alignment"),
]


# ---- pdist ----------------------------------------------------------------------------------
def _pdist_grad(m, x, p=2.0):
    out = _nnf(m).pdist(x, p)
    v = m.ones(out.shape, dtype=x.dtype, requires_grad=True)
    return m.autograd.grad(out, x, v, create_graph=True)[0]


_DUP = [[0.5, -1.0, 2.0], [1.0, 1.0, 0.0], [0.5, -1.0, 2.0], [0.5, 1.0, 2.0]]
SAMPLES["_pdist_forward"] = [
    S(lambda m, x: m.pdist(x), F(4, 3), double_backward=False),
    S(lambda m, x: _nnf(m).pdist(x, p=3), F(3, 2), double_backward=False, name="p 3"),
    S(lambda m, x: _nnf(m).pdist(x, p=1), F(3, 2), double_backward=False, name="p 1"),
]
SAMPLES["_pdist_backward"] = [
    S(_pdist_grad, F(4, 3), backward_error="the derivative for '_pdist_backward' is not "
      "implemented.", name="its double backward raises, as torch's"),
]
SPECIAL["_pdist_forward"] = [
    S(lambda m, x, p=p: m.pdist(x, p), V(_DUP), double_backward=False, jax=False, fd=False,
      name=f"equal rows, equal coordinates, p {p}")
    for p in (2.0, 0.5, 1.0, 3.0, 0.0, float("inf"))]
SPECIAL["_pdist_backward"] = [
    S(_pdist_grad, V(_DUP), backward_error="is not implemented", jax=False, fd=False,
      name="equal rows")]
