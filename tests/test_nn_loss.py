"""Loss modules and nn.functional losses, differentially against torch: values, the
recorded graph (every node's name and next_functions), gradients, every reduction,
weight / ignore_index / label_smoothing / pos_weight, errors, warnings and reprs."""
import warnings

import numpy as np
import pytest
from conftest import same, same_error

RNG = np.random.default_rng(12)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((3, 4))
P = RNG.uniform(0.05, 0.95, (3, 4))
Q = RNG.uniform(0.0, 1.0, (3, 4))
T = np.array([0, 3, 1])
T_IGN = np.array([0, -100, 2])
X4 = RNG.standard_normal((2, 3, 2, 2))
T4 = np.array([[[0, 1], [2, -100]], [[1, 1], [0, 2]]])
W = np.array([0.5, 2.0, 1.0, 1.5])
SIGN3 = np.array([1.0, -1.0, -1.0])
T_ML = np.array([[3, 0, -1, 1], [1, 2, 2, -1], [0, 1, 2, 3]])


def graph(t):
    """Every node reachable from t.grad_fn: (name, next node names), depth first."""
    out, seen, stack = [], set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        nxt = [None if f is None else f.name() for f, _ in n.next_functions]
        out.append((n.name(), nxt))
        stack.extend(f for f, _ in n.next_functions)
    return out


def run(L, make_loss, inputs):
    """Loss, its graph, and the gradients of every input that requires grad."""
    loss = make_loss(L, *inputs)
    rg = [t for t in inputs if t.requires_grad]
    gs = L.autograd.grad(loss.sum(), rg, allow_unused=True) if rg else []
    return loss, graph(loss), list(gs)


def t(L, a, rg=True, dtype=None):
    return L.tensor(a, dtype=dtype or L.float64, requires_grad=rg)


def idx(L, a):
    return L.tensor(a, dtype=L.int64)


REDUCTIONS = ["none", "mean", "sum"]

MODULES = {
    "MSELoss": lambda L, r: (L.nn.MSELoss(reduction=r), lambda: (t(L, X), t(L, Y))),
    "L1Loss": lambda L, r: (L.nn.L1Loss(reduction=r), lambda: (t(L, X), t(L, Y))),
    "SmoothL1Loss": lambda L, r: (L.nn.SmoothL1Loss(reduction=r, beta=0.5),
                                  lambda: (t(L, X), t(L, Y))),
    "SmoothL1Loss-beta0": lambda L, r: (L.nn.SmoothL1Loss(reduction=r, beta=0.0),
                                        lambda: (t(L, X), t(L, Y))),
    "HuberLoss": lambda L, r: (L.nn.HuberLoss(reduction=r, delta=0.7),
                               lambda: (t(L, X), t(L, Y))),
    "NLLLoss": lambda L, r: (L.nn.NLLLoss(reduction=r), lambda: (t(L, X), idx(L, T))),
    "NLLLoss-weight-ignore": lambda L, r: (
        L.nn.NLLLoss(weight=t(L, W, rg=False), ignore_index=-100, reduction=r),
        lambda: (t(L, X), idx(L, T_IGN))),
    "NLLLoss-4d": lambda L, r: (L.nn.NLLLoss(reduction=r), lambda: (t(L, X4), idx(L, T4))),
    "NLLLoss-3d": lambda L, r: (L.nn.NLLLoss(reduction=r),
                                lambda: (t(L, X4[..., 0]), idx(L, np.maximum(T4[..., 0], 0)))),
    "CrossEntropyLoss": lambda L, r: (L.nn.CrossEntropyLoss(reduction=r),
                                      lambda: (t(L, X), idx(L, T))),
    "CrossEntropyLoss-weight-ignore": lambda L, r: (
        L.nn.CrossEntropyLoss(weight=t(L, W, rg=False), ignore_index=2, reduction=r),
        lambda: (t(L, X), idx(L, [0, 2, 3]))),
    "CrossEntropyLoss-smoothing": lambda L, r: (
        L.nn.CrossEntropyLoss(label_smoothing=0.1, reduction=r),
        lambda: (t(L, X), idx(L, T_IGN))),
    "CrossEntropyLoss-smoothing-weight": lambda L, r: (
        L.nn.CrossEntropyLoss(weight=t(L, W, rg=False), label_smoothing=0.3, reduction=r),
        lambda: (t(L, X), idx(L, T_IGN))),
    "CrossEntropyLoss-probs": lambda L, r: (
        L.nn.CrossEntropyLoss(reduction=r), lambda: (t(L, X), t(L, P / P.sum(1, keepdims=True)))),
    "CrossEntropyLoss-probs-smoothing-weight": lambda L, r: (
        L.nn.CrossEntropyLoss(weight=t(L, W, rg=False), label_smoothing=0.2, reduction=r),
        lambda: (t(L, X), t(L, P))),
    "CrossEntropyLoss-4d": lambda L, r: (L.nn.CrossEntropyLoss(reduction=r),
                                         lambda: (t(L, X4), idx(L, T4))),
    "BCELoss": lambda L, r: (L.nn.BCELoss(reduction=r), lambda: (t(L, P), t(L, Q))),
    "BCELoss-weight": lambda L, r: (L.nn.BCELoss(weight=t(L, W, rg=False), reduction=r),
                                    lambda: (t(L, P), t(L, Q))),
    "BCEWithLogitsLoss": lambda L, r: (L.nn.BCEWithLogitsLoss(reduction=r),
                                       lambda: (t(L, X), t(L, Q))),
    "BCEWithLogitsLoss-weights": lambda L, r: (
        L.nn.BCEWithLogitsLoss(weight=t(L, [[1.0], [2.0], [0.5]], rg=False),
                               pos_weight=t(L, W, rg=False), reduction=r),
        lambda: (t(L, X * 5), t(L, Q))),
    "KLDivLoss": lambda L, r: (L.nn.KLDivLoss(reduction=r), lambda: (t(L, X), t(L, P))),
    "KLDivLoss-log_target": lambda L, r: (L.nn.KLDivLoss(reduction=r, log_target=True),
                                          lambda: (t(L, X), t(L, Y))),
    "PoissonNLLLoss": lambda L, r: (L.nn.PoissonNLLLoss(reduction=r),
                                    lambda: (t(L, X), t(L, Q * 3))),
    "PoissonNLLLoss-full": lambda L, r: (L.nn.PoissonNLLLoss(log_input=False, full=True,
                                                             reduction=r),
                                         lambda: (t(L, P), t(L, Q * 3))),
    "MarginRankingLoss": lambda L, r: (L.nn.MarginRankingLoss(margin=0.2, reduction=r),
                                       lambda: (t(L, X[0]), t(L, Y[0]),
                                                t(L, [1.0, -1.0, 1.0, -1.0], rg=False))),
    "CosineEmbeddingLoss": lambda L, r: (L.nn.CosineEmbeddingLoss(margin=0.1, reduction=r),
                                         lambda: (t(L, X), t(L, Y), t(L, SIGN3, rg=False))),
    "HingeEmbeddingLoss": lambda L, r: (L.nn.HingeEmbeddingLoss(margin=0.5, reduction=r),
                                        lambda: (t(L, X), t(L, np.sign(Y), rg=False))),
    "TripletMarginLoss": lambda L, r: (L.nn.TripletMarginLoss(p=1.5, swap=True, reduction=r),
                                       lambda: (t(L, X), t(L, Y), t(L, P))),
    "TripletMarginWithDistanceLoss": lambda L, r: (
        L.nn.TripletMarginWithDistanceLoss(distance_function=L.nn.CosineSimilarity(),
                                           margin=0.5, reduction=r),
        lambda: (t(L, X), t(L, Y), t(L, P))),
    "SoftMarginLoss": lambda L, r: (L.nn.SoftMarginLoss(reduction=r),
                                    lambda: (t(L, X), t(L, np.sign(Y), rg=False))),
    "MultiLabelSoftMarginLoss": lambda L, r: (
        L.nn.MultiLabelSoftMarginLoss(weight=t(L, W, rg=False), reduction=r),
        lambda: (t(L, X), t(L, (Y > 0) * 1.0, rg=False))),
    "MultiMarginLoss": lambda L, r: (
        L.nn.MultiMarginLoss(p=2, margin=0.8, weight=t(L, W, rg=False), reduction=r),
        lambda: (t(L, X), idx(L, T))),
    "MultiLabelMarginLoss": lambda L, r: (L.nn.MultiLabelMarginLoss(reduction=r),
                                          lambda: (t(L, X), idx(L, T_ML))),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module(name, reduction):
    def f(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod, inputs = MODULES[name](L, reduction)
            return run(L, lambda L, *xs: mod(*xs), inputs())
    same(f)


def test_gaussian_nll_loss():
    def f(L):
        x, y, v = t(L, X), t(L, Y), t(L, P)
        return [run(L, lambda L, *a, r=r: L.nn.GaussianNLLLoss(reduction=r, full=True)(*a),
                    (x, y, v)) for r in REDUCTIONS]
    same(f)


def test_float32_values_and_grads():
    def f(L):
        x = L.tensor(X, dtype=L.float32, requires_grad=True)
        return run(L, lambda L, x: L.nn.functional.cross_entropy(x, idx(L, T)), (x,))
    same(f)


def test_all_ignored_gives_nan_mean_and_zero_grad():
    def f(L):
        return run(L, lambda L, x: L.nn.functional.nll_loss(x, idx(L, [-100] * 3)), (t(L, X),))
    same(f)


def test_legacy_size_average_reduce():
    def f(L, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = L.nn.MSELoss(size_average=False)
            log.append(m.reduction)
            log.append(L.nn.functional.mse_loss(t(L, X), t(L, Y), reduce=False))
            log.append(L.nn.functional.nll_loss(t(L, X), idx(L, T), size_average=False))
            log.append([str(x.message) for x in w])
    same(f)


def test_broadcast_warning_and_graph():
    def f(L, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss, g, gs = run(L, lambda L, x, y: L.nn.functional.mse_loss(x, y),
                              (t(L, X), t(L, Y[0])))
            log.append((loss, g, gs))
            log.append([str(x.message) for x in w])
    same(f)


def test_kl_div_mean_warning():
    def f(L, log):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(L.nn.functional.kl_div(t(L, X), t(L, P)))
            log.append(L.nn.functional.kl_div(t(L, X), t(L, P), reduction="batchmean"))
            log.append([str(x.message) for x in w])
    same(f)


def test_saved_attributes():
    def f(L):
        x = t(L, X)
        n = L.nn.functional.nll_loss(x, idx(L, T), reduction="sum").grad_fn
        m = L.nn.functional.mse_loss(x, t(L, Y)).grad_fn
        s = L.nn.functional.smooth_l1_loss(x, t(L, Y), beta=0.5).grad_fn
        b = L.nn.functional.binary_cross_entropy_with_logits(x, t(L, Q)).grad_fn
        return (n._saved_reduction, n._saved_total_weight, n._saved_weight, n._saved_self,
                n._saved_target, m._saved_reduction, s._saved_beta, b._saved_weight,
                b._saved_pos_weight)
    same(f)


def test_reprs_and_buffers():
    def f(L):
        w = L.tensor(W)
        mods = [L.nn.MSELoss(), L.nn.L1Loss(), L.nn.SmoothL1Loss(beta=0.5), L.nn.HuberLoss(),
                L.nn.NLLLoss(w), L.nn.CrossEntropyLoss(w, label_smoothing=0.1), L.nn.BCELoss(),
                L.nn.BCEWithLogitsLoss(pos_weight=w), L.nn.KLDivLoss(log_target=True),
                L.nn.PoissonNLLLoss(), L.nn.GaussianNLLLoss(), L.nn.MarginRankingLoss(),
                L.nn.CosineEmbeddingLoss(0.5), L.nn.HingeEmbeddingLoss(), L.nn.SoftMarginLoss(),
                L.nn.TripletMarginLoss(), L.nn.TripletMarginWithDistanceLoss(),
                L.nn.MultiLabelSoftMarginLoss(w), L.nn.MultiMarginLoss(weight=w),
                L.nn.MultiLabelMarginLoss(reduce=False), L.nn.PairwiseDistance(p=1.0),
                L.nn.CosineSimilarity(dim=0)]
        return [(repr(m), m.reduction, dict(m.state_dict()), [k for k, _ in m.named_buffers()])
                for m in mods]
    same(f)


ERRORS = [
    ("target out of range", lambda L: L.nn.functional.nll_loss(t(L, X), idx(L, [0, 5, 1])),
     IndexError, "Target 5 is out of bounds."),
    ("negative target", lambda L: L.nn.CrossEntropyLoss()(t(L, X), idx(L, [0, -1, 1])),
     IndexError, "Target -1 is out of bounds."),
    ("4-d target out of range", lambda L: L.nn.functional.nll_loss(t(L, X4), idx(L, T4 + 3)),
     IndexError, "is out of bounds."),
    ("float target", lambda L: L.nn.functional.nll_loss(t(L, X), t(L, T, rg=False)),
     RuntimeError, "expected target dtype to be Long or Byte, but got Double"),
    ("int32 target", lambda L: L.nn.NLLLoss()(t(L, X), L.tensor(T, dtype=L.int32)),
     RuntimeError, "expected target dtype to be Long or Byte, but got Int"),
    ("batch mismatch", lambda L: L.nn.functional.nll_loss(t(L, X), idx(L, [0, 1])),
     ValueError, "Expected input batch_size (3) to match target batch_size (2)."),
    ("weight size", lambda L: L.nn.functional.nll_loss(t(L, X), idx(L, T),
                                                       weight=t(L, W[:3], rg=False)),
     RuntimeError, "weight tensor should be defined either for all 4 classes"),
    ("weight requires grad", lambda L: L.nn.functional.nll_loss(t(L, X), idx(L, T),
                                                                weight=t(L, W)),
     RuntimeError, "is not differentiable with respect to argument 'weight'"),
    ("0-d input", lambda L: L.nn.functional.nll_loss(t(L, 1.0), idx(L, 0)),
     ValueError, "Expected 1 or more dimensions (got 0)"),
    ("3-d target size", lambda L: L.nn.functional.nll_loss(t(L, X4[..., 0]),
                                                           idx(L, np.zeros((2, 3), int))),
     RuntimeError, "Expected target size [2, 2], got [2, 3]"),
    ("bad reduction", lambda L: L.nn.functional.nll_loss(t(L, X), idx(L, T), reduction="x"),
     ValueError, "x is not a valid value for reduction"),
    ("probs with int target", lambda L: L.nn.functional.cross_entropy(t(L, X),
                                                                      idx(L, np.ones((3, 4)))),
     RuntimeError, "Expected floating point type for target with class probabilities"),
    ("probs with ignore_index", lambda L: L.nn.functional.cross_entropy(t(L, X), t(L, P),
                                                                        ignore_index=1),
     RuntimeError, "ignore_index is not supported for floating point target"),
    ("label_smoothing > 1", lambda L: L.nn.functional.cross_entropy(t(L, X), idx(L, T),
                                                                    label_smoothing=1.5),
     RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    ("bce range", lambda L: L.nn.BCELoss()(t(L, X), t(L, Q)),
     RuntimeError, "all elements of input should be between 0 and 1"),
    ("bce size", lambda L: L.nn.functional.binary_cross_entropy(t(L, P), t(L, Q[0])),
     ValueError, "that is different to the input size"),
    ("bce with logits size", lambda L: L.nn.BCEWithLogitsLoss()(t(L, X), t(L, Q[0])),
     ValueError, "must be the same as input size"),
    ("pos_weight requires grad", lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        t(L, X), t(L, Q), pos_weight=t(L, W)),
     RuntimeError, "not differentiable with respect to argument 'pos_weight'"),
    ("mse shape", lambda L: L.nn.functional.mse_loss(t(L, X), t(L, np.ones(5))),
     RuntimeError, "The size of tensor a (4) must match the size of tensor b (5)"),
    ("huber delta", lambda L: L.nn.functional.huber_loss(t(L, X), t(L, Y), delta=0.0),
     RuntimeError, "huber_loss does not support non-positive values for delta."),
    ("smooth_l1 beta", lambda L: L.nn.functional.smooth_l1_loss(t(L, X), t(L, Y), beta=-1.0),
     RuntimeError, "smooth_l1_loss does not support negative values for beta."),
    ("cosine embedding 2-d target", lambda L: L.nn.CosineEmbeddingLoss()(
        t(L, X), t(L, Y), t(L, np.ones((3, 1)), rg=False)),
     RuntimeError, "0D or 1D target tensor expected, multi-target not supported"),
    ("cosine embedding 0-d target", lambda L: L.nn.CosineEmbeddingLoss()(
        t(L, X), t(L, Y), t(L, 1.0, rg=False)),
     RuntimeError, ("0D target tensor expects 1D input tensors, but found inputs with sizes "
     "[3, 4] and [3, 4].")),
    ("triplet dims", lambda L: L.nn.functional.triplet_margin_loss(t(L, X), t(L, Y), t(L, W)),
     RuntimeError, ("The anchor, positive, and negative tensors are expected to have the same "
     "number of dimensions")),
    ("triplet margin", lambda L: L.nn.TripletMarginLoss(margin=0.0),
     ValueError, "TripletMarginLoss: expected margin to be greater than 0, got 0.0 instead"),
    ("triplet distance margin", lambda L: L.nn.functional.triplet_margin_with_distance_loss(
        t(L, X), t(L, Y), t(L, P), margin=-1), ValueError, "margin must be greater than 0"),
    ("multi margin target range", lambda L: L.nn.MultiMarginLoss()(t(L, X), idx(L, [0, 4, 1])),
     RuntimeError, "target out of range"),
    ("multi margin target size", lambda L: L.nn.MultiMarginLoss()(t(L, X), idx(L, [0, 1])),
     RuntimeError, ("multi_margin_loss: target tensor should be 1-D with size equal to the "
     "number of input samples (batch size). Expected target size [3], but got [2]. Input has "
     "shape [3, 4].")),
    ("multi margin p", lambda L: L.nn.MultiMarginLoss(p=3),
     ValueError, "only p == 1 and p == 2 supported"),
    ("multi margin weight", lambda L: L.nn.functional.multi_margin_loss(
        t(L, X), idx(L, T), weight=t(L, W[:3], rg=False)),
     RuntimeError, "inconsistent weight size, expected 4 but got [3]"),
    ("multi margin 3-d", lambda L: L.nn.functional.multi_margin_loss(t(L, X4), idx(L, T)),
     RuntimeError, ("Expected non-empty vector or matrix with optional 0-dim batch size, but "
     "got: [2, 3, 2, 2]")),
    ("multi margin float target", lambda L: L.nn.functional.multi_margin_loss(
        t(L, X), t(L, T, rg=False)), RuntimeError, "expected scalar type Long but found Double"),
    ("multilabel margin range", lambda L: L.nn.MultiLabelMarginLoss()(
        t(L, X), idx(L, [[0, 4, -1, 1], [0] * 4, [0] * 4])),
     RuntimeError, "argument #2 'target' is out of range"),
    ("multilabel margin size", lambda L: L.nn.MultiLabelMarginLoss()(t(L, X), idx(L, [[0, 1]])),
     RuntimeError, "inconsistent target size: [1, 2] for input of size: [3, 4]"),
    ("soft margin target grad", lambda L: L.nn.SoftMarginLoss()(t(L, X), t(L, Y)),
     RuntimeError, ("The function 'soft_margin_loss' is not differentiable with respect to "
     "argument 'target'")),
    ("cosine similarity ints", lambda L: L.nn.functional.cosine_similarity(
        idx(L, T_ML), idx(L, T_ML)),
     RuntimeError, "expected common dtype to be floating point, yet common dtype is Long"),
    ("pairwise shapes", lambda L: L.nn.PairwiseDistance()(t(L, X), t(L, X[:, :3])),
     RuntimeError, ("The size of tensor a (4) must match the size of tensor b (3) at "
     "non-singleton dimension 1")),
    ("margin ranking dims", lambda L: L.nn.MarginRankingLoss()(t(L, X), t(L, X), t(L, X[0])),
     RuntimeError, "All input tensors should have same dimension"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(case):
    _, fn, exc, phrase = case
    same_error(fn, phrase, exc, quiet=True)


def test_distances_and_triplet_with_custom_distance():
    def f(L):
        a, b, c = t(L, X), t(L, Y), t(L, P)
        return [run(L, lambda L, x, y: L.nn.PairwiseDistance(p=3.0, keepdim=True)(x, y),
                    (a, b)),
                run(L, lambda L, x, y: L.nn.CosineSimilarity(dim=0, eps=1e-3)(x, y[:1]),
                    (a, b)),
                run(L, lambda L, x, y: L.pairwise_distance(x, y, 1.0, 0.0),
                    (a, b)),
                run(L, lambda L, x, y, z: L.nn.functional.triplet_margin_with_distance_loss(
                    x, y, z, distance_function=lambda u, v: (u - v).abs().sum(-1), swap=True),
                    (a, b, c)),
                run(L, lambda L, x, y, z: L.triplet_margin_loss(x, y, z, 1.0, 2.0, 1e-6, False,
                                                                2), (a, b, c))]
    same(f)


def test_margin_losses_legacy_args_and_saved():
    def f(L):
        x = t(L, X)
        m = L.nn.functional.multi_margin_loss(x, idx(L, T), p=2, margin=0.5, reduce=False)
        g = m.grad_fn
        ml = L.nn.functional.multilabel_margin_loss(x, idx(L, T_ML), size_average=False)
        s = L.nn.functional.soft_margin_loss(x, t(L, np.sign(Y), rg=False)).grad_fn
        return (m, g._saved_p, g._saved_margin, g._saved_reduction, g._saved_weight,
                g._saved_target, ml, ml.grad_fn._saved_is_target,
                ml.grad_fn._saved_reduction, s._saved_reduction, s._saved_target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(f)


CTC_X = RNG.standard_normal((6, 3, 5))


@pytest.mark.slow
def test_ctc_loss_module():
    def f(L, log):
        x = t(L, CTC_X)
        for kw, targets, il, tl in [
                ({}, [[1, 2, 2], [3, 3, 0], [4, 1, 1]], [6, 5, 4], [3, 2, 1]),
                ({"reduction": "sum", "blank": 4}, [1, 2, 2, 3, 3, 0], [6, 6, 3], [3, 2, 1]),
                ({"reduction": "none", "zero_infinity": True}, [[1, 1, 1], [2, 0, 0],
                                                                [3, 0, 0]], [4, 0, 2],
                 [3, 0, 1])]:
            m = L.nn.CTCLoss(**kw)
            lp = x.log_softmax(2)
            loss = m(lp, idx(L, targets), *((idx(L, il), idx(L, tl)) if "blank" not in kw
                                             else (tuple(il), tl)))
            log.append((repr(m), loss, graph(loss), L.autograd.grad(loss.sum(), x)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = L.nn.CTCLoss(reduction="none")(x[:, 0].log_softmax(1), idx(L, [1, 2]),
                                                  idx(L, 6), idx(L, 2))
        log.append((loss, graph(loss)))
    same(f)


CTC_ERRORS = [
    ("blank", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [[1, 2]] * 3), [6] * 3,
                                                 [2] * 3, blank=5),
     "blank must be in label range"),
    ("input lengths", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [[1, 2]] * 3),
                                                         [6] * 2, [2] * 3),
     "input_lengths must be of size batch_size"),
    ("long input", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [[1, 2]] * 3),
                                                      [7, 6, 6], [2] * 3),
     "Expected input_lengths to have value at most 6, but got value 7"),
    ("short targets", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [[1, 2]] * 3),
                                                         [6] * 3, [3, 2, 2]),
     ("Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
     "'targets' (while checking arguments for ctc_loss_allocate_outputs)")),
    ("concatenated size", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [1, 2, 3]),
                                                             [6] * 3, [2, 1, 1]),
     ("Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 "
     "'targets'")),
    ("mixed lengths", lambda L: L.nn.functional.ctc_loss(
        t(L, CTC_X), idx(L, [[1, 2]] * 3), idx(L, [6] * 3), (2, 2, 2)),
     "ctc_loss() received an invalid combination of arguments"),
    ("float lengths", lambda L: L.nn.functional.ctc_loss(t(L, CTC_X), idx(L, [[1, 2]] * 3),
                                                         t(L, [6.0] * 3, rg=False),
                                                         idx(L, [2] * 3)),
     "input_lengths must be integral"),
]


@pytest.mark.parametrize("case", CTC_ERRORS, ids=[c[0] for c in CTC_ERRORS])
def test_ctc_errors(case):
    _, fn, phrase = case
    same_error(fn, phrase, TypeError if case[0] == "mixed lengths" else RuntimeError,
               messages=case[0] != "mixed lengths")
