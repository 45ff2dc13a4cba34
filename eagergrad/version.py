"""torch.version: the build facts of the installed library. eagergrad's own version (it is not
a torch build), no CUDA, ROCm or XPU; the commit is unknown to an installed package, which a
torch built outside git reports the same way.

>>> import eagergrad as torch
>>> torch.version.cuda is None
True
"""
from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']
__version__ = '0.1.0'
debug = False
cuda: Optional[str] = None
git_version = 'Unknown'
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
