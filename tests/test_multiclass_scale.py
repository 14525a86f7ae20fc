"""The multiclass scale path (issue 33): the small smoothed dual, the elastic working-set
finish, chunked / Dask statistics with ``score_bins``, and the PAVA calibration."""
from __future__ import annotations

import os

import numpy as np
import pytest

from fairopt.errors import ConfigError
from fairopt.formulations.constrained_classification.multiclass_dual import DualProblem, Prepared, dual_offsets, margins
from fairopt.formulations.constrained_classification.multiclass_lp import MulticlassTransportLP, collapse_vectors
from fairopt.formulations.constrained_classification.multiclass_working_set import (
    certify_from_offsets,
    solve_dual_working_set,
)
from fairopt.modeling.registry import default_spec
from fairopt.postprocessing import MulticlassDebiaser

CONSTRAINTS = ("demographic_parity", "equal_opportunity", "equalized_odds")


def _lp(constraint, eps, n=1500, K=3, G=3, seed=1, weights=True, zero_one=False):
    rng = np.random.default_rng(seed)
    S = rng.dirichlet(np.ones(K), n)
    g = rng.integers(0, G, n)
    S[g == 1] = 0.6 * S[g == 1] + 0.4 * np.eye(K)[0]
    w = rng.uniform(0.5, 2.0, n) if weights else None
    C = 1.0 - np.eye(K) if zero_one else rng.uniform(0, 1, (K, K))
    return MulticlassTransportLP(collapse_vectors(S, g, w), G, C, constraint, eps)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_dual_gradient_and_hessian_match_finite_differences(constraint):
    lp = _lp(constraint, 0.0, n=400)
    dp = DualProblem.from_lp(lp)
    rng = np.random.default_rng(0)
    x, tau, h = rng.normal(0, 0.1, dp.n_x), 0.05, 1e-6
    val, grad, H = dp.value_grad_hess(x, tau)
    v0, g0 = dp.value_grad(x, tau)
    assert val == pytest.approx(v0, abs=1e-13)
    np.testing.assert_allclose(grad, g0, atol=1e-13)
    fd = np.array([(dp.value_grad(x + h * e, tau)[0] - dp.value_grad(x - h * e, tau)[0]) / (2 * h)
                   for e in np.eye(dp.n_x)])
    np.testing.assert_allclose(grad, fd, atol=1e-8)
    Hfd = np.array([(dp.value_grad(x + h * e, tau)[1] - dp.value_grad(x - h * e, tau)[1]) / (2 * h)
                    for e in np.eye(dp.n_x)])
    np.testing.assert_allclose(H, Hfd, atol=1e-7)
    assert np.linalg.eigvalsh(H).max() < 1e-9          # concave


def test_pinned_atoms_enter_linearly():
    """Atoms held at a class contribute their linear part: with every atom's class far from a
    tie, the restricted dual equals the full one near the point."""
    lp = _lp("demographic_parity", 0.0, n=600)
    prep = Prepared(lp)
    full = DualProblem.from_lp(lp, prep=prep)
    x = np.zeros(full.n_x)
    D, b = np.zeros((3, 3, 3)), np.zeros((3, 3))
    arg, gap = margins(prep, D, b)
    far = gap > 0.05
    pinned = np.where(far, arg, -1)
    tie = DualProblem.from_lp(lp, np.flatnonzero(~far), pinned=pinned, prep=prep)
    tau = 1e-3     # exp(-0.05 / tau) is negligible: the pinned atoms are one-hot in the full dual
    for dx in (np.zeros(full.n_x), np.full(full.n_x, 0.004) * np.sign(np.arange(full.n_x) % 3 - 1)):
        v1, g1 = full.value_grad(x + dx, tau)
        v2, g2 = tie.value_grad(x + dx, tau)
        assert v1 == pytest.approx(v2, abs=1e-12)
        np.testing.assert_allclose(g1, g2, atol=1e-12)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("eps", [0.0, 0.03])
def test_dual_path_equals_full_lp(constraint, eps):
    lp = _lp(constraint, eps, n=3000, K=4)
    full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    ws = solve_dual_working_set(lp, default_spec("LP"))
    assert ws.info["certified"] and ws.info["path"] == "dual"
    assert ws.objective == pytest.approx(full.objective, abs=1e-9)
    assert ws.gaps.max() <= eps + 1e-8
    np.testing.assert_allclose(ws.q.sum(axis=1), 1.0)


def test_dual_offsets_give_a_near_optimal_near_fair_argmin_rule():
    """The smoothed dual's offsets are near optimal: their (unrandomized) argmin rule is within
    a small distance of the LP's cost and gaps, and few atoms stay within the tie tolerance."""
    from fairopt.formulations.constrained_classification.multiclass_lp import rates_and_gaps
    rng = np.random.default_rng(3)
    n, K = 6000, 3
    S = rng.dirichlet(np.ones(K), n)
    g = rng.integers(0, 2, n)
    S[g == 1] = 0.6 * S[g == 1] + 0.4 * np.eye(K)[0]
    lp = MulticlassTransportLP(collapse_vectors(S, g), 2, 1 - np.eye(K), "demographic_parity", 0.0)
    D, b, _ = dual_offsets(lp, sample_atoms=1500, min_atoms=500)
    full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    assert np.abs(full.b).max() > 0.01       # the constraint binds
    arg, gap = margins(Prepared(lp), D, b)
    P = np.eye(K)[arg]
    at = lp.atoms
    _, _, gaps = rates_and_gaps(at.scores, at.group, at.weight, P, lp.events, 2)
    cost = float(np.sum((at.scores @ lp.cost) * P * at.weight[:, None]) / at.weight.sum())
    assert gaps.max() < 0.01 and abs(cost - full.objective) < 0.005
    assert (gap < 1e-3).sum() < 0.05 * n


def test_bad_offsets_still_certify_the_optimum():
    """The finish is exact from any offsets: zero offsets need more rounds, same optimum; the
    elastic restricted LP detects pinned mass that leaves no feasible point."""
    lp = _lp("equalized_odds", 0.0, n=2000, K=3, G=2, zero_one=True)
    full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    at = lp.atoms
    blind = float(np.dot(at.weight, (at.scores @ lp.cost).min(axis=1)) / at.weight.sum())
    assert full.objective > blind + 0.01          # the constraint binds: zero offsets are poor
    zero = np.zeros((2, 3, 3)), np.zeros((2, 3))
    ws = certify_from_offsets(lp, default_spec("LP"), *zero, free_atoms=50, max_rounds=30, t0=0.0)
    assert ws.info["certified"] and ws.info["rounds"] > 1 and "fallback" not in ws.info
    assert ws.objective == pytest.approx(full.objective, abs=1e-9)


def test_elastic_lp_equals_restricted_lp_when_feasible():
    lp = _lp("demographic_parity", 0.05, n=800)
    fixed = np.full(lp.atoms.n_atoms, -1)
    fixed[:100] = np.argmin(lp.atoms.scores[:100] @ lp.cost, axis=1)
    a = lp.solve_fixed(default_spec("LP"), fixed, 0.0)
    b = lp.solve_fixed(default_spec("LP"), fixed, 0.0, elastic=1e4)
    assert a.objective == pytest.approx(b.objective, abs=1e-10)


# ------------------------------------------------------------------ candidate classes
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("eps", [0.0, 0.02])
def test_candidate_class_path_certifies_the_full_lp(seed, constraint, eps):
    """The working set with candidate classes (free atoms keep only the classes within the
    window of their least adjusted cost) on instances big enough for the scale path: certified,
    and equal to the full LP; every column left out has a reduced cost >= 0 under its duals."""
    from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    lp = _lp(constraint, eps, n=4000, K=5, G=3, seed=seed, zero_one=seed == 0)
    full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    ws = solve_dual_working_set(lp, default_spec("LP"), free_atoms=60, tie_tol=1e-4)
    K = lp.atoms.scores.shape[1]
    assert ws.info["certified"] and "fallback" not in ws.info
    assert ws.info["n_columns"] < ws.info["n_free"] * K          # classes were left out
    assert ws.info["n_free"] < lp.atoms.n_atoms
    assert ws.objective == pytest.approx(full.objective, abs=1e-9)
    assert ws.gaps.max() <= eps + 1e-8
    np.testing.assert_allclose(ws.q.sum(axis=1), 1.0)
    # the certificate, recomputed: every used class is a least adjusted cost (to 1e-9)
    A = Prepared(lp).adjusted(ws.D, ws.b)
    used = ws.q > 0
    slack = np.where(used, A - A.min(axis=1, keepdims=True), 0.0)
    assert slack.max() <= 1e-9 * (1 + np.abs(A).max())


def test_restricted_lp_with_every_column_is_the_full_lp():
    from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    from fairopt.formulations.constrained_classification.multiclass_restricted import (
        Restriction,
        assemble,
        solve_restricted,
    )
    for constraint in CONSTRAINTS:
        lp = _lp(constraint, 0.01, n=500, K=4)
        prep = Prepared(lp)
        r = Restriction.from_masks(np.ones((lp.atoms.n_atoms, 4), dtype=bool))
        sol = assemble(lp, prep, r, solve_restricted(lp, prep, default_spec("LP"), r), 0.0, {})
        full = lp.solve_fixed(default_spec("LP"), None, 0.0)
        assert sol.objective == pytest.approx(full.objective, abs=1e-10)
        np.testing.assert_allclose(sol.gaps, full.gaps, atol=1e-9)
        assert sol.gaps.max() <= 0.01 + 1e-9


def test_certify_flags_a_pin_off_the_argmin_and_an_infeasible_restriction_raises():
    from fairopt.errors import InfeasibleError
    from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    from fairopt.formulations.constrained_classification.multiclass_restricted import (
        Restriction,
        certify,
        solve_restricted,
    )
    lp = _lp("demographic_parity", 0.0, n=30000, K=3, G=2, zero_one=True)
    prep = Prepared(lp)
    D, b = np.zeros((2, 3, 3)), np.zeros((2, 3))
    A = prep.adjusted(D, b)
    best = A.argmin(axis=1)
    wrong = best.copy()
    clear = np.flatnonzero(np.sort(A, axis=1)[:, 1] - A.min(axis=1) > 1e-3)[:3]
    wrong[clear] = (best[clear] + 1) % 3          # three pins far off their argmin
    r = Restriction.from_masks(np.eye(3, dtype=bool)[wrong])
    bad, extra = certify(prep, r, D, b, 0.0)
    assert sorted(bad.tolist()) == sorted(clear.tolist())
    np.testing.assert_array_equal(extra, np.eye(3, dtype=bool)[best[np.sort(clear)]])
    # every atom pinned to its unconstrained argmin: the gaps cannot close at eps = 0
    with pytest.raises(InfeasibleError):
        solve_restricted(lp, prep, default_spec("LP"), Restriction.from_masks(np.eye(3, dtype=bool)[best]))


def test_single_precision_pass_matches_double():
    from fairopt.formulations.constrained_classification._multiclass_flat import flat_pass, margins_flat
    rng = np.random.default_rng(0)
    K, n, G = 6, 5000, 4
    SC = rng.uniform(0, 1, (K, n))
    bounds = np.searchsorted(np.sort(rng.integers(0, G, n)), np.arange(G + 1))
    w, b, ev = rng.uniform(0.5, 2, n), rng.normal(0, 0.05, (G, K)), np.arange(K)
    t64, n64, H64 = flat_pass(SC, w, bounds, b, ev, 5e-3, True)
    t32, n32, H32 = flat_pass(SC.astype(np.float32), w, bounds, b, ev, 5e-3, True)
    assert t32 == pytest.approx(t64, rel=1e-6)
    np.testing.assert_allclose(n32, n64, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(H32, H64, rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(H64.sum(axis=2), 0.0, atol=1e-9)     # a group-wide shift: null direction
    grp = np.repeat(np.arange(G), np.diff(bounds))
    A = SC.T + b[grp]
    arg, gap = margins_flat(SC.astype(np.float32), grp, b)
    ok = np.sort(A, axis=1)[:, 1] - A.min(axis=1) > 1e-5
    np.testing.assert_array_equal(arg[ok], A.argmin(axis=1)[ok])
    np.testing.assert_allclose(gap, np.sort(A, axis=1)[:, 1] - A.min(axis=1), atol=1e-6)


def test_collapse_of_distinct_rows_copies_and_matches_the_general_path():
    rng = np.random.default_rng(0)
    S, g = rng.dirichlet(np.ones(3), 200), rng.integers(0, 2, 200)
    at = collapse_vectors(S, g)
    assert at.n_atoms == 200 and np.shares_memory(at.scores, S) is False
    dup = collapse_vectors(np.vstack([S, S[:1]]), np.concatenate([g, g[:1]]))   # one duplicate: hashed
    assert dup.n_atoms == 200 and dup.weight.sum() == 201
    np.testing.assert_array_equal(dup.scores, at.scores)
    S[0] = 0.0
    assert at.scores[0].sum() == pytest.approx(1.0)


# ------------------------------------------------------------------ chunked statistics
def _chunk_data(n=4000, K=4, seed=0):
    rng = np.random.default_rng(seed)
    S = rng.dirichlet(np.ones(K), n)
    g = rng.choice(np.array(["x", "y", "z"]), n)
    S[g == "y"] = 0.7 * S[g == "y"] + 0.3 * np.eye(K)[1]
    return S, g, rng.uniform(0.5, 2.0, n)


def _sorted_atoms(at):
    key = np.column_stack([at.group, at.scores])
    order = np.lexsort(key.T[::-1])
    return key[order], at.weight[order]


@pytest.mark.parametrize("kind", ["memmap", "npy", "dask"])
@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_chunked_fit_equals_in_memory(kind, constraint, tmp_path):
    from fairopt.stats import set_chunk_rows
    S, g, w = _chunk_data()
    mem = MulticlassDebiaser(constraint=constraint, eps=0.01, score_bins=8).fit(S, sensitive_features=g,
                                                                                 sample_weight=w)
    path = os.fspath(tmp_path / "s.npy")
    np.save(path, S)
    old = set_chunk_rows(700)
    try:
        if kind == "dask":
            da = pytest.importorskip("dask.array")
            X, gs, ws = da.from_array(S, chunks=(900, 2)), da.from_array(g, chunks=1100), da.from_array(w, chunks=800)
        else:
            X, gs, ws = (np.load(path, mmap_mode="r") if kind == "memmap" else path), g, w
        ch = MulticlassDebiaser(constraint=constraint, eps=0.01, score_bins=8).fit(X, sensitive_features=gs,
                                                                                    sample_weight=ws)
    finally:
        set_chunk_rows(old)
    # equal statistics: the same atoms with the same weights
    ka, wa = _sorted_atoms(mem.atoms_)
    kb, wb = _sorted_atoms(ch.atoms_)
    np.testing.assert_array_equal(ka, kb)
    np.testing.assert_allclose(wa, wb, rtol=1e-12)
    assert ch.groups_.tolist() == mem.groups_.tolist()
    # equal fitted rule: same optimum, and the chunked rule meets the constraint on the rows
    assert ch.train_cost_ == pytest.approx(mem.train_cost_, abs=1e-9)
    P = ch.predict_proba(S, sensitive_features=g)
    Sq = np.rint(S * 8) / 8
    codes = ch.groups_.get_indexer(g)
    from fairopt.formulations.constrained_classification.multiclass_lp import events_for, rates_and_gaps
    _, _, gaps = rates_and_gaps(Sq, codes, w, P, events_for(constraint, S.shape[1]), 3)
    assert gaps.max() <= 0.01 + 1e-8
    cost = float(np.sum((Sq @ ch.cost_) * P * w[:, None]) / w.sum())
    assert cost == pytest.approx(ch.train_cost_, abs=1e-9)


def test_chunked_input_errors(tmp_path):
    S, g, _ = _chunk_data(200)
    path = os.fspath(tmp_path / "s.npy")
    np.save(path, S)
    with pytest.raises(ConfigError, match="score_bins"):
        MulticlassDebiaser().fit(path, sensitive_features=g)
    with pytest.raises(ConfigError, match="y=None"):
        MulticlassDebiaser(score_bins=4).fit(path, np.zeros(200), sensitive_features=g)
    with pytest.raises(ConfigError, match="calibration"):
        MulticlassDebiaser(score_bins=4, calibration="isotonic").fit(path, sensitive_features=g)
    big = np.random.default_rng(0).dirichlet(np.ones(30), 10)
    np.save(path, big)
    with pytest.raises(ConfigError, match="lower score_bins"):
        MulticlassDebiaser(score_bins=1000).fit(path, sensitive_features=np.zeros(10))


def test_isotonic_fit_matches_scikit_learn():
    from sklearn.isotonic import IsotonicRegression

    from fairopt.postprocessing.multiclass_calibration import isotonic_fit
    rng = np.random.default_rng(0)
    x = np.round(rng.random(500), 2)       # ties
    y = (rng.random(500) < x).astype(float)
    w = rng.uniform(0, 2, 500)
    w[:20] = 0.0
    xs, fit = isotonic_fit(x, y, w)
    ref = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(x, y, sample_weight=w)
    grid = np.linspace(-0.1, 1.1, 301)
    np.testing.assert_allclose(np.interp(grid, xs, fit), ref.predict(grid), atol=1e-12)


def test_restricted_elastic_slack_agrees_and_flags_infeasibility():
    from fairopt.errors import InfeasibleError
    from fairopt.formulations.constrained_classification.multiclass_dual import Prepared
    from fairopt.formulations.constrained_classification.multiclass_restricted import Restriction, solve_restricted
    lp = _lp("demographic_parity", 0.02, n=800, K=3, zero_one=True)
    prep = Prepared(lp)
    A = prep.adjusted(np.zeros((3, 3, 3)), np.zeros((3, 3)))
    rel = A - A.min(axis=1, keepdims=True)
    r = Restriction.from_masks(rel <= 0.4)          # candidate classes only, feasible
    plain = solve_restricted(lp, prep, default_spec("LP"), r)
    priced = solve_restricted(lp, prep, default_spec("LP"), r, elastic=10.0)
    assert priced.objective == pytest.approx(plain.objective, abs=1e-10)
    pinned = Restriction.from_masks(np.eye(3, dtype=bool)[A.argmin(axis=1)])
    with pytest.raises(InfeasibleError, match="slack"):
        solve_restricted(lp, prep, default_spec("LP"), pinned, elastic=10.0)
