"""Optimized pre-processing mapping: constraints, back ends, brute force, infeasibility, duals, KL."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from fairopt.data import Domain, load_builtin
from fairopt.errors import DataValidationError, InfeasibleError, SolverError
from fairopt.formulations.tv_repair import AdultDistortion, CompasDistortion, DistortionTable, OptimizedPreprocessing
from fairopt.modeling import installed_specs

LP_SPECS = [s for s in ["highs", "scipy", "osqp", "cvxpy:CLARABEL", "cvxpy:HIGHS", "pyomo:appsi_highs"]
            if (s if ":" in s else f"{s}:{'highs' if s == 'scipy' else s}") in installed_specs("LP")]
ADULT_KW = dict(protected="sex", label="income", features=["age_decade", "education_years"],
                distortion="adult", clist=[0.99, 1.99, 2.99], dlist=[0.1, 0.05, 0.0])


def _tiny(seed=0):
    """Binary D, X1, X2, Y with group-dependent label rates (16 cells, some unobserved)."""
    rng = np.random.default_rng(seed)
    dom = Domain([("d", [0, 1]), ("x1", [0, 1]), ("x2", [0, 1, 2]), ("y", [0, 1])])
    codes = dom.unravel(np.arange(dom.size))
    counts = rng.integers(1, 20, dom.size) * (rng.random(dom.size) < 0.85)
    counts[(codes[:, 0] == 0) & (codes[:, 3] == 1)] *= 4
    return dom, codes[counts > 0], counts[counts > 0]


TINY_TABLE = {"x1": {"kind": "ordinal", "up": 1.0, "down": 2.0},
              "x2": {"kind": "ordinal", "up": 1.0, "down": 1.0, "max_up": 1, "max_down": 1},
              "y": {"kind": "matrix", "matrix": {1: {0: 1.0}, 0: {1: 3.0}}}}


def evaluate(model: OptimizedPreprocessing, res):
    """Recompute everything from the dense mapping, independently of the builder.

    Returns the utility loss, the max row-sum error, the smallest entry, the max violation of the
    discrimination rows and the max violation of the distortion limits."""
    P = res.mapping.toarray()
    q, rows, cols = res.q, res.rows, res.columns
    G = sorted(set(rows[:, 0]))
    n_y = model.xy_domain.cardinalities[-1]
    # utility keys
    col_key = {tuple(c): i for i, c in enumerate(cols)}
    out, target = {}, {}
    for r in range(len(q)):
        own = col_key[tuple(rows[r, 1:])]
        tk = own if model.utility == "xy" else (rows[r, 0], own)
        target[tk] = target.get(tk, 0.0) + q[r]
        for c in np.flatnonzero(P[r]):
            k = c if model.utility == "xy" else (rows[r, 0], c)
            out[k] = out.get(k, 0.0) + q[r] * P[r, c]
    keys = set(out) | set(target)
    if model.divergence == "tv":
        loss = 0.5 * sum(abs(out.get(k, 0) - target.get(k, 0)) for k in keys)
    else:
        loss = sum(t * np.log(t / out[k]) for k, t in target.items())
    pi = np.zeros((max(G) + 1, n_y))
    for g in G:
        m = rows[:, 0] == g
        for y in range(n_y):
            pi[g, y] = (q[m] @ P[m][:, cols[:, -1] == y].sum(axis=1)) / q[m].sum()
    eps, viol = model.epsilon, 0.0
    p_y = np.bincount(rows[:, -1], weights=q, minlength=n_y)
    for a, b in itertools.permutations(G, 2):
        for y in range(n_y):
            if model.discrimination == "ratio":
                viol = max(viol, pi[a, y] - (1 + eps) * pi[b, y])
            elif model.discrimination == "additive":
                viol = max(viol, abs(pi[a, y] - pi[b, y]) - eps)
    if model.discrimination == "target":
        for g in G:
            viol = max(viol, *(abs(pi[g, y] - p_y[y]) - eps * p_y[y] for y in range(n_y)))
    # distortion, evaluated by the distortion object on every (row, column) pair
    dist_viol = 0.0
    if model.distortion is not None:
        R, C = len(q), len(cols)   # every (row, column) pair, dense
        delta = model.distortion(model.xy_domain, np.repeat(rows[:, 1:], C, axis=0),
                                 np.tile(cols, (R, 1))).reshape(R, C)
        with np.errstate(invalid="ignore"):
            cost = np.where(P > 0, delta * P, 0.0)
        if model.conditioning == "dxy":
            w = np.eye(R)
        else:   # w[r, s] = q_s / q(xy of r) for rows s sharing r's (x, y)
            same = (rows[:, None, 1:] == rows[None, :, 1:]).all(axis=2)
            w = same * q[None, :] / (same * q[None, :]).sum(axis=1, keepdims=True)
        kappa = model.max_expected_distortion
        if kappa is not None:
            if isinstance(kappa, dict):   # per group: the cap of each row's group
                levels = model.dxy_domain.levels[model.protected]
                kappa = np.array([kappa[levels[g]] for g in rows[:, 0]])
            dist_viol = max(dist_viol, (w @ cost.sum(axis=1) - kappa).max())
        for c, b in zip(model.clist, model.dlist, strict=False):
            dist_viol = max(dist_viol, (w @ np.where(delta >= c, P, 0.0).sum(axis=1)).max() - b)
    return loss, np.abs(P.sum(axis=1) - 1).max(), P.min(), viol, dist_viol


def brute_force(dom, cells, counts, *, discrimination, epsilon, utility, conditioning, table, clist, dlist,
                kappa=None):
    """Dense LP over all |D×X×Y| rows × |X×Y| columns (unobserved rows and forbidden cells kept as
    variables, forbidden ones fixed to 0), written with loops and solved by scipy."""
    q = np.zeros(dom.size)
    q[dom.ravel(cells)] = counts / counts.sum()
    rows = dom.unravel(np.arange(dom.size))
    xy = dom.subdomain(["x1", "x2", "y"])
    cols = xy.unravel(np.arange(xy.size))
    R, C = len(rows), len(cols)
    dist = DistortionTable(table)
    delta = np.array([[dist(xy, rows[[r], 1:], cols[[c]])[0] for c in range(C)] for r in range(R)])
    nv = R * C
    keys = sorted({c if utility == "xy" else (rows[r, 0], c) for r in range(R) for c in range(C)}, key=str)
    kidx = {k: i for i, k in enumerate(keys)}
    nk = len(keys)
    n = nv + 2 * nk                      # P, then u, v with out - t = u - v
    cost = np.r_[np.zeros(nv), 0.5 * np.ones(2 * nk)]
    A_eq, b_eq, A_ub, b_ub = [], [], [], []
    for r in range(R):
        row = np.zeros(n)
        row[r * C:(r + 1) * C] = 1
        A_eq.append(row)
        b_eq.append(1.0)
    t = np.zeros(nk)
    own = {tuple(c): i for i, c in enumerate(cols)}
    for r in range(R):
        o = own[tuple(rows[r, 1:])]
        t[kidx[o if utility == "xy" else (rows[r, 0], o)]] += q[r]
    for k in keys:
        row = np.zeros(n)
        for r in range(R):
            for c in range(C):
                if (c if utility == "xy" else (rows[r, 0], c)) == k:
                    row[r * C + c] = q[r]
        row[nv + kidx[k]] = -1
        row[nv + nk + kidx[k]] = 1
        A_eq.append(row)
        b_eq.append(t[kidx[k]])
    qd = {g: q[rows[:, 0] == g].sum() for g in (0, 1)}

    def pi_row(g, y):
        row = np.zeros(n)
        for r in range(R):
            if rows[r, 0] == g:
                for c in range(C):
                    if cols[c, -1] == y:
                        row[r * C + c] = q[r] / qd[g]
        return row
    p_y = [q[rows[:, -1] == y].sum() for y in (0, 1)]
    for y in (0, 1):
        if discrimination == "ratio":
            for a, b in ((0, 1), (1, 0)):
                A_ub.append(pi_row(a, y) - (1 + epsilon) * pi_row(b, y))
                b_ub.append(0.0)
        elif discrimination == "additive":
            A_ub += [pi_row(0, y) - pi_row(1, y), pi_row(1, y) - pi_row(0, y)]
            b_ub += [epsilon, epsilon]
        else:
            for g in (0, 1):
                A_ub += [pi_row(g, y), -pi_row(g, y)]
                b_ub += [(1 + epsilon) * p_y[y], -(1 - epsilon) * p_y[y]]
    for r in range(R):
        if conditioning == "dxy":
            weights = {r: 1.0}
        else:
            same = [s for s in range(R) if (rows[s, 1:] == rows[r, 1:]).all()]
            tot = sum(q[s] for s in same)
            if tot == 0:
                continue   # an unobserved (x, y): its rows decouple (no mass anywhere)
            weights = {s: q[s] / tot for s in same}
        rows_for = [(c_i, b_i) for c_i, b_i in zip(clist, dlist, strict=False)]
        for c_i, b_i in rows_for:
            row = np.zeros(n)
            for s, w in weights.items():
                for c in range(C):
                    if delta[s, c] >= c_i:
                        row[s * C + c] = w
            A_ub.append(row)
            b_ub.append(b_i)
        if kappa is not None:
            row = np.zeros(n)
            for s, w in weights.items():
                for c in range(C):
                    if np.isfinite(delta[s, c]):
                        row[s * C + c] = w * delta[s, c]
            A_ub.append(row)
            b_ub.append(kappa)
    bounds = [(0, 0) if not np.isfinite(delta[i // C, i % C]) else (0, None) for i in range(nv)]
    bounds += [(0, None)] * (2 * nk)
    res = linprog(cost, A_ub=np.array(A_ub), b_ub=b_ub, A_eq=np.array(A_eq), b_eq=b_eq, bounds=bounds,
                  method="highs")
    assert res.status in (0, 2)
    return res.fun if res.status == 0 else None


SETTINGS = [dict(discrimination=d, utility=u, conditioning=c, epsilon=e)
            for d, e in (("ratio", 0.05), ("additive", 0.02), ("target", 0.1))
            for u in ("xy", "dxy") for c in ("dxy", "xy")]


def _holds_and_agrees_on_every_backend(make_model):
    """Solve a fresh model on every LP back end: constraints hold to 1e-7, objectives agree to 1e-6."""
    objectives = []
    for spec in LP_SPECS:
        model = make_model()
        res = model.solve(spec)
        loss, rowsum, low, viol, dviol = evaluate(model, res)
        assert loss == pytest.approx(res.objective, abs=1e-7), spec
        assert rowsum < 1e-7 and low >= 0 and viol < 1e-7 and dviol < 1e-7, spec
        objectives.append(res.objective)
    assert max(objectives) - min(objectives) < 1e-6, dict(zip(LP_SPECS, objectives, strict=False))
    return model


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(str(v) for v in s.values()))
def test_sparse_model_matches_dense_brute_force(setting):
    dom, cells, counts = _tiny(1)
    kw = dict(clist=[0.99, 1.99], dlist=[0.3, 0.0])
    expected = brute_force(dom, cells, counts, table=TINY_TABLE, **kw, **setting)
    model = OptimizedPreprocessing(dom, cells, counts, protected="d", label="y", distortion=TINY_TABLE,
                                   **kw, **setting)
    if expected is None:
        with pytest.raises(InfeasibleError):
            model.solve("highs")
        return
    res = model.solve("highs")
    assert res.objective == pytest.approx(expected, abs=1e-9)
    loss, rowsum, low, viol, dviol = evaluate(model, res)
    assert loss == pytest.approx(res.objective, abs=1e-9)
    assert rowsum < 1e-9 and low >= 0 and viol < 1e-9 and dviol < 1e-9
    assert model.n_variables < model.n_dense   # unobserved rows and forbidden cells were never built


def test_expected_distortion_matches_brute_force():
    dom, cells, counts = _tiny(2)
    for cond in ("dxy", "xy"):
        setting = dict(discrimination="additive", epsilon=0.05, utility="xy", conditioning=cond)
        expected = brute_force(dom, cells, counts, table=TINY_TABLE, clist=[], dlist=[], kappa=0.6, **setting)
        assert expected is not None and expected > 0
        model = OptimizedPreprocessing(dom, cells, counts, protected="d", label="y", distortion=TINY_TABLE,
                                       max_expected_distortion=0.6, **setting)
        res = model.solve("highs")
        assert res.objective == pytest.approx(expected, abs=1e-9)
        assert evaluate(model, res)[4] < 1e-9


@pytest.mark.parametrize("setting", SETTINGS[::3], ids=lambda s: "-".join(str(v) for v in s.values()))
def test_tiny_every_backend_holds_constraints_and_agrees(setting):
    dom, cells, counts = _tiny(4)
    if setting["discrimination"] == "target":
        setting = dict(setting, epsilon=0.5)   # 0.1 is infeasible on this sample (minimal 0.38)
    _holds_and_agrees_on_every_backend(lambda: OptimizedPreprocessing(
        dom, cells, counts, protected="d", label="y", distortion=TINY_TABLE, clist=[0.99, 1.99],
        dlist=[0.3, 0.0], **setting))


def test_adult_every_backend_holds_constraints_and_agrees():
    data = load_builtin("adult")
    cells, counts = data.codes()
    model = _holds_and_agrees_on_every_backend(lambda: OptimizedPreprocessing(
        data.domain, cells, counts, discrimination="ratio", epsilon=0.05, **ADULT_KW))
    assert model.n_variables == 2300 and len(model.q) == 220   # the note's sparse count
    if "osqp" in LP_SPECS:
        with pytest.raises(SolverError, match="iteration_limit"):   # no inexact mapping is returned
            model.solve("osqp", options={"max_iter": 20})


def test_infeasible_epsilon_names_discrimination_and_the_minimal_epsilon():
    data = load_builtin("adult")
    cells, counts = data.codes()
    frozen = {"age_decade": {"kind": "free"}, "education_years": {"kind": "free"}}   # labels fixed
    raw = data.counts.groupby("sex").apply(lambda g: np.average(g["income"], weights=g["count"]))
    gap = float(raw.max() - raw.min())
    for spec in LP_SPECS:
        model = OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                       features=["age_decade", "education_years"], distortion=frozen,
                                       discrimination="additive", epsilon=0.05)
        with pytest.raises(InfeasibleError) as info:
            model.solve(spec)
        assert info.value.constraint == "discrimination"
        assert info.value.tightest["epsilon"] == pytest.approx(gap, abs=1e-7)
        assert "minimal feasible epsilon" in str(info.value)
        assert info.value.tightest["pairs"] == ["Female vs Male (income=1)"]   # the elastic LP's row
    ratio = OptimizedPreprocessing(data.domain, cells, counts, protected="sex", label="income",
                                   features=["age_decade", "education_years"], distortion=frozen,
                                   discrimination="ratio", epsilon=0.05)
    # frozen labels: the binding ratio is the raw one, max over labels of pi_a / pi_b - 1
    pi = np.array([[1 - raw.iloc[0], raw.iloc[0]], [1 - raw.iloc[1], raw.iloc[1]]])
    expected = max((pi[0] / pi[1]).max(), (pi[1] / pi[0]).max()) - 1
    assert ratio.minimal_epsilon() == pytest.approx(expected, rel=1e-6)


def test_epsilon_sweep_reports_infeasible_settings_and_matches_fresh_solves():
    """An epsilon sweep reports a status per value instead of stopping at the first failure."""
    data = load_builtin("adult")
    cells, counts = data.codes()
    for form, grid in (("target", [0.05, 0.1, 0.15, 0.3]), ("ratio", [0.0, 0.05, 0.3])):
        model = OptimizedPreprocessing(data.domain, cells, counts, discrimination=form, epsilon=0.05, **ADULT_KW)
        sweep = model.sweep_epsilon(grid)
        eps_min = sweep.attrs["minimal_epsilon"]
        for eps, status, obj in zip(sweep["epsilon"], sweep["status"], sweep["objective"], strict=False):
            assert status == ("infeasible" if eps < eps_min else "optimal")
            if status == "optimal":   # the warm-started re-solve equals a fresh build
                fresh = OptimizedPreprocessing(data.domain, cells, counts, discrimination=form, epsilon=eps,
                                               **ADULT_KW).solve("highs")
                assert obj == pytest.approx(fresh.objective, abs=1e-10)
        assert (sweep["status"] == "infeasible").any() or form == "ratio"


@pytest.mark.parametrize("form,eps", [("additive", 0.03), ("ratio", 0.2), ("target", 0.2)])
def test_price_of_fairness_matches_finite_differences(form, eps):
    data = load_builtin("adult")
    cells, counts = data.codes()

    def solve(e):
        return OptimizedPreprocessing(data.domain, cells, counts, discrimination=form, epsilon=e,
                                      **ADULT_KW).solve("highs")
    res = solve(eps)
    h = 1e-5
    fd = (solve(eps + h).objective - solve(eps - h).objective) / (2 * h)
    assert res.d_objective_d_epsilon < 0
    assert res.d_objective_d_epsilon == pytest.approx(fd, rel=1e-3)
    assert res.price_of_fairness["d_objective_d_epsilon"].sum() == pytest.approx(res.d_objective_d_epsilon)


def test_kl_variant_through_exponential_cone():
    data = load_builtin("adult")
    cells, counts = data.codes()
    model = OptimizedPreprocessing(data.domain, cells, counts, discrimination="additive", epsilon=0.05,
                                   divergence="kl", utility="xy", conditioning="xy", **{
                                       k: v for k, v in ADULT_KW.items()})
    res = model.solve("cvxpy:CLARABEL")
    loss, rowsum, _low, viol, dviol = evaluate(model, res)
    assert loss == pytest.approx(res.objective, abs=1e-6) and res.objective > 0
    assert rowsum < 1e-6 and viol < 1e-6 and dviol < 1e-6
    with pytest.raises(DataValidationError, match="exponential-cone"):
        model.solve("highs:highs")
    # duals through the smooth seam: the envelope derivative matches finite differences
    h = 1e-4
    up, down = (OptimizedPreprocessing(data.domain, cells, counts, discrimination="additive", epsilon=0.05 + s,
                                       divergence="kl", utility="xy", conditioning="xy", **ADULT_KW)
                .solve("cvxpy:CLARABEL").objective for s in (h, -h))
    assert res.d_objective_d_epsilon < 0
    assert res.d_objective_d_epsilon == pytest.approx((up - down) / (2 * h), rel=1e-2)


def test_transform_is_seeded_vectorised_and_follows_the_mapping():
    dom, cells, counts = _tiny(3)
    model = OptimizedPreprocessing(dom, cells, counts, protected="d", label="y", distortion=TINY_TABLE,
                                   discrimination="additive", epsilon=0.0, clist=[0.99], dlist=[0.4])
    res = model.solve("highs")
    r = 0
    codes = np.repeat(res.rows[[r]], 100_000, axis=0)
    a, b = res.apply(codes, random_state=7), res.apply(codes, random_state=7)
    np.testing.assert_array_equal(a, b)
    flat = model.xy_domain.ravel(a)
    freq = np.bincount(np.searchsorted(model.xy_domain.ravel(res.columns), flat), minlength=len(res.columns))
    p = res.mapping[r].toarray().ravel()
    assert np.abs(freq / freq.sum() - p).max() < 0.01
    assert (freq[p == 0] == 0).all()
    unseen = dom.unravel(np.arange(dom.size))
    unseen = unseen[~np.isin(dom.ravel(unseen), dom.ravel(cells))]
    if len(unseen):
        with pytest.warns(UserWarning, match="unseen"):
            np.testing.assert_array_equal(res.apply(unseen, random_state=0), unseen[:, 1:])
    frame = res.to_frame()
    assert frame.groupby(["d", "x1", "x2", "y"])["probability"].sum().sub(1).abs().max() < 1e-9
    T, _dx_keys, xhat = res.test_mapping()
    np.testing.assert_allclose(np.asarray(T.sum(axis=1)).ravel(), 1.0)
    # unlabelled records: x-hat frequencies follow P(x-hat | d, x)
    dx = np.repeat(res.rows[[0], :-1], 50_000, axis=0)
    drawn = res.apply_features(dx, random_state=3)
    got = np.bincount(np.searchsorted(xhat[:, 0] * 3 + xhat[:, 1], drawn[:, 0] * 3 + drawn[:, 1]),
                      minlength=len(xhat)) / len(dx)
    np.testing.assert_allclose(got, T[0].toarray().ravel(), atol=0.01)


def test_distortion_rules():
    adult = load_builtin("adult").domain.subdomain(["age_decade", "education_years", "income"])
    old = np.array([[2, 3, 1]] * 7)
    new = np.array([[2, 2, 1], [2, 5, 1], [4, 3, 1], [3, 3, 1], [2, 3, 0], [2, 4, 0], [2, 3, 1]])
    np.testing.assert_array_equal(AdultDistortion()(adult, old, new), [3, 3, 3, 2, 1, 1, 0])
    compas = load_builtin("compas").domain.subdomain(["age_cat", "priors_count", "c_charge_degree",
                                                      "two_year_recid"])
    old = np.array([[1, 1, 0, 1]] * 4)
    new = np.array([[2, 1, 0, 1], [1, 0, 1, 1], [1, 1, 0, 0], [1, 2, 0, 1]])
    np.testing.assert_array_equal(CompasDistortion()(compas, old, new), [1, 2, 2, 1])
    np.testing.assert_array_equal(CompasDistortion(rule="authors")(compas, old, new), [1, 5, 1, np.inf])
    with pytest.raises(DataValidationError, match="not features or the label"):
        DistortionTable({"age": {"kind": "free"}})(adult, old[:, :3], new[:, :3])
    with pytest.raises(DataValidationError, match="itself"):
        OptimizedPreprocessing(*_tiny(0), protected="d", label="y",
                               distortion=lambda o, n: np.ones(len(o)), clist=[0.5], dlist=[0.1])


def test_bad_parameters_are_rejected():
    dom, cells, counts = _tiny(0)
    kw = dict(protected="d", label="y")
    with pytest.raises(DataValidationError, match="dlist"):
        OptimizedPreprocessing(dom, cells, counts, distortion=TINY_TABLE, clist=[1, 2], dlist=[0.1, 0.2], **kw)
    with pytest.raises(DataValidationError, match="distortion function"):
        OptimizedPreprocessing(dom, cells, counts, clist=[1], dlist=[0.1], **kw)
    with pytest.raises(DataValidationError, match="discrimination"):
        OptimizedPreprocessing(dom, cells, counts, discrimination="odds", **kw)
    with pytest.raises(DataValidationError, match="epsilon"):
        OptimizedPreprocessing(dom, cells, counts, epsilon=-1, **kw)


def test_compas_authors_rule_with_per_group_expected_distortion_caps():
    data = load_builtin("compas")
    cells, counts = data.codes()
    caps = {"Not-Caucasian": 0.4, "Caucasian": 0.3}
    objectives = []
    for spec in ("highs", "cvxpy:CLARABEL"):
        model = OptimizedPreprocessing(data.domain, cells, counts, protected="race", label="two_year_recid",
                                       features=["age_cat", "priors_count", "c_charge_degree"],
                                       favourable_label=0, distortion="compas-authors", discrimination="ratio",
                                       epsilon=0.2, max_expected_distortion=caps)
        res = model.solve(spec)
        loss, rowsum, _low, viol, dviol = evaluate(model, res)
        assert loss == pytest.approx(res.objective, abs=1e-7)
        assert rowsum < 1e-7 and viol < 1e-7 and dviol < 1e-7
        objectives.append(res.objective)
    assert objectives[0] > 0 and abs(objectives[0] - objectives[1]) < 1e-6
    looser = OptimizedPreprocessing(data.domain, cells, counts, protected="race", label="two_year_recid",
                                    features=["age_cat", "priors_count", "c_charge_degree"], favourable_label=0,
                                    distortion="compas-authors", discrimination="ratio", epsilon=0.2,
                                    max_expected_distortion={"Not-Caucasian": 0.4, "Caucasian": 0.4})
    assert looser.solve("highs").objective <= objectives[0] + 1e-12
    with pytest.raises(DataValidationError, match="not among"):
        OptimizedPreprocessing(data.domain, cells, counts, protected="race", label="two_year_recid",
                               distortion="compas", max_expected_distortion={"White": 0.3}).build()


def test_observed_columns_are_a_flagged_restriction():
    dom, cells, counts = _tiny(5)
    kw = dict(protected="d", label="y", distortion=TINY_TABLE, clist=[0.99, 1.99], dlist=[0.3, 0.0],
              discrimination="additive", epsilon=0.02, utility="xy")
    exact = OptimizedPreprocessing(dom, cells, counts, **kw)
    restricted = OptimizedPreprocessing(dom, cells, counts, columns="observed", **kw)
    observed_xy = np.unique(exact.xy_domain.ravel(restricted.rows[:, 1:]))
    assert len(restricted.candidates) == len(observed_xy) <= len(exact.candidates)
    res = restricted.solve("highs")
    assert res.objective >= exact.solve("highs").objective - 1e-12
    assert res.approximations and "APPROXIMATION" in restricted.summary()
    loss, _rowsum, _low, viol, dviol = evaluate(restricted, res)
    assert loss == pytest.approx(res.objective, abs=1e-9) and viol < 1e-9 and dviol < 1e-9
