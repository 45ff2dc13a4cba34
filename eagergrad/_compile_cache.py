"""The persistent XLA compilation cache: on by default, so a program's second run loads
the kernels its first run compiled instead of compiling them again.

eagergrad turns on jax's persistent cache (`jax_compilation_cache_dir`) at import, in
`$XDG_CACHE_HOME/eagergrad/xla` (else `~/.cache/eagergrad/xla`), in a subdirectory named
by eagergrad's, jax's and jaxlib's versions (`eagergrad-0.1.0_jax-0.10.2_jaxlib-0.10.2`):
an upgrade of any of them starts a new subdirectory and never reads an older one's
entries (jax's own key adds the HLO, the compile options, the XLA flags and the backend;
the compile options hold a path inside the cache directory, jax's GPU autotuning cache,
so a cache copied or moved to another path is not hit there). Entries (~6 KB each, one
per kernel) are never evicted, and the subdirectories of old versions are left in place:
delete the directory to reclaim the space.

- `EAGERGRAD_COMPILATION_CACHE=0` (or `off`, or empty) turns it off;
  `EAGERGRAD_COMPILATION_CACHE=/some/dir` puts it there (the versioned subdirectory is
  made inside).
- `eagergrad.set_compilation_cache(path)` moves it at run time; `None` turns it off.
- A cache directory set by the user for jax (`jax.config.update(
  "jax_compilation_cache_dir", ...)` before importing eagergrad, or the environment
  variable JAX_COMPILATION_CACHE_DIR) is left alone at import, with jax's thresholds,
  and so is `JAX_ENABLE_COMPILATION_CACHE=false`.
- A directory that cannot be made is skipped (the cache stays off: silently for the
  default location, with one warning for a location the user asked for); one that can be
  read but not written is read only (nothing is written, so jax does not warn on every
  compile).

Thresholds. jax writes only executables that took at least
`jax_persistent_cache_min_compile_time_secs` (default 1 s) to compile: none of eagergrad's
per-op kernels (a few ms to ~60 ms each), so eagergrad lowers it. Measured on the
project's 2-core CPU machine (busy with other work: wall times varied by up to 2x between
identical runs) with a program of 374 small kernels (30 shapes x a few elementwise ops,
their backward and the fused backward):

    whole process, wall           cache off   first run (empty cache)   second run
    quietest runs                  13.5 s         13.8 s                   3.6 s
    XLA compiles (jax events)     374 (10.1 s)   369 + 5 in-process hits   374 hits (0.5 s)

    the cache's own work, timed inside jax (2 runs each):
      first run:  cache keys 0.15-0.20 s + lookups (misses) 0.04 s + 369 writes 0.47-0.59 s,
                  ~1.9 ms per kernel against ~37-60 ms to compile it (+3-4%)
      second run: cache keys 0.14-0.23 s + 374 reads 0.6-1.1 s, ~2-4 ms per kernel
      entries: ~5.8 KB each (zlib), 2.1 MB for the 369

With a 5 ms threshold 352-367 of the 369 kernels were still written (the others compiled
in under 5 ms, about what reading them back costs), so the threshold is 0: every kernel
is written, and there is no minimum entry size.
"""
import logging
import os
import tempfile
import warnings

import jax

ENV = "EAGERGRAD_COMPILATION_CACHE"
MIN_COMPILE_TIME_SECS = 0.0  # see the module docstring for the measurements
_OFF = ("", "0", "off", "false", "no", "none")

logger = logging.getLogger(__name__)

# the directory eagergrad set (None: the cache is off, or it is the user's own)
_current = None


def default_dir():
    """The default cache root: `$XDG_CACHE_HOME/eagergrad/xla`, else
    `~/.cache/eagergrad/xla`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "eagergrad", "xla")


def version_tag():
    """The name of the versioned subdirectory: eagergrad's, jax's and jaxlib's versions."""
    import sys
    import jaxlib
    eg = getattr(sys.modules.get(__package__), "__version__", "unknown")
    return f"eagergrad-{eg}_jax-{jax.__version__}_jaxlib-{jaxlib.__version__}"


def _probe(path):
    """'rw' when `path` (made if missing) takes a new file, 'ro' when it can only be read,
    None when it is unusable."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        logger.debug("compilation cache: cannot make %s: %s", path, e)
        return None
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
        return "rw"
    except OSError:
        return "ro" if os.access(path, os.R_OK | os.X_OK) else None


def _reset():
    # forget jax's opened cache (and its once-per-process "is the cache used" answer), so
    # the next compile opens the new directory
    from jax._src import compilation_cache
    compilation_cache.reset_cache()


def _enable(root, loud):
    global _current
    path = os.path.join(os.path.abspath(os.path.expanduser(root)), version_tag())
    mode = _probe(path)
    if mode is None:
        if loud:
            warnings.warn(f"eagergrad: cannot use {path!r} as the compilation cache; the "
                          f"cache is off", RuntimeWarning, stacklevel=3)
        _disable()
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    if mode == "ro":
        min_time = float("inf")  # read the entries there, write none
    elif "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" in os.environ:  # the user's
        min_time = float(os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"])
    else:
        min_time = MIN_COMPILE_TIME_SECS
    jax.config.update("jax_persistent_cache_min_compile_time_secs", min_time)
    if "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES" not in os.environ:
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)  # no minimum
    _current = path
    _reset()
    return path


def _disable():
    global _current
    jax.config.update("jax_compilation_cache_dir", None)
    _current = None
    _reset()


def set_compilation_cache(path):
    """Put eagergrad's persistent XLA compilation cache in `path` (a versioned
    subdirectory is made inside it), or turn the cache off with `None`. Returns the
    directory the entries go to (None when off). Works at any time: kernels compiled from
    then on are looked up in, and written to, the new place. By default the cache is in
    `~/.cache/eagergrad/xla`; the environment variable EAGERGRAD_COMPILATION_CACHE
    (`0` for off, or a directory) chooses at import.

    >>> import eagergrad as torch
    >>> d = torch.set_compilation_cache("/tmp/my-xla-cache")   # doctest: +SKIP
    >>> torch.set_compilation_cache(None)                       # off
    """
    if path is None:
        _disable()
        return None
    return _enable(os.fspath(path), loud=True)


def current():
    """The directory of eagergrad's cache (None: off, or the user's own jax cache)."""
    return _current


# NOTE [compile options]: XLA's CPU backend at LLVM optimisation level 1 instead of its
# default 2 compiles eagergrad's kernels 20-50% faster (a tanh(x @ w.T + 1) kernel 121 ->
# 61 ms, a 50-op value-and-grad 483 -> 291 ms; the first run of bench/programs'
# legendre_fit 6.3 -> 5.4 s, mlp_dataloader 12.1 -> 9.3 s) and, measured on 138 kernels
# (elementwise, transcendental, reductions, softmax, matmul, conv, cumsum, sort,
# sampling, a vjp; f32 and f64; three shapes each), gives bitwise the same results at the
# same speed; level 0 changes results and runs 2-3x slower. jax takes compiler options
# per top-level jit only (eagergrad's kernels nest: a view's replay inside an op's
# kernel), so the option is an XLA flag, read when jax starts its CPU backend: set at
# import, unless the user's XLA_FLAGS already choose a level (or the backend had started).
FAST_COMPILE_FLAG = "--xla_backend_optimization_level=1"


def fast_compile_flags():
    """Add NOTE [compile options]'s flag to XLA_FLAGS unless a level is already there."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " " + FAST_COMPILE_FLAG).strip()


def configure_at_import():
    """The default set-up (see the module docstring)."""
    if jax.config.jax_compilation_cache_dir is not None:
        return  # the user's own cache directory: left alone
    if not jax.config.jax_enable_compilation_cache:
        return  # turned off for jax by the user
    env = os.environ.get(ENV)
    if env is not None:
        if env.strip().lower() in _OFF:
            return
        _enable(env, loud=True)
        return
    _enable(default_dir(), loud=False)


fast_compile_flags()
configure_at_import()
