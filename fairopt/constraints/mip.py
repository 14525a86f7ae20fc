"""Prices of fairness for a user's MIP outside :class:`~fairopt.modeling.Program`: the LP with the
integer variables fixed at the incumbent (its row duals price the continuous part's fairness rows
at the incumbent's integer decisions), for pyomo models and cvxpy problems, as
``Program.solve(relaxation_duals=True)`` does for a ``Program``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    import cvxpy as cp
    import pyomo.environ as pyo
    from pyomo.opt import SolverResults


def incumbent_lp(model: pyo.Block | cp.Problem, solver: str | None = None) -> SolverResults | cp.Problem:
    """Re-solve a solved MIP as the LP with every integer variable fixed at its incumbent value
    (rounded), so the fairness blocks' duals can be read with ``price_of_fairness``.

    Parameters
    ----------
    model : pyomo model or cvxpy Problem
        Already solved (the integer variables hold the incumbent).
    solver : str, optional
        An LP solver of the model's own modelling layer (a pyomo solver name, a cvxpy solver);
        default: the registry's default LP solver for that layer.

    Returns
    -------
    pyomo results, or the fixed cvxpy Problem
        For pyomo the duals land in ``model.dual`` (an IMPORT ``Suffix``, added if missing: a
        MIP solve refuses one, so add it after the MIP); the integer variables are unfixed again
        afterwards. For cvxpy pass the returned problem as
        ``problem=`` to ``price_of_fairness``; the constraint objects are the user's own.

    Examples
    --------
    >>> import cvxpy as cp, numpy as np
    >>> from fairopt.constraints import selection_rate_parity
    >>> y = cp.Variable(4, boolean=True)
    >>> x = cp.Variable(4)
    >>> block = selection_rate_parity(["a", "a", "b", "b"], eps=0.25)
    >>> cons = block.to_cvxpy(x)
    >>> prob = cp.Problem(cp.Maximize(np.array([4, 3, 2, 1]) @ x),
    ...                   [*cons, x >= 0, x <= y, cp.sum(y) <= 3, cp.sum(x) <= 2])
    >>> _ = prob.solve(solver="HIGHS")
    >>> lp = incumbent_lp(prob)
    >>> round(block.price_of_fairness(cons, problem=lp).parameters["eps"], 6)
    1.0
    """
    from fairopt.modeling.registry import model_backend, model_spec
    backend = model_backend(model)
    if backend is None:
        raise DataValidationError(f"incumbent_lp takes a pyomo model or a cvxpy Problem, got {type(model).__name__}.")
    name = model_spec(backend, solver, "LP").solver
    assert name is not None  # model_spec resolves the inner solver
    if hasattr(model, "component_data_objects"):
        return _pyomo(model, name)
    return _cvxpy(model, name)


def _pyomo(model: pyo.Block, solver: str) -> SolverResults:
    import pyomo.environ as pyo
    ints = [v for v in model.component_data_objects(pyo.Var, active=True)
            if not v.fixed and (v.is_integer() or v.is_binary())]
    if any(v.value is None for v in ints):
        raise DataValidationError("solve the MIP first: an integer variable has no value (no incumbent).")
    if model.component("dual") is None:
        model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    saved = [(v, v.domain, v.value) for v in ints]
    try:  # fixed and continuous: the solver sees an LP and returns duals
        for v in ints:
            val = float(np.round(v.value))
            v.domain = pyo.Reals
            v.fix(val)
        return pyo.SolverFactory(solver).solve(model)
    finally:
        for v, dom, val in saved:
            v.unfix()
            v.domain = dom
            v.set_value(val)


def _cvxpy(problem: cp.Problem, solver: str) -> cp.Problem:
    import cvxpy as cp
    ints = [v for v in problem.variables() if v.attributes.get("integer") or v.attributes.get("boolean")]
    if any(v.value is None for v in ints):
        raise DataValidationError("solve the MIP first: an integer variable has no value (no incumbent).")
    saved = [(v, v.attributes["integer"], v.attributes["boolean"], v.integer_idx, v.boolean_idx) for v in ints]
    fixed = cp.Problem(problem.objective, [*problem.constraints,
                                           *(v == np.round(v.value) for v in ints)])  # type: ignore[arg-type]  # every value was checked above
    try:  # the fixed problem is an LP: solve it with the integrality flags lowered
        for v in ints:
            v.attributes["integer"] = v.attributes["boolean"] = False
            v.integer_idx, v.boolean_idx = [], []  # type: ignore[assignment]  # cvxpy's hint is a tuple; any empty sequence clears the flags
        fixed.solve(solver=solver)  # type: ignore[no-untyped-call, unused-ignore]  # strict only: cvxpy leaves solve unannotated
    finally:
        for v, i, b, ii, bi in saved:
            v.attributes["integer"], v.attributes["boolean"] = i, b
            v.integer_idx, v.boolean_idx = ii, bi
    return fixed
