"""ctc_loss: torch's alpha-beta recursions (LossCTC.cpp) as a lax.scan over time,
one CtcLossBackward0 node. `reduction` is torch's enum, as in loss.py."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes as D
from ..creation import zeros
from ._autocast import autocast_op
from ._table import call_op, defop
from .pointwise import where
from .loss import MEAN, _not_implemented, SUM


# ---- ctc_loss: torch's alpha-beta recursions (LossCTC.cpp), a lax.scan over time -----------
_NEG_INF = -np.inf


def _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank):
    """Per batch element: the extended labels (blank, l1, blank, l2, ..., blank) and
    which of them may be reached by skipping one; masks from the (static) lengths."""
    b = log_probs.shape[1]
    lmax = max(target_lengths) if target_lengths else 0
    s = 2 * lmax + 1
    if targets.ndim == 1:  # concatenated: static gather indices from the lengths
        offs = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]).astype(np.int64)
        idx = offs[:, None] + np.arange(max(lmax, 1))[None, :]
        idx = np.minimum(idx, max(targets.shape[0] - 1, 0))
        tg = targets[idx] if targets.shape[0] else jnp.zeros(idx.shape, targets.dtype)
    else:
        tg = targets[:, :max(lmax, 1)] if targets.shape[1] else \
            jnp.zeros((b, 1), targets.dtype)
    tl = np.asarray(target_lengths, np.int64)
    pos = np.arange(s)
    in_target = (pos[None, :] < 2 * tl[:, None] + 1)  # (B, S) static
    lab_idx = np.maximum((pos - 1) // 2, 0)
    ext = jnp.where(jnp.asarray(pos % 2 == 1)[None, :] & jnp.asarray(in_target),
                    tg[:, lab_idx] if lmax else jnp.full((b, s), blank, tg.dtype), blank)
    ext = ext.astype(jnp.int32)
    prev2 = jnp.concatenate([jnp.full((b, 2), -1, ext.dtype), ext[:, :-2]], axis=1)
    skip = (ext != blank) & (ext != prev2) & jnp.asarray(pos >= 2)[None, :]
    return ext, skip, jnp.asarray(in_target), tl


def _lse3(a, b, c):
    m = jnp.maximum(jnp.maximum(a, b), c)
    dead = jnp.isneginf(m)
    safe = jnp.where(dead, jnp.zeros_like(m), m)
    tot = jnp.exp(a - safe) + jnp.exp(b - safe) + jnp.exp(c - safe)
    # log(1) where all are -inf: no inf * 0 in a jax vjp through the branch not taken
    r = safe + jnp.log(jnp.where(dead, jnp.ones_like(tot), tot))
    return jnp.where(dead, m, r)


def _shift(a, k):
    return jnp.concatenate([jnp.full(a.shape[:-1] + (k,), _NEG_INF, a.dtype), a[..., :-k]],
                           axis=-1)


def _ctc_k(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    t_max, b, _ = log_probs.shape
    ext, skip, valid, tl = _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank)
    s = ext.shape[1]
    ninf = jnp.asarray(_NEG_INF, log_probs.dtype)
    lp_ext = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext[None], (t_max, b, s)), axis=2)
    pos = jnp.arange(s)[None, :]
    a0 = jnp.where((pos == 0) | ((pos == 1) & jnp.asarray(tl > 0)[:, None]), lp_ext[0], ninf)
    in_len = jnp.asarray(input_lengths)

    def step(a, xs):
        lp_t, t = xs
        new = _lse3(a, _shift(a, 1), jnp.where(skip, _shift(a, 2), ninf)) + lp_t
        new = jnp.where(valid, new, ninf)
        a = jnp.where((t < in_len)[:, None], new, a)
        return a, a

    last, rest = jax.lax.scan(step, a0, (lp_ext[1:], jnp.arange(1, t_max)))
    alphas = jnp.concatenate([a0[None], rest], axis=0)  # (T, B, S)
    end = jnp.asarray(2 * tl)[:, None]
    fin = jnp.where((pos == end) | ((pos == end - 1) & jnp.asarray(tl > 0)[:, None]), last,
                    ninf)
    nll = -jax.scipy.special.logsumexp(fin, axis=1)
    # an empty input explains only an empty target (torch's -0.0)
    empty_in = jnp.asarray(np.asarray(input_lengths) == 0)
    nll = jnp.where(empty_in, jnp.where(jnp.asarray(tl == 0), -jnp.zeros_like(nll),
                                        jnp.full_like(nll, np.inf)), nll)
    return nll, jnp.transpose(alphas, (1, 0, 2))


def _ctc_back_k(grad, log_probs, targets, result0, result1, input_lengths, target_lengths,
                blank, zero_infinity):
    t_max, b, c = log_probs.shape
    ext, skip, valid, tl = _ctc_prep(log_probs, targets, input_lengths, target_lengths, blank)
    s = ext.shape[1]
    ninf = jnp.asarray(_NEG_INF, log_probs.dtype)
    lp_ext = jnp.take_along_axis(log_probs, jnp.broadcast_to(ext[None], (t_max, b, s)), axis=2)
    pos = jnp.arange(s)[None, :]
    in_len = jnp.asarray(input_lengths)
    end = jnp.asarray(2 * tl)[:, None]
    skip_next = jnp.concatenate([skip[:, 2:], jnp.zeros((b, 2), bool)], axis=1)

    def unshift(a, k):
        return jnp.concatenate([a[..., k:], jnp.full(a.shape[:-1] + (k,), _NEG_INF, a.dtype)],
                               axis=-1)

    def step(beta, xs):
        lp_t, t = xs
        init = jnp.where((pos == end) | ((pos == end - 1) & jnp.asarray(tl > 0)[:, None]),
                         lp_t, ninf)
        rec = _lse3(beta, unshift(beta, 1), jnp.where(skip_next, unshift(beta, 2), ninf)) + lp_t
        rec = jnp.where(valid, rec, ninf)
        tt = t[None]
        new = jnp.where((tt == in_len - 1)[:, None], init,
                        jnp.where((tt < in_len - 1)[:, None], rec, ninf))
        return new, new

    beta0 = jnp.full((b, s), _NEG_INF, log_probs.dtype)
    _, betas = jax.lax.scan(step, beta0, (lp_ext, jnp.arange(t_max)), reverse=True)
    alphas = jnp.transpose(result1, (1, 0, 2))  # (T, B, S)
    ab = alphas + betas
    onehot = ext[:, :, None] == jnp.arange(c)[None, None, :]  # (B, S, C)
    lcab = jax.scipy.special.logsumexp(
        jnp.where(onehot[None], ab[..., None], ninf), axis=2)  # (T, B, C)
    nll = result0
    g = jnp.exp(log_probs) - jnp.exp(lcab + nll[None, :, None] - log_probs)
    g = g * grad[None, :, None]
    live = jnp.arange(t_max)[:, None] < in_len[None, :]
    if zero_infinity:
        live = live & ~jnp.isinf(nll)[None, :]
    return jnp.where(live[..., None], g, jnp.zeros_like(g))


CTC_BACK = defop("_ctc_loss_backward", _ctc_back_k,
                 inputs=("grad", "log_probs", "targets", "neg_log_likelihood", "log_alpha"),
                 attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
                 node="NotImplemented", nondiff=(2, 4),
                 grad=_not_implemented("_ctc_loss_backward"),
                 log_probs=_not_implemented("_ctc_loss_backward"),
                 neg_log_likelihood=_not_implemented("_ctc_loss_backward"))
CTC = defop("_ctc_loss", _ctc_k, inputs=("log_probs", "targets"),
            attrs=("input_lengths", "target_lengths", "blank", "zero_infinity"),
            outputs=("result0", "result1"), nondiff=(1,),
            log_probs=lambda grad, log_probs, targets, result0, result1, input_lengths,
            target_lengths, blank, zero_infinity:
            call_op(CTC_BACK, (grad, log_probs, targets, result0, result1),
                    (input_lengths, target_lengths, blank, zero_infinity)))


def _lengths(v, name):
    from ..tensor import Tensor
    if isinstance(v, Tensor):
        if v.dtype not in (D.uint8, D.int8, D.int16, D.int32, D.int64):
            raise RuntimeError(f"{name} must be integral")
        return tuple(int(x) for x in np.asarray(v._value).reshape(-1))  # static sizes
    return tuple(int(x) for x in v)


@autocast_op("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=MEAN,
             zero_infinity=False):
    """torch.ctc_loss (reduction as torch's enum): the negative log likelihood of the
    targets under all CTC alignments (CtcLossBackward0; 'mean' divides by target lengths).

    >>> import eagergrad as torch
    >>> lp = torch.zeros(2, 1, 2).log_softmax(2)
    >>> torch.ctc_loss(lp, torch.tensor([[1]]), [2], [1], 0, 0)
    tensor([0.2877])
    """
    from ..creation import tensor as _tensor
    from ..tensor import Tensor
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments: lengths "
                        "must be both Tensors or both sequences of ints")
    il = _lengths(input_lengths, "input_lengths")
    tl = _lengths(target_lengths, "target_lengths")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    _ctc_checks(lp, targets, il, tl, blank)
    tg = targets if targets.dtype == D.int64 else targets.to(D.int64)
    res = call_op(CTC, (lp, tg), (il, tl, int(blank), bool(zero_infinity)))[0]
    if zero_infinity:
        res = where(res == float("inf"), zeros((), dtype=res.dtype), res)
    if reduction == MEAN:
        tlt = _tensor(list(tl), dtype=res.dtype).clamp_min(1)
        return (res / tlt).mean()
    if reduction == SUM:
        return res.sum()
    return res if batched else res.squeeze(0)


def _ctc_checks(lp, targets, il, tl, blank):
    c = "ctc_loss_allocate_outputs"
    bsz, n_labels = lp._shape[1], lp._shape[2]
    if not (0 <= blank < n_labels):
        raise RuntimeError("blank must be in label range")
    if len(il) != bsz:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != bsz:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.ndim == 1:
        if targets._shape[0] != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got "
                               f"size {targets._shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for {c})")
    else:
        if targets._shape[0] != bsz:
            raise RuntimeError(f"Expected tensor to have size {bsz} at dimension 0, but got "
                               f"size {targets._shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for {c})")
        mx = max(tl) if tl else 0
        if targets._shape[1] < mx:
            raise RuntimeError(f"Expected tensor to have size at least {mx} at dimension 1, "
                               f"but got size {targets._shape[1]} for argument #2 'targets' "
                               f"(while checking arguments for {c})")
    for v in il:
        if v > lp._shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {lp._shape[0]}, "
                               f"but got value {v} (while checking arguments for {c})")
