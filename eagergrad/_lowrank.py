"""torch.svd_lowrank and torch.pca_lowrank (torch/_lowrank.py), and the helpers of
torch/_linalg_utils.py they and lobpcg share: Halko et al.'s randomized range finder,
composed from eagergrad ops (randn, matmul, linalg.qr, linalg.svd), so autograd goes
through them as through torch's. The random matrices come from eagergrad's generator, so
results are torch's in distribution, not bit for bit.

>>> import eagergrad as torch
>>> U, S, V = torch.svd_lowrank(torch.randn(5, 4), q=2)
>>> U.shape, S.shape, V.shape
(torch.Size([5, 2]), torch.Size([2]), torch.Size([4, 2]))
"""
from . import _dtypes as D
from . import _layouts
from . import linalg
from .creation import randn
from .overrides import handle_torch_function, has_torch_function
from .tensor import Tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


# ---- torch/_linalg_utils.py ---------------------------------------------------------------
def is_sparse(A):
    """Whether A is a sparse COO tensor (never, in eagergrad)."""
    if isinstance(A, Tensor):
        return A.layout == _layouts.sparse_coo
    raise TypeError(f"expected Tensor but got {type(A)}")


def dense(A, fname):
    """A itself; a sparse layout is refused (eagergrad has no sparse tensors)."""
    if isinstance(A, Tensor) and A.layout is not _layouts.strided:
        raise NotImplementedError(f"{fname}: eagergrad has no sparse tensors (got layout "
                                  f"{A.layout}); only dense (strided) inputs are supported")
    return A


def get_floating_dtype(A):
    """A's dtype when it is float16/32/64, else float32."""
    dtype = A.dtype
    if dtype in (D.float16, D.float32, D.float64):
        return dtype
    return D.float32


def matmul(A, B):
    """A @ B, or B when A is None."""
    if A is None:
        return B
    is_sparse(A)  # (torch's TypeError for a non-tensor)
    return A.matmul(B)


def bform(X, A, Y):
    """X^T A Y."""
    return matmul(X.mT, matmul(A, Y))


def qform(A, S):
    """S^T A S."""
    return bform(S, A, S)


def basis(A):
    """An orthonormal basis of A's columns."""
    return linalg.qr(A).Q


def symeig(A, largest=False):
    """Eigenpairs of a symmetric A, ascending (descending when largest)."""
    if largest is None:
        largest = False
    E, Z = linalg.eigh(A, UPLO="U")
    if largest:
        E = E.flip((-1,))
        Z = Z.flip((-1,))
    return E, Z


# ---- torch/_lowrank.py --------------------------------------------------------------------
def get_approximate_basis(A, q, niter=2, M=None):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M
    (Algorithm 4.4 of Halko et al., 2009)."""
    niter = 2 if niter is None else niter
    dtype = get_floating_dtype(A) if not A.is_complex() else A.dtype
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = matmul(A.mH, Q)
        if M is not None:
            X = X - matmul(M.mH, Q)
        Q = linalg.qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = linalg.qr(X).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, q singular triplets (Algorithm 5.1 of Halko et
    al., 2009); M, A's mean, broadcasts to A. Randomized: see torch.svd_lowrank.

    >>> import eagergrad as torch
    >>> A = torch.tensor([[3., 0.], [0., 2.], [0., 0.]])
    >>> U, S, V = torch.svd_lowrank(A, q=2)
    >>> [round(float(s), 6) for s in S]
    [3.0, 2.0]
    """
    tensor_ops = (A, M)
    if not set(map(type, tensor_ops)).issubset((Tensor, type(None))) and \
            has_torch_function(tensor_ops):
        return handle_torch_function(svd_lowrank, tensor_ops, A, q=q, niter=niter, M=M)
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def _svd_lowrank(A, q=6, niter=2, M=None):
    dense(A, "svd_lowrank")
    dense(M, "svd_lowrank")
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # (A is taken tall)
        A = A.mH
        if M is not None:
            M = M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal component analysis of A's rows: svd_lowrank of A centred on its column
    means (center=True); q defaults to min(6, m, n). Randomized: see torch.pca_lowrank.

    >>> import eagergrad as torch
    >>> U, S, V = torch.pca_lowrank(torch.randn(10, 3), q=2)
    >>> V.shape
    torch.Size([3, 2])
    """
    if type(A) is not Tensor and has_torch_function((A,)):
        return handle_torch_function(pca_lowrank, (A,), A, q=q, center=center, niter=niter)
    (m, n) = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if is_sparse(A):  # (torch's sparse branch; eagergrad has no sparse tensors)
        dense(A, "pca_lowrank")
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
