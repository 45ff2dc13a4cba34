"""torch's global switches and build facts, as they stand for eagergrad on XLA.

- Threads: XLA:CPU sizes its thread pools when jax starts, so `set_num_threads` /
  `set_num_interop_threads` record the number (with torch's checks) for `get_*` to return;
  they do not resize XLA's pools (set `XLA_FLAGS` before starting Python for that).
- `set_float32_matmul_precision`: kept and returned; eagergrad's matmuls always run at
  full float32 precision, as torch's on CPU (the setting only changes CUDA there).
- `use_deterministic_algorithms`: XLA:CPU's kernels are deterministic; as in torch, the
  flag makes `empty` fill its memory (NaN, the largest integer) and makes the ops torch has
  no deterministic kernel for on CPU (`put_` without accumulate, `max_unpool*d`) raise, or
  warn with `warn_only=True` (`alert_not_deterministic`).
- `set_warn_always(True)` repeats the warnings torch gives once per process
  (`warn_once`).
- XLA:CPU flushes denormals to zero: `set_flush_denormal(True)` reports success, and
  `set_flush_denormal(False)` reports that it could not turn flushing off.

>>> import eagergrad as torch
>>> torch.get_float32_matmul_precision()
'highest'
"""
import os
import warnings

__all__ = ["has_lapack", "has_mkl", "has_openmp", "has_spectral", "compiled_with_cxx11_abi",
           "is_vulkan_available",
           "get_num_threads", "set_num_threads", "get_num_interop_threads",
           "set_num_interop_threads", "init_num_threads", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_warn_always", "is_warn_always_enabled",
           "set_flush_denormal"]

# eagergrad's build facts: linear algebra runs on LAPACK (jaxlib's kernels), FFTs exist; no
# MKL, no OpenMP (XLA:CPU runs on Eigen's thread pool)
has_lapack = True
has_mkl = False
has_openmp = False
has_spectral = True


def is_vulkan_available():
    """Whether a Vulkan backend exists (never: eagergrad runs on XLA)."""
    return False


def compiled_with_cxx11_abi():
    """Whether the C++ underneath was built with _GLIBCXX_USE_CXX11_ABI=1 (jaxlib's is)."""
    return True


def _positive_int(name, n):
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


_threads = {"intra": None, "inter": None, "inter_set": False}


def get_num_threads():
    """The number of intra-op threads (the CPUs this process may run on, unless set)."""
    return _threads["intra"] or _cpus()


def set_num_threads(n, /):
    """Record the number of intra-op threads (XLA's pool keeps its size: see the module)."""
    _threads["intra"] = _positive_int("set_num_threads", n)


def get_num_interop_threads():
    """The number of inter-op threads (the CPUs this process may run on, unless set)."""
    return _threads["inter"] or _cpus()


def set_num_interop_threads(n, /):
    """Record the number of inter-op threads; as in torch, only once."""
    n = _positive_int("set_num_interop_threads", n)
    if _threads["inter_set"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _threads["inter"], _threads["inter_set"] = n, True


def init_num_threads():
    """Make the calling thread use the set number of threads: a no-op here (XLA's pools
    serve every thread)."""


_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """Set "highest", "high" or "medium" (kept; eagergrad's float32 matmuls stay at full
    precision, as torch's on CPU)."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision():
    return _matmul_precision[0]


# ---- deterministic algorithms --------------------------------------------------------------
_deterministic = {"on": False, "warn_only": False}


def _bool_arg(fn, name, v, pos=None):
    if not isinstance(v, bool):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not "
                        f"{type(v).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make the ops without a deterministic kernel raise (or warn, with warn_only=True),
    and `empty` fill its memory, as torch (see the module)."""
    _bool_arg("_set_deterministic_algorithms", "mode", mode, 1)
    _bool_arg("_set_deterministic_algorithms", "warn_only", warn_only)
    _deterministic["on"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["on"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0 / "default": off; 1 / "warn": warn only; 2 / "error": raise."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    _deterministic["on"], _deterministic["warn_only"] = debug_mode != 0, debug_mode == 1


def get_deterministic_debug_mode():
    if not _deterministic["on"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def alert_not_deterministic(caller):
    """torch's alertNotDeterministic: with deterministic algorithms on, an op without a
    deterministic kernel raises (warns, with warn_only)."""
    if not _deterministic["on"]:
        return
    if _deterministic["warn_only"]:
        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file "
                      "an issue at https://github.com/pytorch/pytorch/issues to help us "
                      "prioritize adding deterministic support for this operation.",
                      UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off "
                       "determinism just for this operation, or you can use the "
                       "'warn_only=True' option, if that's acceptable for your application. "
                       "You can also file an issue at https://github.com/pytorch/pytorch/issues "
                       "to help us prioritize adding deterministic support for this operation.")


def fill_uninitialized():
    """Whether `empty` fills its memory (torch: with deterministic algorithms on)."""
    return _deterministic["on"]


# ---- warnings ---------------------------------------------------------------------------
_warn_always = [False]


def set_warn_always(b, /):
    """True: the warnings torch gives once per process are given every time."""
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always[0] = b


def is_warn_always_enabled():
    return _warn_always[0]


def warn_once(seen, key):
    """torch's TORCH_WARN_ONCE: whether to warn now, the first time for `key` (recorded
    in the set `seen`), or every time with set_warn_always(True)."""
    if key in seen and not _warn_always[0]:
        return False
    seen.add(key)
    return True


def set_flush_denormal(mode, /):
    """XLA:CPU always flushes denormals: True for mode=True, False (not turned off) for
    mode=False."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return mode


for _f in (compiled_with_cxx11_abi, is_vulkan_available, get_num_threads, set_num_threads,
           get_num_interop_threads, set_num_interop_threads, init_num_threads,
           set_float32_matmul_precision, get_float32_matmul_precision,
           use_deterministic_algorithms, are_deterministic_algorithms_enabled,
           is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
           get_deterministic_debug_mode, set_warn_always, is_warn_always_enabled,
           set_flush_denormal):
    _f.__module__ = "eagergrad"
del _f
