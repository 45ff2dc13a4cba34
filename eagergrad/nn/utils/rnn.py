"""torch.nn.utils.rnn: PackedSequence, pack_padded_sequence, pad_packed_sequence,
pad_sequence, pack_sequence, unpad_sequence, unpack_sequence, invert_permutation.

Packing reads the lengths (a CPU int64 tensor, as in torch) as Python ints: they fix
the packed layout, a static shape, so the kernels themselves stay tracer-safe.
"""
from collections.abc import Iterable
from typing import NamedTuple

from ... import _dtypes as D
from ...creation import arange, as_tensor, full
from ...ops.rnn import _pack_padded_sequence
from ...ops.sorting import sort
from ...tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data of variable-length sequences packed time step by time step, and the
    batch size of each step (a namedtuple, as torch's).

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pack_sequence
    >>> p = pack_sequence([torch.tensor([1., 2., 3.]), torch.tensor([4., 5.])])
    >>> p.data, p.batch_sizes
    (tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
    """

    __module__ = "eagergrad.nn.utils.rnn"

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(
            data, batch_sizes, sorted_indices, unsorted_indices))

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        call_to = lambda t: t.to(data.device)
        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, call_to),
                          bind(self.unsorted_indices, call_to))

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs) if args or kwargs else self.to("cpu")

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=D.float64)

    def float(self):
        return self.to(dtype=D.float32)

    def half(self):
        return self.to(dtype=D.float16)

    def long(self):
        return self.to(dtype=D.int64)

    def int(self):
        return self.to(dtype=D.int32)

    def short(self):
        return self.to(dtype=D.int16)

    def char(self):
        return self.to(dtype=D.int8)

    def byte(self):
        return self.to(dtype=D.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should "
                "never be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse permutation (None for None).

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import invert_permutation
    >>> invert_permutation(torch.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    return permutation.new_zeros(permutation.shape).scatter(
        0, permutation, arange(0, permutation.numel(), device=permutation.device))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *)) of sequences of the given lengths.

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pack_padded_sequence
    >>> x = torch.tensor([[1., 2., 3.], [4., 5., 0.]])
    >>> pack_padded_sequence(x, [3, 2], batch_first=True).data
    tensor([1., 4., 2., 5., 3.])
    """
    if not isinstance(lengths, Tensor):
        lengths = as_tensor(lengths, dtype=D.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=D.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack_padded_sequence(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pad_packed(data, batch_sizes, batch_first, padding_value, total_length):
    """ATen's _pad_packed_sequence: a `full` tensor, blocks copied into its slices."""
    bs = [int(b) for b in batch_sizes.tolist()]
    max_batch, max_real = bs[0], len(bs)
    max_seq = max(total_length, max_real) if total_length > 0 else max_real
    trailing = tuple(data.shape[1:])
    output = full((max_seq, max_batch) + trailing, padding_value, dtype=data.dtype,
                  device=data.device)
    lengths = [0] * max_batch
    pos = max_batch - 1
    offset, prev_bs, prev_i = 0, max_batch, 0
    for i in range(max_real + 1):
        b = bs[i] if i != max_real else 0
        if b != prev_bs:
            n = prev_bs * (i - prev_i)
            tmp = data[offset:offset + n].view((i - prev_i, prev_bs) + trailing)
            output[prev_i:i, :prev_bs].copy_(tmp)
            offset += n
            prev_i = i
        for _ in range(prev_bs - b):
            lengths[pos] = i
            pos -= 1
        prev_bs = b
    if batch_first:
        output = output.transpose(0, 1)
    return output, as_tensor(lengths, dtype=D.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded tensor, lengths).

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> pad_packed_sequence(pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])]))
    (tensor([[1., 3.],
            [2., 0.]]), tensor([2, 1]))
    """
    max_seq_length = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    padded, lengths = _pad_packed(sequence.data, sequence.batch_sizes, batch_first,
                                  padding_value, max_seq_length)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences (L_i, *) into (max L, B, *), padded.

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([torch.ones(2), torch.ones(1)], batch_first=True, padding_side="left")
    tensor([[1., 1.],
            [0., 1.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    max_len = max(s.size(0) for s in sequences)
    n = len(sequences)
    dims = ((n, max_len) if batch_first else (max_len, n)) + trailing
    out = full(dims, padding_value, dtype=sequences[0].dtype, device=sequences[0].device)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch.

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(torch.tensor([[1., 2.], [3., 0.]]), torch.tensor([2, 1]), True)
    [tensor([1., 2.]), tensor([3.])]
    """
    out = []
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    idx = arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths):
        out.append(seq[idx < length])
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length sequences (pad_sequence, then pack_padded_sequence).

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pack_sequence
    >>> pack_sequence([torch.tensor([1.]), torch.tensor([2., 3.])], enforce_sorted=False).data
    tensor([2., 1., 3.])
    """
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence.

    >>> import eagergrad as torch
    >>> from eagergrad.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([torch.tensor([1., 2.]), torch.tensor([3.])]))
    [tensor([1., 2.]), tensor([3.])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
