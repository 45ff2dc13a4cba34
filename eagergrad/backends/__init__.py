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

# torch.backends.mha: whether MultiheadAttention and the Transformer encoder take torch's
# inference fast paths, whose results nn/modules/transformer.py reproduces
mha = types.ModuleType("eagergrad.backends.mha")
mha._is_fastpath_enabled = True


def _get_fastpath_enabled():
    """Whether the fast path for TransformerEncoder and MultiheadAttention is enabled."""
    return mha._is_fastpath_enabled


def _set_fastpath_enabled(value):
    """Sets whether fast path is enabled."""
    mha._is_fastpath_enabled = value


mha.get_fastpath_enabled = _get_fastpath_enabled
mha.set_fastpath_enabled = _set_fastpath_enabled
mha.__getattr__ = module_getattr(mha.__name__, "torch.backends.mha")

__getattr__ = module_getattr("eagergrad.backends", "torch.backends")
