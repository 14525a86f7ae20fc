"""Counting oracle for the max-entropy dual ``h(λ) = log Z(λ) − <θ, λ>``.

With prior ``q = C·u + (1 − C)·w`` (``u`` uniform on the product domain, ``w`` a weighting of the
distinct data points ``s_i``), ``Z = C·Z_u + (1 − C)·Z_w`` where

* ``log Z_u = Σ_f [LSE_v a_{f,v} − log k_f]`` factorises over attributes (never enumerating Ω),
* ``log Z_w = LSE_i (log w_i + <λ, s_i>)`` runs over the ``M`` distinct points.

The tilted distribution is the mixture ``p_λ = π·r_λ + (1 − π)·ω_λ`` of the product distribution
``r_λ(x) = Π_f P_{f,x_f}`` (``P_f = softmax(a_f)``) and the reweighted support
``ω_λ(s_i) = ρ_i = softmax_i(log w_i + <λ, s_i>)``, with ``π = C Z_u / Z``. Hence

* ``∇h = π μ_u + (1 − π) μ_w − θ = E_p[α] − θ``,
* ``∇²h = π Σ_u + (1 − π) Σ_w + π(1 − π)(μ_u − μ_w)(μ_u − μ_w)ᵀ = Cov_p[α]``,

with ``Σ_u`` block-diagonal. Value and gradient cost ``O(M·F + Σ k_f m_f)`` (gathers of level
scores), the Hessian ``O(M·d²)``. All sums are evaluated in log space.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from fairopt._docstrings import fill_doc, register
from fairopt.errors import DataValidationError
from fairopt.formulations.maxent.encoding import Encoding

#: largest ``M d`` (support points x dual dimension) held as a dense feature matrix
DENSE_FEATURES_MAX = 1 << 18



# ---- docstring pieces of the dual's evaluation methods -------------------------------------
register("maxent_dual_lam", """Parameters
----------
lam : ndarray of shape (dim,)
    Dual variable.""")
register("maxent_value_gradient", """value : float
    ``log Z(lam) - theta @ lam``.
gradient : ndarray of shape (dim,)
    ``E_lam[phi] - theta``.""")


@dataclass
class MixtureState:
    """Everything the oracles and the sampler need at one ``λ``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.maxent import DualOracle, Encoding
    >>> encoding = Encoding.make((2, 2), "onehot")
    >>> oracle = DualOracle(encoding, np.array([[0, 0], [1, 1]]), np.array([0.5, 0.5]), 0.5,
    ...                     np.zeros(encoding.dim))
    >>> state = oracle.state(np.zeros(encoding.dim))    # at lambda = 0: the prior itself
    >>> type(state).__name__, state.log_z, state.mean.tolist()
    ('MixtureState', 0.0, [0.5, 0.5])
    """

    lam: np.ndarray
    level_probs: list[Any]          # P_f, softmax of the level scores (uniform branch)
    log_zu: float              # log Z_u (uniform branch), -inf when C == 0
    rho: np.ndarray            # ω_λ over the distinct points (data branch)
    log_zw: float              # log Z_w, -inf when C == 1
    log_z: float               # log Z
    pi: float                  # weight of the uniform branch
    mean_u: np.ndarray         # μ_u
    mean_w: np.ndarray         # μ_w
    mean: np.ndarray           # E_p[α]


@fill_doc
class DualOracle:
    """Value, gradient and Hessian of the dual for prior ``C·u + (1 − C)·w``.

    Parameters
    ----------
    enc : Encoding
        Feature encoding of the product domain.
    points : ndarray (M, F) of int
        Distinct support points (level codes).
    weights : ndarray (M,)
        Weighting ``w`` of the points (non-negative, normalised here).
    C : float
        Mixing weight of the uniform distribution, in ``[0, 1]``.
    theta : ndarray (d,)
        Reference-coded target vector.

    Examples
    --------
    >>> import numpy as np
    {example_compas_model}
    >>> oracle = model.oracle()
    >>> oracle.dim
    8
    >>> bool(np.abs(oracle.gradient(solution.primal["lambda"])).max() < 1e-8)   # optimality
    True
    """

    def __init__(self, enc: Encoding, points: np.ndarray, weights: np.ndarray, C: float,
                 theta: np.ndarray):
        if not 0.0 <= float(C) <= 1.0:
            raise DataValidationError(f"C must lie in [0, 1], got {C}.")
        weights = np.asarray(weights, dtype=float).reshape(-1)
        points = enc.check_codes(points)
        if weights.shape[0] != points.shape[0]:
            raise DataValidationError("weights need one entry per support point.")
        if np.any(weights < 0) or not np.isfinite(weights).all():
            raise DataValidationError("prior weights must be finite and non-negative.")
        keep = weights > 0
        if float(C) < 1.0 and not keep.any():
            raise DataValidationError("the data part of the prior has no mass (all weights are 0).")
        self.enc = enc
        self.points = points if keep.all() else points[keep]
        self.weights = weights[keep] / weights[keep].sum() if keep.any() else weights[keep]
        self.log_w = np.log(self.weights)
        self.C = float(C)
        self.theta = np.asarray(theta, dtype=float).reshape(-1)
        if self.theta.shape != (enc.dim,):
            raise DataValidationError(f"theta must have {enc.dim} reference-coded entries.")
        # Moments of the support never touch the feature matrix S (M x d): they are level
        # histograms of rho mapped through the level-feature matrices (see support_moments).
        self._S = None
        self._S_dense: np.ndarray | None = None   # dense S for small supports (built on first use)
        self._dense_checked = False
        # attribute-major copy in the smallest integer type: contiguous per-attribute gathers
        # and histograms (the row-major points would be read with a stride of F)
        self._codes_t = np.ascontiguousarray(self.points.T, dtype=_small_int(max(enc.level_offsets[-1], 1)))
        self._phi_full = _level_feature_matrix(enc)
        self._log_k = np.log(np.asarray(enc.n_levels, dtype=float))
        self.has_u = self.C > 0.0
        self.has_w = self.C < 1.0
        self.n_evals = 0

    @property
    def dim(self) -> int:
        """Dimension of the dual variable (reference-coded features)."""
        return self.enc.dim

    @property
    def S(self) -> sp.csr_matrix:
        """Sparse feature matrix of the support points (built on first use: cvxpy, pyomo)."""
        if self._S is None:
            self._S = self.enc.sparse_features(self.points)
        return self._S

    def _dense_features(self) -> np.ndarray | None:
        """The support's feature matrix as a dense array when it is small (``M d <= 2^18``): then
        two matrix products beat the per-attribute gathers and histograms, whose fixed costs
        dominate on a few hundred points; ``None`` for larger supports."""
        if not self._dense_checked:
            if self.points.shape[0] * self.enc.dim <= DENSE_FEATURES_MAX:
                self._S_dense = np.ascontiguousarray(self.S.toarray(), dtype=float)
            self._dense_checked = True
        return self._S_dense

    def support_log_weights(self, flat_scores: np.ndarray) -> np.ndarray:
        """``log w_i + <λ, s_i>`` of every support point, from concatenated level scores
        (accumulated attribute by attribute: no ``M x F`` temporary)."""
        lo = self.enc.level_offsets
        t = self.log_w.copy()
        for f in range(self.enc.n_attributes):
            t += flat_scores[lo[f]:lo[f + 1]][self._codes_t[f]]
        out: np.ndarray = t
        return out

    def support_level_histogram(self, rho: np.ndarray) -> np.ndarray:
        """Concatenated per-attribute level distributions of ``rho`` over the support."""
        return np.concatenate([np.bincount(self._codes_t[f], weights=rho, minlength=k)
                               for f, k in enumerate(self.enc.n_levels)])

    def support_second_moment(self, rho: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
        """``S^T diag(rho) S`` through the level-pair histogram ``J = sum_i rho_i e(x_i) e(x_i)^T``
        (``e`` the concatenated level indicator): weighted bincounts of level-pair keys per row
        chunk and attribute, then ``Phi^T J Phi``. ``O(M F^2)`` cheap integer work instead of a
        sparse matrix product, in ``O(chunk F)`` memory."""
        enc = self.enc
        lo, F = enc.level_offsets, enc.n_attributes
        L = int(lo[-1])
        dtype = np.int32 if L * L < 2 ** 31 else np.int64
        off = lo[:-1, None].astype(dtype)
        J = np.zeros(L * L)
        for s0 in range(0, self.points.shape[0], chunk):
            flat = self._codes_t[:, s0:s0 + chunk].astype(dtype) + off
            r = rho[s0:s0 + chunk]
            for f in range(F - 1):      # pairs (f, g > f); the diagonal is the level histogram
                keys = flat[f] * L + flat[f + 1:]
                J += np.bincount(keys.ravel(), weights=np.tile(r, F - f - 1), minlength=L * L)
        pairs = J.reshape(L, L)
        pairs = pairs + pairs.T + np.diag(self.support_level_histogram(rho))
        out: np.ndarray = self._phi_full.T @ pairs @ self._phi_full
        return out

    # ------------------------------------------------------------------ state
    def state(self, lam: np.ndarray) -> MixtureState:
        """Mixture decomposition of the tilted prior at ``lam``."""
        self.n_evals += 1
        enc = self.enc
        lam = np.asarray(lam, dtype=float)
        scores = enc.level_scores(lam)
        d = enc.dim
        if self.has_u:
            lse = np.array([_lse(a) for a in scores])
            P = [np.exp(a - z) for a, z in zip(scores, lse, strict=True)]
            log_zu = float(np.sum(lse - self._log_k))
            mean_u = enc.moments_from_level_probs(P)
        else:
            P = [np.full(k, 1.0 / k) for k in enc.n_levels]
            log_zu, mean_u = -np.inf, np.zeros(d)
        if self.has_w:
            D = self._dense_features()
            t = self.log_w + D @ lam if D is not None else self.support_log_weights(np.concatenate(scores))
            log_zw = _lse(t)
            rho = np.exp(t - log_zw)
            mean_w = D.T @ rho if D is not None else self._phi_full.T @ self.support_level_histogram(rho)
        else:
            rho, log_zw, mean_w = np.zeros(self.points.shape[0]), -np.inf, np.zeros(d)
        if self.has_u and self.has_w:
            a = np.log(self.C) + log_zu
            b = np.log1p(-self.C) + log_zw
            log_z = float(np.logaddexp(a, b))
            pi = float(np.exp(a - log_z))
        elif self.has_u:
            log_z, pi = log_zu, 1.0
        else:
            log_z, pi = log_zw, 0.0
        mean = pi * mean_u + (1.0 - pi) * mean_w
        return MixtureState(lam, P, log_zu, rho, log_zw, log_z, pi, mean_u, mean_w, mean)

    # ---------------------------------------------------------------- oracles
    @fill_doc
    def value(self, lam: np.ndarray) -> float:
        """Dual objective ``log Z(lam) - theta @ lam``.

        {maxent_dual_lam}

        Returns
        -------
        float
            The dual value (convex in ``lam``).
        """
        st = self.state(lam)
        return st.log_z - float(self.theta @ st.lam)

    @fill_doc
    def gradient(self, lam: np.ndarray) -> np.ndarray:
        """Gradient of the dual: ``E_lam[phi] - theta``.

        {maxent_dual_lam}

        Returns
        -------
        ndarray of shape (dim,)
            Expected features under the tilted prior minus the target.
        """
        out: np.ndarray = self.state(lam).mean - self.theta
        return out

    @fill_doc
    def value_grad(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """Dual value and gradient from one evaluation of the mixture state.

        {maxent_dual_lam}

        Returns
        -------
        {maxent_value_gradient}
        """
        st = self.state(lam)
        return st.log_z - float(self.theta @ st.lam), st.mean - self.theta

    def hessian_from_state(self, st: MixtureState) -> np.ndarray:
        """``Cov_p[α]`` from a computed state."""
        enc, d = self.enc, self.enc.dim
        H = np.zeros((d, d))
        if self.has_u and st.pi > 0:
            for f in range(enc.n_attributes):
                blk = enc.block(f)
                phi, P = enc.phi(f), st.level_probs[f]
                mu = st.mean_u[blk]
                H[blk, blk] += st.pi * ((phi.T * P) @ phi - np.outer(mu, mu))
        if self.has_w and st.pi < 1:
            D = self._dense_features()
            second = (D.T * st.rho) @ D if D is not None else self.support_second_moment(st.rho)
            cov_w = second - np.outer(st.mean_w, st.mean_w)
            H += (1.0 - st.pi) * cov_w
        if self.has_u and self.has_w:
            delta = st.mean_u - st.mean_w
            H += st.pi * (1.0 - st.pi) * np.outer(delta, delta)
        out: np.ndarray = 0.5 * (H + H.T)
        return out

    @fill_doc
    def hessian(self, lam: np.ndarray) -> np.ndarray:
        """Hessian of the dual: the covariance of the features under the tilted prior.

        {maxent_dual_lam}

        Returns
        -------
        ndarray of shape (dim, dim)
            Positive semidefinite covariance matrix.
        """
        return self.hessian_from_state(self.state(lam))

    @fill_doc
    def value_grad_hess(self, lam: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Dual value, gradient and Hessian from one evaluation of the mixture state.

        {maxent_dual_lam}

        Returns
        -------
        {maxent_value_gradient}
        hessian : ndarray of shape (dim, dim)
            Covariance of the features.
        """
        st = self.state(lam)
        return (st.log_z - float(self.theta @ st.lam), st.mean - self.theta,
                self.hessian_from_state(st))

    # --------------------------------------------------------------- derived
    def level_marginals(self, st: MixtureState) -> list[np.ndarray]:
        """Exact per-attribute level distributions of ``p_λ``."""
        out = []
        for f, k in enumerate(self.enc.n_levels):
            m = st.pi * st.level_probs[f] if self.has_u else np.zeros(k)
            if self.has_w:
                m = m + (1.0 - st.pi) * np.bincount(self.points[:, f], weights=st.rho, minlength=k)
            out.append(m)
        return out

    def pair_marginal(self, st: MixtureState, f: int, g: int) -> np.ndarray:
        """Exact joint distribution ``p_λ(X_f, X_g)`` (``k_f x k_g``)."""
        kf, kg = self.enc.n_levels[f], self.enc.n_levels[g]
        J = st.pi * np.outer(st.level_probs[f], st.level_probs[g]) if self.has_u else np.zeros((kf, kg))
        if self.has_w:
            cell = self.points[:, f] * kg + self.points[:, g]
            J = J + (1.0 - st.pi) * np.bincount(cell, weights=st.rho, minlength=kf * kg).reshape(kf, kg)
        return J

    def log_prob(self, st: MixtureState, codes: ArrayLike) -> np.ndarray:
        """``log p_λ(x)`` of arbitrary code rows, using a hash of the support."""
        enc = self.enc
        codes = enc.check_codes(codes)
        scores = np.concatenate(enc.level_scores(st.lam))
        s = scores[codes + enc.level_offsets[:-1][None, :]].sum(axis=1)
        key = _row_keys(codes, enc.n_levels)
        skey = _row_keys(self.points, enc.n_levels)
        order = np.argsort(skey)
        pos = np.searchsorted(skey[order], key)
        pos = np.minimum(pos, len(order) - 1) if len(order) else pos
        wq = np.zeros(codes.shape[0])
        if len(order):
            hit = skey[order][pos] == key
            wq[hit] = self.weights[order][pos[hit]]
        with np.errstate(divide="ignore"):
            q = (self.C * np.exp(-enc.log_domain_size) if self.has_u else 0.0) + (1 - self.C) * wq
            out: np.ndarray = np.log(q) + s - st.log_z
            return out


def _lse(a: np.ndarray) -> float:
    """``log Σ exp(a)`` of a 1-D array, shifted by its maximum (scipy's ``logsumexp`` spends tens
    of microseconds on argument handling per call, paid F + 1 times per dual evaluation)."""
    m = float(a.max())
    if not np.isfinite(m):      # all -inf gives -inf; +inf and NaN propagate
        return m
    return m + float(np.log(np.sum(np.exp(a - m))))


def _small_int(bound: int) -> type[np.signedinteger[Any]]:
    """Smallest signed integer type holding ``0 .. bound``."""
    for t in (np.int8, np.int16, np.int32):
        if bound <= np.iinfo(t).max:
            return t
    return np.int64


def _level_feature_matrix(enc: Encoding) -> np.ndarray:
    """Block-diagonal ``Phi`` (``sum_f k_f x d``): concatenated level indicators -> features."""
    lo, o = enc.level_offsets, enc.offsets
    phi = np.zeros((int(lo[-1]), enc.dim))
    for f in range(enc.n_attributes):
        phi[lo[f]:lo[f + 1], o[f]:o[f + 1]] = enc.phi(f)
    return phi


def _row_keys(codes: np.ndarray, n_levels: Sequence[int]) -> np.ndarray:
    """Unique keys of code rows (mixed-radix integers; falls back to bytes for huge domains)."""
    total = 1
    for k in n_levels:
        total *= int(k)
    if total < 2 ** 62:
        radix = np.cumprod([1, *[int(k) for k in n_levels[::-1]][:-1]])[::-1].astype(np.int64)
        return codes.astype(np.int64) @ radix
    view = np.ascontiguousarray(codes.astype(np.int64))
    return view.view(np.dtype((np.void, view.dtype.itemsize * view.shape[1]))).reshape(-1)


def enumerate_domain(enc: Encoding, max_size: int = 2_000_000) -> np.ndarray:
    """All code rows of the domain (tests and tiny domains only).

    Examples
    --------
    >>> from fairopt.formulations.maxent import Encoding
    >>> enumerate_domain(Encoding.make((2, 3), "onehot")).shape
    (6, 2)
    """
    if enc.domain_size > max_size:
        raise DataValidationError(
            f"refusing to enumerate a domain of {enc.domain_size} points (limit {max_size}).")
    return np.array(list(product(*[range(k) for k in enc.n_levels])), dtype=np.int64).reshape(
        -1, enc.n_attributes)


def brute_force(enc: Encoding, points: ArrayLike, weights: ArrayLike, C: float, lam: np.ndarray,
                theta: np.ndarray | None = None,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, np.ndarray, np.ndarray]:
    """Reference computation by enumerating Ω: returns ``(codes, q, p, h, grad, hess)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.maxent import Encoding
    >>> encoding = Encoding.make((2, 2), "onehot")
    >>> codes, q, p, h, grad, hess = brute_force(encoding, np.array([[0, 0], [1, 1]]),
    ...                                          np.array([0.5, 0.5]), 0.5, np.zeros(encoding.dim))
    >>> codes.shape, q.tolist(), bool(np.allclose(p, q))   # lambda = 0: p is the prior
    ((4, 2), [0.375, 0.125, 0.125, 0.375], True)
    """
    codes = enumerate_domain(enc)
    X = enc.features(codes)
    weights = np.asarray(weights, float) / np.sum(weights)
    key = _row_keys(codes, enc.n_levels)
    pkey = _row_keys(np.asarray(points), enc.n_levels)
    wfull = np.zeros(codes.shape[0])
    idx = np.searchsorted(key, pkey)
    np.add.at(wfull, idx, weights)
    q = C / codes.shape[0] + (1 - C) * wfull
    with np.errstate(divide="ignore"):
        logits = np.log(q) + X @ lam
    logZ = logsumexp(logits)
    p = np.exp(logits - logZ)
    theta = np.zeros(enc.dim) if theta is None else theta
    mean = p @ X
    Xc = X - mean
    return codes, q, p, logZ - float(theta @ lam), mean - theta, (Xc.T * p) @ Xc
