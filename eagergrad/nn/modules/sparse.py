"""torch.nn.modules.sparse: a thin re-export of classes whose code is in eagergrad/nn/."""
from ..sparse import Embedding, EmbeddingBag

__all__ = ["Embedding", "EmbeddingBag"]
