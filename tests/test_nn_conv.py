"""Conv/ConvTranspose/pooling modules and their functionals against real torch: the same
weights (copied through load_state_dict), the same inputs; outputs, the whole grad_fn graph
(names, recursively), parameter and input gradients, repr, initialisation bounds and
torch's errors. (The ops' values, graphs and second-order gradients: tests/_samples_conv.py.)"""
import pytest
from _nn_helpers import arrays, copy_weights
from conftest import same, same_error


def _walk(fn):
    if fn is None:
        return None
    return (fn.name(), [_walk(n) for n, _ in fn.next_functions])


def _run(L, make, x_shape, seed=0, dtype="float32"):
    """Module forward + backward of a weighted sum: output, graph, every gradient."""
    m = make(L)
    ps = list(m.named_parameters())
    if dtype != "float32":
        m = m.to(getattr(L, dtype))
    if ps:
        copy_weights(L, m, seed, dtype)
    x = L.tensor(arrays(seed + 1, x_shape, dtype=dtype)[0], requires_grad=True)
    out = m(x)
    first = out[0] if isinstance(out, tuple) else out
    v = L.tensor(arrays(99, tuple(first.shape), dtype=dtype)[0])
    (first * v).sum().backward()
    return out, _walk(first.grad_fn), {k: p.grad for k, p in m.named_parameters()}, x.grad


MODULES = {
    "Conv1d": (lambda L: L.nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 7)),
    "Conv1d same": (lambda L: L.nn.Conv1d(3, 4, 4, padding="same", bias=False), (2, 3, 7)),
    "Conv1d unbatched": (lambda L: L.nn.Conv1d(3, 2, 2), (3, 6)),
    "Conv2d": (lambda L: L.nn.Conv2d(3, 4, 3), (2, 3, 6, 6)),
    "Conv2d strides etc": (lambda L: L.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2),
                                                 dilation=(1, 2), groups=2), (2, 4, 6, 6)),
    "Conv2d same": (lambda L: L.nn.Conv2d(3, 4, 3, padding="same", dilation=2), (2, 3, 6, 6)),
    "Conv2d valid": (lambda L: L.nn.Conv2d(3, 4, 3, padding="valid"), (2, 3, 6, 6)),
    "Conv2d same even": (lambda L: L.nn.Conv2d(3, 4, (2, 4), padding="same"), (2, 3, 6, 6)),
    "Conv2d depthwise": (lambda L: L.nn.Conv2d(3, 6, 3, groups=3, bias=False), (2, 3, 5, 5)),
    "Conv2d unbatched": (lambda L: L.nn.Conv2d(3, 4, 3), (3, 6, 6)),
    "Conv3d": (lambda L: L.nn.Conv3d(2, 3, 2, padding=1), (1, 2, 3, 3, 3)),
    "ConvTranspose1d": (lambda L: L.nn.ConvTranspose1d(3, 2, 3, stride=2, output_padding=1),
                        (2, 3, 5)),
    "ConvTranspose2d": (lambda L: L.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                       groups=2, dilation=2), (2, 4, 4, 4)),
    "ConvTranspose2d unbatched": (lambda L: L.nn.ConvTranspose2d(3, 2, 2), (3, 4, 4)),
    "MaxPool1d": (lambda L: L.nn.MaxPool1d(3, 2, 1), (2, 3, 7)),
    "MaxPool1d indices": (lambda L: L.nn.MaxPool1d(2, return_indices=True, ceil_mode=True),
                          (2, 3, 7)),
    "MaxPool2d": (lambda L: L.nn.MaxPool2d(2), (2, 3, 6, 6)),
    "MaxPool2d indices": (lambda L: L.nn.MaxPool2d(3, 2, 1, dilation=1, return_indices=True,
                                                   ceil_mode=True), (2, 3, 6, 7)),
    "MaxPool2d dilation": (lambda L: L.nn.MaxPool2d((2, 3), (1, 2), dilation=2), (2, 2, 7, 7)),
    "AvgPool1d": (lambda L: L.nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 7)),
    "AvgPool2d": (lambda L: L.nn.AvgPool2d(2), (2, 3, 6, 6)),
    "AvgPool2d ceil pad": (lambda L: L.nn.AvgPool2d(3, 2, 1, ceil_mode=True), (2, 3, 6, 7)),
    "AvgPool2d divisor": (lambda L: L.nn.AvgPool2d(2, divisor_override=3), (3, 6, 6)),
    "AdaptiveAvgPool1d": (lambda L: L.nn.AdaptiveAvgPool1d(3), (2, 3, 7)),
    "AdaptiveAvgPool2d": (lambda L: L.nn.AdaptiveAvgPool2d((4, None)), (2, 3, 6, 7)),
    "AdaptiveAvgPool2d 1": (lambda L: L.nn.AdaptiveAvgPool2d(1), (2, 3, 6, 7)),
}


@pytest.mark.fast_first
@pytest.mark.parametrize("case", sorted(MODULES))
def test_module(case):
    make, shape = MODULES[case]
    same(lambda L: _run(L, make, shape), quiet=True)


@pytest.mark.parametrize("case", ["Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d"])
def test_module_float64(case):
    make, shape = MODULES[case]
    same(lambda L: _run(L, make, shape, dtype="float64"))


@pytest.mark.parametrize("case", sorted(MODULES))
def test_repr(case):
    same(lambda L: repr(MODULES[case][0](L)))


def test_init_bounds():
    """torch's kaiming_uniform_(a=sqrt(5)) and bias bound: U(-1/sqrt(fan_in), ...)."""
    def f(L):
        L.manual_seed(0)
        m = L.nn.Conv2d(4, 8, 3, groups=2)
        t = L.nn.ConvTranspose2d(4, 6, 3)
        bound = 1 / (2 * 9) ** 0.5
        return (tuple(m.weight.shape), bool(m.weight.abs().max() <= bound),
                bool(m.bias.abs().max() <= bound), tuple(t.weight.shape),
                float(m.weight.detach().std()) > 0.1 * bound)
    same(f)


def test_conv_transpose_output_size():
    def f(L):
        m = L.nn.ConvTranspose2d(2, 3, 3, stride=2)
        load = arrays(3, tuple(m.weight.shape), tuple(m.bias.shape))
        m.load_state_dict({"weight": L.tensor(load[0]), "bias": L.tensor(load[1])})
        x = L.tensor(arrays(4, (1, 2, 4, 4))[0])
        return m(x, output_size=[10, 10]), m(x, output_size=(1, 3, 9, 10)).shape
    same(f)


ERRORS = {
    "channels": (lambda L: L.nn.functional.conv2d(L.ones(1, 4, 8, 8), L.ones(8, 3, 3, 3)),
                 "expected input[1, 4, 8, 8] to have 3 channels, but got 4 channels instead"),
    "kernel too large": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 2, 2),
                                                          L.ones(8, 3, 3, 3)),
                         "Kernel size can't be greater than actual input size"),
    "bias size": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                   L.ones(5)), "expected bias to be"),
    "input dims": (lambda L: L.nn.functional.conv2d(L.ones(2, 3), L.ones(8, 3, 3, 3)),
                   "Expected 3D (unbatched) or 4D (batched) input to conv2d"),
    "conv1d dims": (lambda L: L.nn.functional.conv1d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3)),
                    "Expected 2D (unbatched) or 3D (batched) input to conv1d"),
    "padding string": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                        padding="foo"),
                       "Invalid padding string"),
    "same strided": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                      padding="same", stride=2),
                     "padding='same' is not supported for strided convolutions"),
    "stride 0": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                  stride=0), "non-positive stride"),
    "negative padding": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8),
                                                          L.ones(8, 3, 3, 3), padding=-1),
                         "negative padding is not supported"),
    "dilation 0": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                    dilation=0), "dilation should be greater"),
    "groups divisibility": (lambda L: L.nn.functional.conv2d(
        L.ones(1, 6, 8, 8), L.ones(3, 3, 3, 3), groups=2), "expected weight to be divisible"),
    "weight dims": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3)),
                    "expected stride to be a single integer value"),
    "stride length": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3),
                                                       stride=(1, 1, 1)),
                      "expected stride to be a single integer value or a list of 2"),
    "transposed channels": (lambda L: L.nn.functional.conv_transpose2d(
        L.ones(1, 5, 8, 8), L.ones(3, 4, 3, 3)), "Given transposed=1"),
    "output padding": (lambda L: L.nn.functional.conv_transpose2d(
        L.ones(1, 3, 8, 8), L.ones(3, 4, 3, 3), stride=2, output_padding=2),
        "output padding must be smaller than either stride or dilation"),
    "weight dtype": (lambda L: L.nn.functional.conv2d(L.ones(1, 3, 8, 8),
                                                      L.ones(8, 3, 3, 3, dtype=L.float64)),
                     "expected scalar type Float but found Double"),
    "max_pool too small": (lambda L: L.nn.functional.max_pool2d(L.ones(1, 3, 2, 2), 3),
                           "Output size is too small"),
    "max_pool pad": (lambda L: L.nn.functional.max_pool2d(L.ones(1, 3, 4, 4), 2, padding=2),
                     "pad should be at most half of effective kernel size"),
    "max_pool dims": (lambda L: L.nn.functional.max_pool2d(L.ones(3, 4), 2),
                      "non-empty 3D or 4D (batch mode) tensor expected for input"),
    "max_pool1d dims": (lambda L: L.nn.functional.max_pool1d(L.ones(3, 4, 5, 6), 2),
                        "max_pool1d: Expected 2D or 3D"),
    "avg_pool too small": (lambda L: L.nn.functional.avg_pool2d(L.ones(1, 3, 2, 2), 3),
                           "Output size is too small"),
    "adaptive dims": (lambda L: L.nn.functional.adaptive_avg_pool2d(L.ones(3, 4), 2),
                      "adaptive_avg_pool2d(): Expected 3D or 4D tensor"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    fn, phrase = ERRORS[case]
    same_error(fn, phrase)


MODULE_ERRORS = {
    "groups": (lambda L: L.nn.Conv2d(3, 4, 3, groups=2),
               "in_channels must be divisible by groups"),
    "padding string": (lambda L: L.nn.Conv2d(3, 4, 3, padding="full"), "Invalid padding string"),
    "same strided": (lambda L: L.nn.Conv2d(3, 4, 3, padding="same", stride=2),
                     "padding='same' is not supported for strided convolutions"),
    "padding mode": (lambda L: L.nn.Conv2d(3, 4, 3, padding_mode="mirror"),
                     "padding_mode must be one of"),
    "transposed padding mode": (lambda L: L.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
                                'Only "zeros" padding mode is supported'),
}


@pytest.mark.parametrize("case", sorted(MODULE_ERRORS))
def test_module_errors(case):
    fn, phrase = MODULE_ERRORS[case]
    same_error(fn, phrase, exc=ValueError)


def test_padding_mode_pads_first():
    # (padding_mode is implemented with F.pad; tests/test_nn_spatial.py compares it with torch)
    import eagergrad as eg
    m = eg.nn.Conv2d(3, 4, 3, padding_mode="reflect", padding=1)
    x = eg.ones(1, 3, 5, 5, requires_grad=True)
    assert m(x).grad_fn.next_functions[0][0].name() == "ReflectionPad2DBackward0"
