"""torch.func.functional_call, stack_module_state and replace_all_batch_norm_modules_:
a module run as a function of its parameters and buffers, for the transforms.

>>> import eagergrad as torch
>>> m = torch.nn.Linear(2, 1)
>>> torch.func.functional_call(m, {"weight": torch.ones(1, 2), "bias": torch.zeros(1)},
...                            (torch.ones(1, 2),))
tensor([[2.]])
"""
from collections.abc import Sequence

from ..ops.shape import stack

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call `module(*args, **kwargs)` with the named parameters and buffers of
    `parameter_and_buffer_dicts` (a dict, or a sequence of dicts with distinct keys) in
    place of its own, restored afterwards. A non-tuple `args` is one argument.

    >>> import eagergrad as torch
    >>> m = torch.nn.Linear(1, 1)
    >>> torch.func.functional_call(m, ({"weight": torch.full((1, 1), 3.)},
    ...                                {"bias": torch.ones(1)}), torch.ones(1, 1))
    tensor([[4.]])
    """
    from ..nn.utils.stateless import _functional_call
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError(
                "Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts
                                  for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors, name):
    all_grad = all(t.requires_grad for t in tensors)
    if not all_grad and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack(tensors)
    if all_grad:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """(params, buffers): each model's parameters and buffers stacked along a new first
    dimension, by name; the stacked parameters are new leaves that require grad.

    >>> import eagergrad as torch
    >>> params, buffers = torch.func.stack_module_state([torch.nn.Linear(3, 2)] * 4)
    >>> params["weight"].shape, params["weight"].is_leaf, buffers
    (torch.Size([4, 2, 3]), True, {})
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """In place: every BatchNorm module in `root` stops tracking running stats (they
    become None); returns `root`.

    >>> import eagergrad as torch
    >>> bn = torch.func.replace_all_batch_norm_modules_(torch.nn.BatchNorm1d(2))
    >>> bn.running_mean is None, bn.track_running_stats
    (True, False)
    """
    from ..nn.modules.batchnorm import _BatchNorm
    for m in (root, *root.modules()):
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
