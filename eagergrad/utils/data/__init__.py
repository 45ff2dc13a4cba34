"""eagergrad.utils.data: torch.utils.data's datasets, samplers, DataLoader (in-process).

>>> import eagergrad as torch
>>> from eagergrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(6.0).reshape(3, 2), torch.tensor([0, 1, 0]))
>>> x, y = next(iter(DataLoader(ds, batch_size=2)))
>>> x.shape, y.tolist()
(torch.Size([2, 2]), [0, 1])
"""
from ..._torch_names import module_getattr
from ._collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
           "TensorDataset", "default_collate", "default_convert", "random_split"]

__getattr__ = module_getattr("eagergrad.utils.data", "torch.utils.data")
