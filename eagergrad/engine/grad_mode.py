"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode."""
import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.grad = True        # is_grad_enabled()
        self.inference = False  # is_inference_mode_enabled()


STATE = _State()


def is_grad_enabled():
    """Whether ops record history in this thread.

    >>> import eagergrad as torch
    >>> with torch.no_grad():
    ...     torch.is_grad_enabled()
    False
    """
    return STATE.grad


def is_inference_mode_enabled():
    return STATE.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return type(self)()


class no_grad(_Mode):
    """Disable gradient recording in this thread.

    >>> import eagergrad as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __enter__(self):
        self._prev = STATE.grad
        STATE.grad = False

    def __exit__(self, *exc):
        STATE.grad = self._prev


class enable_grad(_Mode):
    """Enable gradient recording in this thread (e.g. inside `no_grad`)."""

    def __enter__(self):
        self._prev = STATE.grad
        STATE.grad = True

    def __exit__(self, *exc):
        STATE.grad = self._prev


class set_grad_enabled(_Mode):
    """Set grad mode now; used as a context manager, restore the old mode on exit.

    >>> import eagergrad as torch
    >>> with torch.set_grad_enabled(False):
    ...     torch.is_grad_enabled()
    False
    """

    def __init__(self, mode):
        self._prev = STATE.grad
        self._mode = bool(mode)
        STATE.grad = self._mode

    def _clone(self):
        return set_grad_enabled(self._mode)

    def __call__(self, fn):
        STATE.grad = self._prev  # used as a decorator: do not change the mode now
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        STATE.grad = self._prev


class inference_mode(_Mode):
    """Like no_grad, and tensors made inside are inference tensors that can never
    be recorded by autograd later.

    >>> import eagergrad as torch
    >>> with torch.inference_mode():
    ...     y = torch.ones(2) * 2
    >>> y.is_inference()
    True
    """

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def _clone(self):
        return inference_mode(self._mode)

    def __enter__(self):
        self._prev = (STATE.grad, STATE.inference)
        if self._mode:
            STATE.grad = False
            STATE.inference = True
        else:
            STATE.inference = False

    def __exit__(self, *exc):
        STATE.grad, STATE.inference = self._prev
