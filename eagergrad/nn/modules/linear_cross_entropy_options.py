"""torch.nn.modules.linear_cross_entropy_options: LinearCrossEntropyOptions, the chunking
configuration of F.linear_cross_entropy / nn.LinearCrossEntropyLoss, with torch's fields,
validation and call-time resolution (`_adjust`). eagergrad runs only the reference path
(options=None, or the configurations torch itself sends there with a warning); the
chunked path raises NotImplementedError."""
import dataclasses
from typing import NamedTuple

from ... import _dtypes as D

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch 2.13's picks for "auto", keyed by (device type, input dtype)
_AUTO_DEFAULTS = {
    ("cuda", D.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", D.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", D.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", D.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = (D.float16, D.bfloat16, D.float32, D.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How F.linear_cross_entropy would chunk the batch (torch's fields and checks).

    >>> import eagergrad as torch
    >>> torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2).chunking_method
    'auto'
    >>> torch.nn.LinearCrossEntropyOptions(acc_policy="fast")
    Traceback (most recent call last):
    ValueError: invalid acc_policy: 'fast'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, torch.float32, "
                f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                "pick automatically.")

    @staticmethod
    def _ceil_div(a, b):
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        if device is None or dtype not in (D.float16, D.bfloat16):
            return None
        if device.type == "cpu":
            return D.float32
        return None  # (no CUDA here)

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            target = self._ceil_div(num_batches, self._ceil_div(num_classes, in_features))
            chunk_size = 1 << (target - 1).bit_length()
            return min(chunk_size // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """The options with "auto" and None resolved for one call (torch's)."""
        acc_policy, chunking_method = self.acc_policy, self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            ap, cm = (_AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
                      if device is not None else _AUTO_FALLBACK)
            if acc_policy == "auto":
                acc_policy = ap
            if chunking_method == "auto":
                chunking_method = cm
        if self.batch_chunk_size is None:
            batch_chunk_size = num_batches
        else:
            batch_chunk_size = min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(num_batches, in_features,
                                                              num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{chunking_method}') give different chunk sizes ({self.batch_chunk_size} "
                    f"vs {batch_chunk_size}); pass only one.")
        if self.acc_dtype is None:
            auto = (self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto"
                    else None)
            acc_dtype = auto if auto is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size),
                                   acc_dtype=acc_dtype)
