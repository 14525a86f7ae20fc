"""fair_ranking's column generation runs behind the solver protocol (issue 32): it builds a
``pricing`` problem (LazyColumns) and solves it through the registry, so every LP solver with duals
runs the same loop and reaches the same optimum as the full LP over P; ranking/ imports no solver."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from fairopt.errors import InfeasibleError, SolverError, UnknownSolverError, WrongProblemClassError
from fairopt.modeling.registry import exact_specs
from fairopt.ranking import fair_ranking

ROOT = Path(__file__).resolve().parents[1]
#: LP solvers with duals the pricing loop re-solves its masters with (generic path), when installed
LP_WITH_DUALS = [s for s in ("scipy:highs-ds", "ortools:GLOP", "cvxpy:CLARABEL") if s in exact_specs("LP")]


def batch(Q, n, K, seed):
    rng = np.random.default_rng(seed)
    G = np.array([f"g{i}" for i in range(K)])[rng.integers(0, K, size=(Q, n))]
    G[:, :K] = [f"g{i}" for i in range(K)]          # every group in every query
    U = rng.random((Q, n)) + 0.4 * (G == "g0")       # g0 more relevant: fairness binds
    return U, G


@pytest.mark.parametrize("criterion,eps", [("parity", 0.02), ("impact", 0.1), ("parity", 0.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_batch_colgen_equals_the_full_lp(criterion, eps, seed):
    """Random batches: utility and item exposures of column generation equal the LP over P (1e-7),
    and the exposure criterion holds within eps."""
    U, G = batch(4, 7, 2 + seed, seed)
    got = fair_ranking(U, G, eps, criterion=criterion)
    for q in range(U.shape[0]):
        ref = fair_ranking(U[q], G[q], eps, criterion=criterion, method="lp")
        assert got[q].utility == pytest.approx(ref.utility, abs=1e-7)
        np.testing.assert_allclose(got[q].item_exposure, ref.item_exposure, atol=1e-7)
        np.testing.assert_allclose(got[q].exposure_columns["exposure"], ref.exposure_columns["exposure"], atol=1e-7)
        assert got[q].disparity <= eps + 1e-9
        assert got[q].info["method"] == "colgen" and got[q].info["rounds"] >= 0


@pytest.mark.parametrize("lp", LP_WITH_DUALS)
def test_two_lp_solvers_run_the_same_pricing_loop(lp):
    """The restricted masters re-solved as Programs by another LP solver: the same optimum (1e-6),
    the same price of fairness, a decomposition that reproduces the exposures."""
    U, G = batch(3, 8, 3, 4)
    base = fair_ranking(U, G, 0.03)
    other = fair_ranking(U, G, 0.03, solver=lp)
    for a, b in zip(base, other, strict=True):
        assert b.utility == pytest.approx(a.utility, abs=1e-6)
        assert b.price_of_fairness == pytest.approx(a.price_of_fairness, abs=1e-5)
        np.testing.assert_allclose(b.exposure_columns["exposure"], a.exposure_columns["exposure"], atol=1e-6)
        assert b.disparity <= 0.03 + 1e-6
        assert b.decomposition.weights.sum() == pytest.approx(1.0, abs=1e-9)


def test_top_k_and_click_model_with_another_lp_solver():
    """Top-k (zero weights beyond k) and a non-monotone click model (pricing by assignment) on the
    generic path equal the default path."""
    if not LP_WITH_DUALS:
        pytest.skip("no second LP solver with duals installed")
    u, g = batch(1, 9, 2, 7)
    for kw in ({"k": 4}, {"v": np.array([0.5, 1.0, 0.7, 0.4, 0.3, 0.2, 0.1, 0.05, 0.0])}):
        a = fair_ranking(u[0], g[0], 0.02, **kw)
        b = fair_ranking(u[0], g[0], 0.02, solver=LP_WITH_DUALS[0], **kw)
        ref = fair_ranking(u[0], g[0], 0.02, method="lp", **kw)
        assert a.utility == pytest.approx(ref.utility, abs=1e-7)
        assert b.utility == pytest.approx(ref.utility, abs=1e-6)


@pytest.mark.parametrize("solver", [None, *LP_WITH_DUALS[:1]])
def test_phase_one_infeasibility_names_the_tightest_eps(solver):
    """Merit-fairness below the tightest eps: the error names the block and the smallest feasible
    eps, which is feasible (just above) and infeasible (just below) on every solver."""
    rng = np.random.default_rng(3)
    g = np.array(["a"] * 6 + ["b"] * 2)
    u = np.r_[rng.random(6) + 1.0, rng.random(2) * 0.2 + 0.05]
    with pytest.raises(InfeasibleError) as err:
        fair_ranking(u, g, 1e-4, criterion="merit", solver=solver)
    tight = err.value.tightest["eps"]
    assert err.value.constraint == "exposure_merit" and tight > 1e-4 and f"{tight:.6g}" in str(err.value)
    ok = fair_ranking(u, g, tight * (1 + 1e-6), criterion="merit", solver=solver)
    assert ok.disparity <= tight * (1 + 1e-6) + 1e-9
    with pytest.raises(InfeasibleError):
        fair_ranking(u, g, tight * (1 - 1e-3), criterion="merit", method="lp")


def test_solver_values_are_parsed_once_and_checked(monkeypatch):
    u, g = batch(1, 6, 2, 0)
    a = fair_ranking(u[0], g[0], 0.02)
    # the pricing kind's own solver, named, is the default
    assert fair_ranking(u[0], g[0], 0.02, solver="column_pricing").utility == a.utility
    assert fair_ranking(u[0], g[0], 0.02, solver="column_pricing{max_rounds=500}").utility == a.utility
    with pytest.raises(UnknownSolverError) as err:
        fair_ranking(u[0], g[0], 0.02, solver="cvxpy:NOPE")
    assert "highs:highs" in err.value.available
    with pytest.raises(WrongProblemClassError):          # takes neither LP nor the pricing kind
        fair_ranking(u[0], g[0], 0.02, solver="sgd")
    # an LP solver that returns no duals cannot price: refused up front, listing those that can
    from fairopt.modeling.backends import scipy_backend
    monkeypatch.setattr(scipy_backend, "INFO", dataclasses.replace(scipy_backend.INFO, duals=()))
    with pytest.raises(WrongProblemClassError, match="returns none") as err:
        fair_ranking(u[0], g[0], 0.02, solver="scipy:highs-ds")
    assert "highs:highs" in err.value.available and "scipy:highs-ds" not in err.value.available


def test_max_rounds_is_a_typed_solver_error():
    u, g = batch(1, 12, 2, 1)
    with pytest.raises(SolverError, match="max_rounds"):
        fair_ranking(u[0], g[0], 0.0, max_rounds=0)


def test_ranking_imports_no_solver_library():
    """Back-end facts live in fairopt/modeling/backends: no module under ranking/ imports a solver."""
    libraries = {"highspy", "cvxpy", "osqp", "pyomo", "ortools"}
    hits = []
    for path in sorted((ROOT / "fairopt" / "ranking").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            hits += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] in libraries]
    assert not hits, hits
    assert "highspy" not in (ROOT / "fairopt/ranking/colgen.py").read_text(encoding="utf-8")


def test_a_warm_start_simplex_cannot_clean_up_is_solved_from_scratch():
    """This instance left HiGHS at status Unknown after a warm-started re-solve (a dual
    infeasibility it did not remove) on the old in-ranking master, and fails the same way without
    the restart: the pricing solver re-solves that master from scratch and reaches the LP optimum."""
    if not LP_WITH_DUALS:
        pytest.skip("no second LP solver with duals installed")
    u = np.random.default_rng(0).random(200)
    g = np.random.default_rng(1).choice(list("abc"), 200)
    got = fair_ranking(u, g, 0.01)
    assert got.utility == pytest.approx(fair_ranking(u, g, 0.01, solver=LP_WITH_DUALS[0]).utility, abs=1e-7)
    assert got.disparity <= 0.01 + 1e-9
    assert got.decomposition.weights.sum() == pytest.approx(1.0, abs=1e-9)


def test_the_lp_solvers_options_reach_the_restricted_masters():
    """A HiGHS spec with options and a time limit runs the warm path with them (same optimum); a
    bad option of it is refused by name before anything is solved."""
    from fairopt.errors import ConfigError
    u, g = batch(1, 10, 3, 2)
    a = fair_ranking(u[0], g[0], 0.01)
    b = fair_ranking(u[0], g[0], 0.01, solver="highs{time_limit=30, simplex_strategy=4}")
    assert b.utility == pytest.approx(a.utility, abs=1e-9)
    with pytest.raises(ConfigError, match="no_such_option"):
        fair_ranking(u[0], g[0], 0.01, solver="highs{no_such_option=1}")


def test_a_time_limit_of_the_masters_solver_is_a_typed_limit_error():
    from fairopt.errors import SolverLimitError
    from fairopt.modeling import SolverSpec
    from fairopt.modeling.solution import Status
    u, g = batch(1, 300, 2, 0)
    with pytest.raises(SolverLimitError, match="time limit") as err:
        fair_ranking(u[0], g[0], 0.0, solver=SolverSpec("highs", time_limit=1e-9))
    assert err.value.status is Status.TIME_LIMIT
