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
from . import functional, init, modules, parameter, utils  # noqa: F401 - modules: torch.nn.modules
from .modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                                 Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
                                 MultiheadAttention, PReLU, RReLU, ReLU, ReLU6, SiLU, Sigmoid,
                                 Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
                                 Tanhshrink, Threshold)
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, LazyConv1d,
                           LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d)
from .modules.distance import CosineSimilarity, PairwiseDistance
from .modules.dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                              FeatureAlphaDropout)
from .modules.flatten import Flatten, Unflatten
from .modules.fold import Fold, Unfold
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .modules.linear import Bilinear, Identity, LazyLinear, Linear
from .modules.loss import (BCELoss, BCEWithLogitsLoss, CTCLoss, CosineEmbeddingLoss,
                           CrossEntropyLoss, GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss,
                           KLDivLoss, L1Loss, MSELoss, MarginRankingLoss, MultiLabelMarginLoss,
                           MultiLabelSoftMarginLoss, MultiMarginLoss, NLLLoss, PoissonNLLLoss,
                           SmoothL1Loss, SoftMarginLoss, TripletMarginLoss,
                           TripletMarginWithDistanceLoss)
from .modules.module import Module
from .modules.normalization import GroupNorm, LayerNorm, RMSNorm
from .modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                              ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                              ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                              ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from .modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d,
                              AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d)
from .modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules.sparse import Embedding, EmbeddingBag
from .modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                  TransformerEncoder, TransformerEncoderLayer)
from .modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AlphaDropout", "AvgPool1d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
           "BatchNorm2d", "BatchNorm3d", "Bilinear", "Buffer", "CELU", "CTCLoss", "CircularPad1d",
           "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "CosineEmbeddingLoss", "CosineSimilarity", "CrossEntropyLoss", "Dropout", "Dropout1d",
           "Dropout2d", "Dropout3d", "ELU", "Embedding", "EmbeddingBag", "FeatureAlphaDropout",
           "Flatten", "Fold", "GELU", "GLU", "GRU", "GRUCell", "GaussianNLLLoss", "GroupNorm",
           "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "HingeEmbeddingLoss", "HuberLoss",
           "Identity", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "KLDivLoss", "L1Loss",
           "LSTM", "LSTMCell", "LayerNorm", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyLinear", "LeakyReLU", "Linear",
           "LogSigmoid", "LogSoftmax", "MSELoss", "MarginRankingLoss", "MaxPool1d", "MaxPool2d",
           "Mish", "Module", "ModuleDict", "ModuleList", "MultiLabelMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "MultiheadAttention", "NLLLoss", "PReLU",
           "PairwiseDistance", "Parameter", "ParameterDict", "ParameterList", "PixelShuffle",
           "PixelUnshuffle", "PoissonNLLLoss", "RMSNorm", "RNN", "RNNBase", "RNNCell",
           "RNNCellBase", "RReLU", "ReLU", "ReLU6", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "SELU",
           "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "SoftMarginLoss", "Softmax",
           "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink",
           "Threshold", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
           "TransformerEncoder", "TransformerEncoderLayer", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "Unflatten", "Unfold", "UninitializedBuffer",
           "UninitializedParameter", "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
           "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "functional", "init", "parameter", "utils"]

__getattr__ = nn_getattr("eagergrad.nn", "torch.nn", NN_NAMES)
