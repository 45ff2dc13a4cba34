"""torch.hub: load entrypoints from a repository's `hubconf.py` (a GitHub repository,
downloaded and cached under `get_dir()`, or a local directory) and checkpoints from URLs
(cached under `get_dir()/checkpoints`, read with `eagergrad.load`).

>>> import eagergrad as torch, os, tempfile
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "hubconf.py"), "w") as f:
...     _ = f.write("def double(x):\\n    '''Twice x.'''\\n    return 2 * x\\n")
>>> torch.hub.load(d, "double", 21, source="local")
42
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse


def urlopen(url):  # (urllib.request and tqdm are imported when used: import time)
    from urllib.request import urlopen as _urlopen
    return _urlopen(url)


def Request(url, headers):
    from urllib.request import Request as _Request
    return _Request(url, headers=headers)


def _progress_bar():
    try:
        from tqdm import tqdm
    except ImportError:
        return _Progress
    return tqdm

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # resnet18-bfd8deac.pth -> bfd8deac
_PATH_SEP_PATTERN = re.compile(r"[/\\]")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


class _Progress:
    """A byte counter on stderr (tqdm's interface, for when tqdm is missing)."""

    def __init__(self, total=None, disable=False, **kwargs):
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        msg = f"{self.n:.1f} bytes" if self.total is None else \
            f"{100 * self.n / float(self.total):.1f}%"
        sys.stderr.write("\r" + msg)
        sys.stderr.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.disable:
            sys.stderr.write("\n")


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub's cache directory: set_dir()'s, else `$TORCH_HOME/hub` (TORCH_HOME defaults
    to `$XDG_CACHE_HOME/torch`, XDG_CACHE_HOME to `~/.cache`)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Set the hub's cache directory (`~` expanded)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def _remove_if_exists(path):
    if os.path.exists(path):
        if os.path.isfile(path):
            os.remove(path)
        else:
            shutil.rmtree(path)


def _safe_extract_zip(zip_file, extract_to):
    """Extract every member, refusing absolute paths and paths leaving `extract_to`."""
    root = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or \
                (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP_PATTERN, name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, root)


def _git_archive_link(repo_owner, repo_name, ref):
    return f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"


def _load_attr_from_module(module, func_name):
    return getattr(module, func_name) if func_name in dir(module) else None


def _parse_repo_info(github):
    """(owner, name, ref) of 'owner/name[:ref]'; without a ref, the default branch: main
    if it exists on GitHub, else master (offline: whichever is cached)."""
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for candidate in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{candidate}"):
                    ref = candidate
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the "
                                   f"repo could not be found in the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _read_url(url):
    with urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    """ValueError unless `ref` is a branch, tag or commit of the repository itself."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{repo_owner}/{repo_name}/{kind}" \
                  f"?per_page=100&page={page}"
            try:
                response = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:  # (retry without a token lacking permissions)
                headers.pop("Authorization", None)
                response = json.loads(_read_url(Request(url, headers=headers)))
            if not response:
                break
            if any(b["name"] == ref or b["commit"]["sha"].startswith(ref) for b in response):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. "
                     "If it's a commit from a forked repo, please call hub.load() with forked "
                     "repo directly.")


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    """torch's trust check: trusted owners, the `trusted_list` file, repositories already
    downloaded; otherwise ask (trust_repo False or "check")."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(path):
        Path(path).touch()
    with open(path) as f:
        trusted = tuple(line.strip() for line in f)
    downloaded = next(os.walk(hub_dir))[1]
    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = owner_name in trusted or owner_name_branch in downloaded or \
        repo_owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add "
            "it to the trusted list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # (torch's type)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                         skip_validation=False):
    """The directory of the repository's code: `get_dir()/<owner>_<name>_<ref>`,
    downloaded (GitHub's zipball) unless cached."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, normalized_br + ".zip")
    _remove_if_exists(cached_file)
    try:
        url = _git_archive_link(repo_owner, repo_name, ref)
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        download_url_to_file(url, cached_file, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        warnings.warn(f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in "
                      "the repo? Torchhub will now assume that it's a branch. You can "
                      "disambiguate tags and branches by explicitly passing "
                      "refs/heads/branch_name or refs/tags/tag_name as the ref. That might "
                      "require using skip_validation=True.", stacklevel=2)
        url = _git_archive_link(repo_owner, repo_name, ref=f"refs/heads/{ref}")
        download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as z:
        extracted = os.path.join(hub_dir, z.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(z, hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _check_dependencies(m):
    deps = _load_attr_from_module(m, VAR_DEPENDENCY)
    if deps is not None:
        absent = [p for p in deps if importlib.util.find_spec(p) is None]
        if absent:
            raise RuntimeError(f"Missing dependencies: {', '.join(absent)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github, force_reload=False, skip_validation=False, trust_repo="check",
         verbose=True):
    """The callable entrypoints (names not starting with '_') of the repository's
    hubconf.py; github: 'owner/name[:ref]'."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    module = _hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of the repository's entrypoint `model`."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    return _load_entry_from_hubconf(_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """`model(*args, **kwargs)`, the entrypoint of the repository's hubconf.py: source
    'github' ('owner/name[:ref]', downloaded and cached) or 'local' (a directory)."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to the path `dst` (through a temporary file, moved once complete);
    with hash_prefix, the SHA256 of the content must start with it (RuntimeError)."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # (closed in finally)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u:
            lengths = u.info().get_all("Content-Length")
            size = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar()(total=size, disable=not progress, unit="B", unit_scale=True,
                     unit_divisor=1024) as pbar:
                while True:
                    buf = u.read(READ_DATA_CHUNK)
                    if not buf:
                        break
                    f.write(buf)
                    if sha256 is not None:
                        sha256.update(buf)
                    pbar.update(len(buf))
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                       f'"{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    """A zip of one file (torch.save < 1.6 zipped by hand), not torch's zip format."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            info = zf.infolist()
        return len(info) == 1 and not info[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as _load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return _load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at `url`, downloaded once into model_dir (default
    `get_dir()/checkpoints`, file name from the URL or file_name) and read with
    eagergrad.load. check_hash: the file name is `name-<sha256 prefix>.ext` and the
    content must match it."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path) if file_name is None else file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)
