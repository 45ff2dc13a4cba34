"""eagergrad.utils.data: torch.utils.data's datasets, samplers and DataLoader (workers are
processes, as torch's).

>>> import eagergrad as torch
>>> from eagergrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(6.0).reshape(3, 2), torch.tensor([0, 1, 0]))
>>> x, y = next(iter(DataLoader(ds, batch_size=2)))
>>> x.shape, y.tolist()
(torch.Size([2, 2]), [0, 1])
"""
from ..._torch_names import module_getattr
from ._collate import default_collate, default_convert
from ._worker import WorkerInfo, get_worker_info
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split"]

__getattr__ = module_getattr("eagergrad.utils.data", "torch.utils.data")
