"""The XLA flags the suite runs with (imported by conftest before jax starts).

The suite compiles tens of thousands of small kernels, each once or twice, on tiny arrays:
compiling is most of its time, running them almost none. So it compiles them with XLA:CPU's
legacy loop emitters instead of its MLIR fusion emitters (recent jaxlibs' default) and at
LLVM optimisation level 0 instead of eagergrad's 1 (NOTE [compile options]), with LLVM's
full instruction selector instead of the fast one level 0 picks (the fast one never
contracts a multiply and an add into an FMA, as level 1 does: x.add(y, alpha=a) would be
~1e-13 off torch in float64): ~1/3 of the compile time per kernel
(bench/compile_flags.py compares flag sets). The kernels run slower, and some results
differ in the last bits from a user's (float32 transcendentals; where a reduction's
result meets an elementwise op, the legacy emitters contract differently): the
comparisons with torch and jax have tolerances above that, and the few tests whose
answer depends on those bits are listed in codegen_exact.txt (conftest marks them
`codegen`; they run at the user's codegen: EAGERGRAD_SUITE_CODEGEN=default).

Set in XLA_FLAGS here, so in the processes the tests start too. A user's own choice of
any of the three is kept; EAGERGRAD_SUITE_CODEGEN=default sets none; a jaxlib whose XLA
lacks a flag gets none of it (an unknown flag in XLA_FLAGS aborts the process: its
libraries are searched for the name)."""
import glob
import mmap
import os

import jaxlib

ENV = "EAGERGRAD_SUITE_CODEGEN"
FAST = {
    "xla_backend_optimization_level": "0",
    "xla_cpu_use_fusion_emitters": "false",
    "xla_backend_extra_options": "-fast-isel=false",
}


def fast_codegen():
    """Whether this process compiles with the suite's fast flags (not the user's defaults)."""
    return os.environ.get(ENV, "fast").strip().lower() != "default"


def _known_to_xla():
    names = {}
    for path in glob.glob(os.path.join(os.path.dirname(jaxlib.__file__), "*.so")):
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            for name in FAST:
                names[name] = names.get(name, False) or m.find(name.encode()) >= 0
    return {n for n, found in names.items() if found}


def suite_xla_flags():
    if not fast_codegen():
        return
    flags = os.environ.get("XLA_FLAGS", "")
    chosen = [n for n in FAST if n in flags]
    if len(chosen) == len(FAST):
        return
    known = _known_to_xla()
    for name, value in FAST.items():
        if name not in chosen and name in known:
            flags += f" --{name}={value}"
    os.environ["XLA_FLAGS"] = flags.strip()


suite_xla_flags()
