"""torch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations
(torch's state_dict layout: parametrizations.weight.original0/original1, or .original with
the power-iteration buffers parametrizations.weight.0._u/_v)."""
from enum import Enum, auto

import numpy as np

from ...creation import eye, randn, zeros_like
from ...engine.grad_mode import no_grad
from ...engine.hooks import RemovableHandle
from ...ops import decomp as _DC
from ...ops.compare import allclose
from ...ops.pointwise import add
from ...ops.reduce import vector_norm
from ...ops.shape import cat
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v, pow, dim):
    """torch.norm_except_dim: the p-norm over every dim but `dim` (kept as size 1)."""
    if dim == -1:
        return vector_norm(v, pow)
    return vector_norm(v, pow, dim=[d for d in range(v.dim()) if d != dim], keepdim=True)


def _weight_norm(v, g, dim):
    """torch._weight_norm's composition: v * (g / ||v||) (torch records its fused
    WeightNormInterfaceBackward0 for dim 0 and the last dim; eagergrad the composition)."""
    return v * (g / _norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize `module.<name>` as g * v / ||v|| (g = original0, v = original1).

    >>> import eagergrad as torch
    >>> m = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2))
    >>> m.parametrizations.weight.original0.shape
    torch.Size([2, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    RemovableHandle(module._load_state_dict_pre_hooks, _weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError("Expected weight to have more than 1 dimension, got "
                                 f"{weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim())
                                                if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                # (F.normalize(..., out=self._u): written in place)
                self._u.copy_(F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.mT.conj().mv(self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = (u.conj() * weight_mat.mv(v)).sum()  # torch.vdot(u, W v)
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize `module.<name>` as W / sigma(W), sigma estimated by power iteration
    (buffers _u, _v drawn from eagergrad's generator).

    >>> import eagergrad as torch
    >>> m = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(3, 2))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v', \
'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..modules import conv
        transposed = tuple(getattr(conv, f"ConvTranspose{k}d") for k in (1, 2, 3)
                           if hasattr(conv, f"ConvTranspose{k}d"))
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype)
    eps = 10.0 * n * float(np.finfo(Q.dtype.np).eps)  # torch.finfo(Q.dtype).eps
    return allclose(_mH(Q) @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR (A tall, maybe complex) with diag(R) real and non-negative."""
    X, tau = _DC.geqrf(A)
    Q = _DC.householder_product(X, tau)
    # the diagonal of X is R's (real): normalise by its signs
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


def _mH(x):
    return x.mT.conj()


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        # complex weights cannot be parametrized by reflectors (torch's Note [Householder
        # complex]: tau cannot be recovered from them)
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # X is tall (n >= k)
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embed into a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - _mH(X)  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _DC.matrix_exp(A)
            else:  # the Cayley retraction (I + A/2)(I - A/2)^{-1}
                Id = eye(n, dtype=A.dtype)
                Q = _DC.solve(add(Id, A, alpha=-0.5), add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:  # X is real here
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _DC.householder_product(A, tau)
            # the diagonal of X holds 1's and -1's, not differentiated (the int cast)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            # householder: Q orthogonalized by its QR decomposition, with diag(R) > 0
            A, tau = _DC.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            # LAPACK's tau is exactly zero for a reflection it does not use
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:  # complete Q to an n x n orthogonal matrix
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -Id, so that householder(zeros(m, n)) == eye(m, n)
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Reparametrize `module.<name>` (a matrix or a batch of matrices) as an orthogonal
    (unitary) one: orthonormal columns if tall, rows if wide. orthogonal_map is
    "matrix_exp" (default for square or complex), "cayley" or "householder" (default
    otherwise); with use_trivialization the base matrix is the buffer
    parametrizations.<name>.0.base.

    >>> import eagergrad as torch
    >>> m = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 3))
    >>> bool(torch.allclose(m.weight @ m.weight.T, torch.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
