"""torch.nn.utils.convert_parameters: parameters_to_vector, vector_to_parameters."""
from ...ops.shape import cat
from ...tensor import Tensor, typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (with their graph).

    >>> import eagergrad as torch
    >>> torch.nn.utils.parameters_to_vector([torch.ones(2, 2), torch.zeros(1)])
    tensor([1., 1., 1., 1., 0.])
    """
    return cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec, parameters):
    """Set each parameter's .data from consecutive slices of `vec`.

    >>> import eagergrad as torch
    >>> w = torch.zeros(2, 2)
    >>> torch.nn.utils.vector_to_parameters(torch.arange(4.0), [w]); w
    tensor([[0., 1.],
            [2., 3.]])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
