"""OR-Tools through MathOpt: GLOP (simplex) and PDLP (first-order) for LPs, SCIP for MILPs.

The program goes to MathOpt as one ``ModelProto`` whose repeated fields are filled from the
canonical arrays in a few vectorised calls (variables, bounds, the objective and the constraint
matrix as coordinate triplets), and is solved by MathOpt's C++ core without building a Python
model object per row. For a minimisation MathOpt's duals and reduced costs already follow
fairopt's convention (``d f*/d bound``, the same numbers as HiGHS), so they pass through as
they are. PDLP is a first-order method: fairopt asks it for relative and absolute optimality
1e-8 and declares its accuracy 1e-6, looser than the simplex's 1e-9 (``INFO.accuracy``), and
a PDLP run that reaches fairopt's iteration cap goes to a reference solver; every
status, as on every back end, is certified by :mod:`fairopt.modeling.certify`.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt.errors import ConfigError
from fairopt.modeling.backends.base import CompiledModel
from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

if TYPE_CHECKING:
    from ortools.math_opt import model_pb2, parameters_pb2, result_pb2, sparse_containers_pb2

#: fairopt's inner-solver names and MathOpt's ``SolverType`` members
SOLVER_TYPES = {"GLOP": "GLOP", "PDLP": "PDLP", "SCIP": "GSCIP"}
#: MathOpt's termination reasons (names of ``TerminationReasonProto``) to fairopt's status;
#: FEASIBLE / NO_SOLUTION_FOUND are limits, told apart by ``termination.limit``
STATUS_MAP = {
    "TERMINATION_REASON_OPTIMAL": Status.OPTIMAL,
    "TERMINATION_REASON_INFEASIBLE": Status.INFEASIBLE,
    "TERMINATION_REASON_UNBOUNDED": Status.UNBOUNDED,
    "TERMINATION_REASON_INFEASIBLE_OR_UNBOUNDED": Status.INFEASIBLE_OR_UNBOUNDED,
    "TERMINATION_REASON_IMPRECISE": Status.NUMERICAL,
    "TERMINATION_REASON_FEASIBLE": Status.ITERATION_LIMIT,
    "TERMINATION_REASON_NO_SOLUTION_FOUND": Status.ITERATION_LIMIT,
    "TERMINATION_REASON_NUMERICAL_ERROR": Status.NUMERICAL,
    "TERMINATION_REASON_OTHER_ERROR": Status.ERROR,
}
#: PDLP's optimality target: a decade under the 1e-6 feasibility that certify.py checks
PDLP_TOLERANCES = {"pdlp": {"termination_criteria": {"simple_optimality_criteria": {
    "eps_optimal_absolute": 1e-8, "eps_optimal_relative": 1e-8}}}}
#: PDLP iterations fairopt allows unless the options set a limit: planted optimal LPs need at
#: most ~16,000, but PDLP can iterate for minutes before it proves a small LP infeasible; at this
#: cap the program goes to a reference solver (certify.py), as OSQP's stalls do
PDLP_ITERATION_CAP = 100_000


def _params_proto(options: Mapping[str, Any]) -> parameters_pb2.SolveParametersProto:
    """A ``SolveParametersProto`` from nested option mappings (field names of MathOpt's
    ``SolveParameters``, with ``glop``, ``pdlp`` and ``gscip`` sub-tables)."""
    from google.protobuf import json_format
    from ortools.math_opt import parameters_pb2

    params = parameters_pb2.SolveParametersProto()
    try:
        json_format.ParseDict(dict(options), params)
    except json_format.ParseError as exc:
        valid = sorted(f.name for f in params.DESCRIPTOR.fields)
        raise ConfigError(f"ortools refused the solver options {sorted(options)}: {exc}. Valid "
                          f"top-level options: {', '.join(valid)} (solver tables: glop, pdlp, "
                          "gscip take OR-Tools' own parameter names).") from None
    return params


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    """Refuse options that MathOpt's ``SolveParameters`` does not have (name or type)."""
    _params_proto(options)


@cache
def _installed() -> tuple[str, ...]:
    """Inner solvers this OR-Tools build can run (each is asked to solve an empty model)."""
    found = []
    for name in SOLVER_TYPES:
        try:
            _solve_proto(_model_proto(None), name, _params_proto({}))
        except Exception:
            continue
        found.append(name)
    return tuple(found)


INFO = BackendInfo(
    name="ortools", module="ortools",
    description="OR-Tools MathOpt: GLOP simplex and PDLP first-order LP, SCIP for MILPs",
    solvers={"GLOP": ("LP",), "PDLP": ("LP",), "SCIP": ("MILP",)},
    default_solver={"LP": "GLOP", "MILP": "SCIP"},
    time_limit_key={s: "time_limit" for s in SOLVER_TYPES},
    iteration_limit_key={"GLOP": "iteration_limit", "PDLP": "iteration_limit", "SCIP": "node_limit"},
    mip_gap_key={"SCIP": "relative_gap_tolerance"},
    tolerances={"PDLP": {"LP": PDLP_TOLERANCES}},
    accuracy={"GLOP": 1e-9, "PDLP": 1e-6},
    status_map=STATUS_MAP, probe=_installed, check_options=check_options, duals=("GLOP", "PDLP"))


def _model_proto(canon: Canonical | None) -> model_pb2.ModelProto:
    """MathOpt's ``ModelProto`` of a canonical program (``None``: the empty model)."""
    from ortools.math_opt import model_pb2

    model = model_pb2.ModelProto()
    if canon is None:
        return model
    n, m = canon.n, canon.m
    var = model.variables
    var.ids.extend(range(n))
    var.lower_bounds.extend(canon.xl.tolist())
    var.upper_bounds.extend(canon.xu.tolist())
    var.integers.extend(canon.integer_mask().tolist())
    nz = np.flatnonzero(canon.c)
    model.objective.offset = float(canon.constant)
    model.objective.linear_coefficients.ids.extend(nz.tolist())
    model.objective.linear_coefficients.values.extend(canon.c[nz].tolist())
    rows = model.linear_constraints
    rows.ids.extend(range(m))
    rows.lower_bounds.extend(canon.rl.tolist())
    rows.upper_bounds.extend(canon.ru.tolist())
    A = canon.A.tocsr()
    A.sum_duplicates()
    A.sort_indices()
    A = A.tocoo()   # row-major order, as MathOpt requires
    mat = model.linear_constraint_matrix
    mat.row_ids.extend(A.row.tolist())
    mat.column_ids.extend(A.col.tolist())
    mat.coefficients.extend(A.data.tolist())
    return model


def _solve_proto(model: model_pb2.ModelProto, solver: str,
                 params: parameters_pb2.SolveParametersProto) -> result_pb2.SolveResultProto:
    from ortools.math_opt import callback_pb2, model_parameters_pb2
    from ortools.math_opt.core.python import solver as core
    from ortools.math_opt.python import init_arguments, mathopt

    return core.solve(model, getattr(mathopt.SolverType, SOLVER_TYPES[solver]).value,
                      init_arguments.StreamableSolverInitArguments().to_proto(), params,
                      model_parameters_pb2.ModelSolveParametersProto(), None,
                      callback_pb2.CallbackRegistrationProto(), None, None)


def _dense(sparse: sparse_containers_pb2.SparseDoubleVectorProto, size: int) -> np.ndarray:
    out = np.zeros(size)
    out[np.asarray(sparse.ids, dtype=np.int64)] = np.asarray(sparse.values, dtype=float)
    return out


class OrtoolsModel(CompiledModel):
    backend = "ortools"

    @property
    def stalls_on_degenerate(self) -> bool:  # first-order: unless the user chose the limit
        return self.spec.solver == "PDLP" and "iteration_limit" not in self.spec.options

    def _build(self) -> None:
        self.model = _model_proto(self.canon)

    def _params(self) -> parameters_pb2.SolveParametersProto:
        from google.protobuf import json_format
        assert self.spec.solver is not None  # check_spec filled it in
        params = _params_proto(INFO.tolerance_options(self.spec.solver, self.canon.problem_class))
        if self.stalls_on_degenerate:
            params.iteration_limit = PDLP_ITERATION_CAP
        json_format.ParseDict(dict(self.spec.options), params)   # the spec's options win
        params.enable_output = bool(self.spec.verbose)
        if self.spec.time_limit is not None:
            params.time_limit.FromNanoseconds(int(float(self.spec.time_limit) * 1e9))
        return params

    def _run(self) -> RawResult:
        from ortools.math_opt import result_pb2

        solver = self.spec.solver
        assert solver is not None  # check_spec filled it in
        try:
            res = _solve_proto(self.model, solver, self._params())
        except Exception as exc:
            return RawResult(Status.ERROR, log=f"ortools/{solver}: {exc}")
        reason = result_pb2.TerminationReasonProto.Name(res.termination.reason)
        status = INFO.map_status(reason)
        limit = result_pb2.LimitProto.Name(res.termination.limit)
        if status is Status.ITERATION_LIMIT and limit == "LIMIT_TIME":
            status = Status.TIME_LIMIT
        stats = res.solve_stats
        iterations = int(stats.simplex_iterations + stats.barrier_iterations
                         + stats.first_order_iterations)
        log = f"ortools/{solver}: {reason}" + (f" ({limit})" if limit != "LIMIT_UNSPECIFIED" else "") \
            + (f" {res.termination.detail}" if res.termination.detail else "")
        canon = self.canon
        primal = next((s for s in res.solutions if s.HasField("primal_solution")), None)
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT) or primal is None:
            return RawResult(status, iterations=iterations, log=log)
        x = _dense(primal.primal_solution.variable_values, canon.n)
        if canon.is_mip:   # no duals; report the gap to the proven bound
            bounds = res.termination.objective_bounds
            best, bound = float(bounds.primal_bound), float(bounds.dual_bound)
            gap = abs(best - bound) / max(abs(best), 1e-10) if np.isfinite(best) and np.isfinite(bound) else None
            return RawResult(status, x, None, None, int(stats.node_count), log, mip_gap=gap,
                             bound=bound if np.isfinite(bound) else None)
        dual = next((s.dual_solution for s in res.solutions if s.HasField("dual_solution")), None)
        if status is not Status.OPTIMAL or dual is None:
            return RawResult(status, x, iterations=iterations, log=log)
        y = _dense(dual.dual_values, canon.m)
        z = _dense(dual.reduced_costs, canon.n)
        return RawResult(status, x, y, z, iterations, log)


def compile(program: Any, spec: SolverSpec) -> OrtoolsModel:  # back-end entry point
    return OrtoolsModel(program, spec)
