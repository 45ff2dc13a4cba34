"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode
(over the flags of eagergrad/_mode.py, NOTE [two flags])."""
import functools
import inspect
import sys

from .._mode import STATE, get_state, restore_state, set_enabled


def is_grad_enabled():
    """Whether grad mode is on in this thread.

    >>> import eagergrad as torch
    >>> with torch.no_grad():
    ...     torch.is_grad_enabled()
    False
    """
    return STATE.enabled


def is_inference_mode_enabled():
    return STATE.inference


def _wrap_generator(ctx_factory, func):
    """torch's: the mode is on only while the generator runs, not across its yields."""
    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:  # noqa: BLE001 - thrown into the generator (torch's)
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator_context


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self._clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return type(self)()

    def __exit__(self, *exc):
        restore_state(self._prev)


class _NoParamMode(_Mode):
    """A mode that can also decorate without parentheses (`@torch.no_grad`)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamMode):
    """Disable gradient recording in this thread.

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __enter__(self):
        self._prev = get_state()
        set_enabled(False)


class enable_grad(_NoParamMode):
    """Enable gradient recording in this thread (e.g. inside `no_grad`)."""

    def __enter__(self):
        self._prev = get_state()
        set_enabled(True)


class set_grad_enabled(_Mode):
    """Set grad mode now; used as a context manager, restore the old mode on exit.

    >>> import eagergrad as torch
    >>> with torch.set_grad_enabled(False):
    ...     torch.is_grad_enabled()
    False
    """

    def __init__(self, mode):
        self._prev = get_state()
        self._mode = bool(mode)
        set_enabled(self._mode)

    def _clone(self):
        return set_grad_enabled(self._mode)

    def __call__(self, fn):
        restore_state(self._prev)  # used as a decorator: do not change the mode now
        return super().__call__(fn)

    def __enter__(self):
        pass


class inference_mode(_Mode):
    """Like no_grad, and tensors made inside are inference tensors that can never
    be recorded by autograd later.

    >>> import eagergrad as torch
    >>> with torch.inference_mode():
    ...     y = torch.ones(2) * 2
    >>> y.is_inference()
    True
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as `@torch.inference_mode` without parentheses

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def _clone(self):
        return inference_mode(self._mode)

    def __enter__(self):
        self._prev = get_state()
        STATE.inference = self._mode
        set_enabled(not self._mode)  # as c10::InferenceMode: (False) turns grad mode on
