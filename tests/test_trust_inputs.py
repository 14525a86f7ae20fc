"""Typed errors for solver options of the wrong type and for prices asked of a pyomo MIP."""
import pytest

from fairopt.errors import ConfigError, DataValidationError
from fairopt.modeling import Program


@pytest.mark.parametrize("options, word", [({"presolve": "yes"}, "True or False"), ({"time_limit": "x"}, "a number"),
                                           ({"maxiter": 2.5}, "an integer")])
def test_scipy_option_of_the_wrong_type_is_a_config_error(options, word):
    prog = Program("t")
    prog.add_variables("x", shape=2, lb=0, ub=1)
    prog.set_objective(linear={"x": [1.0, 2.0]}, sense="maximize")
    with pytest.raises(ConfigError, match=f"must be {word}"):
        prog.solve("scipy", options=options)
    ok = prog.solve("scipy", options={"presolve": False, "maxiter": 100, "dual_feasibility_tolerance": 1e-8})
    assert ok.objective == pytest.approx(3.0)


def test_price_of_fairness_on_a_pyomo_mip_says_how_to_price_it():
    pyo = pytest.importorskip("pyomo.environ")
    from fairopt.constraints import incumbent_lp, selection_rate_parity
    block = selection_rate_parity(["a", "a", "b", "b"], eps=0.25)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 3)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    m.y = pyo.Var(m.I, domain=pyo.Binary)
    fair = block.to_pyomo(m.x)
    m.link = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] <= m.y[i])
    m.cap = pyo.Constraint(expr=sum(m.y[i] for i in m.I) <= 3)
    m.size = pyo.Constraint(expr=sum(m.x[i] for i in m.I) <= 2)
    m.obj = pyo.Objective(expr=sum(w * m.x[i] for i, w in zip(range(4), [4, 3, 2, 1], strict=True)),
                          sense=pyo.maximize)
    solver = pyo.SolverFactory("appsi_highs")
    if not solver.available(exception_flag=False):
        pytest.skip("appsi_highs not available")
    solver.solve(m)
    with pytest.raises(DataValidationError, match=r"a MIP has no duals.*incumbent_lp"):
        block.price_of_fairness(fair)
    incumbent_lp(m)                               # the advice works
    assert block.price_of_fairness(fair).parameters["eps"] == pytest.approx(1.0)
