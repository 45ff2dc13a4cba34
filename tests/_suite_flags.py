"""The XLA flags the suite runs with (imported by conftest before jax starts)."""
import glob
import mmap
import os

import jaxlib


def suite_xla_flags():
    """The suite compiles tens of thousands of small kernels, each once or twice, on tiny
    arrays: compiling is most of its time, running them almost none. So it compiles them
    with XLA:CPU's legacy loop emitters instead of its MLIR fusion emitters (recent
    jaxlibs' default) and at LLVM optimisation level 0 instead of eagergrad's 1
    (NOTE [compile options]): per kernel ~1/3 of the compile time (the op sweeps: 63 ->
    36 ms a compile, bench/compile_flags.py compares the flag sets). The kernels run
    slower and some float32 transcendental ones (atan, erf, ...) differ in the last bit;
    everything the suite compares with torch or jax has a tolerance above that, and a
    comparison within eagergrad runs both sides in the same process. Set here, so in the
    processes the tests start too; a user's own XLA_FLAGS choice of either is kept, and a
    jaxlib whose XLA has no such flag (an unknown flag in XLA_FLAGS aborts the process)
    gets none: its libraries are searched for the name."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" not in flags:
        flags += " --xla_backend_optimization_level=0"
    emitters = "xla_cpu_use_fusion_emitters"
    if emitters not in flags:
        for path in glob.glob(os.path.join(os.path.dirname(jaxlib.__file__), "*.so")):
            with open(path, "rb") as f, \
                    mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                if m.find(emitters.encode()) >= 0:
                    flags += f" --{emitters}=false"
                    break
    os.environ["XLA_FLAGS"] = flags.strip()


suite_xla_flags()
