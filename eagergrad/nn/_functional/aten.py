"""The torch.<name> functions of the nn.functional ops (torch.conv2d, torch.max_pool2d,
torch.dropout, ...): ATen's signatures, which differ from nn.functional's in a few
arguments (dropout's `train`, pooling without `return_indices`).

>>> import eagergrad as torch
>>> torch.max_pool1d(torch.arange(4.).view(1, 4), 2)
tensor([[1., 3.]])
"""
from .convolution import (conv1d, conv2d, conv3d, conv_transpose1d,
                          conv_transpose2d, conv_transpose3d)
from .dropout import _noise_dropout, _check_p
from .linear import bilinear
from .normalization import rms_norm  # (torch.rms_norm is F.rms_norm)
from .pooling import adaptive_avg_pool1d, avg_pool1d
from .pooling import max_pool1d as _max_pool1d
from .pooling import max_pool1d_with_indices as _max_pool1d_with_indices
from .pooling import max_pool2d as _max_pool2d
from .pooling import max_pool3d as _max_pool3d


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return _max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _max_pool1d_with_indices(input, kernel_size, stride or None, padding, dilation,
                                    ceil_mode)


def _dropout(feature, alpha, inplace):
    def f(input, p, train):
        _check_p(p)
        out = _noise_dropout(input, p, train, inplace, feature, alpha)
        return out
    return f


dropout = _dropout(False, False, False)
dropout_ = _dropout(False, False, True)
feature_dropout = _dropout(True, False, False)
feature_dropout_ = _dropout(True, False, True)
alpha_dropout = _dropout(False, True, False)
alpha_dropout_ = _dropout(False, True, True)
feature_alpha_dropout = _dropout(True, True, False)
feature_alpha_dropout_ = _dropout(True, True, True)
for _f, _n in ((dropout, "dropout"), (dropout_, "dropout_"),
               (feature_dropout, "feature_dropout"), (feature_dropout_, "feature_dropout_"),
               (alpha_dropout, "alpha_dropout"), (alpha_dropout_, "alpha_dropout_"),
               (feature_alpha_dropout, "feature_alpha_dropout"),
               (feature_alpha_dropout_, "feature_alpha_dropout_")):
    _f.__name__ = _f.__qualname__ = _n
del _f, _n

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "bilinear", "adaptive_avg_pool1d", "avg_pool1d", "max_pool1d",
           "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "dropout", "dropout_",
           "feature_dropout", "feature_dropout_", "alpha_dropout", "alpha_dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_", "rms_norm"]
