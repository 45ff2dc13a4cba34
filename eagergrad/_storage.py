"""Storage, version counters and strides (DESIGN.md §3).

A Storage holds the current jax array of a base tensor; `gen` counts every write so
that a view can tell its cached array is stale. The version counter is a separate
object because `.data` shares storage but not the version counter, while views and
`detach()` share both.
"""


class Storage:
    __slots__ = ("array", "gen")

    def __init__(self, array):
        self.array = array
        self.gen = 0


class VersionCounter:
    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


def contiguous_strides(shape):
    strides = []
    s = 1
    for n in reversed(shape):
        strides.append(s)
        s *= max(n, 1)
    return tuple(reversed(strides))


def view_strides(old_shape, old_stride, new_shape):
    """ATen's computeStride: strides for viewing (old_shape, old_stride) as new_shape,
    or None when no such view exists (then reshape must copy)."""
    numel = 1
    for n in old_shape:
        numel *= n
    if numel == 0:
        return contiguous_strides(new_shape) if old_shape != new_shape else tuple(old_stride)
    new_stride = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_stride[-1] if old_stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_stride[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_stride)
