"""The solver protocol of issue 32: no module above the modeling core names a solver; a solver value
is parsed once and printed back with its options; every estimator refuses an unknown solver with
the typed error listing what it accepts; fairopt's own column and row generation equal the whole
LP solved at once."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from fairopt.errors import ConfigError, SolverLimitError, UnknownSolverError, WrongProblemClassError
from fairopt.modeling import Program, SolverSpec
from fairopt.modeling.backends import NAMES
from fairopt.modeling.kinds import PROBLEM_KINDS, ColumnGenerationMaster, LazyRows
from fairopt.modeling.registry import (
    BACKENDS,
    accepts,
    capabilities,
    exact_specs,
    installed_specs,
    parse_solver,
    resolve_solver,
    solve_own,
    solver_table,
)

ROOT = Path(__file__).resolve().parents[1]
#: the layers that build problems and read solutions: none of them may name a solver
LAYERS = ("formulations", "preprocessing", "inprocessing", "postprocessing", "ranking", "constraints", "runs")


def _solver_words() -> set[str]:
    """Every registered back end and inner-solver name, lower-cased."""
    words = set(NAMES)
    for info in BACKENDS.values():
        words.update(s.lower() for s in info.solvers)
    return words


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _named_solvers(path: Path, words: set[str]) -> list[str]:
    """String literals of ``path`` (docstrings aside) that are a solver name or a ``name:solver`` spec."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_nodes(tree)
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value.strip().lower()
            head = text.split(":", 1)[0].split("{", 1)[0]
            if text in words or (head in NAMES and (":" in text or "{" in text)):
                where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                hits.append(f"{where}:{node.lineno}: {node.value!r}")
    return hits


def test_no_layer_above_the_modeling_core_names_a_solver():
    words = _solver_words()
    files = [p for layer in LAYERS for p in sorted((ROOT / "fairopt" / layer).rglob("*.py"))]
    assert len(files) > 40
    hits = [h for p in files for h in _named_solvers(p, words)]
    assert not hits, "name no back end outside fairopt/modeling (resolve_solver / default_spec):\n" + "\n".join(hits)


def test_the_grep_finds_what_it_looks_for(tmp_path):
    """The check above can fail: a formulation that compares a back-end name is caught, a
    docstring mentioning one is not."""
    bad = tmp_path / "probe.py"
    bad.write_text('"""Solve with ``"highs"``."""\nx = spec.backend == "highs"\ny = "cvxpy:CLARABEL"\n'
                   'z = "the highs solver"\nw = "osqp{max_iter=5}"\n', encoding="utf-8")
    hits = _named_solvers(bad, _solver_words())
    assert sorted(h.rsplit(": ", 1)[1] for h in hits) == ["'cvxpy:CLARABEL'", "'highs'", "'osqp{max_iter=5}'"]


def test_solver_names_have_one_source():
    assert list(BACKENDS) == list(NAMES)
    on_disk = sorted(p.name[:-len("_backend.py")] for p in (ROOT / "fairopt/modeling/backends").glob("*_backend.py"))
    assert on_disk == sorted(NAMES)


@pytest.mark.parametrize("text,spec", [
    ("highs", SolverSpec("highs")),
    ("cvxpy:SCS{max_iters=500, eps_abs=1e-05}", SolverSpec("cvxpy", "SCS", {"max_iters": 500, "eps_abs": 1e-5})),
    ("highs:highs{presolve='off', time_limit=30}", SolverSpec("highs", "highs", {"presolve": "off"}, 30)),
    ("osqp{verbose=True}", SolverSpec("osqp", None, {}, None, True)),
])
def test_spec_prints_its_options_and_reads_them_back(text, spec):
    assert SolverSpec.parse(text) == spec
    assert SolverSpec.parse(str(spec)) == spec
    assert str(spec).startswith(spec.label) and spec.label == text.split("{")[0]
    for key, value in spec.options.items():
        assert f"{key}={value!r}" in str(spec)


@pytest.mark.parametrize("text", ["cvxpy:SCS{max_iters=}", "highs{1}", "highs{presolve=off}", "highs{a=1"])
def test_malformed_options_are_a_config_error(text):
    with pytest.raises(ConfigError, match="option"):
        SolverSpec.parse(text)


def test_resolve_fills_defaults_and_refuses_with_what_works():
    for kind in PROBLEM_KINDS:
        spec = resolve_solver(None, kind)
        assert kind in BACKENDS[spec.backend].solvers[spec.solver]
    with pytest.raises(UnknownSolverError) as err:
        resolve_solver("cvxpy:NOPE", "LP")
    assert set(err.value.available) == set(installed_specs("LP")) and "highs:highs" in err.value.available
    with pytest.raises(UnknownSolverError, match="unknown solver back end 'nope'"):
        parse_solver("nope")
    with pytest.raises(WrongProblemClassError) as wrong:
        resolve_solver("sgd", "LP")
    assert "sgd:sgd" not in wrong.value.available and wrong.value.available == installed_specs("LP")
    assert parse_solver(None) is None
    assert accepts("column_generation", "colgen") and not accepts("column_generation", "LP")


def test_capabilities_are_consistent_with_the_declarations():
    rows = solver_table()
    assert {(r["backend"], r["solver"]) for r in rows} == {(b, s) for b in BACKENDS for s in BACKENDS[b].solvers}
    for r in rows:
        info = BACKENDS[r["backend"]]
        assert r["kinds"] == list(info.solvers[r["solver"]])
        assert r["exact"] == (info.solver_accuracy(r["solver"]) <= 1e-6)
        if r["installed"] and r["exact"]:
            assert any(f"{r['backend']}:{r['solver']}" in exact_specs(k) for k in r["kinds"])
    assert not capabilities(resolve_solver("sgd", "threshold"))["exact"]
    assert capabilities(resolve_solver(None, "LP"))["warm_start"]


def test_every_back_end_reads_its_status_map():
    from fairopt.modeling.solution import Status
    for info in BACKENDS.values():
        assert info.map_status("certainly not a status") is Status.ERROR
        for native, status in info.status_map.items():
            assert info.map_status(native) is status
    for name in ("cvxpy", "highs", "osqp", "pyomo", "scipy", "ortools"):
        source = (ROOT / "fairopt/modeling/backends" / f"{name}_backend.py").read_text(encoding="utf-8")
        assert "INFO.map_status(" in source, f"{name} maps statuses around its declaration"


def _transport(n_r: int = 30, n_c: int = 40, seed: int = 0) -> Program:
    rng = np.random.default_rng(seed)
    prog = Program("transport")
    prog.add_variables("x", shape=(n_r * n_c,), lb=0.0)
    rows = np.kron(np.eye(n_r), np.ones((1, n_c)))
    cols = np.kron(np.ones((1, n_r)), np.eye(n_c))
    prog.add_constraints("supply", {"x": rows}, lb=1.0, ub=1.0)
    prog.add_constraints("capacity", {"x": cols}, ub=float(n_r) / n_c * 1.5)
    prog.set_objective(linear={"x": rng.random(n_r * n_c)})
    return prog


def test_column_generation_solver_equals_the_whole_lp():
    full = _transport().solve()
    master = ColumnGenerationMaster(_transport(), "x", np.arange(30) * 40, columns_per_round=7)
    got = solve_own(master, "column_generation", "colgen")
    assert got.is_optimal and got.backend == "column_generation" and got.iterations > 1
    assert abs(got.objective - full.objective) <= 1e-9 * max(1.0, abs(full.objective))
    np.testing.assert_allclose(got.dual["supply"], full.dual["supply"], atol=1e-7)
    # its own options go through the spec; a HiGHS option of the masters is checked by name
    with pytest.raises(ConfigError):
        solve_own(master, SolverSpec("column_generation", options={"no_such_option": 1}), "colgen")


def test_row_generation_solver_equals_the_whole_lp():
    """Capacity rows supplied lazily by a separation oracle: the same optimum as all rows at once,
    with only some of them added."""
    full = _transport().solve()
    rows = np.kron(np.ones((1, 30)), np.eye(40))
    cap = 30 / 40 * 1.5
    master = Program("transport")
    master.add_variables("x", shape=(1200,), lb=0.0)
    master.add_constraints("supply", {"x": np.kron(np.eye(30), np.ones((1, 40)))}, lb=1.0, ub=1.0)
    master.set_objective(linear={"x": np.random.default_rng(0).random(1200)})
    lazy = LazyRows(master, lambda x: (rows, -np.inf, cap))
    got = solve_own(lazy, "row_generation", "rowgen")
    assert got.is_optimal and got.backend == "row_generation"
    assert abs(got.objective - full.objective) <= 1e-9 * max(1.0, abs(full.objective))
    added = sum(c.rows for name, c in master.constraints.items() if name.startswith("lazy"))
    assert 0 < added < 40
    assert float((rows @ np.asarray(got.primal["x"])).max()) <= cap + 1e-9
    fresh = Program("transport")
    fresh.add_variables("x", shape=(1200,), lb=0.0)
    fresh.add_constraints("supply", {"x": np.kron(np.eye(30), np.ones((1, 40)))}, lb=1.0, ub=1.0)
    fresh.set_objective(linear={"x": np.random.default_rng(0).random(1200)})
    with pytest.raises(SolverLimitError, match="max_rounds"):   # rows still violated at the cap
        solve_own(LazyRows(fresh, lambda x: (rows, -np.inf, cap), max_rounds=0), "row_generation", "rowgen")


def _pricing_problem(max_rounds: int = 200):
    """The transport LP of :func:`_transport` as a ``pricing`` problem: no fixed variable, rows
    supply and capacity, a feasible first column per source; the oracle returns every cell whose
    reduced cost ``c - A'y`` is negative (the builder of the kind)."""
    from fairopt.modeling.lazy_columns import ColumnBlock, LazyColumns
    full = _transport().canonical()
    A, c = full.A.tocsc(), full.c
    first = np.arange(30) * 40 + np.arange(30)          # source i -> sink i: within capacity
    taken = [first]

    def price(y, x):
        d = c - A.T @ y
        d[np.concatenate(taken)] = 0.0
        new = np.flatnonzero(d < -1e-9)
        if new.size == 0:
            return None
        taken.append(new)
        return ColumnBlock(A[:, new], c[new], 0.0, np.inf)

    cols = ColumnBlock(A[:, first], c[first], 0.0, np.inf)
    fixed = ColumnBlock(np.zeros((full.m, 0)), np.zeros(0), np.zeros(0), np.zeros(0))
    problem = LazyColumns(full.rl, full.ru, fixed, cols, price, max_rounds=max_rounds)
    return problem, taken


@pytest.mark.parametrize("lp", [None, "scipy:highs-ds", "ortools:GLOP"])
def test_column_pricing_solver_equals_the_whole_lp(lp):
    """Oracle-priced columns, on the warm HiGHS path and re-solved by other LP solvers: the same
    optimum as every column at once, with only some columns generated, and rounds to the cap."""
    if lp is not None and lp not in installed_specs("LP"):
        pytest.skip(f"{lp} not installed")
    full = _transport().solve()
    problem, taken = _pricing_problem()
    spec = SolverSpec("column_pricing", options={} if lp is None else {"lp_solver": lp})
    got = solve_own(problem, spec, "pricing")
    assert got.is_optimal and got.backend == "column_pricing" and got.iterations >= 1
    assert abs(got.objective - full.objective) <= 1e-7 * max(1.0, abs(full.objective))
    cols = got.info["columns"]
    assert cols.k == sum(t.size for t in taken) < 1200
    x = np.asarray(got.primal["columns"])
    act = cols.A @ x
    assert (act >= problem.row_lower - 1e-7).all() and (act <= problem.row_upper + 1e-7).all()
    assert float(cols.cost @ x) == pytest.approx(full.objective, abs=1e-7)
    assert (got.info["warm_start"] is None) == (lp is not None and not lp.startswith("highs"))
    with pytest.raises(SolverLimitError, match="max_rounds"):
        solve_own(_pricing_problem(max_rounds=0)[0], spec, "pricing")


def test_every_solver_accepts_or_refuses_every_kind():
    """Every (solver, kind) pair: a declared kind resolves (or is reported not installed), any
    other is refused with the typed error listing what would work; the pricing kind included."""
    from fairopt.errors import SolverNotAvailableError
    from fairopt.modeling.registry import check_spec
    assert "pricing" in PROBLEM_KINDS and resolve_solver(None, "pricing").backend == "column_pricing"
    rows = {(r["backend"], r["solver"]): r for r in solver_table()}      # what `fairopt solvers` prints
    assert rows["column_pricing", "column_pricing"]["kinds"] == ["pricing"]
    assert rows["column_pricing", "column_pricing"]["duals"] and rows["column_pricing", "column_pricing"]["installed"]
    from fairopt.modeling.registry import backend_installed
    for backend, info in BACKENDS.items():
        for solver, kinds in info.solvers.items():
            for kind in PROBLEM_KINDS if backend_installed(backend) else ():
                if kind in kinds:
                    try:
                        assert check_spec(SolverSpec(backend, solver), kind).solver == solver
                    except SolverNotAvailableError as err:
                        assert not isinstance(err, WrongProblemClassError), (backend, solver, kind)
                else:
                    with pytest.raises(WrongProblemClassError) as err:
                        check_spec(SolverSpec(backend, solver), kind)
                    assert all(kind in BACKENDS[s.split(":")[0]].solvers[s.split(":", 1)[1]]
                               for s in err.value.available)


# ----------------------------------------------------------------- estimators refuse unknown solvers
def _small(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    a = np.r_[np.zeros(n // 2), np.ones(n - n // 2)].astype(int)
    y = ((X[:, 0] + a + rng.normal(size=n)) > 0.5).astype(int)
    return X, y, a


def _records(n=200, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "edu": rng.choice(["lo", "mid", "hi"], n)})
    y = pd.Series((rng.random(n) < np.where(X["sex"] == "M", 0.6, 0.3)).astype(int), name="y")
    return X, y


def _fit(name: str, solver: str):
    from fairopt.filtering import BalancedFilter
    from fairopt.inprocessing import FairClassifier, FairLogLossClassifier, FairRegressor
    from fairopt.postprocessing import ThresholdDebiaser
    from fairopt.preprocessing import MaxEntResampler, TVRepair, TVRepairResampler
    from fairopt.ranking import fair_ranking
    X, y, a = _small()
    if name == "fair_ranking":
        return fair_ranking(np.array([0.9, 0.8, 0.5, 0.4]), np.array(list("aabb")), eps=0.05, solver=solver)
    if name in ("TVRepair", "TVRepairResampler", "MaxEntResampler"):
        Xr, yr = _records()
        cls = {"TVRepair": TVRepair, "TVRepairResampler": TVRepairResampler, "MaxEntResampler": MaxEntResampler}[name]
        return cls(solver=solver).fit(Xr, yr, "sex")
    make = {"FairClassifier": lambda: FairClassifier(solver=solver, max_iter=3),
            "FairRegressor": lambda: FairRegressor(solver=solver, max_iter=3),
            "FairLogLossClassifier": lambda: FairLogLossClassifier(solver=solver),
            "ThresholdDebiaser": lambda: ThresholdDebiaser(solver=solver),
            "ThresholdDebiaser[equal_opportunity]": lambda: ThresholdDebiaser(solver=solver,
                                                                              constraint="equal_opportunity")}
    if name == "BalancedFilter":
        return BalancedFilter(solver=solver).fit(X, a)
    est = make[name]()
    target = y.astype(float) if name == "FairRegressor" else y
    Xin = np.tanh(X[:, 0]) if name.startswith("ThresholdDebiaser") else X
    return est.fit(Xin, target, sensitive_features=a)


ESTIMATORS = ["fair_ranking", "TVRepair", "TVRepairResampler", "MaxEntResampler", "FairClassifier", "FairRegressor",
              "FairLogLossClassifier", "ThresholdDebiaser", "ThresholdDebiaser[equal_opportunity]", "BalancedFilter"]


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("solver", ["cvxpy:NOPE", "nope"])
def test_every_estimator_refuses_an_unknown_solver_listing_what_it_accepts(name, solver):
    with pytest.raises(UnknownSolverError) as err:
        _fit(name, solver)
    assert err.value.available, "the error lists the solvers that would work"
    if solver == "cvxpy:NOPE":   # the installed cvxpy solvers of the estimator's kind are listed
        assert any(s.startswith("cvxpy:") for s in err.value.available)


@pytest.mark.parametrize("name", ["fair_ranking", "TVRepairResampler", "ThresholdDebiaser", "FairLogLossClassifier"])
def test_default_solver_equals_the_registry_default(name):
    """``solver=None`` (the new default) is the registry's default for the estimator's kind: the
    same answer as naming that default."""
    kind = {"fair_ranking": "LP", "TVRepairResampler": "LP", "ThresholdDebiaser": "threshold",
            "FairLogLossClassifier": "smooth"}[name]
    a, b = _fit(name, None), _fit(name, str(resolve_solver(None, kind)))   # type: ignore[arg-type]
    if name == "fair_ranking":
        assert a.utility == pytest.approx(b.utility, abs=1e-12)
    elif name == "TVRepairResampler":
        assert a.tv_ == pytest.approx(b.tv_, abs=1e-12)
        np.testing.assert_allclose(a.point_weights_, b.point_weights_, atol=1e-12)
    elif name == "ThresholdDebiaser":
        np.testing.assert_allclose(a.thresholds_, b.thresholds_, atol=1e-12)
    else:
        np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-12)


def test_fairopt_solvers_lists_the_pricing_solver(capsys):
    import json

    from fairopt.cli import main
    assert main(["solvers", "--json"]) == 0
    rows = {r["backend"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["column_pricing"]["declared"] == {"column_pricing": ["pricing"]}
    assert rows["column_pricing"]["default_for"] == ["pricing"]


def test_lazy_columns_refuses_inconsistent_blocks():
    from fairopt.errors import DataValidationError
    from fairopt.modeling.lazy_columns import ColumnBlock, LazyColumns
    with pytest.raises(DataValidationError, match="needs 2 costs"):
        ColumnBlock(np.eye(2), [1.0], 0.0, np.inf)
    with pytest.raises(DataValidationError, match="lower bound above"):
        ColumnBlock(np.eye(2), [1.0, 1.0], 1.0, 0.0)
    none = ColumnBlock(np.zeros((2, 0)), [], [], [])
    with pytest.raises(DataValidationError, match="has 2 rows; the problem has 3"):
        LazyColumns(np.zeros(3), np.ones(3), none, ColumnBlock(np.eye(2), [1.0, 1.0], 0.0, 1.0), lambda y, x: None)
    with pytest.raises(DataValidationError, match="lower <= upper"):
        LazyColumns(np.ones(2), np.zeros(2), none, none, lambda y, x: None)
