"""Column generation for huge TV mappings: equal to HiGHS's interior point, certified on the full
program, and the same infeasibility report as the full LP."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.data import Domain
from fairopt.errors import InfeasibleError, SolverError
from fairopt.formulations.tv_repair import OptimizedPreprocessing
from fairopt.formulations.tv_repair.colgen import solve_column_generation
from fairopt.modeling import Program
from fairopt.modeling.certify import FEAS_TOL, KKT_TOL, kkt_residual, max_violation


def _model(seed=0, n_age=30, n_edu=8, eps=0.02, discrimination="additive", utility="xy", conditioning="dxy"):
    """A mapping with tens of thousands of cells: D x age x education x Y, group-dependent labels."""
    rng = np.random.default_rng(seed)
    dom = Domain([("d", [0, 1]), ("age", list(range(n_age))), ("edu", list(range(n_edu))), ("y", [0, 1])])
    n = 20000
    d = rng.integers(0, 2, n)
    age = np.minimum(rng.poisson(8 + 6 * d), n_age - 1)
    edu = np.minimum(rng.poisson(3 + d), n_edu - 1)
    y = (rng.random(n) < 0.15 + 0.25 * d + 0.01 * edu).astype(int)
    cells, counts = dom.unique_codes(np.column_stack([d, age, edu, y]))
    table = {"age": {"kind": "ordinal", "up": 0.1, "down": 0.1, "max_up": 10, "max_down": 10},
             "edu": {"kind": "ordinal", "up": 0.5, "down": 0.0, "max_up": 3, "max_down": 0},
             "y": {"kind": "matrix", "matrix": {1: {0: 1.0}, 0: {1: 0.0}}}}
    return OptimizedPreprocessing(dom, cells, counts, protected="d", label="y", distortion=table,
                                  clist=[0.99, 1.99], dlist=[0.1, 0.0], discrimination=discrimination,
                                  epsilon=eps, utility=utility, conditioning=conditioning)


@pytest.mark.parametrize("kw", [{}, {"discrimination": "ratio", "eps": 0.1}, {"utility": "dxy"},
                                {"conditioning": "xy", "seed": 1}, {"discrimination": "target", "eps": 0.3}])
def test_column_generation_equals_interior_point_and_is_certified(kw):
    model = _model(**kw)
    assert model.n_variables > 10_000
    ref = model.solve("highs", options={"solver": "ipm"})
    got = model.solve("column_generation")
    assert got.status == "optimal"
    assert abs(got.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    log = got.solution.log
    assert "certified on the full program" in log
    # the certificate, recomputed here on the full canonical program
    canon = model.build().canonical()
    x = np.concatenate([got.solution.primal[v].ravel() for v in canon.var_slices])
    y = np.concatenate([got.solution.dual[k] for k in canon.con_slices])
    assert max_violation(canon, x) <= FEAS_TOL
    assert kkt_residual(canon, x, y, None) <= KKT_TOL
    # fewer cells than the full program: the point of the method
    assert got.solution.info["master_columns"] < model.n_variables
    np.testing.assert_allclose(got.rates["after"], ref.rates["after"], atol=1e-6)


def test_column_generation_infeasible_reports_like_the_full_lp():
    model = _model(eps=0.05, discrimination="target")   # minimal feasible epsilon is 0.277
    with pytest.raises(InfeasibleError) as full:
        model.solve("highs")
    with pytest.raises(InfeasibleError) as cg:
        model.solve("column_generation")
    assert cg.value.constraint == full.value.constraint
    assert set(cg.value.tightest) == set(full.value.tightest)
    assert cg.value.tightest["pairs"] == full.value.tightest["pairs"]
    assert cg.value.tightest["epsilon"] == pytest.approx(full.value.tightest["epsilon"])


def test_column_generation_generic_lp_and_errors():
    rng = np.random.default_rng(0)
    prog = Program("transport")
    n_r, n_c = 40, 60
    _ = prog.add_variables("x", shape=(n_r * n_c,), lb=0.0)
    rows = np.kron(np.eye(n_r), np.ones((1, n_c)))
    cols = np.kron(np.ones((1, n_r)), np.eye(n_c))
    _ = prog.add_constraints("supply", {"x": rows}, lb=1.0, ub=1.0)
    _ = prog.add_constraints("capacity", {"x": cols}, ub=1.0)
    cost = rng.random(n_r * n_c)
    prog.set_objective(linear={"x": cost})
    ref = prog.solve("highs")
    got = solve_column_generation(prog, "x", np.arange(n_r) * n_c, columns_per_round=5)
    assert got.status.value == "optimal" and got.iterations > 1
    assert abs(got.objective - ref.objective) <= 1e-9
    q = Program("qp")
    _ = q.add_variables("x", shape=(2,), lb=0.0)
    q.set_objective(linear={"x": [1.0, 1.0]}, quadratic={("x", "x"): np.eye(2)})
    with pytest.raises(SolverError, match="linear programs only"):
        solve_column_generation(q, "x", [0])


def test_estimator_accepts_column_generation():
    from fairopt.data import load_builtin
    from fairopt.preprocessing import TVRepair
    data = load_builtin("adult")
    frame = data.expand(shuffle=True, random_state=0)
    X, y = frame[["sex", "age_decade", "education_years"]], frame["income"]
    kw = {"distortion": "adult", "clist": [0.99, 1.99, 2.99], "dlist": [0.1, 0.05, 0.0],
          "discrimination": "additive", "epsilon": 0.05, "domain": data.domain}
    ref = TVRepair(**kw).fit(X, y, sensitive_features="sex")
    got = TVRepair(solver="column_generation", **kw).fit(X, y, sensitive_features="sex")
    assert got.objective_ == pytest.approx(ref.objective_, rel=1e-6, abs=1e-10)
    assert "certified on the full program" in got.result_.solution.log
