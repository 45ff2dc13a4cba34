"""The persistent XLA compilation cache (eagergrad/_compile_cache.py): on by default in a
versioned subdirectory, a second process gets its kernels from it (jax's cache-hit
events) with bitwise identical results, EAGERGRAD_COMPILATION_CACHE and
set_compilation_cache turn it off or move it, a user's own jax cache directory is left
alone, and an unusable directory does not stop a program. Each check runs in a fresh
process (the cache is process-wide jax configuration); conftest turns the cache off for
the suite, so the children here start from an environment without it."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # (whole processes)

_PRELUDE = """
import json, os, sys, warnings
import jax
from jax import monitoring

HITS = [0]
monitoring.register_event_listener(
    lambda e, **k: HITS.__setitem__(0, HITS[0] + (e == "/jax/compilation_cache/cache_hits")))

import eagergrad as torch
from eagergrad import _cache, _compile_cache


def work(n=3):
    torch.manual_seed(0)
    x = torch.randn(n, 4, requires_grad=True)
    w = torch.randn(4, 2, requires_grad=True)
    loss = (x @ w).tanh().pow(2).mean()
    loss.backward()
    return [t.numpy().tobytes().hex() for t in (loss.detach(), x.grad, w.grad)]


def report(**kw):
    kw.update(compiles=_cache.EXECUTABLES.compiles, hits=HITS[0], dir=_compile_cache.current(),
              jax_dir=jax.config.jax_compilation_cache_dir)
    print("RESULT " + json.dumps(kw))
"""

_CLEARED = ("EAGERGRAD_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR",
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "JAX_ENABLE_COMPILATION_CACHE")


def _run(body, home, prefix=(), pre="", **env):
    """Run `pre` + the prelude + body in a fresh python (its command line after `prefix`)
    with XDG_CACHE_HOME=home and `env`; the dict the body reported."""
    e = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    e["XDG_CACHE_HOME"] = str(home)
    e.update({k: str(v) for k, v in env.items()})
    out = subprocess.run([*prefix, sys.executable, "-c", pre + _PRELUDE + textwrap.dedent(body)],
                         capture_output=True, text=True, timeout=300, env=e)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    assert len(lines) == 1, out.stdout + out.stderr[-3000:]
    res = json.loads(lines[0][len("RESULT "):])
    res["stderr"] = out.stderr
    return res


def _entries(d):
    return sorted(f for f in os.listdir(d) if f.endswith("-cache")) if os.path.isdir(d) else []


def _all_entries(root):
    return [f for _, _, fs in os.walk(root) for f in fs if f.endswith("-cache")]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A first process with the cache on by default (XDG_CACHE_HOME=home): its report."""
    home = tmp_path_factory.mktemp("home")
    first = _run("report(result=work(), tag=_compile_cache.version_tag())", home)
    first["home"] = home
    return first


def test_first_run_fills_the_versioned_default_dir(filled):
    import jax
    import jaxlib

    tag = filled["tag"]
    assert tag == f"eagergrad-0.1.0_jax-{jax.__version__}_jaxlib-{jaxlib.__version__}"
    want = os.path.join(filled["home"], "eagergrad", "xla", tag)
    assert filled["dir"] == filled["jax_dir"] == want
    assert filled["compiles"] > 0
    # a compile event is an XLA compile, written, or a hit of an identical kernel that
    # this process compiled and wrote before
    assert len(_entries(want)) == filled["compiles"] - filled["hits"]


def test_second_run_loads_every_kernel_bitwise_same(filled):
    before = _entries(filled["dir"])
    second = _run("report(result=work())", filled["home"])
    # jax fires its backend-compile event (EXECUTABLES.compiles) on a cache hit too
    assert second["compiles"] == filled["compiles"]
    assert second["hits"] == second["compiles"]
    assert second["result"] == filled["result"]
    assert _entries(filled["dir"]) == before


@pytest.mark.parametrize("value", ["0", "off", ""])
def test_env_turns_it_off(tmp_path, value):
    r = _run("report(result=work())", tmp_path, EAGERGRAD_COMPILATION_CACHE=value)
    assert r["dir"] is None and r["jax_dir"] is None
    assert r["hits"] == 0 and r["compiles"] > 0
    assert _all_entries(tmp_path) == []


def test_env_path_puts_it_there(tmp_path, filled):
    r = _run("report(result=work())", tmp_path / "home",
             EAGERGRAD_COMPILATION_CACHE=tmp_path / "elsewhere")
    assert r["dir"] == str(tmp_path / "elsewhere" / filled["tag"])
    assert _entries(r["dir"]) and _all_entries(tmp_path / "home") == []
    assert r["result"] == filled["result"]


def test_set_compilation_cache_moves_and_turns_off(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    r = _run(f"""
    counts, dirs = [], []
    def step(n):
        work(n)
        counts.append([len([f for f in os.listdir(d) if f.endswith("-cache")])
                       if os.path.isdir(d) else 0 for d in dirs])
    step(2)                                   # off: compiled, nothing written
    da = torch.set_compilation_cache({str(a)!r})
    db = os.path.join({str(b)!r}, os.path.basename(da))
    dirs[:] = [da, db]
    counts = [[0, 0]]
    step(5)                                   # after compiles happened: on, in a
    assert torch.set_compilation_cache({str(b)!r}) == db
    step(7)                                   # moved to b
    assert torch.set_compilation_cache(None) is None
    step(9)                                   # off again
    report(counts=counts)
    """, tmp_path / "home", EAGERGRAD_COMPILATION_CACHE="0")
    c = r["counts"]
    assert c[1][0] > 0 and c[1][1] == 0
    assert c[2][0] == c[1][0] and c[2][1] > 0
    assert c[3] == c[2]
    assert r["dir"] is None and r["jax_dir"] is None


def test_version_change_gives_a_new_dir_and_no_hits(filled):
    r = _run("""
    old = _compile_cache.version_tag()
    torch.__version__ = "99.0.dev"
    hits = HITS[0]
    new = torch.set_compilation_cache(os.path.join(os.environ["XDG_CACHE_HOME"],
                                                   "eagergrad", "xla"))
    report(old=old, new=new, result=work(), hits_before=hits)
    """, filled["home"])
    assert r["old"] == filled["tag"]
    assert os.path.basename(r["new"]) == filled["tag"].replace("eagergrad-0.1.0",
                                                                "eagergrad-99.0.dev")
    # the same kernels, compiled again into the new directory: none of the old entries read
    assert r["hits"] == r["hits_before"]
    assert _entries(r["new"]) and r["result"] == filled["result"]
    shutil.rmtree(r["new"])


@pytest.mark.parametrize("how", ["env", "config"])
def test_a_users_jax_cache_dir_is_left_alone(tmp_path, how):
    user = str(tmp_path / "users")
    body = "report(min_time=jax.config.jax_persistent_cache_min_compile_time_secs)"
    if how == "env":
        r = _run(body, tmp_path / "home", JAX_COMPILATION_CACHE_DIR=user)
    else:  # set in jax's config before importing eagergrad
        r = _run(body, tmp_path / "home",
                 pre=f"import jax; jax.config.update('jax_compilation_cache_dir', {user!r})\n")
    assert r["jax_dir"] == user and r["dir"] is None
    assert r["min_time"] == 1.0  # jax's default threshold, not ours
    assert _all_entries(tmp_path / "home") == []


def test_a_dir_that_cannot_be_made_leaves_the_cache_off(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = _run("report(result=work())", tmp_path, EAGERGRAD_COMPILATION_CACHE=blocker / "xla")
    assert r["dir"] is None and r["jax_dir"] is None and r["hits"] == 0
    assert r["stderr"].count("cannot use") == 1  # one warning, at import


def test_a_chmod_555_dir_runs(tmp_path, filled):
    # as root the mode bits do not stop writes; see the next test for a real read-only dir
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    try:
        r = _run("report(result=work())", tmp_path, EAGERGRAD_COMPILATION_CACHE=d)
        assert r["result"] == filled["result"]
        assert "Error writing persistent compilation cache" not in r["stderr"]
    finally:
        d.chmod(0o755)


_NO_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0
                         and shutil.which("setpriv")),
                    reason="needs root and setpriv to take away root's right to write")
def test_a_read_only_cache_is_read_and_not_written(tmp_path, filled):
    # filled by a first process, then read-only for a root process without
    # CAP_DAC_OVERRIDE (filled in place: jax's cache key holds the directory's path)
    root = tmp_path / "xla"
    first = _run("report(result=work())", tmp_path / "home", EAGERGRAD_COMPILATION_CACHE=root)
    sub = root / filled["tag"]
    written = _entries(sub)
    assert written and first["dir"] == str(sub)
    for p in [*sub.iterdir()]:
        p.chmod(0o444)
    sub.chmod(0o555)
    root.chmod(0o555)
    try:
        r = _run("""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = work()
            work(6)  # new kernels: compiled, not written
        report(result=result, warned=[str(w.message) for w in caught],
               min_time=jax.config.jax_persistent_cache_min_compile_time_secs)
        """, tmp_path / "home", prefix=_NO_DAC, EAGERGRAD_COMPILATION_CACHE=root)
        assert r["dir"] == str(sub) and r["min_time"] == float("inf")
        assert r["hits"] >= len(written)
        assert r["result"] == first["result"] == filled["result"]
        assert r["warned"] == [] and "Error" not in r["stderr"]
        assert _entries(sub) == written
    finally:
        root.chmod(0o755)
        sub.chmod(0o755)


_LEVEL = """
from jax._src import compiler
opts = compiler.get_compile_options(num_replicas=1, num_partitions=1)
report(level=opts.executable_build_options.debug_options.xla_backend_optimization_level,
       flags=os.environ.get("XLA_FLAGS"), out=work())
"""


def test_fast_compile_level_by_default_and_the_users_kept(tmp_path):
    """NOTE [compile options]: importing eagergrad sets XLA's backend optimisation level 1
    (jax's default is 3) without dropping the user's other flags; a level the user chose
    stays; the results are bitwise the same either way."""
    ours = _run(_LEVEL, tmp_path, EAGERGRAD_COMPILATION_CACHE="0",
                XLA_FLAGS="--xla_cpu_enable_fast_math=false")
    assert ours["level"] == 1 and "--xla_cpu_enable_fast_math=false" in ours["flags"]
    theirs = _run(_LEVEL, tmp_path, EAGERGRAD_COMPILATION_CACHE="0",
                  XLA_FLAGS="--xla_backend_optimization_level=3")
    assert theirs["level"] == 3 and theirs["flags"] == "--xla_backend_optimization_level=3"
    assert ours["out"] == theirs["out"]
