"""torch.nn.modules.activation: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..activation import (CELU, ELU, GELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh,
                          LeakyReLU, LogSigmoid, Mish, PReLU, ReLU6, RReLU, SELU, SiLU, Softmax2d,
                          Softmin, Softplus, Softshrink, Softsign, Tanhshrink, Threshold)
from ..activation import _Activation  # noqa: F401
from ..layers import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from ..layers import _DimModule  # noqa: F401
from ..transformer import MultiheadAttention

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "MultiheadAttention", "PReLU",
           "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]
