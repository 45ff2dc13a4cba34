"""torch.futures: `Future`, a value some thread sets later, with callbacks (`then`,
`add_done_callback`), and `collect_all` / `wait_all` over several futures; torch's
semantics on Python threads: callbacks run in the thread that completes the future (at once
when it is complete already), in the order they were added.

>>> import eagergrad as torch
>>> fut = torch.futures.Future()
>>> doubled = fut.then(lambda f: f.wait() * 2)
>>> fut.set_result(21)
>>> doubled.wait()
42
"""
import logging
import threading
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
_log = logging.getLogger(__name__)


def _callback_error(e):
    """torch's message for an exception a callback raised: the error, then the frames from the
    raising one outwards."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    frames = []
    frame = tb.tb_frame if tb is not None else None
    while frame is not None:
        frames.append(f"  {frame.f_code.co_filename}({frame.f_lineno}): {frame.f_code.co_name}\n")
        frame = frame.f_back
    return (f"Got the following error when running the callback: {type(e).__name__}: {e}\n\n"
            "At:\n" + "".join(frames))


class _CFuture:
    """torch.Future(devices): the future type underneath (what `then`, `collect_all` and
    `jit.fork` return); `torch.futures.Future` is its user-facing subclass."""

    def __init__(self, devices):
        from .device import device
        for d in devices:
            if not isinstance(d, device):
                raise TypeError("Future(): devices must be a sequence of torch.device")
            if d.type not in ("cpu", "meta"):
                raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
            if d.index is None:
                raise ValueError(f"Expected devices to have indices, got {d}")
        self._cond = threading.Condition()
        self._done = False
        self._result = None
        self._error = None
        self._callbacks = []

    def done(self):
        """Whether the future holds its value or error."""
        return self._done

    def wait(self):
        """Block until the future completes; its value, or its error raised."""
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        return self.value()

    def value(self):
        """The value of a completed future (its error raised); RuntimeError before then."""
        if not self._done:
            raise RuntimeError("Future.value() called before the Future completed: call wait() "
                               "first, or read the value in a then() callback")
        if self._error is not None:
            raise self._error
        return self._result

    def then(self, callback):
        """A new Future holding `callback(self)` once this one completes; if the callback
        raises, the new future holds a RuntimeError describing the error.

        >>> import eagergrad as torch
        >>> fut = torch.futures.Future()
        >>> fut.set_exception(ValueError("lost"))
        >>> fut.then(lambda f: "handled").wait()
        'handled'
        """
        if not callable(callback):
            raise TypeError(f"then(): callback must be callable, not {type(callback).__name__}")
        child = _CFuture([])

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - torch hands any error to the child future
                child.set_exception(RuntimeError(_callback_error(e)))
                return
            child.set_result(result)
        self._add(run)
        return child

    def add_done_callback(self, callback):
        """Run `callback(self)` when the future completes (now if it has); an error the
        callback raises is logged, as torch does, and dropped."""
        if not callable(callback):
            raise TypeError("add_done_callback(): callback must be callable, not "
                            f"{type(callback).__name__}")

        def run(fut):
            try:
                callback(fut)
            except Exception as e:  # noqa: BLE001 - torch logs it and goes on
                _log.error(_callback_error(e))
        self._add(run)

    def set_result(self, result):
        """Complete the future with `result`, waking the waiters and running the callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the error `result`: `wait` and `value` raise it."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _add(self, run):
        with self._cond:
            if not self._done:
                self._callbacks.append(run)
                return
        run(self)

    def _complete(self, result, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._result, self._error, self._done = result, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for run in callbacks:
            run(self)

    def __reduce_ex__(self, protocol):
        raise RuntimeError("Can not pickle torch.futures.Future")


_CFuture.__name__ = "Future"  # (torch._C.Future, torch.Future; found by pickle as _CFuture)


class Future(_CFuture, Generic[T]):  # (torch.futures.Future subclasses torch.Future)
    """Future(*, devices=None): an unset future. `set_result` / `set_exception` complete it
    (once); `wait` blocks until then and returns the value or raises the error.

    >>> import eagergrad as torch
    >>> fut = torch.futures.Future()
    >>> fut.done()
    False
    >>> fut.set_result([1, 2])
    >>> fut.done(), fut.value()
    (True, [1, 2])
    """

    def __init__(self, *, devices=None):
        from .device import device
        super().__init__([device(d) for d in devices or ()])


def collect_all(futures):
    """A Future completing when every future of the list has: its value is the list; if any
    failed, its error is that of the first failed future in the list.

    >>> import eagergrad as torch
    >>> a, b = torch.futures.Future(), torch.futures.Future()
    >>> both = torch.futures.collect_all([a, b])
    >>> a.set_result(1); b.set_result(2)
    >>> [f.value() for f in both.wait()]
    [1, 2]
    """
    futures = list(futures)
    for f in futures:
        if not isinstance(f, _CFuture):
            raise TypeError(f"collect_all(): expected a list of Futures, got a "
                            f"{type(f).__name__}")
    out = _CFuture([])
    if not futures:
        out.set_result([])
        return out
    lock = threading.Lock()
    remaining = [len(futures)]

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            failed = [f._error for f in futures if f._error is not None]
            if failed:
                out.set_exception(failed[0])
            else:
                out.set_result(futures)
    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """The values of the futures, once all complete; the first failed one's error raised.

    >>> import eagergrad as torch
    >>> f = torch.futures.Future(); f.set_result(3)
    >>> torch.futures.wait_all([f, f])
    [3, 3]
    """
    return [fut.wait() for fut in collect_all(futures).wait()]
