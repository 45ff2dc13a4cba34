"""torch.nn.functional: the functions eagergrad covers so far; every other name of
torch 2.13's namespace raises NotImplementedError naming it. The code is in nn/_functional/,
one module per family of torch's documentation."""
import warnings  # noqa: F401 - a name of torch's nn.functional too (and of this module's before)

from .._torch_names import NN_FUNCTIONAL_NAMES, nn_getattr
from ._functional.activation import (  # noqa: F401
    _get_softmax_dim, celu, celu_, elu, elu_, gelu, glu, gumbel_softmax, hardshrink, hardsigmoid,
    hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_, log_softmax, logsigmoid, mish, prelu,
    relu, relu6, relu_, rrelu, rrelu_, selu, selu_, sigmoid, silu, softmax, softmin, softplus,
    softshrink, softsign, tanh, tanhshrink, threshold, threshold_,
)
from ._functional.attention import (  # noqa: F401
    multi_head_attention_forward, scaled_dot_product_attention,
)
from ._functional.convolution import (  # noqa: F401
    conv1d, conv2d, conv3d, conv_tbc, conv_transpose1d, conv_transpose2d, conv_transpose3d, fold,
    unfold,
)
from ._functional.distance import cosine_similarity, pairwise_distance, pdist  # noqa: F401
from ._functional.dropout import (  # noqa: F401
    alpha_dropout, dropout, dropout1d, dropout2d, dropout3d, feature_alpha_dropout,
)
from ._functional.linear import (ScalingType, SwizzleType, _ScalingType,  # noqa: F401
                                 _SwizzleType, bilinear, linear)
from ._functional.loss import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cross_entropy,
    ctc_loss, gaussian_nll_loss, hinge_embedding_loss, huber_loss, kl_div, l1_loss,
    linear_cross_entropy,
    margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss, soft_margin_loss,
    triplet_margin_loss, triplet_margin_with_distance_loss,
)
from ._functional.normalization import (  # noqa: F401
    batch_norm, group_norm, instance_norm, layer_norm, local_response_norm, normalize, rms_norm,
)
from ._functional.pooling import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d, avg_pool3d,
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices, lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d,
    max_pool1d_with_indices, max_pool2d, max_pool2d_with_indices, max_pool3d,
    max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
)
from ._functional.sparse import embedding, embedding_bag, one_hot  # noqa: F401
from ._functional.vision import (  # noqa: F401
    affine_grid, channel_shuffle, grid_sample, interpolate, native_channel_shuffle, pad,
    pixel_shuffle, pixel_unshuffle, upsample, upsample_bilinear, upsample_nearest,
)
from ..overrides import (handle_torch_function, has_torch_function,  # noqa: F401
                         has_torch_function_unary, has_torch_function_variadic)
from ..tensor import Tensor  # noqa: F401 - a name of torch's nn.functional too
from . import grad  # noqa: F401 - torch.nn.grad, as torch's nn.functional has it
from ._functional._utils import assert_int_or_pair, boolean_dispatch  # noqa: F401

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


class _BroadcastingListCls:
    """torch's BroadcastingList1/2/3: TorchScript annotations (`BroadcastingList2[int]`, an
    int or a list of two), None when subscripted, as torch's."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingListCls()

__getattr__ = nn_getattr("eagergrad.nn.functional", "torch.nn.functional",
                         NN_FUNCTIONAL_NAMES)

# torch.nn.functional's functions name it as their module (pickles of a module holding one,
# an activation=F.relu, refer to it there): so do these, whose code is in _functional/
for _f in list(globals().values()):
    if getattr(_f, "__module__", "").startswith("eagergrad.nn._functional."):
        _f.__module__ = __name__
del _f
