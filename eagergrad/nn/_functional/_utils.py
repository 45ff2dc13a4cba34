"""Helpers several nn.functional families share."""


def _dims(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tuple(v, n):
    """An int (or a 1-sequence) repeated n times, as torch's IntArrayRef[n] parser does."""
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 else v
