"""Proxy-weights programs of balanced filtering: P1, P1′, hull LP, acceptance LP, ρ, sampling."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.errors import DataValidationError
from fairopt.formulations.proxy_weights import (
    ProxyWeights,
    conditional_matrix,
    disclosivity,
    filtered_distribution,
    hull_distance_l1,
    interpolate_proxy,
    project_simplex,
    sampling_probabilities,
    solve_native,
    solve_p1,
)

QP_BACKENDS = ["highs", "osqp", "cvxpy", "pyomo", "native"]


def _skewed(rng, ell=7, K=4):
    """Rows far from uniform (group 0 over-represented), so U is outside the hull."""
    A = rng.dirichlet(np.full(K, 0.7), size=ell)
    A[:, 0] += 2.0
    return A / A.sum(axis=1, keepdims=True), rng.dirichlet(np.ones(ell))


@pytest.fixture(scope="module")
def instance():
    return _skewed(np.random.default_rng(7))


@pytest.mark.parametrize("backend", QP_BACKENDS)
def test_p1_kkt_and_simplex(instance, backend):
    A, _ = instance
    K = A.shape[1]
    u = np.full(K, 1 / K)
    q, sol = solve_p1(A, solver=backend)
    assert abs(q.sum() - 1) <= 1e-8 and q.min() >= 0
    p = A.T @ q
    v = 2 * A @ (p - u)                      # ∇_q of ‖Aᵀq − u‖²
    nu = v.min()
    assert np.all(v >= nu - 1e-7)
    assert np.all(np.abs(v[q > 1e-5] - nu) <= 1e-6)   # support sits at the minimum gradient
    assert float(v @ q - nu) <= 1e-7                    # Frank–Wolfe gap
    # identity of the lifted form: ‖qA − U‖² = ‖qA‖² − 1/K on the simplex
    assert np.linalg.norm(p - u) ** 2 == pytest.approx(p @ p - 1 / K, abs=1e-12)
    if backend != "native":
        # duals in fairopt's convention d f*/d bound: simplex row = ν = 2 f*, lift rows = 2(p − u)
        assert sol.dual["simplex"][0] == pytest.approx(nu, abs=1e-6)
        assert sol.dual["simplex"][0] == pytest.approx(2 * np.linalg.norm(p - u) ** 2, abs=1e-6)
        rc = sol.reduced_cost.get("q")
        if rc is not None:   # bound multipliers of q ≥ 0: v − ν ≥ 0, zero on the support
            np.testing.assert_allclose(rc, v - nu, atol=1e-6)
            assert np.all(np.abs(rc * q) <= 1e-8)          # complementary slackness
        if "lift" in sol.dual:
            np.testing.assert_allclose(sol.dual["lift"], 2 * (p - u), atol=1e-6)


@pytest.mark.parametrize("backend", ["osqp", "cvxpy"])
def test_lifted_and_condensed_forms_agree(instance, backend):
    A, _ = instance
    values = [solve_p1(A, solver=backend, form=f)[1].objective for f in ("lifted", "condensed")]
    assert values[0] == pytest.approx(values[1], abs=1e-8)


def test_backends_agree_on_optimum(instance):
    A, r_hat = instance
    ref = ProxyWeights(A, r_hat, acceptance="solver").solve("highs")
    assert ref.distance > 0.05             # the instance is not trivially balanced
    for relaxed in (False, True):
        ref = ProxyWeights(A, r_hat, relaxed=relaxed).solve("highs")
        for backend in QP_BACKENDS[1:]:
            raw = ProxyWeights(A, r_hat, relaxed=relaxed, acceptance="solver").solve(backend)
            best = ProxyWeights(A, r_hat, relaxed=relaxed).solve(backend)
            assert raw.distance ** 2 == pytest.approx(ref.distance ** 2, abs=1e-7), backend
            np.testing.assert_allclose(raw.p, ref.p, atol=1e-5)
            # the acceptance tie-break makes the acceptance rate agree too
            assert best.acceptance_rate == pytest.approx(ref.acceptance_rate, rel=1e-4), backend


def test_relaxed_bounds(instance):
    A, r_hat = instance
    exact = ProxyWeights(A, r_hat).solve()
    relaxed = ProxyWeights(A, r_hat, relaxed=True).solve()
    # cone residual ≤ hull distance ≤ renormalised relaxed imbalance
    assert relaxed.distance <= exact.distance + 1e-9
    assert relaxed.imbalance >= exact.distance - 1e-9
    # P1′ is NNLS: compare with scipy's active-set solver
    from scipy.optimize import nnls
    _q_ref, res = nnls(A.T, np.full(A.shape[1], 1 / A.shape[1]))
    assert relaxed.distance == pytest.approx(res, abs=1e-7)


def test_uniform_inside_hull():
    rng = np.random.default_rng(3)
    K = 5
    A = np.vstack([np.eye(K) * 0.6 + 0.4 / K, rng.dirichlet(np.ones(K), size=4)])
    for backend in QP_BACKENDS:
        res = ProxyWeights(A, np.full(len(A), 1 / len(A))).solve(backend)
        assert res.distance ** 2 <= 1e-9, backend
        np.testing.assert_allclose(res.distribution, np.full(K, 1 / K), atol=1e-5)
    assert hull_distance_l1(A) <= 1e-9
    A_out, _ = _skewed(rng)
    assert hull_distance_l1(A_out) > 1e-3
    assert ProxyWeights(A_out).hull_distance_l1() > 1e-3


def test_rho_empty_and_tiny_cells(instance):
    A, r_hat = instance
    r_hat = r_hat.copy()
    r_hat[2], r_hat[4] = 0.0, 1e-6
    r_hat /= r_hat.sum()
    res = ProxyWeights(A, r_hat).solve()
    assert res.rho[2] == 0 and 2 in res.dropped_cells and res.q[2] == 0
    assert res.rho.max() == pytest.approx(1.0) and res.rho.min() >= 0
    guarded = ProxyWeights(A, r_hat, min_cell_mass=1e-4).solve()
    assert set(guarded.dropped_cells) == {2, 4} and guarded.rho[4] == 0
    with pytest.raises(DataValidationError):
        sampling_probabilities(np.eye(len(r_hat))[2], r_hat)
    with pytest.raises(DataValidationError, match="sums to"):
        ProxyWeights(A * 1.1)


def test_monte_carlo_filtering(instance):
    """Algorithm 2 keeps a sample distributed as q*A at rate 1/C (10^6 draws, 4 s.e.)."""
    A, r_hat = instance
    res = ProxyWeights(A, r_hat).solve()
    rng = np.random.default_rng(2024)
    n = 1_000_000
    cell = rng.choice(len(r_hat), size=n, p=r_hat)
    cdf = np.cumsum(A, axis=1)
    group = (rng.random(n)[:, None] > cdf[cell]).sum(axis=1)
    kept = rng.random(n) < res.rho[cell]
    rate = kept.mean()
    assert abs(rate - 1 / res.normaliser) <= 4 * np.sqrt(rate * (1 - rate) / n)
    freq = np.bincount(group[kept], minlength=A.shape[1]) / kept.sum()
    target = res.q @ A
    se = np.sqrt(target * (1 - target) / kept.sum())
    assert np.all(np.abs(freq - target) <= 4 * se)
    # and the closed form used by the metrics agrees
    dist, acc = filtered_distribution(A, r_hat, res.rho)
    np.testing.assert_allclose(dist, target, atol=1e-9)
    assert acc == pytest.approx(1 / res.normaliser)


def test_native_reference_pieces(rng):
    v = rng.normal(size=9)
    w = project_simplex(v)
    assert w.min() >= 0 and w.sum() == pytest.approx(1)
    # projection optimality: ⟨v − w, y − w⟩ ≤ 0 for all simplex vertices y
    assert np.all((v - w) @ (np.eye(9) - w).T <= 1e-12)
    A, _ = _skewed(rng)
    _, iters, ok = solve_native(A, tol=1e-14)
    assert ok and iters > 1


def test_conditional_matrix_and_interpolation(rng):
    n, ell, K = 2000, 5, 3
    cells = rng.integers(0, ell, n)
    groups = (cells + rng.integers(0, 2, n)) % K
    A, r_hat, _N = conditional_matrix(cells, groups, K)
    np.testing.assert_allclose(A.sum(axis=1), 1)
    prior = np.bincount(groups, minlength=K) / n
    np.testing.assert_allclose(r_hat @ A, prior)          # r̂A = r
    M = np.eye(ell)[cells]
    A2, _r2, _ = conditional_matrix(M, groups, K)
    np.testing.assert_allclose(A2, A)
    for eta in (0.0, 0.3, 1.0):
        Ae, re = interpolate_proxy(A, r_hat, prior, eta)
        # the η-randomised proxy, estimated directly, gives the same matrix
        Ad, _rd, _ = conditional_matrix((1 - eta) * M + eta / ell, groups, K)
        np.testing.assert_allclose(Ae, Ad, atol=1e-12)
        np.testing.assert_allclose(Ae - prior, (1 - eta) * (r_hat / re)[:, None] * (A - prior), atol=1e-12)
    assert disclosivity(*interpolate_proxy(A, r_hat, prior, 1.0), prior) <= 1e-12
