"""The differential-log harness shared by the hook, saved-tensor, custom Function and
anomaly/thread tests: a scenario `fn(L, log)` runs once with L=torch and once with
L=eagergrad, logging events; the two logs must be equal."""
import threading
import warnings

import numpy as np
import pytest
import torch

import eagergrad as eg


class _T:
    """A tensor seen library-independently (values compared with allclose)."""

    def __init__(self, t):
        self.values = np.asarray(t.detach().tolist())
        self.dtype = str(t.dtype).split(".")[-1]
        self.rg = t.requires_grad

    def __eq__(self, other):
        return isinstance(other, _T) and (self.dtype, self.rg, self.values.shape) == \
            (other.dtype, other.rg, other.values.shape) and \
            np.allclose(self.values, other.values, rtol=1e-5, atol=1e-6, equal_nan=True)

    def __repr__(self):
        return f"T({self.values.tolist()}, {self.dtype}{', rg' if self.rg else ''})"


def norm(v):
    if isinstance(v, (torch.Tensor, eg.Tensor)):
        return _T(v)
    if isinstance(v, (tuple, list)):
        return type(v)(norm(x) for x in v)
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, str):
        return v.replace("eagergrad.", "torch.")
    return v


class Log(list):
    """Entries are normalized when logged: a snapshot of the tensors' values then (torch
    may later update a logged gradient in place, e.g. the one AccumulateGrad stole).
    Appending is thread-safe."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def append(self, v):
        with self.lock:
            super().append(norm(v))


def run(fn, L, quiet=False):
    log = Log()
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        try:
            fn(L, log)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            log.append(("raised", type(e).__name__, str(e)))
    return list(log)


def same(fn, quiet=False):
    """fn(L, log) logs the same events with torch and eagergrad; returns torch's log."""
    t, e = run(fn, torch, quiet), run(fn, eg, quiet)
    if t != e:
        lines = [f"{'  ' if a == b else '!!'} torch={a!r}\n   eager={b!r}"
                 for a, b in zip(t, e)]
        lines += [f"!! only torch={a!r}" for a in t[len(e):]]
        lines += [f"!! only eager={b!r}" for b in e[len(t):]]
        pytest.fail("logs differ:\n" + "\n".join(lines))
    return t
