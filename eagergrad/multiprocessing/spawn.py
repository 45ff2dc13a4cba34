"""torch.multiprocessing.spawn / start_processes: start `nprocs` processes running
`fn(i, *args)`, and join them; the first one to fail makes the others stop, and its error
(the child's traceback, or its exit code or signal) is raised in the parent.
"""
import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

log = logging.getLogger(__name__)

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]


class ProcessException(Exception):
    """A failed process: which one (`error_index`) and its pid (`error_pid`)."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed by an exception of its code; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A process ended with a nonzero exit code (`exit_code`) or a signal (`signal_name`)."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return (type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                             self.signal_name))


def _set_pdeathsig(sig):
    """Linux: deliver `sig` to this process when its parent dies (prctl PR_SET_PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)
        except (OSError, AttributeError):
            pass


def _wrap(fn, i, args, error_file):
    _set_pdeathsig(signal.SIGINT)
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # SIGINT from the parent
    except Exception:  # noqa: BLE001 - sent to the parent with its traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes `start_processes(join=False)` started: `pids()`, and `join` to wait for
    them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout):
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Wait (up to `timeout` seconds) for a process to end. True when all have ended,
        False when some still run; if one failed, stop the others (SIGTERM after
        `grace_period`, SIGKILL after another) and raise ProcessRaisedException (with the
        child's traceback) or ProcessExitedException."""
        if len(self.sentinels) == 0:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting "
                            "via SIGKILL", process.pid)
                process.kill()
            process.join()

        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(
                    f"process {error_index:d} terminated with signal {name}",
                    error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                    signal_name=name)
            raise ProcessExitedException(
                f"process {error_index:d} terminated with exit code {exitcode:d}",
                error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        raise ProcessRaisedException(msg + original_trace, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """ProcessContext's name before torch 1.4 (deprecated)."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes with `start_method` running `fn(i, *args)` for i in
    range(nprocs); join them (None), or with join=False return their ProcessContext."""
    parallel = (start_method == "forkserver"
                and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1")
    mp = multiprocessing.get_context(start_method)
    error_files = [None] * nprocs
    processes = [None] * nprocs

    def start_process(i):
        # a file per process for its traceback: it exists only if the process raised
        tf = tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle",
                                         delete=False)
        tf.close()
        os.unlink(tf.name)
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        return i, process, tf.name

    if parallel:
        with ThreadPoolExecutor(max_workers=nprocs) as executor:
            started = [executor.submit(start_process, i) for i in range(nprocs)]
            for fut in as_completed(started):
                i, process, name = fut.result()
                error_files[i], processes[i] = name, process
    else:
        for i in range(nprocs):
            _, processes[i], error_files[i] = start_process(i)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawn `nprocs` processes running `fn(i, *args)` (`fn` defined at a module's top
    level, so that they can import it); join them, or return their ProcessContext. The first
    failure stops the others and is raised here with the child's traceback."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
