"""torch.nn.modules.dropout: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from ..dropout import _DropoutNd  # noqa: F401

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
