"""Stochastic weight averaging and EMA: AveragedModel, SWALR, update_bn and the averaging
functions, as torch.optim.swa_utils (torch's `_foreach_*` calls are their per-tensor
loops here, which is what torch runs on the CPU: the same numbers and version bumps).

>>> import eagergrad as torch
>>> from eagergrad.optim.swa_utils import AveragedModel
>>> model = torch.nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> swa.update_parameters(model); int(swa.n_averaged)
1
"""
import itertools
import math
import warnings
from copy import deepcopy

from .. import _dtypes as D
from ..creation import tensor as _tensor
from ..engine.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..tensor import Tensor
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _is_float_or_complex(t):
    return t.is_floating_point() or t.is_complex()


def _scalar(x):
    """A lerp weight torch passes as a Scalar: a 0-d tensor is read as its value."""
    return x.item() if isinstance(x, Tensor) else x


def get_ema_multi_avg_fn(decay=0.999):
    """The in-place EMA of lists of parameters: ema = decay * ema + (1 - decay) * model."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _is_float_or_complex(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The in-place running mean of lists of parameters: avg += (model - avg) / (n + 1)."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _is_float_or_complex(averaged_param_list[0]):
            weight = _scalar(1 / (num_averaged + 1))
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, weight)
        else:
            diffs = [c - a for c, a in zip(current_param_list, averaged_param_list)]
            if isinstance(num_averaged, Tensor):
                for p_avg, diff in zip(averaged_param_list, diffs):
                    p_avg.addcdiv_(diff, num_averaged + 1)
            else:
                for p_avg, diff in zip(averaged_param_list, diffs):
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA of one parameter: decay * ema + (1 - decay) * model (a new tensor)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one parameter: avg + (model - avg) / (n + 1) (a new tensor)."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_device_and_dtype(first, second):
    """Pairs of lists grouped by the first tensor's (device, dtype), in order of first
    appearance (torch's _group_tensors_by_device_and_dtype)."""
    groups = {}
    for a, b in zip(first, second):
        pair = groups.setdefault((a.device, a.dtype), ([], []))
        pair[0].append(a)
        pair[1].append(b)
    return groups


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with use_buffers, buffers) are running
    averages of the model's: equal weights (SWA) by default, else `avg_fn(avg, model,
    n_averaged)` per tensor or `multi_avg_fn(avgs, models, n_averaged)` per list.

    >>> import eagergrad as torch
    >>> from eagergrad.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
    >>> ema = AveragedModel(torch.nn.Linear(2, 1), multi_avg_fn=get_ema_multi_avg_fn(0.9))
    >>> int(ema.n_averaged)
    0
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged module's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Average `model`'s current parameters in (the first call copies them)."""
        self_param = (itertools.chain(self.module.parameters(), self.module.buffers())
                      if self.use_buffers else self.parameters())
        model_param = (itertools.chain(model.parameters(), model.buffers())
                       if self.use_buffers else model.parameters())
        self_param_detached, model_param_detached = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = _group_by_device_and_dtype(self_param_detached, model_param_detached)
                for (device, _), (self_params, model_params) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn:
                        self.multi_avg_fn(self_params, model_params, n_averaged)
                    else:  # (torch's CPU path: the per-tensor average)
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(self_params, model_params, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(self_param_detached, model_param_detached,
                                               strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(
                        self.avg_fn(p_averaged.detach(), p_model, n_averaged))
        if not self.use_buffers:
            # the buffers follow the source model's
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of `model`'s BatchNorm layers with one pass over
    `loader` (a batch is a tensor, or a list/tuple whose first element is the input).

    >>> import eagergrad as torch
    >>> from eagergrad.optim.swa_utils import update_bn
    >>> bn = torch.nn.BatchNorm1d(1)
    >>> update_bn([torch.tensor([[1.0], [3.0]])], bn); bn.running_mean
    tensor([2.])
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its `swa_lr` over `anneal_epochs` epochs ("cos" or
    "linear"), then keeps it there.

    >>> import eagergrad as torch
    >>> opt = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=1.0)
    >>> sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=1)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for swa_lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = swa_lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The next lrs: each group's lr moved towards its swa_lr by the anneal function."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self):
        """Every attribute but the optimizer and the anneal function."""
        return {key: value for key, value in self.__dict__.items()
                if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Load a state_dict(); the anneal function follows the saved strategy."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
