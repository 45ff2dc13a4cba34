"""torch.nn: Module, Parameter, containers, layers; `functional` and `init`.

Every other name of torch 2.13's torch.nn raises NotImplementedError naming it.

>>> import eagergrad as torch
>>> net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Tanh())
>>> net
Sequential(
  (0): Flatten(start_dim=1, end_dim=-1)
  (1): Tanh()
)
"""
from .._torch_names import NN_NAMES, nn_getattr
from . import functional, init, parameter, utils
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, GaussianNLLLoss, HuberLoss,
                   KLDivLoss, L1Loss, MarginRankingLoss, MSELoss, NLLLoss, PoissonNLLLoss,
                   SmoothL1Loss)
from .loss import (CosineEmbeddingLoss, CTCLoss, HingeEmbeddingLoss, MultiLabelMarginLoss,  # noqa: F401
                   MultiLabelSoftMarginLoss, MultiMarginLoss, SoftMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss)
_more_losses = ["CTCLoss", "CosineEmbeddingLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss",
                "MultiLabelSoftMarginLoss", "MultiMarginLoss", "SoftMarginLoss",
                "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
from .layers import Flatten, Identity, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh, Unflatten
from .linear import Bilinear, Linear
from .module import Module
from .normalization import LayerNorm, RMSNorm
from .parameter import Buffer, Parameter
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d,
                      AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d)
from .sparse import Embedding, EmbeddingBag

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AvgPool1d", "AvgPool2d", "BCELoss",
           "BCEWithLogitsLoss", "Bilinear", "Buffer", "Conv1d", "Conv2d", "Conv3d",
           "ConvTranspose1d", "ConvTranspose2d", "CrossEntropyLoss", "Dropout", "Embedding",
           "EmbeddingBag",
           "Flatten", "GaussianNLLLoss", "HuberLoss", "Identity", "KLDivLoss", "L1Loss",
           "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MarginRankingLoss", "MaxPool1d",
           "MaxPool2d", "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter",
           "ParameterDict", "ParameterList", "PoissonNLLLoss", "RMSNorm", "ReLU", "Sequential",
           "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "Unflatten", "functional", "init",
           "parameter", "utils"]

from . import activation, batchnorm, rnn, transformer, upsampling, padding, lazy, distance  # noqa: E402,E501
from .activation import *  # noqa: F401,F403,E402
from .batchnorm import *  # noqa: F401,F403,E402
from .rnn import *  # noqa: F401,F403,E402
from .transformer import *  # noqa: F401,F403,E402
from .upsampling import *  # noqa: F401,F403,E402
from .padding import *  # noqa: F401,F403,E402
from .lazy import *  # noqa: F401,F403,E402
from .distance import *  # noqa: F401,F403,E402
__all__ += _more_losses
del _more_losses
for _m in (activation, batchnorm, rnn, transformer, upsampling, padding, lazy, distance):
    __all__ += _m.__all__
del _m

from . import modules  # noqa: E402,F401 - torch's nn.modules.<file> paths (pickle)

__getattr__ = nn_getattr("eagergrad.nn", "torch.nn", NN_NAMES)
