"""Anomaly mode: each node remembers the forward traceback that created it; a failing
node prints it, and a node returning NaN raises. It inspects gradient values, so it
cannot run on jax tracers (and turns the fused backward off)."""
import functools
import traceback
import warnings

from .._mode import ANOMALY


def record(node):
    """Called when a node is created in anomaly mode: keep the forward traceback (also
    where torch shows it, node.metadata["traceback_"])."""
    node._anomaly_trace = node.metadata["traceback_"] = traceback.format_stack()[:-2]


def is_anomaly_enabled():
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled():
    return ANOMALY.check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """torch.set_anomaly_enabled: turn anomaly mode (and its NaN check) on or off."""
    for name, v in (("enabled", enabled), ("check_nan", check_nan)):
        if not isinstance(v, bool):
            pos = 1 if name == "enabled" else 2
            raise TypeError(f"set_anomaly_enabled(): argument '{name}' (position {pos}) must "
                            f"be bool, not {type(v).__name__}")
    ANOMALY.enabled, ANOMALY.check_nan = enabled, check_nan


class set_detect_anomaly:
    """Turn anomaly mode on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode, check_nan=True):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self._prev


class detect_anomaly:
    """Context manager / decorator enabling anomaly mode.

    >>> import eagergrad as torch
    >>> x = torch.tensor([0.0], requires_grad=True)
    >>> with torch.autograd.detect_anomaly():
    ...     try:
    ...         (x.sqrt() * 0).sum().backward()
    ...     except RuntimeError as e:
    ...         print(e)
    Function 'SqrtBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_nan = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self:
                return fn(*a, **k)
        return wrapper


def report(fn):
    """Warn with the forward traceback of node `fn`, whose evaluation (hooks, the node,
    its NaN check) raised: torch's print_stack."""
    trace = fn._anomaly_trace
    if trace:
        warnings.warn(f"Error detected in {fn.name()}. Traceback of forward call that "
                      f"caused the error:\n{''.join(trace)}", stacklevel=3)


def run_checked(fn, apply, grads):
    """`apply(grads)` with the NaN check of anomaly mode for node `fn` (engine use)."""
    out = apply(grads)
    if ANOMALY.check_nan:
        import numpy as np
        for i, g in enumerate(out):
            if g is not None and bool(np.isnan(np.asarray(g._value)).any()):
                raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th "
                                   "output.")
    return out
