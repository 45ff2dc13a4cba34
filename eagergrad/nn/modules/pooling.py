"""torch.nn.modules.pooling: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                       AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d)
from ..pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _MaxPoolNd  # noqa: F401

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]
