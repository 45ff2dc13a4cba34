"""torch.torch_version: `TorchVersion`, the type of `torch.__version__`, a str that compares
with version strings, tuples and `packaging` Versions by PEP 440 order (`"2.10" > "2.9"`),
falling back to plain string comparison when the other side is no valid version.
`torch.__version__` is eagergrad's own version, so `torch.__version__ >= "2.0"` is False.

>>> from eagergrad.torch_version import TorchVersion
>>> TorchVersion("2.10.0+cpu") > "2.9", TorchVersion("1.10.0a") < (1, 10)
(True, True)
"""
import itertools
import re
from collections.abc import Iterable

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is no PEP 440 version."""


# PEP 440's grammar (the regular expression of its appendix B)
_PATTERN = re.compile(r"""
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc",
        "preview": "rc"}


class _Version:
    """A PEP 440 version, ordered as `packaging.version.Version`: the release with trailing
    zeros dropped, a dev release before its pre-releases, pre before the release, post after
    it, a local label after the plain version."""

    def __init__(self, text):
        m = _PATTERN.match(text)
        if m is None:
            raise InvalidVersion(f"Invalid version: {text!r}")
        release = [int(p) for p in m["release"].split(".")]
        release = tuple(reversed(list(itertools.dropwhile(lambda p: p == 0, reversed(release)))))
        pre = (1, _PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
        dev = (1, int(m["dev_n"] or 0)) if m["dev_l"] else (2,)
        if pre is None:
            pre = (0,) if post is None and m["dev_l"] else (2,)
        post = (0,) if post is None else (1, int(post))
        local = (0,) if m["local"] is None else (1, tuple(
            (1, int(p), "") if p.isdigit() else (0, 0, p.lower())
            for p in re.split(r"[-_.]", m["local"])))
        self._key = (int(m["epoch"] or 0), release, pre, post, dev, local)

    def __eq__(self, other):
        return self._key == other._key

    def __lt__(self, other):
        return self._key < other._key

    def __le__(self, other):
        return self._key <= other._key

    def __gt__(self, other):
        return self._key > other._key

    def __ge__(self, other):
        return self._key >= other._key


def _convert_to_version(inp):
    if isinstance(inp, str):
        return _Version(inp)
    if hasattr(inp, "release") and hasattr(inp, "epoch"):  # a packaging Version
        return _Version(str(inp))
    if isinstance(inp, Iterable):  # (1, 20, 1) is "1.20.1"
        return _Version(".".join(str(item) for item in inp))
    raise InvalidVersion(inp)


class TorchVersion(str):
    """A str that compares as a version with strings, tuples and Versions (torch's
    `torch.__version__` type): `==`, `<`, `<=`, `>`, `>=` by PEP 440 order, or as strings
    when either side is no valid version; `!=` and hashing stay str's."""

    __slots__ = ()

    def _cmp_wrapper(self, cmp, method):
        try:
            return getattr(_Version(self), method)(_convert_to_version(cmp))
        except InvalidVersion:
            return getattr(super(), method)(cmp)


for _method in ["__gt__", "__lt__", "__eq__", "__ge__", "__le__"]:
    setattr(TorchVersion, _method, lambda x, y, method=_method: x._cmp_wrapper(y, method))
del _method

__version__ = TorchVersion(internal_version)
