"""torch.hub against torch's: the cache directory ($TORCH_HOME, set_dir), checkpoints from
file:// URLs (cached, hash-checked, read with eagergrad.load), local hubconf.py
entrypoints, and the GitHub path's cache (a repository already downloaded: no network)."""
import hashlib
import os
import sys

import pytest
import torch

import eagergrad as eg

LIBS = (torch, eg)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh $TORCH_HOME, and each hub's set_dir() undone."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    for m in LIBS:
        monkeypatch.setattr(m.hub, "_hub_dir", None)
    return tmp_path


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return (type(e).__name__, str(e))


def test_dirs(home, monkeypatch):
    out = []
    for m in LIBS:
        got = [m.hub.get_dir() == str(home / "home" / "hub")]
        monkeypatch.delenv("TORCH_HOME")
        monkeypatch.setenv("XDG_CACHE_HOME", str(home / "xdg"))
        got.append(m.hub.get_dir() == str(home / "xdg" / "torch" / "hub"))
        m.hub.set_dir("~/somewhere")
        got.append(m.hub.get_dir() == os.path.expanduser("~/somewhere"))
        monkeypatch.setenv("TORCH_HOME", str(home / "home"))
        monkeypatch.setattr(m.hub, "_hub_dir", None)
        out.append(got)
    assert out[0] == out[1] == [True, True, True]


def test_state_dict_from_file_url(home, capsys):
    src = home / "w.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "n": torch.tensor(3)}, src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    good = home / f"weights-{digest[:10]}.pt"
    bad = home / "weights-deadbeef.pt"
    src.rename(good)
    bad.write_bytes(good.read_bytes())
    results = []
    for m in LIBS:
        ckpt = os.path.join(m.hub.get_dir(), "checkpoints")
        sd = m.hub.load_state_dict_from_url("file://" + str(good), check_hash=True,
                                            progress=False)
        out = [{k: (v.tolist(), str(v.dtype).split(".")[1]) for k, v in sd.items()},
               sorted(os.listdir(ckpt))]
        good.rename(home / "moved.pt")  # a second call reads the cache, not the URL
        sd2 = m.hub.load_state_dict_from_url("file://" + str(good), progress=False)
        (home / "moved.pt").rename(good)
        out.append(sd2["w"].tolist())
        out.append(_outcome(lambda: m.hub.load_state_dict_from_url(
            "file://" + str(bad), check_hash=True, progress=False)))
        out.append(sorted(os.listdir(ckpt)))  # (no partial file left)
        other = home / f"other_{m.__name__}"
        sd3 = m.hub.load_state_dict_from_url("file://" + str(good), model_dir=str(other),
                                             file_name="named.pt", progress=False)
        out += [sorted(os.listdir(other)), sd3["n"].item()]
        os.rename(ckpt, ckpt + "." + m.__name__)  # (the next library downloads afresh)
        results.append(out)
    assert results[0] == results[1]
    assert "Downloading:" in capsys.readouterr().out
    assert isinstance(eg.hub.load_state_dict_from_url("file://" + str(good),
                                                      progress=False)["w"], eg.Tensor)


def test_download_url_to_file(home):
    src = home / "blob.bin"
    src.write_bytes(bytes(range(256)) * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    out = []
    for m in LIBS:
        dst = home / f"copy_{m.__name__}.bin"
        m.hub.download_url_to_file("file://" + str(src), str(dst), hash_prefix=digest[:8],
                                   progress=False)
        bad = home / f"bad_{m.__name__}.bin"
        err = _outcome(lambda: m.hub.download_url_to_file(
            "file://" + str(src), str(bad), hash_prefix="0000", progress=False))
        out.append((dst.read_bytes() == src.read_bytes(), err[0],
                    err[1].replace(digest, "<digest>"), bad.exists(),
                    sorted(p for p in os.listdir(home) if p.endswith(".partial"))))
    assert out[0] == out[1]


def _write_repo(path):
    path.mkdir(parents=True)
    (path / "hubconf.py").write_text(
        "import helper\n"
        "dependencies = ['os', 'json']\n"
        "def line(n, scale=1.0):\n    '''Points of a line.'''\n"
        "    return [scale * helper.one() * i for i in range(n)]\n"
        "def _private():\n    pass\n"
        "CONSTANT = 3\n"
        "class Model:\n    '''A model.'''\n    def __init__(self, k):\n        self.k = k\n")
    (path / "helper.py").write_text("def one():\n    return 1.0\n")


def test_local_hubconf(home):
    _write_repo(home / "repo")
    (home / "needs").mkdir()
    (home / "needs" / "hubconf.py").write_text("dependencies = ['no_such_pkg_xyz']\n"
                                               "def f():\n    return 1\n")
    out = []
    for m in LIBS:
        r = str(home / "repo")
        out.append([m.hub.load(r, "line", 3, source="local", scale=2.0),
                    m.hub.load(r, "Model", 5, source="LOCAL").k,
                    _outcome(lambda: m.hub.load(r, "nothing", source="local")),
                    _outcome(lambda: m.hub.load(r, "CONSTANT", source="local")),
                    _outcome(lambda: m.hub.load(r, 3, source="local")),
                    _outcome(lambda: m.hub.load(r, "line", source="svn")),
                    _outcome(lambda: m.hub.load(str(home / "needs"), "f", source="local")),
                    r in sys.path])
        sys.modules.pop("helper", None)
    assert out[0] == out[1]


def test_github_cached_repo(home, capsys):
    """The GitHub path when the repository is in the cache: `owner_name_ref` under
    get_dir() (trusted: already downloaded), no network."""
    out = []
    for m in LIBS:
        _write_repo(home / "home" / "hub" / "someone_models_v1.0")
        out.append([m.hub.list("someone/models:v1.0"),
                    m.hub.help("someone/models:v1.0", "line"),
                    m.hub.load("someone/models:v1.0", "line", 2, verbose=False),
                    m.hub.load("someone/models:v1.0", "Model", k=7, trust_repo=True).k,
                    (home / "home" / "hub" / "trusted_list").read_text()])
        err = capsys.readouterr().err
        out[-1].append(err.count("Using cache found in"))
        sys.modules.pop("helper", None)
        os.rename(home / "home", home / f"home_{m.__name__}")
    assert out[0] == out[1]
    assert out[1][0] == ["Model", "line"]


def test_zipped_checkpoint(home):
    """A zip holding one saved file (the pre-1.6 habit): extracted next to it and loaded,
    with torch's FutureWarning."""
    import zipfile
    inner = home / "inner.pt"
    torch.save({"b": torch.ones(2)}, inner)
    with zipfile.ZipFile(home / "ckpt.zip", "w") as z:
        z.write(inner, "inner.pt")
    out = []
    for m in LIBS:
        d = home / f"models_{m.__name__}"
        with pytest.warns(FutureWarning, match="Falling back to the old format"):
            sd = m.hub.load_state_dict_from_url("file://" + str(home / "ckpt.zip"),
                                                model_dir=str(d), progress=False)
        out.append((sd["b"].tolist(), sorted(os.listdir(d))))
    assert out[0] == out[1] == ([1.0, 1.0], ["ckpt.zip", "inner.pt"])
