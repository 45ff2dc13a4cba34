"""torch.memory_format and torch.layout values (torch.contiguous_format, torch.strided, ...).

eagergrad's tensors are strided and row-major: `contiguous_format` and `preserve_format` are
what every op gives; `channels_last`(`_3d`) is accepted by `to`/`contiguous`/`clone`/the
`*_like` creators and changes no value, only not the strides torch would report (README:
Known differences). Sparse layouts raise NotImplementedError where a tensor would be made.

>>> import eagergrad as torch
>>> torch.channels_last, torch.strided
(torch.channels_last, torch.strided)
"""


class memory_format:
    """A memory format (torch.memory_format)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


class layout:
    """A tensor layout (torch.layout)."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
