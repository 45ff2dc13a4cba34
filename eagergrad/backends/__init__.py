"""torch.backends: the flags scripts set (`torch.backends.cudnn.deterministic = True`)
and the availability checks they ask (`torch.backends.mps.is_available()`). eagergrad
runs on XLA, so these settings change nothing; other names raise NotImplementedError."""
import types

from .._torch_names import module_getattr


def _backend(name, **flags):
    m = types.ModuleType(f"eagergrad.backends.{name}")
    m.is_available = lambda: False
    m.is_built = lambda: False
    m.__dict__.update(flags)
    m.__getattr__ = module_getattr(m.__name__, f"torch.backends.{name}")
    return m


cudnn = _backend("cudnn", enabled=True, deterministic=False, benchmark=False,
                 allow_tf32=True)
mps = _backend("mps")
cuda = _backend("cuda")
mkldnn = _backend("mkldnn", enabled=True)

__getattr__ = module_getattr("eagergrad.backends", "torch.backends")
