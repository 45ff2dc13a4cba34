"""eagergrad: PyTorch's eager autograd semantics on JAX.

`import eagergrad as torch` gives the torch surface eagergrad covers: tensors over jax
arrays, ops recorded into a graph of torch-named nodes, and PyTorch's engine.
eagergrad turns on `jax_enable_x64` at import (float64/int64 need it) and passes
explicit dtypes everywhere, so the default dtype stays float32 as in torch.
"""
import sys as _sys

import jax

jax.config.update("jax_enable_x64", True)
from .torch_version import __version__  # noqa: E402,F401  (a TorchVersion, as torch's)
from ._compile_cache import set_compilation_cache  # noqa: E402,F401  (on by default)

from . import _torch_names  # noqa: E402
from ._dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: E402,F401
                      bfloat16, float32, float64, complex64, complex128, dtype,
                      get_default_dtype, set_default_dtype, promote_types)
from ._layouts import (memory_format, contiguous_format, preserve_format,  # noqa: E402,F401
                       channels_last, channels_last_3d, layout, strided, sparse_coo,
                       sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged)
from .tensor import Tensor, is_tensor, numel, is_floating_point, is_complex  # noqa: E402,F401
from .size import Size  # noqa: E402,F401
from .device import device, get_default_device, set_default_device  # noqa: E402,F401
from . import ops as _ops  # noqa: E402
from .ops._args import result_type  # noqa: E402,F401
from .creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty,  # noqa: E402,F401
                       full, arange, linspace, logspace, eye, zeros_like, ones_like,
                       empty_like, full_like, rand, randn, randint, randperm, rand_like,
                       randn_like, randint_like, manual_seed, seed, initial_seed, Generator,
                       get_rng_state, set_rng_state, set_default_tensor_type,
                       LEGACY_TYPES as _LEGACY_TYPES, CUDA_LEGACY_TYPES as _CUDA_LEGACY_TYPES)
from .engine.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: E402,F401
                               inference_mode, is_grad_enabled, is_inference_mode_enabled)
from . import (accelerator, amp, autograd, backends, cpu, cuda,  # noqa: E402,F401
               distributed, distributions, fft, func, linalg, signal, special, testing,
               viz)
from .ops._autocast import (is_autocast_enabled, set_autocast_enabled,  # noqa: E402,F401
                            get_autocast_dtype, set_autocast_dtype, is_autocast_cache_enabled,
                            set_autocast_cache_enabled, clear_autocast_cache,
                            autocast_increment_nesting, autocast_decrement_nesting,
                            is_autocast_cpu_enabled, set_autocast_cpu_enabled,
                            get_autocast_cpu_dtype, set_autocast_cpu_dtype,
                            get_autocast_gpu_dtype, set_autocast_gpu_dtype,
                            is_autocast_xla_enabled, set_autocast_xla_enabled,
                            get_autocast_xla_dtype, set_autocast_xla_dtype,
                            is_autocast_ipu_enabled, set_autocast_ipu_enabled,
                            get_autocast_ipu_dtype, set_autocast_ipu_dtype)
from .amp import GradScaler, autocast  # noqa: E402,F401
from .amp._aliases import CPU_AMP as _CPU_AMP, CUDA_AMP as _CUDA_AMP  # noqa: E402
cpu.amp, cuda.amp = _CPU_AMP, _CUDA_AMP  # (torch.cpu.amp, torch.cuda.amp: deprecated)
_sys.modules.update({'eagergrad.cpu.amp': _CPU_AMP, 'eagergrad.cuda.amp': _CUDA_AMP})
from . import nn, onnx, overrides  # noqa: E402,F401
from .spectral import istft, stft  # noqa: E402,F401
from .nn._functional.aten import *  # noqa: E402, F403  (torch.conv2d, torch.dropout...)
from .engine.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402,F401
from .interop import from_jax, jaxify  # noqa: E402,F401
# (torch's settings, constants, dtype facts, window functions and tensor predicates)
from .interop import from_dlpack, to_dlpack  # noqa: E402,F401
from ._dtypes import finfo, iinfo, can_cast  # noqa: E402,F401
from ._repr import set_printoptions  # noqa: E402,F401
from .tensor import (is_signed, is_nonzero, is_same_size, is_inference,  # noqa: E402,F401
                     get_device, detach, is_distributed, public_typename as typename)
from .creation import default_generator  # noqa: E402,F401
from ._layouts import contiguous_format as legacy_contiguous_format  # noqa: E402,F401
from . import functional, random, return_types  # noqa: E402,F401
from .creation import empty_strided, empty_permuted, from_file  # noqa: E402,F401
from .creation import (torch_range as range, frombuffer, hann_window,  # noqa: E402,F401
                       hamming_window, bartlett_window, blackman_window, kaiser_window)
from .engine.anomaly import set_anomaly_enabled  # noqa: E402,F401
from .accelerator import _get_device_module as get_device_module  # noqa: E402,F401
from ._settings import *  # noqa: E402,F403
from ._sym import *  # noqa: E402,F403
from math import e, inf, nan, pi  # noqa: E402,F401  (torch's are math's)
newaxis = None
from .func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from .serialization import save, load  # noqa: E402,F401
from . import storage  # noqa: E402
from .storage import (UntypedStorage, TypedStorage, StorageBase, is_storage,  # noqa: E402,F401
                      BFloat16Storage, BoolStorage, ByteStorage, CharStorage,
                      ComplexDoubleStorage, ComplexFloatStorage, DoubleStorage, FloatStorage,
                      HalfStorage, IntStorage, LongStorage, ShortStorage)
from .linalg import _chain_matmul as chain_matmul  # noqa: E402,F401
from .linalg import _frobenius_norm as frobenius_norm  # noqa: E402,F401
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402,F401
from ._lobpcg import lobpcg  # noqa: E402,F401
from .ops.batchnorm import _native_batch_norm_legit  # noqa: E402,F401
from .nn._functional.rnn import (lstm, gru, rnn_tanh, rnn_relu,  # noqa: E402,F401
                                  lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell)
from .ops.scatter import (_unsafe_masked_index,  # noqa: E402,F401
                          _unsafe_masked_index_put_accumulate)
from .ops.sampling import (_standard_gamma, _standard_gamma_grad,  # noqa: E402,F401
                            _sample_dirichlet, _dirichlet_grad)
from . import optim, utils  # noqa: E402,F401
from . import library  # noqa: E402,F401  (torch.library; torch.ops.<ns> is its ops)
from .library._schema import (Tag, FunctionSchema, Argument,  # noqa: E402,F401
                              parse_schema)
# (torch.jit, futures, compiler, multiprocessing, version: their eager-mode semantics)
from . import compiler, futures, jit, multiprocessing, torch_version, version  # noqa: E402,F401
from . import _dynamo  # noqa: E402,F401
from ._dynamo import compile  # noqa: E402,F401
from . import hub, profiler  # noqa: E402,F401
from .futures import _CFuture as Future  # noqa: E402,F401  (torch._C.Future)
from .jit import _fork as fork, _wait as wait, Error as JITException  # noqa: E402,F401
# (the other device modules, streams, events, device errors, __torch_function__ switches,
# control flow, and aliases torch keeps at its top level)
from . import mps, mtia, xpu  # noqa: E402,F401
from ._streams import Stream, Event  # noqa: E402,F401
from .cuda import OutOfMemoryError, AcceleratorError  # noqa: E402,F401
from .overrides import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
from ._control_flow import cond, while_loop  # noqa: E402,F401
from .signal import windows  # noqa: E402,F401  (torch.windows is torch.signal.windows)
from .random import thread_safe_generator  # noqa: E402,F401
from ._utils import classproperty  # noqa: E402,F401
from typing import TYPE_CHECKING  # noqa: E402,F401  (torch's is typing's)

# the legacy tensor types: torch.FloatTensor(2, 3), isinstance(t, torch.LongTensor), ...
globals().update(_LEGACY_TYPES)
for _k, _v in _CUDA_LEGACY_TYPES.items():
    setattr(cuda, _k, _v)
del _k, _v

float = float32
double = float64
half = float16
cfloat = complex64
cdouble = complex128
long = int64
int = int32
short = int16

from . import _tensor_methods  # noqa: E402  (binds Tensor's methods, once)

globals().update({k: v for k, v in _ops.FUNCTIONS.items()
                  if k not in globals() and k in _torch_names.TORCH_NAMES})
# torch.relu_(x) etc.: every module-level in-place function of torch whose method we have
globals().update({k: v for k, v in _tensor_methods.INPLACE_TORCH_FUNCTIONS.items()
                  if k not in globals()})
__getattr__ = storage._with_storage(_torch_names.module_getattr("eagergrad", "torch"))
