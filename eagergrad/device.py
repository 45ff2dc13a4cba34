"""torch devices mapped onto jax devices: "cpu", "cuda"/"cuda:N" (jax GPUs),
"xla"/"tpu"/"tpu:N" (jax TPUs); the default device of the factories (`set_default_device`,
`with torch.device(...)`), which is jax's default device unless set.

>>> import eagergrad as torch
>>> with torch.device("cpu"):
...     torch.get_default_device()
device(type='cpu')
"""
import re
import threading

import jax

_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu", "tpu": "tpu"}
_TYPE = {"cpu": "cpu", "gpu": "cuda", "tpu": "xla"}
# the device types torch's parser knows (most have no jax backend: using them raises)
_TORCH_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def _jax_devices(platform):
    try:
        return jax.devices(platform)
    except RuntimeError:  # no such backend in this jax
        return []


class device:
    """A device, as `torch.device("cuda:0")`; also a context manager making it the default
    device of the factories, as in torch 2.x.

    >>> import eagergrad as torch
    >>> torch.device("cpu"), torch.device("cuda", 1)
    (device(type='cpu'), device(type='cuda', index=1))
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            if not _jax_devices("gpu"):
                raise RuntimeError(NO_ACCELERATOR)
            type, index = "cuda", type
        elif isinstance(type, str):
            m = _DEVICE_STRING.fullmatch(type)
            if m is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            if m.group(2) is not None:
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(m.group(2))
            type = m.group(1)
        else:
            raise TypeError("device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__})")
        if type == "tpu":  # (an eagergrad alias of xla)
            type = "xla"
        if type not in _TORCH_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TORCH_TYPES)} device type at start "
                               f"of device string: {type}")
        if index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                f"{index.__class__.__name__}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):  # as torch: devices only, the index compared as given
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        _stack().append(self)
        return self

    def __exit__(self, *exc):
        _stack().pop()

    def available(self):
        """This device, after checking the machine has it (else torch's error)."""
        self.jax  # noqa: B018
        return self

    @property
    def jax(self):
        """The jax device this names; raises torch's error when the machine has none such."""
        if self.type == "meta":
            from ._torch_names import missing
            raise missing("the torch 'meta' device")
        plat = _PLATFORM.get(self.type)
        if plat is None:
            raise RuntimeError(f"PyTorch is not linked with support for {self.type} devices")
        devs = _jax_devices(plat)
        if not devs:
            if plat == "gpu":
                raise AssertionError(NO_CUDA)
            raise RuntimeError(f"PyTorch is not linked with support for {self.type} devices")
        if plat == "cpu":
            return devs[0]  # (torch accepts any cpu index)
        i = self.index or 0
        if i >= len(devs):
            have = ", ".join(str(d) for d in jax.devices()) or "none"
            raise RuntimeError(f"eagergrad: device '{self}' is not available on this machine "
                               f"(jax platform '{plat}' has {len(devs)} device(s)); available "
                               f"devices: {have}")
        return devs[i]


def device_of(arr):
    try:
        d = next(iter(arr.devices()))
    except Exception:  # noqa: BLE001 - a tracer: report the default device
        d = jax.devices()[0]
    t = _TYPE.get(d.platform, d.platform)
    return device(t, None if t == "cpu" else d.id)


# ---- the factories' default device: thread-local, as torch's --------------------------------
class _Default(threading.local):
    def __init__(self):
        self.set = None  # set_default_device's
        self.stack = []  # `with device(...)` blocks


_DEFAULT = _Default()


def _stack():
    return _DEFAULT.stack


def default():
    """The device factories use when given none (None: jax's default device)."""
    d = _DEFAULT
    return d.stack[-1] if d.stack else d.set


def set_default_device(device_):
    """Make factories (zeros, tensor, arange, ...) create tensors on `device_` when given no
    device (None: back to the default); per thread, as torch's.

    >>> import eagergrad as torch
    >>> torch.set_default_device("cpu"); torch.zeros(1).device
    device(type='cpu')
    >>> torch.set_default_device(None)
    """
    if device_ is not None and not isinstance(device_, device):
        device_ = device(device_)
    if device_ is not None and device_.type == "meta":
        from ._torch_names import missing
        raise missing("the torch 'meta' device")
    _DEFAULT.set = device_


def get_default_device():
    """The device factories create tensors on when given none.

    >>> import eagergrad as torch
    >>> torch.get_default_device()
    device(type='cpu')
    """
    d = default()
    if d is None:
        return device_of(jax.numpy.zeros(()))
    if d.index is not None:
        return d
    return device_of(jax.device_put(0, d.jax))
