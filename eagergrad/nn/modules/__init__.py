"""torch.nn.modules: one submodule per torch file, each a thin re-export of classes whose
code is in eagergrad/nn/. The classes' `__module__` names these submodules, as torch's do,
so modules pickle.

>>> import pickle, eagergrad as torch
>>> type(pickle.loads(pickle.dumps(torch.nn.Linear(2, 2)))).__module__
'eagergrad.nn.modules.linear'
"""
from . import _functions  # noqa: F401
from . import (activation, batchnorm, container, conv, distance, dropout, flatten, fold,
               instancenorm, linear, loss, module, normalization, padding, pixelshuffle, pooling,
               rnn, sparse, transformer, upsampling)
from .activation import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = []
for _m in (activation, batchnorm, container, conv, distance, dropout, flatten, fold, instancenorm,
           linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn, sparse,
           transformer, upsampling):
    __all__ += _m.__all__
del _m
