"""From proxy cells to a balanced sample: conditional matrix, sampling probabilities, metrics.

A proxy maps each point to a distribution over ℓ cells (a deterministic proxy puts all mass on
one cell; a randomized tree spreads it). With membership matrix ``M`` (n × ℓ, rows summing to 1)
and one-hot groups ``Z`` (n × K), the counts ``N = MᵀZ`` give the cell masses ``r̂_j = N_j·/n``
and the conditional matrix ``A_jk = N_jk/N_j·`` exactly as expectations over the proxy's coins.

Algorithm 2 keeps a point of cell ``j`` with probability ``ρ_j``; the kept sample has group
distribution ``(r̂ ∘ ρ)A / (r̂·ρ)`` and acceptance rate ``r̂·ρ``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.errors import DataValidationError


def membership_matrix(cells: ArrayLike | sp.spmatrix,
                      n_cells: int | None = None) -> np.ndarray | sp.csr_matrix:
    """Cell indices (1-D ints) → sparse one-hot membership; a 2-D membership is returned as is.

    Examples
    --------
    >>> import numpy as np
    >>> membership_matrix(np.array([0, 1, 1])).toarray().tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    """
    if sp.issparse(cells):
        return cells
    idx = np.asarray(cells)
    if idx.ndim == 2:
        return idx
    if idx.size and (idx.min() < 0 or not np.issubdtype(idx.dtype, np.integer)):
        raise DataValidationError("cell indices must be non-negative integers.")
    n_cells = int(idx.max()) + 1 if n_cells is None else int(n_cells)
    return sp.csr_matrix((np.ones(idx.size), (np.arange(idx.size), idx)),
                         shape=(idx.size, n_cells))


def conditional_matrix(membership: ArrayLike | sp.spmatrix, groups: ArrayLike, n_groups: int,
                       sample_weight: ArrayLike | None = None,
                       n_cells: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(A, r̂, N)``: conditional matrix, cell masses and (fractional) counts.

    Empty cells (``r̂_j = 0``) get the group prior as their row, so they never count as
    disclosive; :class:`~fairopt.formulations.proxy_weights.ProxyWeights` drops them.
    ``membership`` as 1-D cell indices may be a Dask array, a memmap or a ``.npy`` path (with
    ``groups`` and ``sample_weight`` likewise): the counts are then reduced chunk by chunk
    (:func:`fairopt.stats.cell_group_counts`); pass ``n_cells`` (the proxy's number of cells).

    Examples
    --------
    >>> import numpy as np
    >>> A, cell_mass, counts = conditional_matrix(membership_matrix(np.array([0, 0, 1, 1])),
    ...                                          np.array([0, 1, 1, 1]), 2)
    >>> A.tolist(), cell_mass.tolist()
    ([[0.5, 0.5], [0.0, 1.0]], [0.5, 0.5])
    """
    from fairopt.stats import cell_group_counts, is_lazy
    if any(a is not None and is_lazy(a) for a in (membership, groups, sample_weight)):
        if n_cells is None:
            raise DataValidationError("with chunked or Dask cell codes pass n_cells (the number of proxy cells).")
        N = cell_group_counts(membership, groups, int(n_cells), int(n_groups), sample_weight)
        return _conditional_from_counts(N)
    M = membership_matrix(membership, n_cells)
    groups = np.asarray(groups)
    n = groups.shape[0]
    if M.shape[0] != n:
        raise DataValidationError(f"membership has {M.shape[0]} rows but there are {n} group labels.")
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    Z = sp.csr_matrix((w, (np.arange(n), groups)), shape=(n, n_groups))
    N = np.asarray((M.T @ Z).todense() if sp.issparse(M) else M.T @ Z.toarray(), dtype=float)
    return _conditional_from_counts(np.asarray(N))


def _conditional_from_counts(N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    total = N.sum()
    if total <= 0:
        raise DataValidationError("no mass to estimate the conditional matrix from.")
    mass = N.sum(axis=1)
    prior = N.sum(axis=0) / total
    A = np.where(mass[:, None] > 0, N / np.where(mass > 0, mass, 1.0)[:, None], prior[None, :])
    return A, mass / total, N


def disclosivity(A: ArrayLike, cell_mass: ArrayLike, prior: ArrayLike) -> float:
    """``max_{j,k} |A_jk − r_k|`` over non-empty cells (Definition 5).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> prior = cell_mass @ A
    >>> round(disclosivity(A, cell_mass, prior), 6)
    0.49
    """
    A = np.asarray(A, dtype=float)
    live = np.asarray(cell_mass) > 0
    if not live.any():
        return 0.0
    return float(np.max(np.abs(A[live] - np.asarray(prior)[None, :])))


def imbalance(distribution: ArrayLike) -> float:
    """``‖π − U‖₂``, the ℓ₂ distance of a group distribution from uniform (Definition 2).

    Examples
    --------
    >>> import numpy as np
    >>> imbalance(np.array([0.5, 0.5])), round(imbalance(np.array([0.8, 0.2])), 6)
    (0.0, 0.424264)
    """
    pi = np.asarray(distribution, dtype=float)
    return float(np.linalg.norm(pi - 1.0 / pi.shape[-1]))


def sampling_probabilities(q: ArrayLike, cell_mass: ArrayLike,
                           min_cell_mass: float = 0.0) -> tuple[np.ndarray, float, float]:
    """Algorithm 1's conversion ``ρ_j = q_j/r̂_j``, normalised by ``C = max ρ``.

    Returns ``(ρ, C, acceptance)`` with acceptance rate ``1ᵀq/C``. Cells with mass at most
    ``min_cell_mass`` (always the empty ones) get ``ρ_j = 0``; they must carry no weight.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> rho, normaliser, acceptance = sampling_probabilities(np.array([0.428571, 0.571429]), cell_mass)
    >>> rho.round(4).tolist(), round(acceptance, 4)
    ([0.3214, 1.0], 0.525)
    """
    q = np.asarray(q, dtype=float)
    r_hat = np.asarray(cell_mass, dtype=float)
    live = r_hat > max(float(min_cell_mass), 0.0)
    if (q[~live] > 1e-12).any():
        raise DataValidationError("weights q put mass on an empty (or below min_cell_mass) cell; "
                                  "drop those cells before solving.")
    rho = np.zeros_like(q)
    rho[live] = q[live] / r_hat[live]
    C = float(rho.max())
    if C <= 0:
        raise DataValidationError("weights q are all zero; nothing would be kept.")
    return rho / C, C, float(q.sum() / C)


def filtered_distribution(A: ArrayLike, cell_mass: ArrayLike, rho: ArrayLike) -> tuple[np.ndarray, float]:
    """Group distribution of the kept sample and the acceptance rate under Algorithm 2.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> pi, acceptance = filtered_distribution(A, cell_mass, np.array([0.321429, 1.0]))
    >>> pi.round(4).tolist(), round(acceptance, 4)
    ([0.5, 0.5], 0.525)
    """
    keep = np.asarray(cell_mass, dtype=float) * np.asarray(rho, dtype=float)
    rate = float(keep.sum())
    if rate <= 0:
        raise DataValidationError("sampling probabilities keep nothing on this sample.")
    return keep @ np.asarray(A, dtype=float) / rate, rate


def interpolate_proxy(A: ArrayLike, cell_mass: ArrayLike, prior: ArrayLike,
                      eta: float) -> tuple[np.ndarray, np.ndarray]:
    """The η-randomised proxy of A.1.1: with probability η the cell is redrawn uniformly.

    ``r̂′ = (1 − η)r̂ + η/ℓ`` and ``A′_j = [(1 − η)r̂_j a_j + (η/ℓ)r]/r̂′_j``, so that
    ``A′_j − r = (1 − η)(r̂_j/r̂′_j)(a_j − r)``: disclosure shrinks to 0 at η = 1.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> cell_mass = np.array([0.7, 0.3])
    >>> out = interpolate_proxy(A, cell_mass, cell_mass @ A, 0.0)    # eta = 0: the proxy itself
    >>> np.allclose(out[0], A)
    True
    """
    if not 0.0 <= eta <= 1.0:
        raise DataValidationError(f"eta must lie in [0, 1], got {eta}.")
    A = np.asarray(A, dtype=float)
    r_hat = np.asarray(cell_mass, dtype=float)
    ell = A.shape[0]
    mass = (1.0 - eta) * r_hat + eta / ell
    num = (1.0 - eta) * r_hat[:, None] * A + (eta / ell) * np.asarray(prior)[None, :]
    out = np.where(mass[:, None] > 0, num / np.where(mass > 0, mass, 1.0)[:, None], np.asarray(prior)[None, :])
    return out, mass
