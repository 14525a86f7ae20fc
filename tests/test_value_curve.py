"""The exact value curve of a parametric LP equals cold solves, and its breakpoints are where the
slope changes."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairopt.errors import InfeasibleError
from fairopt.modeling import Program
from fairopt.modeling.parametric import MovingRows, value_curve


def random_lp(seed: int, n: int = 12, m_fair: int = 4, sense: str = "minimize") -> Program:
    """min c x over a box and a budget, with fairness-like rows |F x - f| <= eps (feasible at 0)."""
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(0.2, 0.8, n)                   # a point that meets every row at eps = 0
    F = rng.normal(size=(m_fair, n))
    prog = Program(f"random{seed}")
    prog.add_variables("x", shape=(n,), lb=0.0, ub=1.0)
    prog.add_constraints("fair", {"x": F}, lb=F @ x0, ub=F @ x0)
    prog.add_constraints("budget", {"x": np.ones((1, n))}, ub=x0.sum() + 0.5)
    prog.set_objective(linear={"x": rng.normal(size=n)}, sense=sense)
    return prog


def cold(prog: Program, center: np.ndarray, eps: float) -> float:
    prog.constraints["fair"].lb[:] = center - eps
    prog.constraints["fair"].ub[:] = center + eps
    prog._canonical = None
    return float(prog.solve(None).objective)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_curve_equals_cold_solves_and_breakpoints_are_kinks(seed: int, sense: str) -> None:
    prog = random_lp(seed, sense=sense)
    center = prog.constraints["fair"].lb.copy()
    curve = value_curve(prog, [MovingRows("fair", lb0=center, ub0=center, dlb=-1.0, dub=1.0)], 0.0, 1.5)
    rng = np.random.default_rng(100 + seed)
    grid = np.sort(rng.uniform(0, 1.5, 200))
    sign = 1.0 if sense == "minimize" else -1.0
    fresh = random_lp(seed, sense=sense)
    exact = np.array([cold(fresh, center, e) for e in grid])
    np.testing.assert_allclose(sign * curve(grid), exact, atol=1e-7, rtol=0)
    # convex in the minimisation form, and the slope changes exactly at the breakpoints
    assert np.all(np.diff(curve.slopes) >= -1e-9)
    h = 1e-5
    for k in curve.breakpoints:
        left = (cold(fresh, center, k) - cold(fresh, center, k - h)) / h
        right = (cold(fresh, center, k + h) - cold(fresh, center, k)) / h
        assert abs(right - left) > 1e-6, (k, left, right)
    # between breakpoints the finite-difference slope is constant
    inner = np.concatenate([[0.0], curve.breakpoints, [1.5]])
    for a, b in itertools.pairwise(inner):
        if b - a < 1e-3:
            continue
        xs = np.linspace(a + 1e-4, b - 1e-4, 4)
        vals = np.array([cold(fresh, center, e) for e in xs])
        d = np.diff(vals) / np.diff(xs)
        assert np.ptp(d) < 1e-6 * (1 + np.abs(d).max())
    # far fewer solves than grid points
    assert curve.solves <= 2 * curve.breakpoints.size + 3


def test_infeasible_start_is_named() -> None:
    prog = Program("tight")
    prog.add_variables("x", shape=(2,), lb=0.0, ub=1.0)
    prog.add_constraints("gap", {"x": np.array([[1.0, -1.0]])}, lb=0.0, ub=0.0)
    prog.add_constraints("floor", {"x": np.array([[1.0, 0.0]])}, lb=1.0)
    prog.add_constraints("cap", {"x": np.array([[0.0, 1.0]])}, ub=0.0)
    prog.set_objective(linear={"x": [1.0, 1.0]})
    with pytest.raises(InfeasibleError, match=r"eps = 0\.5"):
        value_curve(prog, [MovingRows("gap", dlb=-1.0, dub=1.0)], 0.5, 2.0)
    curve = value_curve(prog, [MovingRows("gap", dlb=-1.0, dub=1.0)], 1.0, 2.0)
    np.testing.assert_allclose(curve([1.0, 2.0]), [1.0, 1.0])
