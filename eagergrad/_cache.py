"""Bounded caches (DESIGN.md §7: every cache is bounded and holds no tensor data) and
the keys that tell -0.0 from 0.0 and find NaN."""
import math


def put_bounded(cache, key, value, maxsize):
    """`cache[key] = value` in a plain dict, dropping the oldest entries past `maxsize`.
    Lookups stay plain dict reads (these caches sit on the per-op hot path); eviction is
    by insertion order, which for caches of compiled kernels is close enough to LRU."""
    cache[key] = value
    while len(cache) > maxsize:
        del cache[next(iter(cache))]
    return value


class KeyedFloat(float):
    """-0.0 or NaN as a static argument or a cache key. As plain floats, -0.0 == 0.0
    (it would find 0.0's cache entries) and NaN != NaN (it would never find its own, and
    compile again on every call); a KeyedFloat equals only the same special value."""

    __slots__ = ()

    def __eq__(self, other):
        return type(other) is KeyedFloat and repr(self) == repr(other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(repr(self))


def keyed(v):
    """`v`, or a KeyedFloat of it when it is -0.0 or NaN (see KeyedFloat).

    >>> keyed(-0.0) == keyed(0.0), keyed(float("nan")) == keyed(float("nan"))
    (False, True)
    """
    if type(v) is float and (v != v or (v == 0.0 and math.copysign(1.0, v) < 0.0)):
        return KeyedFloat(v)
    return v
