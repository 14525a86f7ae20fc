"""Leximin (lexicographic max-min) over the utilities of a user's LP or MIP.

A plan is leximin-optimal when its utilities, sorted ascending, are lexicographically largest:
first the smallest utility is as large as possible, then the second smallest, and so on.

*LP: the saturation algorithm* (Ogryczak, Pióro and Tomaszewski). Round ``r`` solves
``max t  s.t.  u_i >= t`` for the entities still free, with every earlier round's rows kept and
its level fixed. An entity is *saturated* at the level ``t*`` when it cannot exceed ``t*`` while
every other entity keeps its bound; it then sits at ``t*`` in every leximin-optimal plan. A
positive multiplier of row ``u_i >= t`` proves it (complementary slackness); every other free
entity gets its own test, ``max u_e`` over the round's feasible set, and is saturated when the
maximum is ``t*`` (within the tolerance). On an LP every round saturates at least one entity, so
at most ``K`` rounds are needed. ``prices[e]`` is the multiplier of row ``u_e >= t`` in the
round that saturated ``e``: the multipliers of a round are nonnegative and sum to 1, and
``prices[e]`` is the rate at which that round's level falls per unit of utility that entity
``e`` would be required above it (the derivative of the level with respect to the row's bound).

*MIP: ordered outcomes.* On integer plans a round may saturate no single entity (two plans swap
who gets the low level), so the saturation test is not enough. The sum of the ``k`` smallest
utilities is LP-representable,

    theta_k = max_{t, d}  k t - sum_i d_i   s.t.  d_i >= t - u_i,  d_i >= 0,

and the leximin plan lexicographically maximises ``(theta_1, ..., theta_K)``; round ``k``
maximises ``theta_k`` with ``theta_1 .. theta_{k-1}`` fixed at their optimal values (``K``
rounds; each adds ``K + 1`` variables and ``K + 1`` rows). This is exact up to the MIP gap the
solver is given (``mip_gap``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairopt.constraints.leximin_targets import Target, make_target
from fairopt.errors import DataValidationError, SolverError


@dataclass
class LeximinResult:
    """Result of :func:`solve_leximin`.

    Attributes
    ----------
    levels : ndarray
        The sorted utility vector of the leximin plan (ascending).
    values : dict
        Utility of each entity at the leximin plan.
    rounds : int
        Level-setting solves (saturation rounds on an LP, ``K`` ordered-outcome rounds on a MIP);
        ``solves`` counts every solve including the saturation tests.
    status : str
        ``"optimal"``.
    prices : dict or None
        LP only: each entity's multiplier in the round that saturated it (see the module
        docstring); ``None`` for a MIP.
    method : str
        ``"saturation"`` (LP) or ``"ordered_outcomes"`` (MIP).
    saturated_in : dict
        LP: the round (1-based) in which each entity was saturated.
    primal : dict
        For a :class:`~fairopt.modeling.Program`: the values of its variables at the leximin plan
        (pyomo and cvxpy models hold them in their own variables).

    Examples
    --------
    See :func:`solve_leximin`.
    """

    levels: np.ndarray
    values: dict[str, Any]
    rounds: int
    status: str
    prices: dict[str, Any] | None
    method: str = "saturation"
    solves: int = 0
    saturated_in: dict[str, Any] = field(default_factory=dict)
    primal: dict[str, Any] = field(default_factory=dict, repr=False)


def _scale(x: float) -> float:
    return 1.0 + abs(x)


def _saturation(tg: Target, tol: float) -> tuple[np.ndarray, int, int, dict[int, float], dict[int, int]]:
    K = len(tg.entities)
    free = np.ones(K, dtype=bool)
    level = np.full(K, np.nan)
    prices: dict[int, float] = {}
    rounds = solves = 0
    sat_round: dict[int, int] = {}
    u = np.zeros(K)
    while free.any():
        rounds += 1
        idx = np.flatnonzero(free)
        t = tg.add_vars("level", 1, None)
        C = sp.csr_matrix((np.ones(idx.size), (np.arange(idx.size), idx)), shape=(idx.size, K))
        name = f"floor_{rounds}"
        tg.add_rows(name, C, [(t, -np.ones((idx.size, 1)))], np.zeros(idx.size))
        u = tg.maximize(None, [(t, [1.0])])
        solves += 1
        t_star = float(tg.aux_value(t)[0])
        y = tg.weights(name)
        if y.sum() < 0:  # back ends differ in the sign of a maximisation's multipliers
            y = -y
        thr = tol * _scale(t_star)
        sat = y > 1e-9
        above = u[idx] > t_star + thr
        maxima = np.where(above, u[idx], np.nan)
        for j in np.flatnonzero(~sat & ~above):  # the saturation test of each undecided entity
            e = idx[j]
            ue = tg.maximize(np.eye(K)[e], [])
            solves += 1
            maxima[j] = ue[e]
            sat[j] = ue[e] <= t_star + thr
        if not sat.any():  # numerical noise of an interior-point solver: the closest is saturated
            loose = max(1e-6, thr) * _scale(t_star)
            sat = np.nan_to_num(maxima, nan=np.inf) <= t_star + loose
            if not sat.any():
                raise SolverError(f"leximin round {rounds}: no entity is saturated at level {t_star:.9g} on an LP; "
                                  "the solver's answers are inconsistent (try an exact simplex solver).")
        # fix the level: every entity free in this round stays at or above it
        # (relaxed only by round-off: a looser floor lets later levels gain many times the slack)
        tg.add_rows(f"fix_{rounds}", None, [(t, np.ones((1, 1)))], np.array([t_star - 1e-12 * _scale(t_star)]))
        for j in np.flatnonzero(sat):
            e = idx[j]
            level[e], prices[e], sat_round[e] = t_star, float(y[j]), rounds
            free[e] = False
    return u, rounds, solves, prices, sat_round


def _ordered_outcomes(tg: Target, tol: float) -> tuple[np.ndarray, int, int]:
    K = len(tg.entities)
    u = np.zeros(K)
    for k in range(1, K + 1):
        t = tg.add_vars("t", 1, None)
        d = tg.add_vars("d", K, 0.0)
        tg.add_rows(f"excess_{k}", sp.identity(K, format="csr"),
                    [(t, -np.ones((K, 1))), (d, sp.identity(K, format="csr"))], np.zeros(K))
        obj_t, obj_d = np.array([float(k)]), -np.ones(K)
        u = tg.maximize(None, [(t, obj_t), (d, obj_d)])
        theta = float(np.sort(u)[:k].sum())  # the incumbent's k smallest: a value it attains
        tg.add_rows(f"cumulated_{k}", None, [(t, obj_t[None, :]), (d, obj_d[None, :])],
                    np.array([theta - tol * _scale(theta)]))
    return u, K, K


def solve_leximin(model: Any, utilities: Any, *, solver: Any = None, tol: float = 1e-9,
                  mip_gap: float | None = 1e-9, method: str = "auto") -> LeximinResult:
    """Leximin plan of a user's model: lexicographically maximise the sorted utilities.

    Parameters
    ----------
    model : Program, pyomo model or cvxpy Problem
        The feasible set (its own objective is ignored; a pyomo model's objectives are
        deactivated during the solves and reactivated afterwards). Integer variables are allowed.
    utilities : mapping or tuple
        Entity -> linear expression of the model's variables: for a
        :class:`~fairopt.modeling.Program` a mapping ``{variable name: coefficients}``, for
        pyomo and cvxpy an expression. Or ``(variable, groups)`` / ``(variable, groups,
        weights)``: group ``a``'s utility is ``sum_{i in a} w_i x_i`` over the entries of one
        variable (a Program variable name, a pyomo ``Var`` in index order, a cvxpy ``Variable``).
    solver : str or SolverSpec, optional
        For a Program any ``"backend[:solver]"`` (default: the registry's); for pyomo and cvxpy
        an inner solver of that modelling layer (default: its registry default).
    tol : float
        Saturation tolerance, relative to ``1 + |level|``; fixed levels are relaxed by it.
    mip_gap : float or None
        Relative MIP gap asked of the solver on a MIP (``None``: the solver's default).
    method : {"auto", "saturation", "ordered_outcomes"}
        ``"auto"``: saturation on an LP, ordered outcomes on a MIP (the saturation algorithm is
        refused on a MIP, where it can stall).

    Returns
    -------
    LeximinResult

    Raises
    ------
    InfeasibleError
        The model is infeasible.

    Examples
    --------
    Three entities share a budget of 4; entity ``c`` can use at most 0.5:

    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("share")
    >>> _ = prog.add_variables("x", shape=3, lb=0, ub=[3, 3, 0.5])
    >>> _ = prog.add_constraints("budget", {"x": np.ones((1, 3))}, ub=4)
    >>> res = solve_leximin(prog, ("x", ["a", "b", "c"]))
    >>> res.levels.round(6).tolist(), res.rounds
    ([0.5, 1.75, 1.75], 2)
    >>> {k: round(v, 6) for k, v in res.prices.items()}
    {'c': 1.0, 'a': 0.5, 'b': 0.5}
    """
    tol = float(tol)
    if not 0 < tol < 1e-2:
        raise DataValidationError(f"tol must be in (0, 0.01), got {tol}.")
    if method not in ("auto", "saturation", "ordered_outcomes"):
        raise DataValidationError(f"method must be 'auto', 'saturation' or 'ordered_outcomes', got {method!r}.")
    tg = make_target(model, utilities, solver, mip_gap)
    if len(tg.entities) < 1:
        raise DataValidationError("utilities: give at least one entity.")
    try:
        if method == "saturation" and tg.mip:
            raise DataValidationError("the saturation algorithm is not exact on a MIP (a round may saturate no "
                                      "single entity); use method='ordered_outcomes' or 'auto'.")
        if method == "ordered_outcomes" or (method == "auto" and tg.mip):
            u, rounds, solves = _ordered_outcomes(tg, tol)
            prices, sat_round, name = None, {}, "ordered_outcomes"
        else:
            u, rounds, solves, pr, sr = _saturation(tg, tol)
            prices = {tg.entities[e]: v for e, v in pr.items()}
            sat_round = {tg.entities[e]: v for e, v in sr.items()}
            name = "saturation"
        primal = tg.primal() if hasattr(tg, "primal") else {}
    finally:
        tg.finish()
    u = np.asarray(u, dtype=float) * getattr(tg, "unit", 1.0)
    values = {e: float(v) for e, v in zip(tg.entities, u, strict=True)}
    return LeximinResult(levels=np.sort(u), values=values, rounds=rounds, status="optimal", prices=prices,
                         method=name, solves=solves, saturated_in=sat_round, primal=primal)


__all__ = ["LeximinResult", "solve_leximin"]
