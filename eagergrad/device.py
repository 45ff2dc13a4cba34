"""torch devices mapped onto jax devices: "cpu", "cuda"/"cuda:N" (jax GPUs),
"xla"/"tpu"/"tpu:N" (jax TPUs). The default is jax's default device."""
import jax

_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu", "tpu": "tpu"}
_TYPE = {"cpu": "cpu", "gpu": "cuda", "tpu": "xla"}


class device:
    """A device, as `torch.device("cuda:0")`.

    >>> import eagergrad as torch
    >>> torch.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, i = type.split(":")
            index = int(i)
        if type == "tpu":
            type = "xla"
        if type not in _PLATFORM:
            raise RuntimeError(f"Expected one of cpu, cuda, xla, tpu device type at start of "
                               f"device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    @property
    def jax(self):
        """The jax device this names; raises when the machine has none such."""
        plat = _PLATFORM[self.type]
        try:
            devs = jax.devices(plat)
        except RuntimeError:
            devs = []
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
    except Exception:  # a tracer: report the default device
        d = jax.devices()[0]
    t = _TYPE.get(d.platform, d.platform)
    return device(t, None if t == "cpu" else d.id)
