"""SparseAdam: Adam masked to the values a sparse gradient holds. eagergrad has no sparse
tensors, so every gradient is dense, and a step with one fails as torch's does."""
from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch's SparseAdam: its constructor and checks; a step meeting a (dense) gradient
    raises torch's RuntimeError, leaving parameters and state as they are.

    >>> import eagergrad as torch
    >>> w = torch.ones(2, requires_grad=True)
    >>> opt = torch.optim.SparseAdam([w], lr=0.1)
    >>> opt.defaults["betas"]
    (0.9, 0.999)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        """Fails at the first parameter with a gradient (all are dense); returns closure()'s
        loss when none has one."""
        return self._run_step(closure, self._update)

    def _update(self, group):
        if any(p.grad is not None for p in group["params"]):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider "
                               "Adam instead")
