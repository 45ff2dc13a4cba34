"""loss_parallel: cross-entropy of logits sharded on the class dim, without gathering
them for the caller: log_softmax keeps the class sharding, the loss is replicated, the
logits' gradient is class-sharded, as torch's loss_parallel gives them.

NOTE [loss_parallel]
Inside the context, log_softmax of a DTensor sharded on its softmax dim and nll_loss of
one sharded on its class dim are custom Functions: each rank computes on its class-dim
group's whole rows (the values torch's max / sum-exp all-reduces give) and keeps its own
class shard; backward does the same with the gradient. Other ops take the ordinary path.
"""
from ....engine.function import Function
from ....engine.grad_mode import no_grad
from ....ops import _table
from ....ops.loss import _nll_back
from .._api import DTensor, _rank_locals, _relaid
from .._dispatch import LOSS_PARALLEL, counting
from ..placement_types import Replicate


def _class_replicated(placements, dim):
    return tuple(Replicate() if p.is_shard(dim) else p for p in placements)


def _per_rank(x_full, fn, like):
    """fn(rank's local) for every rank of `x_full` (class dim replicated), laid out back as
    `like` (the sharded DTensor)."""
    with no_grad():
        out = x_full._with_locals([fn(r, t) for r, t in enumerate(x_full._locals)])
        return _relaid(out, like.placements) if like is not None else out


class _LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim, op, attrs):
        full = _relaid(x, _class_replicated(x.placements, dim))
        out = _per_rank(full, lambda r, t: _table.call_op(op, (t,), attrs), x)
        ctx.dim, ctx.out = dim, out.detach()
        return out

    @staticmethod
    def backward(ctx, g):
        dim, out = ctx.dim, ctx.out
        rep = _class_replicated(out.placements, dim)
        gf, of = _relaid(g, rep), _relaid(out, rep)
        grad = _per_rank(gf, lambda r, t: t - of._locals[r].exp() * t.sum(dim, keepdim=True),
                         out)
        return grad, None, None, None


class _NllLoss(Function):
    @staticmethod
    def forward(ctx, x, target, weight, op, attrs, cdim):
        full = _relaid(x, _class_replicated(x.placements, cdim))
        n = len(x._locals)
        tgt, wgt = _rank_locals(target, n), _rank_locals(weight, n)
        outs = [_table.call_op(op, (t, tgt[r], wgt[r]), attrs) for r, t in
                enumerate(full._locals)]
        loss = DTensor._new([o[0] for o in outs], _spec_of(x, Replicate()), outs[0][0]._shape,
                            outs[0][0].dtype)
        total = DTensor._new([o[1] for o in outs], _spec_of(x, Replicate()), (),
                             outs[0][1].dtype)
        ctx.full, ctx.tgt, ctx.wgt, ctx.total = full, tgt, wgt, total
        ctx.attrs, ctx.names, ctx.like = attrs, op.attr_names, x
        ctx.mark_non_differentiable(total)
        return loss, total

    @staticmethod
    def backward(ctx, g, _):
        red = ctx.attrs[ctx.names.index("reduction")]
        ign = ctx.attrs[ctx.names.index("ignore_index")]
        gl = _rank_locals(g, len(ctx.full._locals)) if not isinstance(g, DTensor) else g._locals
        grad = _per_rank(ctx.full, lambda r, t: _nll_back(
            gl[r], t, ctx.tgt[r], ctx.wgt[r], ctx.total._locals[r], red, ign), ctx.like)
        return grad, None, None, None, None, None


def _spec_of(x, placement):
    from .._api import _Spec
    return _Spec(x.device_mesh, (placement,) * x.device_mesh.ndim)


def _handle(op, tensors, attrs):
    """The loss-parallel Function for `op`, or None for the ordinary path."""
    x = tensors[0]
    if not isinstance(x, DTensor):
        return None
    if op.name == "log_softmax":
        dim = attrs[op.attr_names.index("dim")] % x.ndim
        if any(p.is_shard(dim) for p in x.placements):
            return _LogSoftmax.apply(x, dim, op, attrs)
    elif op.name == "nll_loss":
        cdim = 0 if x.ndim == 1 else 1
        if any(p.is_shard(cdim) for p in x.placements):
            return _NllLoss.apply(x, tensors[1], tensors[2], op, attrs, cdim)
    return None


def loss_parallel():
    """Inside, cross_entropy of logits sharded on the class dim runs without gathering
    them (NOTE [loss_parallel]); run the backward inside too.

    >>> import eagergrad as torch
    >>> from eagergrad.distributed.tensor import distribute_tensor, Shard
    >>> from eagergrad.distributed.tensor.parallel import loss_parallel
    >>> mesh = torch.distributed.init_device_mesh("cpu", (1,))
    >>> x = distribute_tensor(torch.zeros(2, 4), mesh, [Shard(1)])
    >>> with loss_parallel():
    ...     torch.nn.functional.cross_entropy(x, torch.tensor([0, 3])).placements
    (Replicate(),)
    >>> torch.distributed.destroy_process_group()
    """
    LOSS_PARALLEL.handler = _handle
    return counting(LOSS_PARALLEL)
