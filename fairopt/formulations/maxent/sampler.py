"""Exact samplers for ``p_λ(x) ∝ q(x) e^{<λ, φ(x)>}`` with ``q = C·u + (1 − C)·w``.

``sample_mixture`` (default) uses the decomposition ``p_λ = π·r_λ + (1 − π)·ω_λ`` of
:mod:`.oracle`: draw the number of uniform-branch rows ``B ~ Binomial(n, π)``, draw each of their
attributes independently from ``P_f``, draw the other ``n − B`` rows from the support with
probabilities ``ρ``, and shuffle. Cost ``O(n·F + Σ k_f + M)``.

``sample_sequential`` is the paper's attribute-by-attribute sampler (Appendix A) extended to
categorical attributes; each conditional is one counting-oracle call restricted to a prefix. It is
kept as an independent reference for tests (rows sharing a prefix are processed together).
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from fairopt.formulations.maxent.oracle import DualOracle, MixtureState, _row_keys


def _inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(probs)
    idx = np.searchsorted(cdf, u * cdf[-1], side="right")
    out: np.ndarray = np.minimum(idx, probs.shape[0] - 1)
    return out


def sample_mixture(oracle: DualOracle, st: MixtureState, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` code rows exactly from ``p_λ`` (vectorised mixture sampler)."""
    n = int(n)
    F = oracle.enc.n_attributes
    B = int(rng.binomial(n, st.pi)) if 0.0 < st.pi < 1.0 else (n if st.pi >= 1.0 else 0)
    out = np.empty((n, F), dtype=np.int64)
    for f in range(F):
        out[:B, f] = _inverse_cdf(st.level_probs[f], rng.random(B))
    if n - B:
        idx = _inverse_cdf(st.rho, rng.random(n - B))
        out[B:] = oracle.points[idx]
    return out[rng.permutation(n)]


def sample_sequential(oracle: DualOracle, st: MixtureState, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` code rows exactly from ``p_λ`` one attribute at a time (reference sampler)."""
    enc = oracle.enc
    F, n = enc.n_attributes, int(n)
    scores = enc.level_scores(st.lam)
    lse = np.array([logsumexp(a) for a in scores])
    # log of C/|Ω| · e^{<λ, s>} pieces, and log w_i e^{<λ, s_i>} for the support
    log_cu = (np.log(oracle.C) - enc.log_domain_size) if oracle.has_u else -np.inf
    flat = np.concatenate(scores)
    log_sw = oracle.support_log_weights(flat) if oracle.has_w else None
    out = np.zeros((n, F), dtype=np.int64)
    prefix_score = np.zeros(n)           # Σ_{f<j} a_{f, x_f} per sample
    for j in range(F):
        k = enc.n_levels[j]
        tail = float(lse[j + 1:].sum())
        # uniform branch, per sample and level
        logits_u = log_cu + prefix_score[:, None] + scores[j][None, :] + tail
        logits = logits_u
        if oracle.has_w:
            assert log_sw is not None  # computed above when the oracle has a data branch
            lev = enc.n_levels[:j]
            skey = _row_keys(oracle.points[:, :j], lev) if j else np.zeros(len(log_sw), np.int64)
            xkey = _row_keys(out[:, :j], lev) if j else np.zeros(n, np.int64)
            ukeys, inv = np.unique(xkey, return_inverse=True)
            pos = np.searchsorted(ukeys, skey)
            pos_c = np.minimum(pos, len(ukeys) - 1)
            hit = ukeys[pos_c] == skey
            # per (unique prefix, level): log Σ_i w_i e^{<λ, s_i>} over matching support points
            cell = pos_c[hit] * k + oracle.points[hit, j]
            m = np.full(len(ukeys) * k, -np.inf)
            if hit.any():
                vals = log_sw[hit]
                order = np.argsort(cell, kind="stable")
                cs, vs = cell[order], vals[order]
                starts = np.r_[0, np.nonzero(np.diff(cs))[0] + 1]
                mx = np.maximum.reduceat(vs, starts)
                rep = np.repeat(mx, np.diff(np.r_[starts, len(cs)]))
                sums = np.add.reduceat(np.exp(vs - rep), starts)
                m[cs[starts]] = mx + np.log(sums) + np.log1p(-oracle.C)
            logits = np.logaddexp(logits_u, m.reshape(len(ukeys), k)[inv])
        logits = logits - logsumexp(logits, axis=1, keepdims=True)
        cdf = np.cumsum(np.exp(logits), axis=1)
        u = rng.random(n)[:, None] * cdf[:, -1:]
        out[:, j] = np.minimum((cdf <= u).sum(axis=1), k - 1)
        prefix_score += scores[j][out[:, j]]
    return out
