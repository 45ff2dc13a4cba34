"""torch.nn.DataParallel on one device: a wrapper whose forward is the module's, with the
module as `.module` (so state dicts carry torch's "module." prefix). Several devices are
the distributed work's (DistributedDataParallel); asking for them raises.

>>> import eagergrad as torch
>>> net = torch.nn.DataParallel(torch.nn.Linear(2, 1))
>>> list(net.state_dict())
['module.weight', 'module.bias']
"""
from ... import accelerator
from ..._torch_names import missing
from ..modules.module import Module


def _one_device(device_ids):
    if device_ids is not None and len(device_ids) > 1:
        raise missing("torch.nn.DataParallel over several devices")


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        _one_device(device_ids)
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """torch.nn.parallel.data_parallel on one accelerator: module(*inputs, **module_kwargs);
    without one, torch's RuntimeError."""
    if not accelerator.is_available():
        raise RuntimeError("device type could not be determined")
    _one_device(device_ids)
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
