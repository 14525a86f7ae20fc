"""Mathematical checks of the fair-regression reductions (notes-fair-regression.md, Sec. 8)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from fairopt.errors import ConfigError
from fairopt.formulations.cost_sensitive import solve_best_mixture
from fairopt.modeling import Program
from fairopt.reductions import (
    AbsoluteLoss,
    BoundedGroupLoss,
    DemographicParity,
    EqualizedOdds,
    EqualOpportunity,
    ExponentiatedGradient,
    FiniteClassOracle,
    Grid,
    LeastSquaresOracle,
    ScaledLogisticLoss,
    SquareLoss,
    StatisticalParity,
    label_cover,
)
from fairopt.reductions.discretization import cost_table, discretized_loss, prefix_table, snap_labels
from fairopt.reductions.exponentiated_gradient import best_lambda, lambda_from_theta
from fairopt.reductions.oracles import sp_targets, two_label_weights

TOL = 1e-10


def _sp_data(rng, n=300, n_groups=2, N=10, grid_points=True):
    group = rng.integers(0, n_groups, n)
    y = np.clip(0.3 + 0.3 * group / max(1, n_groups - 1) + 0.15 * rng.standard_normal(n), 0, 1)
    pred = np.clip(y + 0.1 * rng.standard_normal(n), 0, 1)
    if grid_points:  # exact grid values, 0 and 1: the tie cases of the threshold rule
        j = rng.integers(0, N, n // 5)
        pred[: j.size] = Grid(N).grid[j]
        pred[j.size: j.size + 5] = 0.0
        pred[j.size + 5: j.size + 10] = 1.0
    return y, group, pred


# ---- discretisation ------------------------------------------------------------------------------
def test_label_cover_properties(rng):
    y = rng.uniform(0, 1, 500)
    for N in (5, 10, 40):
        alpha = 1.0 / N
        cover = label_cover(y, alpha)
        idx = snap_labels(y, cover, alpha)
        assert np.all(np.abs(cover[idx] - y) <= alpha / 2 + 1e-15)
        assert np.all(np.diff(cover) > alpha / 2)
        assert cover.size <= 2 * N
        assert np.all(np.isin(cover, y))
        # smallest cover point within alpha/2
        lower = np.where(idx > 0, cover[np.maximum(idx - 1, 0)], -np.inf)
        assert np.all(np.abs(lower - y) > alpha / 2)
    assert label_cover(np.array([0.0, 1.0, 1.0, 0.0]), 0.025).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("loss", [SquareLoss(), ScaledLogisticLoss(5.0), AbsoluteLoss()])
@pytest.mark.parametrize("N", [7, 40])
def test_identity_15(loss, N, rng):
    """l_alpha(y, floor(f)) = l(y_, alpha/2) + (1/N) sum_z c(y_, z) h_f(x, z), exactly."""
    grid = Grid(N)
    y = rng.uniform(0, 1, 400)
    u = np.concatenate([rng.uniform(0, 1, 380), grid.grid[rng.integers(0, N, 15)], [0, 0, 1, 1, 1]])
    cover = label_cover(y, grid.alpha)
    yv = cover[snap_labels(y, cover, grid.alpha)]
    lhs = discretized_loss(loss, yv, u, grid)
    c = cost_table(loss, cover, grid)[snap_labels(y, cover, grid.alpha)]      # (n, N)
    h = (u[:, None] >= grid.grid[None, :]).astype(float)
    rhs = loss.value(yv, grid.alpha / 2) + (c * h).sum(axis=1) / N
    assert np.max(np.abs(lhs - rhs)) < TOL
    assert np.all(np.abs(cost_table(loss, cover, grid)) <= 1 + 1e-12)
    assert np.all(np.abs(loss.value(yv, u) - lhs) <= grid.alpha + 1e-12)    # Eq. (6) via cover


def test_grid_index_rule_consistency():
    grid = Grid(40)
    u = np.concatenate([grid.grid, grid.grid - 1e-17, np.linspace(0, 1, 1001)])
    k = grid.index(u)
    assert np.array_equal(grid.index(grid.round_down(u)), k)
    assert np.array_equal(grid.index(grid.round_mid(u)), k)
    h = u[:, None] >= grid.grid[None, :]
    assert np.array_equal(h.sum(axis=1), k)


@pytest.mark.parametrize("loss", ["square", ScaledLogisticLoss(4.0)])
def test_lemma_1(loss, rng):
    """cost(h_f) = loss_alpha(floor f) - E[l(y_, alpha/2)] and gamma(h_f) = gamma(floor f)."""
    y, group, pred = _sp_data(rng, n=500, n_groups=3, N=12)
    if not isinstance(loss, str):
        y = (y > 0.5).astype(float)
    m = StatisticalParity(eps=0.1, grid_size=12, loss=loss).fit(y, group)
    cost, g = m.stats(pred)
    yv = m.cover[m.ycode]
    loss_alpha = discretized_loss(m.loss_, yv, pred, m.grid).mean()
    assert abs(cost - (loss_alpha - m.loss_.value(yv, m.grid.alpha / 2).mean())) < TOL
    assert abs(m.loss_from_cost(cost) - loss_alpha) < TOL
    # brute force cost over the nN augmented rows
    h = (pred[:, None] >= m.grid.grid[None, :]).astype(float)
    assert abs(cost - np.mean(m.c[m.ycode] * h)) < TOL
    rounded = m.grid.round_down(pred)
    assert np.max(np.abs(m.gamma(rounded) - m.gamma(pred))) < TOL
    gam = m.gamma(pred)
    assert np.max(np.abs(m.p @ gam)) < TOL                       # sum_a p_a gamma_{a,z} = 0
    assert np.allclose(g, np.concatenate([gam.ravel(), -gam.ravel()]), atol=0)


def test_sort_and_sweep_equals_brute_force(rng):
    for n_groups, N in ((2, 10), (4, 40)):
        y, group, pred = _sp_data(rng, n=257, n_groups=n_groups, N=N)
        m = StatisticalParity(eps=0.1, grid_size=N).fit(y, group)
        fast = m.gamma(pred)
        brute = np.zeros((n_groups, N))
        for a in range(n_groups):            # the O(n N) double loop, row by row
            for j, z in enumerate(m.grid.grid):
                in_a = above_a = above = 0
                for i in range(y.size):
                    hit = pred[i] >= z
                    above += hit
                    if group[i] == a:
                        in_a += 1
                        above_a += hit
                brute[a, j] = above_a / in_a - above / y.size
        assert np.max(np.abs(fast - brute)) < TOL


def test_eq_12_augmented_costs(rng):
    """cost(h) + sum lambda gamma(h) = mean of C_{i,z} h(X_i, z) over nN rows = (1/n) sum g_lambda."""
    N = 15
    y, group, pred = _sp_data(rng, n=400, n_groups=3, N=N)
    m = StatisticalParity(eps=0.07, grid_size=N).fit(y, group)
    lam = rng.exponential(0.02, m.n_rows)
    cost, g = m.stats(pred)
    lhs = m.lagrangian(cost, g, lam) + lam @ m.bound
    C = m.cost_sensitive_table(lam)[m.ycode, m.group, :]                    # (n, N)
    h = (pred[:, None] >= m.grid.grid[None, :]).astype(float)
    assert abs(lhs - np.mean(C * h)) < TOL
    G = prefix_table(m.cost_sensitive_table(lam))
    assert abs(lhs - np.mean(G[m.ycode, m.group, m.grid.index(pred)])) < TOL


def test_ls_targets_tie_rule_and_lambda_zero(rng):
    N = 20
    y, group, _ = _sp_data(rng, n=300, N=N)
    m = StatisticalParity(eps=0.1, grid_size=N).fit(y, group)
    U = sp_targets(m, np.zeros(m.n_rows))
    mids = np.minimum(np.arange(N + 1) / N + 0.5 / N, 1.0)
    yv = m.cover[m.ycode]
    nearest = mids[np.argmin(np.abs(mids[None, :] - yv[:, None]) - 1e-13 * np.arange(N + 1), axis=1)]
    # square loss at lambda = 0: the midpoint nearest to y_ (smallest cell on ties)
    dist = np.abs(U - yv)
    assert np.all(dist <= np.abs(nearest - yv) + 1e-12)
    # U lies in [alpha/2, 1] on cell midpoints; a fit within alpha/2 rounds into the cell
    assert np.all(np.isin(np.round(U * 2 * N), [*np.arange(1, 2 * N + 2, 2).tolist(), 2 * N]))


def test_two_label_weights():
    U = np.linspace(0, 1, 11)
    assert np.allclose(two_label_weights(SquareLoss(), U), U)
    lg = ScaledLogisticLoss(3.0)
    assert np.allclose(two_label_weights(lg, U), lg.probability(U))
    # U is a stationary point of W l(1,u) + (1-W) l(0,u)
    W = two_label_weights(lg, U)
    assert np.allclose(W * lg.derivative(1.0, U) + (1 - W) * lg.derivative(0.0, U), 0, atol=1e-12)


# ---- Best_lambda -----------------------------------------------------------------------------------
def _lp_best_lambda(g, bound, B):
    prog = Program("best_lambda")
    prog.add_variables("lam", shape=(g.size,), lb=0.0)
    prog.add_constraints("budget", {"lam": np.ones((1, g.size))}, ub=B)
    prog.set_objective(linear={"lam": -(g - bound)})   # maximise (g - b) @ lam
    return -prog.solve("highs").objective


def test_best_lambda_closed_form_equals_lp(rng):
    y, group, pred = _sp_data(rng, n=300, n_groups=3, N=10)
    for moment in (StatisticalParity(eps=0.05, grid_size=10), BoundedGroupLoss(bound=0.01)):
        moment.fit(y, group)
        for B in (0.5, 3.0):
            for p in (pred, np.full_like(pred, 0.5), y):
                cost, g = moment.stats(p)
                lam = best_lambda(g, moment.bound, B)
                closed = moment.lagrangian(cost, g, lam)
                assert abs(closed - (cost + B * max(0.0, np.max(g - moment.bound)))) < TOL
                assert abs(closed - (cost + _lp_best_lambda(g, moment.bound, B))) < 1e-9
                assert lam.sum() <= B + TOL and np.count_nonzero(lam) <= 1


def test_lambda_from_theta_phantom_coordinate():
    theta = np.array([0.0, 1.0, -2.0, 700.0, -700.0])
    lam = lambda_from_theta(theta, 3.0)
    assert np.all(lam >= 0) and lam.sum() <= 3.0 + 1e-12 and np.isfinite(lam).all()
    lam0 = lambda_from_theta(np.zeros(6), 2.0)
    assert np.allclose(lam0, 2.0 / 7) and abs(2.0 - lam0.sum() - 2.0 / 7) < TOL  # phantom share


def test_best_mixture_lp_duals_are_lagrange_multipliers(rng):
    K, M = 12, 8
    costs, G = rng.uniform(-1, 1, K), rng.uniform(-0.3, 0.3, (K, M))
    bound = np.full(M, 0.05)
    for solver in ("highs", "scipy"):
        q, lam, s = solve_best_mixture(costs, G, bound, 5.0, solver=solver)
        assert abs(q.sum() - 1) < 1e-9 and np.all(lam >= 0) and lam.sum() <= 5 + 1e-7
        primal = q @ costs + 5.0 * s
        dual = np.min(costs + (G - bound) @ lam)        # max_lambda min_k L(h_k, lambda)
        assert abs(primal - dual) < 1e-7


# ---- the game with an exact oracle on a finite class --------------------------------------------
def _finite_class(rng, n=240, N=10, K=50):
    group = (np.arange(n) % 3 == 0).astype(int)
    x = rng.standard_normal(n)
    y = np.clip(0.45 + 0.25 * group + 0.1 * x + 0.05 * rng.standard_normal(n), 0, 1)
    preds = []
    for _k in range(K):
        w_g, w_x, c = rng.uniform(0, 0.3), rng.uniform(0, 0.15), rng.uniform(0.3, 0.6)
        preds.append(np.clip(c + w_g * group + w_x * x, 0, 1))
    preds[0] = np.full(n, 0.5)          # a constant member keeps SP feasible
    return np.arange(n)[:, None], y, group, np.array(preds)


def _sp_opt(moment, costs, G):
    """LP optimum over mixtures of a finite class: min cost s.t. G q <= b."""
    K = costs.size
    prog = Program("finite_opt")
    prog.add_variables("q", shape=(K,), lb=0.0)
    prog.add_constraints("rows", {"q": G.T}, ub=moment.bound)
    prog.add_constraints("simplex", {"q": np.ones((1, K))}, lb=1.0, ub=1.0)
    prog.set_objective(linear={"q": costs})
    return prog.solve("highs").objective


def test_faithful_sp_game_meets_theorem_4(rng):
    X, y, group, preds = _finite_class(rng)
    B, nu, N = 2.0, 0.1, 10
    moment = StatisticalParity(eps=0.05, grid_size=N)
    eg = ExponentiatedGradient(moment, FiniteClassOracle(preds), B=B, nu=nu, mode="faithful")
    res = eg.run(X, y, group)
    bound = 16 * B ** 2 * math.log(2 * 2 * N + 1) / nu ** 2
    assert eg.iteration_bound() == math.ceil(bound)
    assert res.status == "converged" and res.n_iter <= bound
    oracle = eg.oracle
    opt = _sp_opt(moment, oracle.costs, oracle.G)
    assert res.cost <= opt + 2 * nu
    assert np.all(np.abs(res.constraint_values[: moment.n_rows // 2])
                  <= moment.bound[: moment.n_rows // 2] + (2 + 2 * nu) / B)
    assert abs(res.weights.sum() - 1) < TOL


def test_practical_sp_game_returns_lp_optimum(rng):
    X, y, group, preds = _finite_class(rng)
    moment = StatisticalParity(eps=0.05, grid_size=10)
    oracle = FiniteClassOracle(preds)
    res = ExponentiatedGradient(moment, oracle, B=50.0, nu=1e-9, max_iter=200).run(X, y, group)
    opt = _sp_opt(moment, oracle.costs, oracle.G)
    assert res.status == "converged"
    assert abs(res.cost - opt) < 1e-8
    assert res.max_violation < 1e-8 and res.lp_slack < 1e-9
    # lambda is a certificate: L(Q, lambda) = OPT and min_h L(h, lambda) = OPT
    assert abs(moment.lagrangian(oracle.costs, oracle.G, res.lambda_).min() - opt) < 1e-7


def test_faithful_bgl_game_meets_guarantees(rng):
    X, y, group, preds = _finite_class(rng)
    B, nu = 2.0, 0.05
    moment = BoundedGroupLoss(bound=0.00167)     # binds: the best member's group loss is higher
    eg = ExponentiatedGradient(moment, FiniteClassOracle(preds), B=B, nu=nu, mode="faithful")
    res = eg.run(X, y, group)
    assert np.max(eg.oracle.G[np.argmin(eg.oracle.costs)]) > 0.00167
    assert eg.iteration_bound() == math.ceil(4 * B ** 2 * math.log(2 + 1) / nu ** 2)
    assert res.status == "converged" and res.n_iter <= eg.iteration_bound()
    opt = _sp_opt(moment, eg.oracle.costs, eg.oracle.G)
    assert res.cost <= opt + 2 * nu
    assert res.max_violation <= (1 + 2 * nu) / B
    assert opt > eg.oracle.costs.min() + 1e-6
    prac = ExponentiatedGradient(BoundedGroupLoss(bound=0.00167), FiniteClassOracle(preds), B=50.0,
                                 nu=1e-9, max_iter=200).run(X, y, group)
    assert prac.converged and abs(prac.cost - opt) < 1e-8 and prac.max_violation < 1e-9


def test_large_eps_gives_unconstrained_fit(rng):
    n = 400
    X = rng.standard_normal((n, 3))
    group = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int)
    y = np.clip(0.5 + 0.15 * X @ np.array([1.0, 0.5, -0.3]) + 0.05 * rng.standard_normal(n), 0, 1)
    moment = StatisticalParity(eps=0.01, grid_size=20)
    # lambda_1^+ = lambda_1^-  =>  h_1 is the unconstrained fit, for any eps
    eg = ExponentiatedGradient(moment, LeastSquaresOracle(LinearRegression()), max_iter=1)
    res = eg.run(X, y, group)
    lam1 = lambda_from_theta(np.zeros(moment.n_rows), 10.0)
    assert np.allclose(moment.signed_lambda(lam1), 0)
    res = ExponentiatedGradient(StatisticalParity(eps=1.0, grid_size=20),
                                LeastSquaresOracle(LinearRegression())).run(X, y, group)
    assert res.status == "converged" and res.n_iter == 1 and len(res.hypotheses) == 1
    assert res.gap == 0.0 and np.allclose(res.lambda_, 0)
    targets = sp_targets(eg.moment, np.zeros(eg.moment.n_rows))
    ref = np.clip(LinearRegression().fit(X, targets).predict(X), 0, 1)
    assert np.allclose(res.hypotheses[0].predict(X), ref, atol=1e-12)
    # faithful loop: cost within 2 nu of the unconstrained member
    Xi, yi, gi, preds = _finite_class(rng)
    big = StatisticalParity(eps=1.0, grid_size=10)
    res_f = ExponentiatedGradient(big, FiniteClassOracle(preds), B=2.0, nu=0.05,
                                  mode="faithful").run(Xi, yi, gi)
    assert res_f.cost <= np.min(FiniteClassOracle(preds).prepare(big, Xi).costs) + 2 * 0.05


def test_unreachable_bgl_returns_no_solution(rng):
    n = 600
    y = rng.uniform(0, 1, n)
    group = rng.integers(0, 2, n)
    X = np.arange(n)[:, None]
    consts = np.linspace(0, 1, 21)
    preds = np.repeat(consts[:, None], n, axis=1)
    B, nu = 10.0, 0.05
    for mode in ("faithful", "practical"):
        moment = BoundedGroupLoss(bound=0.0, loss=AbsoluteLoss())
        res = ExponentiatedGradient(moment, FiniteClassOracle(preds), B=B, nu=nu,
                                    mode=mode).run(X, y, group)
        assert res.status == "infeasible", mode
        assert res.hypotheses == [] and res.weights.size == 0
        assert res.violated_row.startswith("bounded_group_loss[")
        assert res.max_violation > 0.2 > (1 + 2 * nu) / B


# ---- classification moments --------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [DemographicParity, EqualOpportunity, EqualizedOdds])
def test_classification_moment_costs_match_lagrangian(cls, rng):
    n = 300
    y = rng.integers(0, 2, n).astype(float)
    group = rng.integers(0, 3, n)
    m = cls(eps=0.02).fit(y, group)
    lam = rng.exponential(0.1, m.n_rows)
    c = m.example_costs(lam)
    h1, h2 = rng.integers(0, 2, n).astype(float), rng.integers(0, 2, n).astype(float)
    L1 = m.lagrangian(*m.stats(h1), lam)
    L2 = m.lagrangian(*m.stats(h2), lam)
    assert abs((L1 - L2) - c @ (h1 - h2)) < TOL
    # gamma by brute force for DP
    if cls is DemographicParity:
        _, g = m.stats(h1)
        for a in range(3):
            assert abs(g[a] - (h1[group == a].mean() - h1.mean())) < TOL


def test_invalid_configuration_errors(rng):
    with pytest.raises(ConfigError):
        Grid(0)
    with pytest.raises(ConfigError):
        ExponentiatedGradient(StatisticalParity(), FiniteClassOracle(np.zeros((1, 3))),
                              mode="fast").run(np.arange(3)[:, None], np.zeros(3), np.zeros(3))
    with pytest.raises(ConfigError, match="cannot answer"):
        LeastSquaresOracle(LinearRegression()).prepare(BoundedGroupLoss().fit(np.zeros(3), np.zeros(3)),
                                                       np.zeros((3, 1)))


def test_theorem_1_discretised_optimum_within_2_alpha(rng):
    """Empirical Theorem 1 on a finite class: the optimum of (8) over rounded predictors loses at
    most 2 alpha against the optimum of (3) with constraints at *every* threshold, and is feasible
    for (3)."""
    from fairopt.reductions.evaluation import mixture_sp_disparity, mixture_sp_gamma
    n, N, eps = 150, 10, 0.1
    _X, y, group, preds = _finite_class(rng, n=n, N=N, K=30)
    sq = SquareLoss()
    losses = sq.value(y[None, :], preds).mean(axis=1)

    def lp(costs, gammas):                      # min costs @ q  s.t. |gammas @ q| <= eps
        K = costs.size
        prog = Program("theorem_1")
        prog.add_variables("q", shape=(K,), lb=0.0)
        prog.add_constraints("sp", {"q": gammas.T}, lb=-eps, ub=eps)
        prog.add_constraints("simplex", {"q": np.ones((1, K))}, lb=1.0, ub=1.0)
        prog.set_objective(linear={"q": costs})
        sol = prog.solve("highs")
        return sol.objective, np.clip(sol.primal["q"], 0, None)

    # (3): every threshold = every distinct prediction value
    z_all = np.unique(preds)
    gam_cont = np.stack([mixture_sp_gamma(p[None], [1.0], group, thresholds=z_all)[0].ravel()
                         for p in preds])
    opt_cont, _ = lp(losses, gam_cont)
    # (8): rounded predictors, discretised loss, grid thresholds
    m = StatisticalParity(eps=eps, grid_size=N).fit(y, group)
    rounded = m.grid.round_down(preds)
    stats = [m.stats(p) for p in rounded]
    loss_alpha = np.array([m.loss_from_cost(c) for c, _ in stats])
    gam_grid = np.stack([g[: g.size // 2] for _, g in stats])
    _, q = lp(loss_alpha, gam_grid)
    q = q / q.sum()
    true_loss = q @ sq.value(y[None, :], rounded).mean(axis=1)
    assert true_loss <= opt_cont + 2 * m.grid.alpha
    assert mixture_sp_disparity(rounded, q, group) <= eps + 1e-7


@pytest.mark.parametrize("solver", ["scipy", "cvxpy", "pyomo:appsi_highs"])
def test_practical_game_on_other_lp_backends(solver, rng):
    X, y, group, preds = _finite_class(rng)
    moment = StatisticalParity(eps=0.05, grid_size=10)
    oracle = FiniteClassOracle(preds)
    res = ExponentiatedGradient(moment, oracle, B=50.0, nu=1e-7, max_iter=100,
                                solver=solver).run(X, y, group)
    opt = _sp_opt(moment, oracle.costs, oracle.G)
    assert res.status == "converged" and abs(res.cost - opt) < 1e-6
    assert res.max_violation < 1e-6


def test_game_uses_the_shared_progress_helpers():
    import fairopt.reductions.exponentiated_gradient as eg
    from fairopt.runs import base
    assert eg.no_progress is base.no_progress and eg.Progress is base.Progress
    assert not hasattr(eg, "_no_progress")



@pytest.mark.parametrize("solver", ["highs", "scipy"])
def test_warm_started_best_mixture_equals_fresh_solves(solver):
    from fairopt.formulations.cost_sensitive import BestMixtureLP
    rng = np.random.default_rng(11)
    costs, G = rng.uniform(size=12), rng.normal(scale=0.2, size=(12, 5))
    bound = np.full(5, 0.05)
    master = BestMixtureLP(bound, solver=solver)
    for K, B in ((3, 5.0), (4, 5.0), (8, 50.0), (12, 50.0), (12, 500.0)):
        q, lam, s = master.solve(costs[:K], G[:K], B)
        q0, lam0, s0 = solve_best_mixture(costs[:K], G[:K], bound, B, solver="highs")
        assert q @ costs[:K] + B * s == pytest.approx(q0 @ costs[:K] + B * s0, abs=1e-9)
        np.testing.assert_allclose(lam, lam0, atol=1e-7)
