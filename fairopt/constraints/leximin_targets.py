"""The three model kinds leximin and the balance blocks work on, behind one small interface.

A *target* holds the user's model and ``K`` utility expressions ``u_k`` (linear in the model's
variables) and lets an algorithm add auxiliary variables and rows ``C u + sum_h M_h h >= lb``,
maximise ``c'u + sum_h e_h'h`` and read back ``u`` and the rows' multipliers. The user's model is
never changed for good: a :class:`~fairopt.modeling.Program` is copied, a pyomo model gets one
temporary block (removed by :meth:`finish`, its own objectives reactivated), a cvxpy problem is
re-assembled from its constraints. Solvers are resolved by the registry
(:func:`fairopt.modeling.registry.model_spec`), never named here.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairopt.constraints._scaling import power_of_two
from fairopt.errors import DataValidationError, InfeasibleError, SolverError

#: a ``(variable, groups[, weights])`` utility spec: group ``a`` gets ``sum_{i in a} w_i x_i``
UtilitySpec = tuple[Any, ...]


def utility_groups(groups: Any, weights: Any, n: int) -> tuple[list[Any], sp.csr_matrix]:
    """Labels and the ``(K, n)`` matrix ``G[a, i] = w_i [i in a]`` of a ``(groups, weights)`` spec."""
    from fairopt.constraints.builders import _group_matrix, _vector, encode_groups
    codes, labels = encode_groups(groups)
    if codes.shape[0] != n:
        raise DataValidationError(f"the utility spec has {codes.shape[0]} group labels for a variable with "
                                  f"{n} entries; give one label per entry.")
    w = np.ones(n) if weights is None else _vector(weights, n, "utility weights")
    return list(labels), _group_matrix(codes, len(labels), w)


def _split_spec(spec: tuple[Any, ...]) -> tuple[Any, Any, Any]:
    if not 2 <= len(spec) <= 3:
        raise DataValidationError("a utility spec is (variable, groups) or (variable, groups, weights).")
    return spec[0], spec[1], spec[2] if len(spec) == 3 else None


def copy_program(program: Any) -> Any:
    """A new :class:`~fairopt.modeling.Program` with ``program``'s variables and constraints
    (the objective is not copied), to extend without touching the user's program."""
    from fairopt.modeling import Program
    work = Program(program.name)
    for v in program.variables.values():
        work.add_variables(v.name, v.shape, lb=v.lb.reshape(v.shape), ub=v.ub.reshape(v.shape), integer=v.integer)
    for c in program.constraints.values():
        work.add_constraints(c.name, c.coeffs, lb=c.lb, ub=c.ub)
    return work


class Target(ABC):
    """Interface; see the module docstring."""

    mip: bool
    entities: list[Any]

    @abstractmethod
    def add_vars(self, name: str, size: int, lb: float | None) -> Any:
        ...

    @abstractmethod
    def add_rows(self, name: str, C: np.ndarray | sp.spmatrix | None, aux: Sequence[tuple[Any, Any]],
                 lb: np.ndarray) -> None:
        ...

    @abstractmethod
    def maximize(self, c: np.ndarray | None, aux: Sequence[tuple[Any, Any]]) -> np.ndarray:
        """Solve; return the utilities ``u`` at the optimum."""
        ...

    @abstractmethod
    def aux_value(self, handle: Any) -> np.ndarray:
        ...

    @abstractmethod
    def weights(self, name: str) -> np.ndarray:
        """Nonnegative multipliers of the ``>=`` rows ``name`` at the last (LP) optimum."""

    def finish(self) -> None:  # noqa: B027 - a target that adds nothing to the user's model removes nothing
        """Remove what was added to the user's model (the last solution stays loaded)."""


# ------------------------------------------------------------------------------ Program
class ProgramTarget(Target):
    def __init__(self, program: Any, utilities: Any, solver: Any, mip_gap: float | None) -> None:
        from fairopt.modeling.registry import SolverSpec, mip_gap_options, resolve_solver
        self.work = copy_program(program)
        self.mip = any(v.integer for v in program.variables.values())
        self.entities, self.U = self._utilities(program, utilities)
        # utilities of extreme magnitude: levels solved in units of a power of two (solve_leximin multiplies
        # back), as the feasibility and saturation tolerances are absolute
        self.unit = power_of_two(max((float(abs(M).max()) if M.nnz else 0.0 for M in self.U.values()), default=0.0))
        self.U = {v: M / self.unit for v, M in self.U.items()}
        spec = resolve_solver(solver, "MILP" if self.mip else "LP")
        if self.mip and mip_gap is not None:
            spec = SolverSpec.parse(spec, options={**mip_gap_options(spec, mip_gap), **dict(spec.options)})
        self.spec = spec
        self.sol: Any = None
        self._n = 0

    @staticmethod
    def _utilities(program: Any, utilities: Any) -> tuple[list[Any], dict[str, sp.csr_matrix]]:
        if isinstance(utilities, tuple):
            var, groups, weights = _split_spec(utilities)
            if var not in program.variables:
                raise DataValidationError(f"program {program.name!r} has no variable {var!r}; known: "
                                          f"{list(program.variables)}.")
            labels, G = utility_groups(groups, weights, program.variables[var].size)
            return labels, {var: G}
        if not isinstance(utilities, Mapping) or not utilities:
            raise DataValidationError("utilities: give a mapping entity -> {variable: coefficients} or a "
                                      "(variable, groups[, weights]) spec.")
        labels = list(utilities)
        rows: dict[str, list[Any]] = {}
        for k, expr in enumerate(utilities.values()):
            if not isinstance(expr, Mapping):
                raise DataValidationError(f"utility of {labels[k]!r}: for a Program give a mapping "
                                          "{variable name: coefficient array}.")
            for v, coef in expr.items():
                if v not in program.variables:
                    raise DataValidationError(f"utility of {labels[k]!r} names unknown variable {v!r}; known: "
                                              f"{list(program.variables)}.")
                size = program.variables[v].size
                arr = np.asarray(coef, dtype=float).reshape(-1)
                if arr.shape[0] != size or not np.isfinite(arr).all():
                    raise DataValidationError(f"utility of {labels[k]!r}: coefficients of {v!r} must be {size} "
                                              "finite numbers.")
                rows.setdefault(v, [None] * len(labels))[k] = arr
        U = {v: sp.csr_matrix(np.vstack([np.zeros(program.variables[v].size) if r is None else r for r in rs]))
             for v, rs in rows.items()}
        return labels, U

    def _name(self, name: str) -> str:
        self._n += 1
        return f"leximin_{name}_{self._n}"

    def add_vars(self, name: str, size: int, lb: float | None) -> Any:
        handle = self._name(name)
        self.work.add_variables(handle, size, lb=lb, ub=None)
        return handle

    def _coeffs(self, C: Any, aux: Sequence[tuple[Any, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if C is not None:
            C = sp.csr_matrix(C)
            out = {v: C @ U for v, U in self.U.items()}
        for h, M in aux:
            out[h] = out.get(h, 0) + sp.csr_matrix(M)
        return out

    def add_rows(self, name: str, C: Any, aux: Sequence[tuple[Any, Any]], lb: np.ndarray) -> None:
        self.work.add_constraints(name, self._coeffs(C, aux), lb=lb)

    def maximize(self, c: np.ndarray | None, aux: Sequence[tuple[Any, Any]]) -> np.ndarray:
        lin = {v: np.asarray(M.todense()).ravel() for v, M in
               self._coeffs(None if c is None else np.asarray(c, float)[None, :],
                            [(h, np.asarray(e, float)[None, :]) for h, e in aux]).items()}
        self.work.set_objective(linear=lin, sense="maximize")
        self.sol = self.work.solve(self.spec, require_optimal=True)
        return self.utilities(self.sol.primal)

    def utilities(self, primal: Mapping[str, np.ndarray]) -> np.ndarray:
        return sum((U @ np.asarray(primal[v]).ravel() for v, U in self.U.items()), np.zeros(len(self.entities)))

    def aux_value(self, handle: Any) -> np.ndarray:
        return np.asarray(self.sol.primal[handle], dtype=float).ravel()

    def weights(self, name: str) -> np.ndarray:
        return np.asarray(self.sol.dual[name], dtype=float)

    def primal(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in self.sol.primal.items() if not k.startswith("leximin_")}


# ------------------------------------------------------------------------------ pyomo
class PyomoTarget(Target):
    def __init__(self, model: Any, utilities: Any, solver: Any, mip_gap: float | None) -> None:
        import pyomo.environ as pyo

        from fairopt.modeling.registry import model_spec
        self.pyo = pyo
        self.model = model
        self.mip = any(v.is_integer() or v.is_binary() for v in model.component_data_objects(pyo.Var, active=True)
                       if not v.fixed)
        if isinstance(utilities, tuple):
            var, groups, weights = _split_spec(utilities)
            keys = list(var.index_set())
            labels, G = utility_groups(groups, weights, len(keys))
            G = G.tocsr()
            # a pyomo expression per entity from its CSR row (pyomo builds expressions term by term)
            exprs = [sum(float(G.data[j]) * var[keys[G.indices[j]]] for j in range(G.indptr[a], G.indptr[a + 1]))
                     for a in range(len(labels))]
        elif isinstance(utilities, Mapping) and utilities:
            labels, exprs = list(utilities), list(utilities.values())
        else:
            raise DataValidationError("utilities: give a mapping entity -> pyomo expression or a "
                                      "(Var, groups[, weights]) spec.")
        self.entities, self.exprs = labels, exprs
        self.spec = model_spec(self._backend(), solver, "MILP" if self.mip else "LP", mip_gap)
        name = "leximin_"
        while model.component(name) is not None:
            name += "_"
        self.block = pyo.Block()
        model.add_component(name, self.block)
        self.user_objectives = [o for o in model.component_data_objects(pyo.Objective, active=True)
                                if o.parent_block() is not self.block]
        for o in self.user_objectives:
            o.deactivate()
        self.added_dual = False
        if not self.mip and model.component("dual") is None:
            model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
            self.added_dual = True
        self._n = 0

    def _backend(self) -> str:
        from fairopt.modeling.registry import model_backend
        backend = model_backend(self.model)
        assert backend is not None  # dispatched here by model_backend
        return backend

    def _name(self, name: str) -> str:
        self._n += 1
        return f"{name}_{self._n}"

    def add_vars(self, name: str, size: int, lb: float | None) -> Any:
        var = self.pyo.Var(range(size), bounds=(lb, None))
        self.block.add_component(self._name(name), var)
        return var

    def _expr(self, C: Any, aux: Sequence[tuple[Any, Any]], r: int) -> Any:
        terms = []
        if C is not None:
            row = sp.csr_matrix(C)[r]
            terms += [float(a) * self.exprs[k] for k, a in zip(row.indices, row.data, strict=True)]
        for h, M in aux:
            row = sp.csr_matrix(M)[r]
            terms += [float(a) * h[int(k)] for k, a in zip(row.indices, row.data, strict=True)]
        return sum(terms) if terms else 0.0

    def add_rows(self, name: str, C: Any, aux: Sequence[tuple[Any, Any]], lb: np.ndarray) -> None:
        lb = np.asarray(lb, dtype=float).ravel()
        con = self.pyo.Constraint(range(lb.size), rule=lambda m, r: self._expr(C, aux, r) >= float(lb[r]))
        self.block.add_component(name, con)
        self.rows = getattr(self, "rows", {})
        self.rows[name] = con

    def maximize(self, c: np.ndarray | None, aux: Sequence[tuple[Any, Any]]) -> np.ndarray:
        pyo = self.pyo
        if self.block.component("objective") is not None:
            self.block.del_component("objective")
        expr = self._expr(None if c is None else np.asarray(c, float)[None, :],
                          [(h, np.asarray(e, float)[None, :]) for h, e in aux], 0)
        self.block.objective = pyo.Objective(expr=expr, sense=pyo.maximize)
        opt = pyo.SolverFactory(self.spec.solver)
        for k, v in self.spec.options.items():
            opt.options[k] = v
        try:
            res = opt.solve(self.model, load_solutions=False)
        except Exception as exc:  # solver plugins raise many types; report as ours
            raise SolverError(f"pyomo/{self.spec.solver} failed: {exc}") from exc
        tc = str(res.solver.termination_condition)
        if tc == "infeasible":
            raise InfeasibleError("the model with the leximin rows is infeasible (check the model's own "
                                  "constraints).")
        if tc != "optimal":
            raise SolverError(f"pyomo/{self.spec.solver} stopped with termination condition {tc!r}.", status=tc)
        self.model.solutions.load_from(res)
        return np.array([pyo.value(e) for e in self.exprs], dtype=float)

    def aux_value(self, handle: Any) -> np.ndarray:
        return np.array([self.pyo.value(handle[i]) for i in handle.index_set()], dtype=float)

    def weights(self, name: str) -> np.ndarray:
        con = self.rows[name]
        return np.array([self.model.dual.get(con[i], 0.0) for i in con.index_set()], dtype=float)

    def finish(self) -> None:
        self.model.del_component(self.block)
        for o in self.user_objectives:
            o.activate()
        if self.added_dual:
            self.model.del_component("dual")


# ------------------------------------------------------------------------------ cvxpy
class CvxpyTarget(Target):
    def __init__(self, problem: Any, utilities: Any, solver: Any, mip_gap: float | None) -> None:
        import cvxpy as cp

        from fairopt.modeling.registry import model_backend, model_spec
        self.cp = cp
        self.problem = problem
        self.mip = any(v.attributes.get("integer") or v.attributes.get("boolean") for v in problem.variables())
        if isinstance(utilities, tuple):
            var, groups, weights = _split_spec(utilities)
            n = int(np.prod(var.shape)) if var.shape else 1
            labels, G = utility_groups(groups, weights, n)
            u = G @ (var if len(var.shape) == 1 else cp.reshape(var, (n,), order="C"))
        elif isinstance(utilities, Mapping) and utilities:
            labels = list(utilities)
            u = cp.hstack([cp.reshape(e, ()) if getattr(e, "shape", ()) != () else e for e in utilities.values()])
        else:
            raise DataValidationError("utilities: give a mapping entity -> cvxpy expression or a "
                                      "(Variable, groups[, weights]) spec.")
        self.entities, self.u = labels, u
        backend = model_backend(problem)
        assert backend is not None  # dispatched here by model_backend
        self.spec = model_spec(backend, solver, "MILP" if self.mip else "LP", mip_gap)
        self.extra: list[Any] = []
        self.rows: dict[str, Any] = {}
        self.last: Any = None

    def add_vars(self, name: str, size: int, lb: float | None) -> Any:
        h = self.cp.Variable(size)
        if lb is not None:
            self.extra.append(h >= lb)
        return h

    def _expr(self, C: Any, aux: Sequence[tuple[Any, Any]]) -> Any:
        parts = [] if C is None else [sp.csr_matrix(C) @ self.u]
        parts += [sp.csr_matrix(M) @ h for h, M in aux]
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return out

    def add_rows(self, name: str, C: Any, aux: Sequence[tuple[Any, Any]], lb: np.ndarray) -> None:
        con = self._expr(C, aux) >= np.asarray(lb, dtype=float).ravel()
        self.extra.append(con)
        self.rows[name] = con

    def maximize(self, c: np.ndarray | None, aux: Sequence[tuple[Any, Any]]) -> np.ndarray:
        cp = self.cp
        expr = self._expr(None if c is None else np.asarray(c, float)[None, :],
                          [(h, np.asarray(e, float)[None, :]) for h, e in aux])
        prob = cp.Problem(cp.Maximize(cp.sum(expr)), [*self.problem.constraints, *self.extra])
        try:
            prob.solve(solver=self.spec.solver, **dict(self.spec.options))
        except cp.error.SolverError as exc:
            raise SolverError(f"cvxpy/{self.spec.solver} failed: {exc}") from exc
        if prob.status in ("infeasible", "infeasible_inaccurate"):
            raise InfeasibleError("the problem with the leximin rows is infeasible (check the problem's own "
                                  "constraints).")
        if prob.status == "optimal_inaccurate":   # an interior-point solver at tight tolerances
            import warnings
            warnings.warn(f"cvxpy/{self.spec.solver} reported an inaccurate optimum in a leximin round; the "
                          "levels may be off by the solver's accuracy (a simplex solver such as HiGHS is exact).",
                          UserWarning, stacklevel=4)
        elif prob.status != "optimal":
            raise SolverError(f"cvxpy/{self.spec.solver} stopped with status {prob.status!r}.", status=prob.status)
        self.last = prob
        return np.asarray(self.u.value, dtype=float).ravel()

    def aux_value(self, handle: Any) -> np.ndarray:
        return np.asarray(handle.value, dtype=float).ravel()

    def weights(self, name: str) -> np.ndarray:
        return np.asarray(self.rows[name].dual_value, dtype=float).ravel()


def make_target(model: Any, utilities: Any, solver: Any, mip_gap: float | None) -> Target:
    """The target for ``model`` (a Program, a pyomo model or a cvxpy problem)."""
    from fairopt.modeling import Program
    from fairopt.modeling.registry import model_backend
    if isinstance(model, Program):
        return ProgramTarget(model, utilities, solver, mip_gap)
    kind = model_backend(model)
    if kind is None:
        raise DataValidationError(f"model must be a fairopt Program, a pyomo model or a cvxpy Problem; got "
                                  f"{type(model).__name__}.")
    target: Target = (PyomoTarget if hasattr(model, "component_data_objects") else CvxpyTarget)(
        model, utilities, solver, mip_gap)
    return target
