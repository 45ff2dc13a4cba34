"""Hook handles, and the count of hook registrations that running backwards watch."""
import itertools

_handle_ids = itertools.count()


class _HookGeneration:
    """Counts every registration and removal of a hook (any kind): a running backward
    whose plan was made under another count re-plans its remainder."""

    __slots__ = ("n",)

    def __init__(self):
        self.n = 0


HOOK_GENERATION = _HookGeneration()


class RemovableHandle:
    """A hook's handle: `.remove()` unregisters it (also usable as a context manager)."""

    __slots__ = ("_dicts", "id")

    def __init__(self, hooks, value, extra=()):
        self.id = i = next(_handle_ids)
        self._dicts = (hooks, *extra) if extra else (hooks,)
        hooks[i] = value
        HOOK_GENERATION.n += 1

    def remove(self):
        for d in self._dicts:
            d.pop(self.id, None)
        HOOK_GENERATION.n += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
