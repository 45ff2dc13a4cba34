"""Small helpers on dims, shapes and arguments shared across the package (with torch's
error messages)."""


def wrap_dim(dim, ndim):
    """`dim` in [0, ndim) (a 0-dim tensor takes dim 0 or -1), else torch's IndexError.

    >>> wrap_dim(-1, 3), wrap_dim(0, 0)
    (2, 0)
    """
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}],"
                         f" but got {dim})")
    return dim % n


def broadcast_shape(a, b):
    """The broadcast of shapes `a` and `b`; torch's error names the rightmost mismatch.

    >>> broadcast_shape((3, 1), (4,))
    (3, 4)
    """
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {max(len(a), len(b)) - i}")
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


def as_tuple(x):
    """A tuple stays, a list becomes a tuple, anything else is wrapped in one."""
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def conj_scalar(v):
    """The conjugate of a Python complex; any other scalar as it is."""
    return v.conjugate() if isinstance(v, complex) else v


def reorder_dims(nd, should_swap):
    """The dims 0..nd-1 sorted innermost first by ATen's insertion sort (TensorIterator's
    reorder_dimensions, computeStrideOrder): should_swap(d0, d1) > 0 moves d1 inside d0,
    < 0 stops, 0 looks further out."""
    perm = list(range(nd))[::-1]
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm
