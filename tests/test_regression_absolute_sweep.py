"""The absolute-loss sweep at eps > 0 (no LP) against the transport LPs (issue 33, scale).

Statement checked here. When the grid holds every prediction, group ``a``'s CDF is constant on
every grid interval (value ``F_{a,j}``), so the loss is ``sum_j len_j sum_a p_a |F_{a,j} - G_{a,j}|``.
Per interval, at a fixed pooled level ``P`` the cheapest feasible CDFs cost
``V(P) = sum_a p_a dist(F_a, [P - eps, P + eps]) + |R(P)|`` with ``R(P) = sum_a p_a clip(P - F_a,
-eps, eps)``, and ``V`` is least at ``P* = clip(mu, med - eps, med + eps)`` (``mu`` the root of
``R``, ``med`` the weighted median of the ``F_a``). The sweep places the residual with the squared
sweep's allocation at ``P*``, which is monotone in ``P``, so the per-interval optima add up to the
LP optimum with monotone CDFs. Checked: the formula for ``V`` and ``P*`` against per-interval LPs,
and the whole solution against the cutting-plane LP and the row-level transport LP (loss to 1e-6
or better, CDFs within eps of the pooled CDF, monotone), with weights, ties between groups,
single-atom groups, extra grid points and badly scaled values.
"""
from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from scipy.optimize import linprog
from test_regression_closed_form import lp_solution, random_case
from test_regression_debiasing import full_plan_lp, instance
from test_regression_sweep import hard_instance, sweep_matches_lp

import fairopt.formulations.regression_parity as rp
from fairopt.formulations.regression_closed_form import default_grid
from fairopt.formulations.regression_sweep import absolute_sweep
from fairopt.postprocessing import RegressionDebiaser


def interval_lp(F, p, eps, P=None):
    """min sum_a p_a |F_a - G_a| s.t. |G_a - P| <= eps, P = sum_a p_a G_a, 0 <= G <= 1 (P fixed if given).

    Variables ``G (A), t (A), P``; ``t_a >= +-(F_a - G_a)``."""
    A = F.shape[0]
    c = np.concatenate([np.zeros(A), p, [0.0]])
    eye, z = np.eye(A), np.zeros((A, 1))
    A_ub = np.vstack([np.hstack([-eye, -eye, z]), np.hstack([eye, -eye, z]),           # t >= F - G, t >= G - F
                      np.hstack([eye, 0 * eye, -np.ones((A, 1))]),                      # G - P <= eps
                      np.hstack([-eye, 0 * eye, np.ones((A, 1))])])                     # P - G <= eps
    b_ub = np.concatenate([-F, F, np.full(2 * A, eps)])
    A_eq = [np.concatenate([-p, np.zeros(A), [1.0]])]
    b_eq = [0.0]
    if P is not None:
        A_eq.append(np.concatenate([np.zeros(2 * A), [1.0]]))
        b_eq.append(P)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=np.array(A_eq), b_eq=b_eq,
                  bounds=[(0, 1)] * A + [(0, None)] * A + [(None, None)], method="highs")
    assert res.status == 0
    return res.fun


def closed_v(F, p, eps, P):
    dist = np.maximum(np.maximum(P - eps - F, F - P - eps), 0.0)
    return float(p @ dist + abs(p @ np.clip(P - F, -eps, eps)))


def root_and_median(F, p, eps):
    grid = np.linspace(-1.0, 2.0, 300001)
    R = np.clip(grid[:, None] - F[None, :], -eps, eps) @ p
    mu = grid[np.argmax(R >= 0)]                       # a root of the non-decreasing R (to 1e-5)
    order = np.argsort(F)
    med = F[order][np.argmax(np.cumsum(p[order]) >= 0.5 - 1e-12)]
    return mu, med


@pytest.mark.parametrize("seed", range(40))
def test_interval_value_and_minimiser(seed):
    rng = np.random.default_rng(seed)
    A = int(rng.integers(1, 7))
    F = np.round(rng.random(A), 1 if seed % 2 else 6)      # ties between groups on odd seeds
    F[rng.random(A) < 0.2] = rng.choice([0.0, 1.0])
    p = rng.random(A) + 0.05
    p /= p.sum()
    eps = float(rng.choice([0.01, 0.05, 0.2, 0.5]))
    for P in rng.random(5):                              # V(P) is the LP at a fixed pooled level
        assert closed_v(F, p, eps, P) == pytest.approx(interval_lp(F, p, eps, P), abs=1e-9)
    mu, med = root_and_median(F, p, eps)
    star = float(np.clip(mu, med - eps, med + eps))
    assert closed_v(F, p, eps, star) == pytest.approx(interval_lp(F, p, eps), abs=2e-5)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.2, 0.5])
@pytest.mark.parametrize("grid_kind", ["default", "predictions", "wider"])
def test_sweep_equals_the_cutting_plane_lp(seed, eps, grid_kind, monkeypatch):
    pred, codes, w = random_case(seed, ties=seed % 2 == 1)
    if seed % 3 == 0:
        pred = pred.copy()
        pred[codes == 0] = 0.3                          # a group with a single atom
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    if grid_kind == "default":
        grid = default_grid(dists, shares)
    elif grid_kind == "predictions":
        grid = np.unique(pred)
    else:                                               # extra points inside, below and above
        grid = np.unique(np.concatenate([pred, np.random.default_rng(seed).normal(size=12) * 4]))
    sol = sweep_matches_lp(dists, shares, grid, eps, "absolute", monkeypatch)
    assert np.all(sol.cdf >= 0.0)
    np.testing.assert_allclose(sol.pooled_cdf, shares @ sol.cdf, atol=1e-15)
    # the loss is the interval sum of |F - G| (the W1 distance of the monotone coupling)
    F = np.vstack([d.cdf(grid[:-1]) for d in dists])
    direct = float(shares @ (np.abs(F - sol.cdf[:, :-1]) @ np.diff(grid)))
    assert sol.loss == pytest.approx(direct, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("eps", [0.02, 0.1])
def test_estimator_at_the_default_grid_equals_the_row_level_lp(seed, eps):
    pred, codes, w = instance(seed, n=45)              # the row-level LP has n x (about 2n) plan entries
    deb = RegressionDebiaser(eps=eps, loss="absolute").fit(pred, sensitive_features=codes, sample_weight=w)
    assert deb.solution_.rounds == 0                     # the sweep, not the LP
    ref = full_plan_lp(pred, codes, w, deb.grid_, eps, "absolute")
    assert deb.train_loss_ == pytest.approx(ref, abs=1e-6)
    assert deb.train_gap_ <= eps + 1e-12
    cost = sum(p * (plan.multiply(np.abs(s[:, None] - deb.grid_[None, :]))).sum()
               for p, plan, s in zip(deb.group_shares_, deb.plan_, deb.support_, strict=True))
    assert cost == pytest.approx(deb.train_loss_, abs=1e-9)
    for a, (plan, lev) in enumerate(zip(deb.plan_, deb._levels, strict=True)):
        np.testing.assert_allclose(np.asarray(plan.sum(axis=1)).ravel(), np.diff(lev), atol=1e-12)
        np.testing.assert_allclose(np.cumsum(np.asarray(plan.sum(axis=0)).ravel()), deb.output_cdf_[a], atol=1e-12)
    # the output distributions drawn per row reproduce each group's CDF on the training rows
    _, proba = deb.predict_distribution(pred, sensitive_features=codes)
    for a in range(len(deb.groups_)):
        rows = codes == a
        cdf = np.cumsum(w[rows] @ proba[rows]) / w[rows].sum()
        np.testing.assert_allclose(cdf, deb.output_cdf_[a], atol=1e-9)


def test_loss_falls_with_eps():
    pred, codes, w = random_case(5, ties=True)
    losses = [RegressionDebiaser(eps=e, loss="absolute").fit(pred, sensitive_features=codes,
                                                              sample_weight=w).train_loss_
              for e in (0.0, 0.01, 0.05, 0.2, 1.0)]
    assert all(b <= a + 1e-12 for a, b in pairwise(losses))
    assert losses[0] > losses[2] and losses[-1] == pytest.approx(0.0, abs=1e-12)   # eps = 1: nothing moves


def dual_value(dists, shares, grid, eps, price):
    """The LP's Lagrangian dual at band duals ``price`` (``d loss / d bound``) and zero duals on the
    monotonicity rows: per interval ``min_{G in [0,1]^A} sum_a [p_a len |F_a - G_a| + (z p_a - price_a) G_a]
    - eps sum_a |price_a|`` with ``z = sum_a price_a`` (the pooled level's stationarity). It is at most
    the optimum for any duals of the right signs, and equal to it exactly for optimal ones."""
    F = np.vstack([d.cdf(grid[:-1]) for d in dists])
    length = np.diff(grid)[None, :]
    coef = price.sum(axis=0)[None, :] * shares[:, None] - price
    cands = [shares[:, None] * length * np.abs(F - G) + coef * G for G in (np.zeros_like(F), F, np.ones_like(F))]
    return float(np.minimum.reduce(cands).sum() - eps * np.abs(price).sum())


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.2, 0.5])
def test_prices_are_optimal_duals(seed, eps):
    pred, codes, w = random_case(seed, ties=seed % 2 == 1)
    if seed % 3 == 0:
        pred = pred.copy()
        pred[codes == 0] = 0.3
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    grid = default_grid(dists, shares) if seed % 2 else np.unique(pred)
    sol = rp.RegressionParity(dists, shares, grid, eps, "absolute").solve()
    price = sol.prices()
    assert price.shape == (len(dists), grid.shape[0] - 1)
    assert dual_value(dists, shares, grid, eps, price) == pytest.approx(sol.loss, abs=1e-10)   # strong duality
    # signs: d loss / d bound is <= 0 on a row held at +eps, >= 0 at -eps, 0 strictly inside
    d = sol.cdf[:, :-1] - sol.pooled_cdf[None, :-1]
    assert np.all(price[d > eps - 1e-12] <= 1e-12) and np.all(price[d < -eps + 1e-12] >= -1e-12)
    assert np.all(price[np.abs(d) < eps - 1e-9] == 0.0)
    # weak duality at other eps: loss(eps') >= loss(eps) - (eps' - eps) sum |price|
    total = np.abs(price).sum()
    for other in (eps * 0.5, min(eps * 1.5, 1.0)):
        moved = rp.RegressionParity(dists, shares, grid, other, "absolute").solve().loss
        assert moved >= sol.loss - (other - eps) * total - 1e-10


def test_estimator_prices_and_the_lp_agree_in_total():
    pred, codes, w = random_case(3, ties=False)
    deb = RegressionDebiaser(eps=0.05, loss="absolute").fit(pred, sensitive_features=codes, sample_weight=w)
    price = deb.price_of_fairness_                       # closed form, no LP
    assert deb.solution_.solution is None and np.abs(price).sum() > 0
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    lp = rp.RegressionParity(dists, shares, deb.grid_, 0.05, "absolute")._solve_lp(None)
    # the LP's duals may load the monotonicity rows, but the loss's slope in eps they give is the same here
    assert np.abs(lp.prices()).sum() == pytest.approx(np.abs(price).sum(), rel=1e-6)


def test_a_grid_without_every_prediction_keeps_the_lp():
    pred, codes, w = random_case(2, ties=False)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    grid = np.unique(np.delete(pred, 3))                 # one prediction between grid points
    form = rp.RegressionParity(dists, shares, grid, 0.05, "absolute")
    assert absolute_sweep(form) is None and form.solve().rounds >= 1
    assert absolute_sweep(rp.RegressionParity(dists, shares, np.unique(pred), 0.0, "absolute")) is None
    assert absolute_sweep(rp.RegressionParity(dists, shares, np.unique(pred), 0.05, "squared")) is None


def test_badly_scaled_values_go_through_the_sweep(monkeypatch):
    pred, codes, w = random_case(4, ties=True)
    small = RegressionDebiaser(eps=0.05, loss="absolute").fit(pred, sensitive_features=codes, sample_weight=w)
    big = RegressionDebiaser(eps=0.05, loss="absolute").fit(pred * 1e7 + 3e9, sensitive_features=codes,
                                                            sample_weight=w)
    assert big.solution_.rounds == 0
    assert big.train_loss_ == pytest.approx(small.train_loss_ * 1e7, rel=1e-9)
    np.testing.assert_allclose(big.output_cdf_, small.output_cdf_, atol=1e-12)


def test_a_larger_default_grid_runs_without_an_lp():
    rng = np.random.default_rng(0)
    n, A = 20_000, 4
    codes = rng.integers(0, A, n)
    pred = rng.normal(size=n) * (1 + 0.2 * codes) + 0.3 * codes
    deb = RegressionDebiaser(eps=0.02, loss="absolute").fit(pred, sensitive_features=codes)
    assert deb.solution_.rounds == 0 and deb.train_gap_ <= 0.02 + 1e-12
    assert np.all(np.diff(deb.output_cdf_, axis=1) >= 0)
    zero = RegressionDebiaser(eps=0.0, loss="absolute").fit(pred, sensitive_features=codes)
    assert deb.train_loss_ < zero.train_loss_


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eps", [0.01, 0.1, 0.45])
def test_roots_and_medians_per_pooled_prediction(seed, eps):
    """``mu_k`` zeroes ``R`` at every pooled prediction, ``med_k`` is the lower weighted median of the
    groups' CDFs there, and the sweep's pooled CDF is ``clip(mu, med - eps, med + eps)`` read at the
    last prediction at or below each grid point."""
    from fairopt.formulations.regression_sweep import _Pooled
    pred, codes, w = random_case(seed, ties=seed % 2 == 0)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    pool = _Pooled(dists, shares, eps, median=True)
    F = np.vstack([d.cdf(pool.tau) for d in dists])
    np.testing.assert_array_equal(pool.F, F)
    R = shares @ np.clip(pool.mu[None, :] - F, -eps, eps)
    np.testing.assert_allclose(R, 0.0, atol=1e-12)
    for k in range(F.shape[1]):
        order = np.argsort(F[:, k], kind="stable")
        at = np.argmax(np.cumsum(shares[order]) >= 0.5 - 1e-12)
        assert pool.median[k] == F[order[at], k]
    grid = default_grid(dists, shares)
    _, pooled = absolute_sweep(rp.RegressionParity(dists, shares, grid, eps, "absolute"))
    last = np.searchsorted(pool.tau, grid[:-1], side="right") - 1
    expect = np.clip(pool.mu, pool.median - eps, pool.median + eps)[last]
    np.testing.assert_allclose(pooled[:-1], expect, atol=1e-12)


@pytest.mark.parametrize("seed", range(60))
def test_optimality_certificate_on_harder_instances(seed):
    """Up to 12 groups, skewed weights (down to 1e-9), values rounded to 0-2 decimals (many ties),
    eps from 1e-6 to 1, three kinds of grid: the sweep is feasible (band, monotone, within [0, 1])
    and its duals close the duality gap, so it is optimal without reference to an LP solver's
    tolerance."""
    dists, shares, grid, eps = hard_instance(5000 + seed)
    sol = rp.RegressionParity(dists, shares, grid, eps, "absolute").solve()
    assert sol.rounds == 0 and sol.gap <= eps + 1e-12
    assert np.all(np.diff(sol.cdf, axis=1) >= -1e-15) and np.all((sol.cdf >= 0) & (sol.cdf <= 1))
    assert dual_value(dists, shares, grid, eps, sol.prices()) == pytest.approx(sol.loss, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("case", ["one_group", "two_values", "eps_tiny", "all_equal"])
def test_edge_cases(case, monkeypatch):
    pred, codes, w = random_case(1, ties=True)
    n_groups, eps = int(codes.max()) + 1, 0.1
    if case == "one_group":
        codes, n_groups = np.zeros_like(codes), 1                 # nothing to equalise: loss 0
    elif case == "two_values":
        pred = np.where(pred > 0.5, 1.0, 0.0)
    elif case == "eps_tiny":
        eps = 1e-9
    else:
        pred = np.full_like(pred, 2.0)
    dists, shares = rp.collapse_groups(pred, codes, n_groups, w)
    grid = np.unique(pred)
    sol = rp.RegressionParity(dists, shares, grid, eps, "absolute").solve()
    assert sol.rounds == 0 and sol.gap <= eps + 1e-12
    if case == "all_equal":                                        # one output value
        assert grid.size == 1 and sol.loss == 0.0
        return
    assert dual_value(dists, shares, grid, eps, sol.prices()) == pytest.approx(sol.loss, abs=1e-12)
    if case == "eps_tiny":   # the loss is continuous at eps = 0
        zero = rp.RegressionParity(dists, shares, grid, 0.0, "absolute").solve()
        assert sol.loss == pytest.approx(zero.loss, abs=1e-7) and sol.loss <= zero.loss + 1e-12
    with monkeypatch.context() as m:
        m.setattr(rp, "absolute_sweep", lambda form: None)
        ref = lp_solution(dists, shares, grid, eps, "absolute", monkeypatch)
    # the LP asks its solver for a feasibility tolerance under eps, so its band holds at eps = 1e-9 too
    assert ref.gap <= eps * (1 + 1e-6) + 1e-15
    assert sol.loss == pytest.approx(ref.loss, abs=1e-9)
    if case == "one_group":
        assert sol.loss == pytest.approx(0.0, abs=1e-12)
