"""MulticlassDebiaser against an independent row-level LP (issue 33, acceptance "Exactness",
"Binary case" and "Deterministic option")."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from fairopt.errors import DataValidationError, NotFittedError
from fairopt.postprocessing import MulticlassDebiaser, ThresholdDebiaser

CONSTRAINTS = ("demographic_parity", "equal_opportunity", "equalized_odds")


def _events(constraint: str, K: int) -> list[tuple[int | None, int]]:
    # written out again here (not imported) so the reference is independent of the module
    if constraint == "demographic_parity":
        return [(None, k) for k in range(K)]
    if constraint == "equal_opportunity":
        return [(k, k) for k in range(K)]
    return [(j, k) for j in range(K) for k in range(K)]


def _instance(seed: int):
    rng = np.random.default_rng(seed)
    n, K, G = int(rng.integers(50, 401)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    g = rng.integers(0, G, n)
    g[:G] = np.arange(G)                                  # every group present
    S = rng.dirichlet(np.full(K, 0.7), n)
    S[g == 1] = 0.6 * S[g == 1] + 0.4 * np.eye(K)[0]      # groups differ
    dup = rng.random(n) < 0.2                             # repeated score vectors (atoms)
    S[dup] = S[rng.integers(0, n, int(dup.sum()))]
    w = rng.uniform(0.2, 3.0, n)
    C = rng.uniform(0, 1, (K, K))
    return S, g, w, C


def _reference_lp(S, g, w, C, constraint, eps):
    """Row-level LP of the definitions: variables q[i, k] (row-major), rows sum to 1,
    |(group rate) - (pooled rate)| <= eps written as two inequalities per group and event."""
    n, K = S.shape
    W = w.sum()
    c = ((S @ C) * w[:, None] / W).ravel()
    A_eq = np.zeros((n, n * K))
    A_eq[np.repeat(np.arange(n), K), np.arange(n * K)] = 1.0
    rows = []
    for j, k in _events(constraint, K):
        v = w if j is None else w * S[:, j]
        V = v.sum()
        for grp in np.unique(g):
            m = g == grp
            if v[m].sum() <= 0:
                continue
            coef = np.zeros(n * K)
            coef[np.arange(n) * K + k] = v * (m / v[m].sum() - 1.0 / V)
            rows.append(coef)
    A = np.array(rows)
    res = linprog(c, A_ub=np.vstack([A, -A]), b_ub=np.full(2 * len(rows), eps), A_eq=A_eq,
                  b_eq=np.ones(n), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def _gaps(S, g, w, P, constraint):
    out = []
    for j, k in _events(constraint, S.shape[1]):
        v = w if j is None else w * S[:, j]
        pooled = (v * P[:, k]).sum() / v.sum()
        for grp in np.unique(g):
            m = g == grp
            if v[m].sum() > 0:
                out.append(abs((v[m] * P[m, k]).sum() / v[m].sum() - pooled))
    return np.array(out)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("eps", [0.0, 0.02, 0.1])
@pytest.mark.parametrize("path", ["lp", "dual"])
def test_exact_against_row_level_lp(seed, constraint, eps, path, monkeypatch):
    """Both solve paths: the full LP, and the scale path (offsets from the smoothed small dual,
    then the working-set LP over the near-tied atoms, certified by its duals)."""
    if path == "dual":
        import fairopt.formulations.constrained_classification.multiclass_working_set as mws
        monkeypatch.setattr(mws, "WORKING_SET_MIN", 0)
    S, g, w, C = _instance(seed)
    deb = MulticlassDebiaser(constraint=constraint, eps=eps, cost=C).fit(S, sensitive_features=g, sample_weight=w)
    assert (deb.solution_.info.get("path") == "dual") == (path == "dual")
    P = deb.predict_proba(S, sensitive_features=g)
    assert np.allclose(P.sum(1), 1.0) and (P >= 0).all()
    cost = float(np.sum((S @ C) * P * w[:, None]) / w.sum())
    ref = _reference_lp(S, g, w, C, constraint, eps)
    assert cost == pytest.approx(ref, abs=1e-6)
    assert deb.train_cost_ == pytest.approx(cost, abs=1e-9)
    gaps = _gaps(S, g, w, P, constraint)
    assert gaps.max() <= eps + 1e-8
    assert deb.train_gap_ == pytest.approx(gaps.max(), abs=1e-9)
    # the deterministic rule: one-hot, gap within the documented bound, cost within its bound
    det = MulticlassDebiaser(constraint=constraint, eps=eps, cost=C, deterministic=True).fit(
        S, sensitive_features=g, sample_weight=w)
    Pd = det.predict_proba(S, sensitive_features=g)
    assert set(np.unique(Pd)) <= {0.0, 1.0} and np.allclose(Pd.sum(1), 1.0)
    gd = _gaps(S, g, w, Pd, constraint).max()
    assert det.train_gap_ == pytest.approx(gd, abs=1e-9)
    assert gd <= det.determinism_bound_ + 1e-8
    assert det.randomized_cost_ == pytest.approx(ref, abs=1e-6)
    cd = float(np.sum((S @ C) * Pd * w[:, None]) / w.sum())
    assert det.train_cost_ == pytest.approx(cd, abs=1e-9)
    assert abs(cd - ref) <= det.determinism_cost_bound_ + 1e-8


@pytest.mark.parametrize("constraint", CONSTRAINTS)
def test_offset_rule_matches_lp_on_untied_atoms(constraint):
    """The dual offsets reproduce the LP's choice wherever it is not randomized (the rule for
    new score vectors is the same rule)."""
    S, g, w, C = _instance(11)
    deb = MulticlassDebiaser(constraint=constraint, eps=0.02, cost=C).fit(S, sensitive_features=g, sample_weight=w)
    P = deb.predict_proba(S, sensitive_features=g)
    D, b = deb.offsets_
    adj = np.vstack([S[i] @ (C + D[g[i]]) + b[g[i]] for i in range(3)] +
                    [S[g == k] @ (C + D[k]) + b[k] for k in range(D.shape[0])])
    Pp = np.vstack([P[:3]] + [P[g == k] for k in range(D.shape[0])])
    # every class the LP uses attains the minimum adjusted cost (complementary slackness)
    gap_to_min = adj - adj.min(axis=1, keepdims=True)
    assert (gap_to_min[Pp > 1e-7] < 1e-6).all()
    # a slightly moved score vector (unseen) gets the argmin class
    S2 = S + 1e-13
    P2 = deb.predict_proba(S2 / S2.sum(1, keepdims=True), sensitive_features=g)
    untied = (P > 1 - 1e-9).any(axis=1)
    assert np.mean(np.argmax(P2[untied], 1) == np.argmax(P[untied], 1)) > 0.95


def _binary_data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    p = np.clip(rng.beta(2, 2, n) + 0.15 * (g == 1) - 0.1 * (g == 2), 0.01, 0.99)
    p = np.round(p, 2)     # ties, as real classifiers produce
    y = (rng.random(n) < p).astype(int)
    return p, g, y


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_binary_equals_threshold_debiaser(constraint):
    p, g, y = _binary_data()
    td = ThresholdDebiaser(constraint=constraint, gamma=0.0, eps=0.0, calibration="isotonic_per_group",
                           score_map="proba").fit(p, y, sensitive_features=g)
    h = td.predict_proba(p, sensitive_features=g)[:, 1]
    acc_td = float(np.mean(h * y + (1 - h) * (1 - y)))
    md = MulticlassDebiaser(constraint=constraint, calibration="isotonic_per_group").fit(
        np.column_stack([1 - p, p]), y, sensitive_features=g)
    P = md.predict_proba(np.column_stack([1 - p, p]), sensitive_features=g)
    acc_md = float(np.mean(P[np.arange(len(y)), y]))
    assert acc_md == pytest.approx(acc_td, abs=1e-6)
    assert 1 - md.train_cost_ == pytest.approx(acc_md, abs=1e-9)   # calibrated cost = label accuracy


def test_estimator_frames_labels_and_intersectional_groups():
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(3)
    n = 600
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "sex": rng.choice(["f", "m"], n), "race": rng.choice(["x", "y"], n)})
    y = np.where(X.a + 0.5 * (X.sex == "m") > 0.3, "hi", np.where(X.b > 0, "mid", "lo"))
    feats = X[["a", "b"]]
    deb = MulticlassDebiaser(LogisticRegression(), constraint="equalized_odds", eps=0.05, random_state=0)
    deb.fit(feats, y, sensitive_features=X[["sex", "race"]])
    assert deb.classes_.tolist() == ["hi", "lo", "mid"] and len(deb.groups_) == 4
    P = deb.predict_proba(feats, sensitive_features=X[["sex", "race"]])
    S = deb.estimator_.predict_proba(feats)
    codes = deb.groups_.get_indexer(pd.MultiIndex.from_frame(X[["sex", "race"]]))
    assert _gaps(S, codes, np.ones(n), P, "equalized_odds").max() <= 0.05 + 1e-8
    pred = deb.predict(feats, sensitive_features=X[["sex", "race"]])
    assert set(pred) <= set(deb.classes_)
    assert np.array_equal(pred, deb.predict(feats, sensitive_features=X[["sex", "race"]]))   # seeded
    # integer weights equal repeated rows
    sw = rng.integers(1, 3, n)
    a = MulticlassDebiaser(constraint="demographic_parity").fit(S, sensitive_features=codes, sample_weight=sw)
    rep = np.repeat(np.arange(n), sw)
    b = MulticlassDebiaser(constraint="demographic_parity").fit(S[rep], sensitive_features=codes[rep])
    assert a.train_cost_ == pytest.approx(b.train_cost_, abs=1e-9)


def test_errors():
    S = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5], [0.9, 0.1]])
    g = [0, 0, 1, 1]
    with pytest.raises(Exception, match="eps"):
        MulticlassDebiaser(eps=-0.1).fit(S, sensitive_features=g)
    with pytest.raises(DataValidationError, match="sum to 1"):
        MulticlassDebiaser().fit(S * 2, sensitive_features=g)
    with pytest.raises(DataValidationError, match="non-negative"):
        MulticlassDebiaser().fit(S - 0.3, sensitive_features=g)
    with pytest.raises(NotFittedError):
        MulticlassDebiaser().predict_proba(S, sensitive_features=g)
    with pytest.raises(DataValidationError, match="labels y"):
        MulticlassDebiaser(calibration="isotonic").fit(S, sensitive_features=g)
    deb = MulticlassDebiaser().fit(S, sensitive_features=g)
    with pytest.raises(DataValidationError, match="not seen at fit"):
        deb.predict_proba(S, sensitive_features=[0, 0, 1, 5])
    with pytest.raises(Exception, match="cost"):
        MulticlassDebiaser(cost=np.ones((3, 3))).fit(S, sensitive_features=g)


def test_score_bins_bound():
    """Quantised fit: its rule's exact cost is within K max|C| / score_bins of the exact optimum
    (demographic parity: the feasible sets coincide) and DP holds exactly."""
    rng = np.random.default_rng(5)
    n, K = 3000, 4
    S = rng.dirichlet(np.ones(K), n)
    g = rng.integers(0, 3, n)
    exact = MulticlassDebiaser(constraint="demographic_parity").fit(S, sensitive_features=g)
    binned = MulticlassDebiaser(constraint="demographic_parity", score_bins=20).fit(S, sensitive_features=g)
    assert binned.n_atoms_ < exact.n_atoms_
    P = binned.predict_proba(S, sensitive_features=g)
    cost = float(np.mean(np.sum((S @ (1 - np.eye(K))) * P, axis=1)))
    assert exact.train_cost_ <= cost + 1e-9 <= exact.train_cost_ + K / 20 + 1e-9
    assert _gaps(S, g, np.ones(n), P, "demographic_parity").max() < 1e-8


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("eps", [0.0, 0.05])
def test_working_set_equals_full_lp(constraint, eps):
    """The working-set method (used above WORKING_SET_MIN variables) certifies the full LP's optimum."""
    from fairopt.formulations.constrained_classification.multiclass_lp import MulticlassTransportLP, collapse_vectors
    from fairopt.formulations.constrained_classification.multiclass_working_set import solve_working_set
    from fairopt.modeling.registry import default_spec
    rng = np.random.default_rng(7)
    n, K, G = 2500, 4, 3
    g = rng.integers(0, G, n)
    S = rng.dirichlet(np.full(K, 0.8), n)
    S[g == 1] = 0.6 * S[g == 1] + 0.4 * np.eye(K)[1]
    w = rng.uniform(0.5, 2.0, n)
    C = rng.uniform(0, 1, (K, K))
    lp = MulticlassTransportLP(collapse_vectors(S, g, w), G, C, constraint, eps)
    ws = solve_working_set(lp, default_spec("LP"), sample_atoms=200, free_atoms=150)
    full = lp.solve_fixed(default_spec("LP"), None, 0.0)
    assert ws.info["certified"] and ws.info["n_free"] < n
    assert ws.objective == pytest.approx(full.objective, abs=1e-7)
    assert ws.gaps.max() <= eps + 1e-8


def test_estimator_uses_working_set_above_the_threshold(monkeypatch):
    import fairopt.formulations.constrained_classification.multiclass_working_set as mlp
    S, g, w, C = _instance(3)
    ref = MulticlassDebiaser(constraint="equalized_odds", eps=0.02, cost=C).fit(S, sensitive_features=g,
                                                                               sample_weight=w)
    monkeypatch.setattr(mlp, "WORKING_SET_MIN", 10)
    deb = MulticlassDebiaser(constraint="equalized_odds", eps=0.02, cost=C).fit(S, sensitive_features=g,
                                                                               sample_weight=w)
    assert "rounds" in deb.solution_.info
    assert deb.train_cost_ == pytest.approx(ref.train_cost_, abs=1e-7)
    P = deb.predict_proba(S, sensitive_features=g)
    assert _gaps(S, g, w, P, "equalized_odds").max() <= 0.02 + 1e-8
