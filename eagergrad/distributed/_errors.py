"""torch.distributed's error types (torch/csrc/distributed/c10d/exception.h)."""


class DistError(RuntimeError):
    """An error of the distributed package."""


class DistBackendError(DistError):
    """An error of a collective's backend."""


class DistStoreError(DistError):
    """An error of the rendezvous store, such as a timeout waiting for the other ranks."""


class DistNetworkError(DistError):
    """A network error, such as no connection to the master within the timeout."""
