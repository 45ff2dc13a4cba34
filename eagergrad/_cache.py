"""Bounded caches (DESIGN.md §7: every cache is bounded and holds no tensor data)."""


def put_bounded(cache, key, value, maxsize):
    """`cache[key] = value` in a plain dict, dropping the oldest entries past `maxsize`.
    Lookups stay plain dict reads (these caches sit on the per-op hot path); eviction is
    by insertion order, which for caches of compiled kernels is close enough to LRU."""
    cache[key] = value
    while len(cache) > maxsize:
        del cache[next(iter(cache))]
    return value
