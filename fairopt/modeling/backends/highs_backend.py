"""HiGHS through highspy: the model is passed as CSC arrays in one call.

Cost and bound updates are applied in place (``changeColsCost``, ``changeRowsBounds``,
``changeColsBounds``), so a re-solve starts from the previous simplex basis. HiGHS duals for a
minimisation already follow fairopt's convention (``d f*/d bound``).
"""
from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError, DataValidationError, SolverError
from fairopt.modeling.backends.base import CompiledModel
from fairopt.modeling.canonical import Canonical
from fairopt.modeling.solution import RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec

if TYPE_CHECKING:
    import highspy


def _highs() -> ModuleType:
    import highspy
    return highspy


def _make_lp(canon: Canonical, names: bool = False) -> highspy.HighsLp:
    hp = _highs()
    lp: highspy.HighsLp = hp.HighsLp()
    lp.model_name_ = canon.name
    lp.num_col_, lp.num_row_ = canon.n, canon.m
    lp.col_cost_ = canon.c
    lp.offset_ = canon.constant
    lp.col_lower_, lp.col_upper_ = canon.xl, canon.xu  # HiGHS reads +-inf as "no bound"
    lp.row_lower_, lp.row_upper_ = canon.rl, canon.ru
    A = canon.A.tocsc()
    A.sort_indices()
    lp.a_matrix_.format_ = hp.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = canon.n, canon.m
    if canon.is_mip:
        kinds = (hp.HighsVarType.kContinuous, hp.HighsVarType.kInteger)
        lp.integrality_ = [kinds[b] for b in canon.integer_mask().tolist()]
    if names:
        lp.col_names_ = canon.column_names()
        lp.row_names_ = canon.row_names()
    return lp


def _make_hessian(canon: Canonical) -> highspy.HighsHessian:
    hp = _highs()
    H = sp.tril(canon.P, format="csc")  # HiGHS takes the lower triangle, column-wise
    H.sort_indices()
    hess: highspy.HighsHessian = hp.HighsHessian()
    hess.dim_ = canon.n
    hess.format_ = hp.HessianFormat.kTriangular
    hess.start_ = H.indptr.astype(np.int32)
    hess.index_ = H.indices.astype(np.int32)
    hess.value_ = H.data
    return hess


_STATUS = {
    "kOptimal": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnbounded": Status.UNBOUNDED,
    "kUnboundedOrInfeasible": Status.INFEASIBLE_OR_UNBOUNDED,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    "kModelEmpty": Status.OPTIMAL,
}


def _new_highs(verbose: bool, options: Mapping[str, Any], time_limit: float | None) -> highspy.Highs:
    hp = _highs()
    h: highspy.Highs = hp.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    for key, value in options.items():
        if h.setOptionValue(str(key), value) != hp.HighsStatus.kOk:
            raise ConfigError(_option_message(key, value))
    return h


def _option_message(key: str, value: object) -> str:
    import difflib
    names = [a for a in dir(_highs().HighsOptions()) if not a.startswith("_")]
    close = difflib.get_close_matches(str(key), names, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    what = "an invalid value for" if key in names else "no option named"
    return (f"HiGHS has {what} {key!r} (= {value!r}).{hint} See the HiGHS options reference for "
            "names and values.")


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    """Refuse HiGHS options that HiGHS itself rejects (unknown name or bad value)."""
    from fairopt.modeling.backends.base import quiet
    with quiet():
        _new_highs(False, options, None)


def _check(status: highspy.HighsStatus, what: str) -> None:
    """Raise on a HiGHS call that returned kError (never continue with a half-passed model)."""
    if status == _highs().HighsStatus.kError:
        raise SolverError(f"HiGHS rejected the model in {what}; see the log with verbose=True.",
                          status=Status.ERROR)


#: HiGHS's ``simplex_strategy`` for the primal simplex
PRIMAL_SIMPLEX = 4

INFO = BackendInfo(
    name="highs", module="highspy",
    description="HiGHS through highspy, model passed as CSC arrays; warm starts",
    solvers={"highs": ("LP", "QP", "MILP")}, default_solver={"LP": "highs", "QP": "highs", "MILP": "highs"},
    time_limit_key={"highs": "time_limit"}, iteration_limit_key={"highs": "simplex_iteration_limit"},
    mip_gap_key={"highs": "mip_rel_gap"}, default_for=("LP", "QP", "MILP"), status_map=_STATUS,
    check_options=check_options, duals=("highs",), warm_start=("highs",), active_set_qp=("highs",),
    qp_iteration_limit_key="qp_iteration_limit", feasibility_tolerance_key={"highs": "primal_feasibility_tolerance"},
    # a restricted master is a handful of rows re-solved from the last basis: presolve (68 s of a
    # 70 s row generation over 1,000 cells, benchmarks/intersectional.py) buys nothing there; the
    # first master (one knapsack row over 10^5 columns) solves 2.5x faster by interior point with
    # crossover than by a cold dual simplex, and the crossover's basis warm-starts the re-solves
    master_options={"highs": {"presolve": "off", "solver": "ipm", "run_crossover": "on"}},
    master_resolve_options={"highs": {"solver": "simplex"}})


class HighsModel(CompiledModel):
    backend = "highs"
    info = INFO

    def _build(self) -> None:
        canon = self.canon
        self.h = _new_highs(self.spec.verbose, {**self.qp_iteration_cap(), **self._start_options(),
                                                **self.spec.options}, self.spec.time_limit)
        if canon.is_mip:
            _check(self.h.passModel(_make_lp(canon)), "passModel")
        else:   # the arrays themselves: a HighsLp's fields are copied element by element (5x slower)
            A = canon.A.tocsc()
            A.sort_indices()
            hp = _highs()
            _check(self.h.passModel(canon.n, canon.m, A.nnz, hp.MatrixFormat.kColwise, hp.ObjSense.kMinimize,
                                    canon.constant, canon.c, canon.xl, canon.xu, canon.rl, canon.ru,
                                    A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data,
                                    np.zeros(canon.n, dtype=np.int32)), "passModel")
        if canon.P is not None:
            _check(self.h.passHessian(_make_hessian(canon)), "passHessian")
        if self._start is not None:
            self._pass_basis(*self._start)

    _start: tuple[np.ndarray, np.ndarray] | None = None

    def _start_options(self) -> dict[str, Any]:
        # a starting basis is primal feasible in the structure it comes from: the primal simplex
        # keeps it (the dual simplex would throw it away), unless the options choose the method
        if self._start is None or "simplex_strategy" in self.spec.options:
            return {}
        return {"simplex_strategy": PRIMAL_SIMPLEX}

    def set_basis(self, basic_columns: np.ndarray, basic_rows: np.ndarray) -> bool:
        """Start the next simplex solve from a basis: the ``True`` entries of the two masks are
        basic (a row's entry stands for its activity); every other column and row is nonbasic
        at a finite bound (lower, else upper, else zero). The basis must hold exactly as many
        basic entries as rows (checked here) and be non-singular (else HiGHS starts afresh).
        The primal simplex runs from it unless the options set ``simplex_strategy``; when the
        options choose another method (``solver``), the basis is not used (returns False)."""
        cols, rows = np.asarray(basic_columns, dtype=bool), np.asarray(basic_rows, dtype=bool)
        if cols.shape != (self.canon.n,) or rows.shape != (self.canon.m,):
            raise DataValidationError(f"set_basis needs one flag per column ({self.canon.n}) and per row "
                                      f"({self.canon.m}), got {cols.shape} and {rows.shape}.")
        if int(cols.sum() + rows.sum()) != self.canon.m:
            raise DataValidationError(f"a basis has one basic entry per row ({self.canon.m}); the masks mark "
                                      f"{int(cols.sum() + rows.sum())} basic columns and rows.")
        if "solver" in self.spec.options:
            return False
        self._start = (cols, rows)
        if not self._dirty:
            for key, value in self._start_options().items():
                self.h.setOptionValue(key, value)
            self._pass_basis(*self._start)
        return True

    def _pass_basis(self, cols: np.ndarray, rows: np.ndarray) -> None:
        hp = _highs()
        st = hp.HighsBasisStatus

        def status(basic: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[Any]:
            statuses: list[Any] = np.where(basic, st.kBasic, np.where(np.isfinite(lo), st.kLower,
                                                                      np.where(np.isfinite(hi), st.kUpper,
                                                                               st.kZero))).tolist()
            return statuses
        basis = hp.HighsBasis()
        basis.col_status = status(cols, self.canon.xl, self.canon.xu)
        basis.row_status = status(rows, self.canon.rl, self.canon.ru)
        basis.valid = True
        _check(self.h.setBasis(basis), "setBasis")

    # in-place updates keep the basis (warm start)
    def _costs_changed(self) -> None:
        if self._dirty:
            return
        idx = np.arange(self.canon.n, dtype=np.int32)
        self.h.changeColsCost(self.canon.n, idx, self.canon.c)

    def _row_bounds_changed(self, s: slice) -> None:
        if self._dirty:
            return
        idx = np.arange(s.start, s.stop, dtype=np.int32)
        self.h.changeRowsBounds(  # type: ignore[attr-defined]  # highspy's stub lacks changeRowsBounds
            idx.size, idx, self.canon.rl[s], self.canon.ru[s])

    def _col_bounds_changed(self, s: slice) -> None:
        if self._dirty:
            return
        idx = np.arange(s.start, s.stop, dtype=np.int32)
        self.h.changeColsBounds(idx.size, idx, self.canon.xl[s], self.canon.xu[s])

    def _columns_added(self, n0: int, cols: sp.csc_matrix, cost: np.ndarray, lo: np.ndarray,
                       hi: np.ndarray) -> None:
        if self._dirty:
            return
        cols = cols.tocsc()
        cols.sort_indices()
        self.h.addCols(cols.shape[1], cost, lo, hi, cols.nnz, cols.indptr[:-1].astype(np.int32),
                       cols.indices.astype(np.int32), cols.data)

    def set_options(self, options: Mapping[str, Any]) -> None:
        """Change solver options in place (the model and its basis are kept)."""
        super().set_options(options)
        if not self._dirty:
            for key, value in options.items():
                if self.h.setOptionValue(str(key), value) != _highs().HighsStatus.kOk:
                    raise ConfigError(_option_message(key, value))

    def _rows_added(self, rows: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray) -> None:
        if self._dirty:
            return
        rows = rows.tocsr()
        rows.sort_indices()
        _check(self.h.addRows(rows.shape[0], lo, hi, rows.nnz, rows.indptr[:-1].astype(np.int32),
                              rows.indices.astype(np.int32), rows.data), "addRows")

    def _run(self) -> RawResult:
        if self.h.run() == _highs().HighsStatus.kError:
            return RawResult(Status.ERROR, log="HiGHS run() returned an error; see the log with "
                             "verbose=True")
        model_status = self.h.getModelStatus()
        status = INFO.map_status(model_status.name)
        info = self.h.getInfo()
        iterations = int(info.simplex_iteration_count + max(info.ipm_iteration_count, 0)
                         + max(info.qp_iteration_count, 0))
        log = f"HiGHS model status: {self.h.modelStatusToString(model_status)}"
        if status in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT):
            sol = self.h.getSolution()
            x: np.ndarray | None = np.asarray(sol.col_value)
            has_dual = bool(sol.dual_valid) and status is Status.OPTIMAL
            y = np.asarray(sol.row_dual) if has_dual else None
            z = np.asarray(sol.col_dual) if has_dual else None
            if not sol.value_valid:
                x = None
            if self.canon.is_mip:  # no duals; report the gap to the proven bound
                gap = float(info.mip_gap) if np.isfinite(info.mip_gap) else None
                return RawResult(status, x, None, None, int(info.mip_node_count), log,
                                 mip_gap=gap, bound=float(info.mip_dual_bound))
            raw = RawResult(status, x, y, z, iterations, log)
            # an LP vertex with its basis: the duals are the basis's, nothing to refine
            raw.basic = has_dual and self.canon.P is None and bool(self.h.getBasis().valid)
            return raw
        return RawResult(status, iterations=iterations, log=log)


def compile(program: Any, spec: SolverSpec) -> HighsModel:
    return HighsModel(program, spec)


def write_model(canon: Canonical, path: str) -> None:
    """Write an MPS or LP file with readable ``block_index`` names."""
    if not path.lower().endswith((".mps", ".lp")):
        raise DataValidationError(f"cannot export to {path!r}: use a .mps or .lp file name.")
    h = _new_highs(False, {}, None)
    h.passModel(_make_lp(canon, names=True))
    if canon.P is not None:
        h.passHessian(_make_hessian(canon))
    if canon.sense < 0:  # files carry the user's sense
        h.changeObjectiveSense(_highs().ObjSense.kMaximize)
        h.changeColsCost(canon.n, np.arange(canon.n, dtype=np.int32), -canon.c)
        h.changeObjectiveOffset(-canon.constant)
    h.writeModel(path)
