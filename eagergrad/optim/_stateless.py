"""swap_in_optimizer_params_and_state: run an optimizer on other parameters and state
for the duration of a `with` block (torch.optim._stateless)."""
import contextlib
from collections import defaultdict
from typing import NamedTuple

from ..tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]


class _GroupSwapinInfo(NamedTuple):
    live_group: dict
    swapin_group: dict
    swapin_params: list


def _validate_state_field(state):
    if not isinstance(state, dict):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires swapin_optim_state['state'] to be a "
            "dict mapping packed parameter ids to per-param state dicts, got "
            f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires optimizer.state_dict()-style state "
            "keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires per-parameter optimizer state "
            "entries to be dictionaries.")
    return state


def _validate_param_groups_field(optimizer, param_groups):
    if not isinstance(param_groups, list):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires swapin_optim_state['param_groups'] "
            f"to be a list of param-group dicts, got {type(param_groups).__name__}.")
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    return param_groups


def _validate_group_against_live(idx, group, swapin_group):
    if not isinstance(swapin_group, dict):
        raise RuntimeError("swap_in_optimizer_params_and_state requires each optimizer param "
                           "group to be a dictionary.")
    swapin_param_ids = swapin_group.get("params")
    if not isinstance(swapin_param_ids, list) or not all(
            isinstance(pid, int) for pid in swapin_param_ids):
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires optimizer.state_dict()-style "
            "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(group["params"]) != len(swapin_param_ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of "
                           "params than the live optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires optimizer.state_dict()-style param "
            "group keys to exactly match the live optimizer group keys for "
            f"group {idx}. Keys only in swap-in: {swapin_only}. Keys only in live: "
            f"{live_only}.")
    return swapin_param_ids


def _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state):
    if not optimizer.state:
        raise RuntimeError("swap_in_optimizer_params_and_state requires initialized optimizer "
                           "state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError("swap_in_optimizer_params_and_state requires a DCP-style optimizer "
                           "state_dict.")
    swapin_state = _validate_state_field(swapin_optim_state.get("state"))
    swapin_param_groups = _validate_param_groups_field(
        optimizer, swapin_optim_state.get("param_groups"))
    flat_parameters = list(swapin_parameters.values())
    offset = 0
    seen_param_ids = set()
    infos = []
    for idx, (group, swapin_group) in enumerate(
            zip(optimizer.param_groups, swapin_param_groups, strict=True)):
        swapin_param_ids = _validate_group_against_live(idx, group, swapin_group)
        seen_param_ids.update(swapin_param_ids)
        next_offset = offset + len(swapin_param_ids)
        if next_offset > len(flat_parameters):
            raise RuntimeError("swap_in_optimizer_params_and_state requires the explicit "
                               "parameter state to match optimizer.param_groups ordering.")
        infos.append(_GroupSwapinInfo(group, swapin_group, flat_parameters[offset:next_offset]))
        offset = next_offset
    extra_keys = [k for k in swapin_state if k not in seen_param_ids]
    if extra_keys:
        raise RuntimeError(
            "swap_in_optimizer_params_and_state requires swapin_optim_state['state'] to be "
            "keyed only by packed parameter ids from param_groups[*]['params']; got extra "
            f"keys {extra_keys!r}.")
    return swapin_state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Within the block, `optimizer` works on `swapin_parameters` (a dict of tensors in the
    order of its parameters) with the state and group options of `swapin_optim_state` (a
    state_dict()); its own are restored on exit. In-place updates of the given tensors
    stay in them.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = torch.ones(2); opt.step()
    >>> v = torch.zeros(2, requires_grad=True); v.grad = torch.ones(2)
    >>> sd = {"state": {0: {"momentum_buffer": torch.zeros(2)}},
    ...       "param_groups": [dict(opt.state_dict()["param_groups"][0])]}
    >>> with torch.optim.swap_in_optimizer_params_and_state(opt, {"w": v}, sd):
    ...     opt.step()
    >>> v
    tensor([-0.1000, -0.1000], requires_grad=True)
    """
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapin_state = defaultdict(dict)
        for info in infos:
            info.live_group["params"] = info.swapin_params
            for key, value in info.swapin_group.items():
                if key != "params":
                    info.live_group[key] = value
            for swapin_param, param_id in zip(info.swapin_params, info.swapin_group["params"],
                                              strict=True):
                swapin_state[swapin_param] = dict(state.get(param_id, {}))
        optimizer.state = swapin_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state


swap_in_optimizer_params_and_state.__module__ = "eagergrad.optim"
