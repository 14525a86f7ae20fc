"""The squared-loss sweep at eps > 0 (no LP) against the cutting-plane LP (issue 33, scale).

Per grid interval the pooled CDF ``P_j`` is where the slope of the allocation value ``V'(P)``
crosses the interval's midpoint, and the groups' CDFs are the allocation at ``P_j``. Checked here:
equal loss to the LP on random instances (ties, weights, random and default grids), parity within
eps, monotone CDFs, and the allocation's own constraints.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_regression_closed_form import lp_solution, random_case

import fairopt.formulations.regression_parity as rp
from fairopt.formulations.regression_closed_form import default_grid
from fairopt.formulations.regression_sweep import allocation, squared_sweep
from fairopt.postprocessing import RegressionDebiaser


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("eps", [0.01, 0.05, 0.2])
@pytest.mark.parametrize("grid_kind", ["random", "default"])
def test_sweep_equals_the_cutting_plane_lp(seed, eps, grid_kind, monkeypatch):
    pred, codes, w = random_case(seed, ties=seed % 2 == 1)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    if grid_kind == "random":
        grid = np.unique(np.round(np.random.default_rng(50 + seed).normal(size=14) * 1.5 + 1, 2))
    else:
        grid = default_grid(dists, shares)
    sol = sweep_matches_lp(dists, shares, grid, eps, "squared", monkeypatch)
    np.testing.assert_allclose(sol.pooled_cdf, shares @ sol.cdf, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_allocation_meets_its_constraints(seed):
    pred, codes, w = random_case(seed, ties=True)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    P = np.sort(np.random.default_rng(seed).random(40))
    for eps in (0.0, 0.03, 0.3):
        G = allocation(dists, shares, P, eps)
        np.testing.assert_allclose(shares @ G, P, atol=1e-12)            # the pooled level is met
        assert np.all(np.abs(G - P) <= eps + 1e-12) and np.all((G >= 0) & (G <= 1))
        assert np.all(np.diff(G, axis=1) >= -1e-12)                      # monotone in P


def test_sweep_declines_other_cases():
    pred, codes, w = instance_small()
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    grid = np.linspace(pred.min(), pred.max(), 7)
    assert squared_sweep(rp.RegressionParity(dists, shares, grid, 0.1, "absolute")) is None
    assert squared_sweep(rp.RegressionParity(dists, shares, grid, 0.0, "squared")) is None


def instance_small():
    return random_case(0, ties=False)


def test_estimator_at_eps_above_zero_uses_the_sweep_and_its_price_needs_no_lp():
    pred, codes, w = random_case(3, ties=True)
    deb = RegressionDebiaser(eps=0.05).fit(pred, sensitive_features=codes, sample_weight=w)
    assert deb.solution_.rounds == 0 and deb.train_gap_ <= 0.05 + 1e-12
    price = deb.price_of_fairness_          # the intervals' own duals, in closed form on demand
    assert deb.solution_.solution is None
    assert price.shape == (len(deb.groups_), deb.grid_.shape[0] - 1) and np.abs(price).sum() > 0
    assert deb.train_loss_ < RegressionDebiaser(eps=0.0).fit(pred, sensitive_features=codes,
                                                             sample_weight=w).train_loss_


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eps", [0.01, 0.1, 0.45])
def test_cell_slopes_from_the_merge_equal_the_allocation_slope(seed, eps):
    """The merged-count slope on every cell against the slope read off the allocation itself."""
    from fairopt.formulations.regression_sweep import _cell_slopes, _Pooled
    pred, codes, w = random_case(seed, ties=seed % 2 == 0)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    pool = _Pooled(dists, shares, eps)
    ends, v = _cell_slopes(pool)
    assert ends[0] == 0.0 and ends[-1] == 1.0 and np.all(np.diff(ends) > 0)
    wide = np.diff(ends) > 1e-9      # the allocation reads P to 1e-13: skip slivers between near-equal ends
    np.testing.assert_allclose(v[wide], pool.slope(0.5 * (ends[1:] + ends[:-1]))[wide], atol=1e-12)
    assert np.all(np.diff(v) >= -1e-12)                                  # V is convex
    # the roots: the filled allocation at tau_k reaches exactly mu_k
    G = pool.allocate(pool.mu)[0]
    np.testing.assert_allclose(shares @ G, pool.mu, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("case", ["eps_one", "eps_half", "one_group", "grid_above", "grid_below", "grid_narrow"])
def test_sweep_edge_cases_equal_the_lp(seed, case, monkeypatch):
    pred, codes, w = random_case(seed, ties=True)
    n_groups = codes.max() + 1
    grid, eps = np.linspace(-3.0, 5.0, 9), 0.1
    if case == "eps_one":
        eps = 1.0                                   # the band covers [0, 1]: no parity constraint binds
    elif case == "eps_half":
        eps = 0.5
    elif case == "one_group":
        codes, n_groups = np.zeros_like(codes), 1
    elif case == "grid_above":
        grid = np.array([10.0, 11.0, 12.0])        # every prediction below the grid
    elif case == "grid_below":
        grid = np.array([-12.0, -11.0])
    else:
        grid, eps = np.array([0.0, 0.1]), 0.05
    dists, shares = rp.collapse_groups(pred, codes, n_groups, w)
    sol = rp.RegressionParity(dists, shares, grid, eps, "squared").solve()
    assert sol.rounds == 0
    with monkeypatch.context() as m:
        m.setattr(rp, "squared_sweep", lambda form: None)
        ref = lp_solution(dists, shares, grid, eps, "squared", monkeypatch)
    assert sol.loss == pytest.approx(ref.loss, abs=1e-9 * max(1.0, abs(ref.loss)))
    assert sol.gap <= eps + 1e-12


def squared_dual_value(form, price):
    """The LP's Lagrangian dual at band duals ``price`` (``d loss / d bound``), zero duals on the
    monotonicity rows: ``constant + sum_{j,a} min_{G in [0,1]} [2 len_j p_a (H_a(G) - m_j G) + (z_j p_a -
    price_{a,j}) G] - eps sum |price|`` with ``H_a = int Q_a`` (piecewise linear with kinks at the
    group's levels, so the minimum is at a level) and ``z_j = sum_a price_{a,j}``."""
    dists, shares, grid, eps = form.dists, form.shares, form.grid, form.eps
    length, mid = np.diff(grid), 0.5 * (grid[:-1] + grid[1:])
    coef = price.sum(axis=0)[None, :] * shares[:, None] - price
    total = form.constant()
    for a, d in enumerate(dists):
        c, S = d.levels, d.first_moment
        vals = (2 * length[None, :] * shares[a] * (S[:, None] - mid[None, :] * c[:, None])
                + coef[a][None, :] * c[:, None])
        total += vals.min(axis=0).sum()
    return total - eps * np.abs(price).sum()


def sweep_matches_lp(dists, shares, grid, eps, loss, monkeypatch):
    """The sweep of ``loss`` (no LP) against the cutting-plane LP with the sweep switched off:
    equal loss, band and monotone CDFs; returns the sweep's solution."""
    sol = rp.RegressionParity(dists, shares, grid, eps, loss).solve()
    assert sol.rounds == 0 and sol.solution is None                  # no LP ran
    with monkeypatch.context() as m:
        m.setattr(rp, f"{loss}_sweep", lambda form: None)
        ref = lp_solution(dists, shares, grid, eps, loss, monkeypatch)
    assert ref.rounds >= 1
    assert sol.loss == pytest.approx(ref.loss, abs=1e-9 * max(1.0, abs(ref.loss)))
    assert sol.gap <= eps + 1e-12
    assert np.all(np.diff(sol.cdf, axis=1) >= -1e-15) and np.all(sol.cdf[:, -1] == 1.0)
    return sol


def hard_instance(seed: int) -> tuple[list, np.ndarray, np.ndarray, float]:
    """Up to 12 groups, skewed weights (down to 1e-9), values rounded to 0-2 decimals (many ties),
    eps from 1e-6 to 1, and one of three grids (default, the predictions, the predictions plus
    values outside): ``(dists, shares, grid, eps)``."""
    rng = np.random.default_rng(seed)
    A = int(rng.integers(2, 13))
    n = int(rng.integers(A, 200))
    codes = rng.integers(0, A, n)
    codes[:A] = np.arange(A)
    pred = np.round(rng.normal(size=n) * (1 + 0.3 * codes) + 0.2 * codes, int(rng.integers(0, 3)))
    w = rng.random(n) ** int(rng.integers(1, 8)) + float(rng.choice([1e-9, 1e-6, 1e-3]))
    eps = float(rng.choice([1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 1.0]))
    dists, shares = rp.collapse_groups(pred, codes, A, w)
    grid = [default_grid(dists, shares), np.unique(pred),
            np.unique(np.concatenate([pred, rng.normal(size=8) * 5]))][seed % 3]
    return dists, shares, grid, eps


@pytest.mark.parametrize("seed", range(60))
def test_prices_are_optimal_duals(seed):
    """Up to 12 groups, skewed weights (down to 1e-9), many ties, eps from 1e-6 to 1, three kinds of
    grid: the closed-form duals close the duality gap (optimal; the LP is not asked), have the
    right sign at the band's edges and are 0 inside."""
    dists, shares, grid, eps = hard_instance(7000 + seed)
    form = rp.RegressionParity(dists, shares, grid, eps, "squared")
    sol = form.solve()
    price = sol.prices()
    assert sol.solution is None
    assert squared_dual_value(form, price) == pytest.approx(sol.loss, rel=1e-9, abs=1e-12)
    d = sol.cdf[:, :-1] - sol.pooled_cdf[None, :-1]
    assert np.all(price[d > eps - 1e-12] <= 1e-12) and np.all(price[d < -eps + 1e-12] >= -1e-12)
    assert np.all(price[np.abs(d) < eps - 1e-9] == 0.0)


def test_prices_agree_with_the_lp_in_total():
    pred, codes, w = random_case(1, ties=False)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    grid = default_grid(dists, shares)
    form = rp.RegressionParity(dists, shares, grid, 0.05, "squared")
    mine, lp = form.solve().prices(), form._solve_lp(None).prices()
    assert np.abs(mine).sum() == pytest.approx(np.abs(lp).sum(), rel=1e-6)
    assert squared_dual_value(form, lp) <= form.solve().loss + 1e-9       # weak duality for the LP's too
