"""torch.distributed.checkpoint: save and load state dicts of DTensors and tensors, each
loaded into the layout its target has now (resharding across meshes and mesh shapes).

>>> import eagergrad as torch, tempfile
>>> import eagergrad.distributed.checkpoint as dcp
>>> path = tempfile.mkdtemp()
>>> _ = dcp.save({"w": torch.arange(4.)}, checkpoint_id=path)
>>> sd = {"w": torch.zeros(4)}
>>> dcp.load(sd, checkpoint_id=path); sd["w"]
tensor([0., 1., 2., 3.])
"""
from ._api import (  # noqa: F401
    CheckpointException, FileSystemReader, FileSystemWriter, Metadata, load, load_state_dict,
    save, save_state_dict)
from ..._torch_names import module_getattr

__getattr__ = module_getattr("eagergrad.distributed.checkpoint",
                             "torch.distributed.checkpoint")
