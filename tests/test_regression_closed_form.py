"""The closed-form (no LP) path of the regression-parity transport against the LP (issue 33, scale).

At eps = 0 the optimum is computed on the merged quantile cells of the groups (barycenter for the
squared loss, a weighted median of the groups' quantiles for the absolute loss). Here it is checked
against the cutting-plane LP on the same grid, against the independent row-level transport LP, and
its by-products (plans, duals, input gap, grid) against direct computations.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_regression_debiasing import full_plan_lp, instance

import fairopt.formulations.regression_parity as rp
from fairopt.formulations.regression_closed_form import closed_form, default_grid, input_gap, merged_cells
from fairopt.postprocessing import RegressionDebiaser


def lp_solution(dists, shares, grid, eps, loss, monkeypatch):
    """The cutting-plane LP with the closed form switched off."""
    with monkeypatch.context() as m:
        m.setattr(rp, "closed_form", lambda form: None)
        return rp.RegressionParity(dists, shares, grid, eps, loss).solve()


def random_case(seed, ties):
    rng = np.random.default_rng(seed)
    A = int(rng.integers(2, 6))
    n = int(rng.integers(20, 120))
    codes = rng.integers(0, A, n)
    codes[:A] = np.arange(A)
    pred = rng.normal(size=n) * (1 + 0.4 * codes) + 0.7 * codes
    if ties:
        pred = np.round(pred, 1)
    return pred, codes, rng.random(n) + 0.05


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
@pytest.mark.parametrize("ties", [False, True])
def test_closed_form_equals_the_cutting_plane_lp(seed, loss, ties, monkeypatch):
    pred, codes, w = random_case(seed, ties)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    grid = default_grid(dists, shares)
    fast = rp.RegressionParity(dists, shares, grid, 0.0, loss).solve()
    assert fast.rounds == 0 and fast.solution is None           # no LP ran
    ref = lp_solution(dists, shares, grid, 0.0, loss, monkeypatch)
    assert ref.rounds >= 1
    assert fast.loss == pytest.approx(ref.loss, abs=1e-7)
    # feasible: one output CDF for all groups, non-decreasing, ending at 1
    assert fast.gap == 0.0
    np.testing.assert_array_equal(fast.cdf, np.broadcast_to(fast.pooled_cdf, fast.cdf.shape))
    assert np.all(np.diff(fast.pooled_cdf) >= 0) and fast.pooled_cdf[-1] == 1.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_closed_form_equals_the_row_level_transport_lp(seed, loss):
    pred, codes, w = instance(seed)
    deb = RegressionDebiaser(loss=loss).fit(pred, sensitive_features=codes, sample_weight=w)
    assert deb.solution_.rounds == 0
    ref = full_plan_lp(pred, codes, w, deb.grid_, 0.0, loss)
    assert deb.train_loss_ == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_plans_carry_the_mass_and_the_loss(seed, loss):
    pred, codes, w = random_case(seed, ties=seed % 2 == 1)
    deb = RegressionDebiaser(loss=loss).fit(pred, sensitive_features=codes, sample_weight=w)
    dists, _ = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    out = np.diff(deb.pooled_cdf_, prepend=0.0)
    total = 0.0
    for a, (plan, d) in enumerate(zip(deb.plan_, dists, strict=True)):
        np.testing.assert_allclose(np.asarray(plan.sum(axis=1)).ravel(), d.weights, atol=1e-12)   # rows: source
        np.testing.assert_allclose(np.asarray(plan.sum(axis=0)).ravel(), out, atol=1e-12)         # columns: output
        cost = rp.transport_cost(d.values[:, None] - deb.grid_[None, :], loss)
        total += deb.group_shares_[a] * plan.multiply(cost).sum()
        # monotone coupling: the support of each row starts where the previous one ended
        coo = plan.tocoo()
        order = np.lexsort((coo.col, coo.row))
        assert np.all(np.diff(coo.col[order]) >= 0)
    assert total == pytest.approx(deb.train_loss_, abs=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_duals_give_the_slope_of_the_loss_as_eps_leaves_zero(seed, loss):
    pred, codes, w = random_case(seed, ties=False)
    a = RegressionDebiaser(loss=loss).fit(pred, sensitive_features=codes, sample_weight=w)
    d = 1e-5
    b = RegressionDebiaser(loss=loss, eps=d, grid=a.grid_).fit(pred, sensitive_features=codes, sample_weight=w)
    slope = (b.train_loss_ - a.train_loss_) / d
    price = a.price_of_fairness_
    assert price.shape == (len(a.groups_), a.grid_.shape[0] - 1)
    assert slope == pytest.approx(-np.abs(price).sum(), rel=2e-3)
    # the same sign convention as the LP's duals just above eps = 0 (d loss / d bound)
    lp = b.price_of_fairness_
    both = (np.abs(price) > 1e-9) & (np.abs(lp) > 1e-9)
    assert both.sum() > 0 and np.all(np.sign(price[both]) == np.sign(lp[both]))


def test_user_grid_without_the_output_support_runs_the_lp():
    pred, codes, w = instance(0)
    grid = np.linspace(pred.min(), pred.max(), 9)
    deb = RegressionDebiaser(grid=grid).fit(pred, sensitive_features=codes, sample_weight=w)
    assert deb.solution_.rounds >= 1 and deb.solution_.solution is not None
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    assert closed_form(rp.RegressionParity(dists, shares, grid, 0.0, "squared")) is None
    assert closed_form(rp.RegressionParity(dists, shares, default_grid(dists, shares), 0.05, "squared")) is None


@pytest.mark.parametrize("seed", range(6))
def test_cells_grid_and_input_gap_against_direct_formulas(seed):
    pred, codes, w = random_case(seed, ties=seed % 2 == 0)
    dists, shares = rp.collapse_groups(pred, codes, codes.max() + 1, w)
    cuts = np.unique(np.concatenate([d.levels for d in dists]))
    mids = 0.5 * (cuts[1:] + cuts[:-1])
    cells = merged_cells(dists, shares)
    np.testing.assert_allclose(cells.mass, np.diff(cuts), atol=1e-15)
    for a, d in enumerate(dists):
        np.testing.assert_array_equal(d.values[cells.atoms(a)], d.quantile(mids))
    np.testing.assert_allclose(cells.barycenter, sum(p * d.quantile(mids) for p, d in zip(shares, dists, strict=True)),
                               atol=1e-12)
    grid = default_grid(dists, shares)
    bv, _ = rp.barycenter(dists, shares)
    assert np.all(np.diff(grid) > 0) and np.isin(bv, grid).all() and np.isin(pred, grid).all()
    values = np.unique(pred)
    F = np.vstack([d.cdf(values) for d in dists])
    assert input_gap(dists, shares) == pytest.approx(float(np.abs(F - shares @ F).max()), abs=1e-12)


def test_scale_inputs_far_from_unit_use_the_lp_consistently():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 60)
    pred = 1e6 + 1e4 * np.round(rng.normal(size=60), 1)
    deb = RegressionDebiaser().fit(pred, sensitive_features=codes)
    base = RegressionDebiaser().fit((pred - 1e6) / 1e4, sensitive_features=codes)
    assert deb.train_loss_ == pytest.approx(base.train_loss_ * 1e8, rel=1e-6)
    assert deb.train_gap_ <= 1e-9
