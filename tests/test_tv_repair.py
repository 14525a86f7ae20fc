"""TV repair: exact aggregation, back-end agreement, closed form, price of fairness, sampling."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.data import Domain, load_builtin
from fairopt.errors import DataValidationError
from fairopt.formulations.tv_repair import TVRepair
from fairopt.modeling import installed_specs

LP_SPECS = ["highs", "scipy", "osqp", "cvxpy:CLARABEL", "cvxpy:HIGHS", "pyomo:appsi_highs"]
LP_SPECS = [s for s in LP_SPECS if (s if ":" in s else f"{s}:{'highs' if s == 'scipy' else s}")
            in installed_specs("LP")]


def _evaluate(model: TVRepair, result):
    """Recompute TV, group masses and rates from the lifted cell distribution, independently of
    the program builder."""
    dom = model.domain
    flat_q = dict(zip(dom.ravel(model.cells).tolist(), model.q, strict=False))
    flat_p = dict(zip(dom.ravel(result.cells).tolist(), result.p, strict=False))
    keys = set(flat_q) | set(flat_p)
    tv = 0.5 * sum(abs(flat_p.get(k, 0.0) - flat_q.get(k, 0.0)) for k in keys)
    d, y = dom.index(model.protected), dom.index(model.label)
    n_d = dom.cardinalities[d]
    mass = np.bincount(result.cells[:, d], weights=result.p, minlength=n_d)
    fav = np.bincount(result.cells[:, d], weights=result.p * (result.cells[:, y] == model._ypos), minlength=n_d)
    return tv, mass, fav / np.where(mass > 0, mass, 1)


def _random_domain(seed: int, n_groups: int = 2):
    rng = np.random.default_rng(seed)
    dom = Domain([("g", list(range(n_groups))), ("x1", ["a", "b", "c"]), ("x2", [0, 1]), ("y", [0, 1])])
    codes = dom.unravel(np.arange(dom.size))
    counts = rng.integers(0, 30, size=dom.size) * (rng.random(dom.size) < 0.8)
    # make the groups' favourable rates differ
    counts[(codes[:, 0] == 0) & (codes[:, 3] == 1)] *= 3
    return dom, codes[counts > 0], counts[counts > 0]


def test_builtin_compas_matches_closed_form_on_every_backend():
    data = load_builtin("compas")
    cells, counts = data.codes()
    tvs = []
    for spec in LP_SPECS:
        for form in ("aggregated", "full"):
            model = TVRepair(data.domain, cells, counts, protected="race", label=data.label,
                             favourable_label=data.favourable_label, statistical_rate=0.95, form=form)
            res = model.solve(spec)
            tv, mass, rates = _evaluate(model, res)
            assert tv == pytest.approx(res.tv, abs=1e-7)
            np.testing.assert_allclose(mass, model.r, atol=1e-7)
            assert rates.min() / rates.max() >= 0.95 - 1e-7
            tvs.append(res.tv)
    # closed form for two groups with pinned masses: max(0, tau*pi_hi - pi_lo) * min(q_lo, q_hi/tau)
    q = data.counts.groupby("race")["count"].sum() / data.n_records
    pi = (data.counts[data.counts[data.label] == data.favourable_label].groupby("race")["count"].sum()
          / data.counts.groupby("race")["count"].sum())
    hi, lo = pi.idxmax(), pi.idxmin()
    expected = max(0.0, 0.95 * pi[hi] - pi[lo]) * min(q[lo], q[hi] / 0.95)
    np.testing.assert_allclose(tvs, expected, rtol=1e-6)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_groups", [2, 3])
def test_aggregation_is_exact(seed, n_groups):
    dom, cells, counts = _random_domain(seed, n_groups)
    for kw in ({"statistical_rate": 1.0}, {"statistical_rate": 0.8}, {"sr_difference": 0.03},
               {"statistical_rate": 0.9, "representation": "balanced"}):
        res = [TVRepair(dom, cells, counts, protected="g", label="y", form=f, **kw).solve("highs")
               for f in ("aggregated", "full")]
        assert res[0].tv == pytest.approx(res[1].tv, abs=1e-10), kw
        model = TVRepair(dom, cells, counts, protected="g", label="y", **kw)
        tv, _mass, rates = _evaluate(model, res[0])
        assert tv == pytest.approx(res[0].tv, abs=1e-10)
        if "sr_difference" in kw:
            assert rates.max() - rates.min() <= kw["sr_difference"] + 1e-9
        else:
            assert rates.min() / rates.max() >= kw["statistical_rate"] - 1e-9


def test_price_of_fairness_matches_finite_differences():
    dom, cells, counts = _random_domain(7, 3)
    h = 1e-4

    def tv(**kw):
        return TVRepair(dom, cells, counts, protected="g", label="y", **kw).solve("highs").tv
    for spec in ("highs", "cvxpy:CLARABEL", "pyomo:appsi_highs"):
        res = TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=0.85).solve(spec)
        fd = (tv(statistical_rate=0.85 + h) - tv(statistical_rate=0.85 - h)) / (2 * h)
        assert res.price_of_fairness == pytest.approx(fd, rel=1e-3, abs=1e-6), spec
        assert res.price_of_fairness > 0
        res = TVRepair(dom, cells, counts, protected="g", label="y", sr_difference=0.02).solve(spec)
        fd = (tv(sr_difference=0.02 + h) - tv(sr_difference=0.02 - h)) / (2 * h)
        assert res.price_of_fairness == pytest.approx(fd, rel=1e-3, abs=1e-6), spec
        assert res.price_of_fairness < 0
    # exact parity among 3 groups: the duals do not determine the one-sided derivative
    res = TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=1.0).solve("highs")
    assert np.isnan(res.price_of_fairness)
    # with 2 groups they do: left derivative in tau
    dom2, cells2, counts2 = _random_domain(7, 2)
    res = TVRepair(dom2, cells2, counts2, protected="g", label="y", statistical_rate=1.0).solve("highs")
    lower = TVRepair(dom2, cells2, counts2, protected="g", label="y", statistical_rate=1.0 - h).solve("highs")
    assert res.price_of_fairness == pytest.approx((res.tv - lower.tv) / h, rel=1e-3)


def test_already_fair_data_is_left_unchanged():
    dom, cells, counts = _random_domain(3)
    res = TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=0.01).solve("highs")
    assert res.tv == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(res.p, res.q, atol=1e-12)
    assert res.price_of_fairness == pytest.approx(0.0, abs=1e-12)


def test_huge_domain_is_solved_by_aggregation():
    rng = np.random.default_rng(0)
    attrs = [("g", ["f", "m"]), ("y", [0, 1])] + [(f"a{i}", list(range(10))) for i in range(10)]
    dom = Domain(attrs)
    assert dom.size == 4 * 10**10
    codes = np.column_stack([rng.integers(0, 2, 5000), rng.integers(0, 2, 5000),
                             rng.integers(0, 10, (5000, 10))])
    codes[:2500, 1] = (rng.random(2500) < 0.7)  # group-dependent label rate
    cells, counts = dom.unique_codes(codes)
    model = TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=1.0)
    res = model.solve("highs")
    tv, _mass, rates = _evaluate(model, res)
    assert tv == pytest.approx(res.tv, abs=1e-10) and rates.max() - rates.min() < 1e-9
    with pytest.raises(DataValidationError, match="form='aggregated'"):
        TVRepair(dom, cells, counts, protected="g", label="y", form="full")


def test_empty_block_gains_mass_on_a_canonical_cell():
    dom = Domain([("g", ["a", "b"]), ("x", [0, 1]), ("y", [0, 1])])
    # group b has no favourable records at all
    cells = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 0], [1, 1, 0]])
    counts = np.array([5, 5, 6, 4])
    model = TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=1.0)
    res = model.solve("highs")
    tv, _mass, rates = _evaluate(model, res)
    assert tv == pytest.approx(res.tv, abs=1e-12)
    assert rates[0] == pytest.approx(rates[1], abs=1e-12)
    assert res.p.sum() == pytest.approx(1.0)


def test_sampling_is_seeded_and_follows_p():
    data = load_builtin("compas")
    res = TVRepair.from_frame(data.counts, data.domain, count_column="count", protected="race",
                              label=data.label, favourable_label=0).solve("highs")
    a = res.sample(200_000, random_state=1)
    b = res.sample(200_000, random_state=1)
    pd_equal = a.equals(b)
    assert pd_equal
    fav = (a[data.label] == 0).groupby(a["race"]).mean()
    assert abs(fav.iloc[0] - fav.iloc[1]) < 0.01  # parity holds in the sample
    frame = res.to_frame()
    assert frame["p"].sum() == pytest.approx(1.0) and list(frame.columns[-2:]) == ["q", "p"]


def test_bad_input_is_rejected_with_guidance():
    dom, cells, counts = _random_domain(0)
    with pytest.raises(DataValidationError, match=r"\(0, 1\]"):
        TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=1.2)
    with pytest.raises(DataValidationError, match="not both"):
        TVRepair(dom, cells, counts, protected="g", label="y", statistical_rate=0.9, sr_difference=0.1)
    with pytest.raises(DataValidationError, match="not in the domain"):
        TVRepair(dom, cells, counts, protected="sex", label="y")
    with pytest.raises(DataValidationError, match="favourable_label"):
        TVRepair(dom, cells, counts, protected="g", label="y", favourable_label=2)
    with pytest.raises(DataValidationError, match="summing to 1"):
        TVRepair(dom, cells, counts, protected="g", label="y", representation=[0.2, 0.2])
    with pytest.raises(DataValidationError, match="non-negative"):
        TVRepair(dom, cells, -counts, protected="g", label="y")


def test_non_optimal_solve_raises_instead_of_returning_a_repair():
    from fairopt.errors import SolverError
    data = load_builtin("compas")
    cells, counts = data.codes()
    model = TVRepair(data.domain, cells, counts, protected="race", label=data.label, favourable_label=0,
                     form="full")
    with pytest.raises(SolverError, match=r"iteration_limit|time_limit"):
        model.solve("highs", options={"simplex_iteration_limit": 1, "presolve": "off"})
