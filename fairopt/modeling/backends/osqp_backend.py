"""OSQP (operator splitting) for QPs and LPs.

OSQP has no separate variable bounds, so finitely bounded columns become identity rows appended
after the program's rows; their multipliers give the reduced costs. OSQP's multiplier ``y``
satisfies ``Px + q + A'y = 0`` (positive at an active upper bound), so fairopt's dual is ``-y``.
Default tolerances are tightened to 1e-9 with solution polishing, since fairopt's contract is
agreement across back ends to 1e-6; pass ``options`` to trade accuracy for speed. For LPs the
adaptive step size is off by default: with it, OSQP 1.x oscillates without converging on small
vertex-optimal LPs (measured on the planted LPs of ``tests/test_modeling.py``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairopt.errors import ConfigError
from fairopt.modeling.backends.base import CompiledModel
from fairopt.modeling.solution import RawResult, Status
from fairopt.modeling.spec import BackendInfo, SolverSpec, reject_unknown_options

INF = 1e30

DEFAULTS = {"eps_abs": 1e-9, "eps_rel": 1e-9, "polishing": True, "max_iter": 200_000,
            "verbose": False}


#: OSQP's status text (``info.status``) to fairopt's status
STATUS_MAP = {
    "solved": Status.OPTIMAL,
    "solved inaccurate": Status.NUMERICAL,
    "primal infeasible": Status.INFEASIBLE,
    "primal infeasible inaccurate": Status.INFEASIBLE,
    "dual infeasible": Status.UNBOUNDED,
    "dual infeasible inaccurate": Status.UNBOUNDED,
    "maximum iterations reached": Status.ITERATION_LIMIT,
    "run time limit reached": Status.TIME_LIMIT,
    "problem non convex": Status.ERROR,
}


def _settings_names() -> list[str]:
    import osqp
    solver = osqp.OSQP()
    names = [a for a in dir(solver.settings) if not a.startswith("_")] if hasattr(solver, "settings") \
        else list(DEFAULTS)
    return names


def check_options(solver: str, options: Mapping[str, Any]) -> None:
    reject_unknown_options("OSQP", options, _settings_names())


INFO = BackendInfo(
    name="osqp", module="osqp", description="OSQP operator-splitting QP solver (polished to 1e-9)",
    solvers={"osqp": ("LP", "QP")}, default_solver={"LP": "osqp", "QP": "osqp"},
    time_limit_key={"osqp": "time_limit"}, status_map=STATUS_MAP, check_options=check_options,
    duals=("osqp",), warm_start=("osqp",))


class OsqpModel(CompiledModel):
    backend = "osqp"

    @property
    def stalls_on_degenerate(self) -> bool:  # first-order: unless the user chose the limit
        return "max_iter" not in self.spec.options

    def _stacked_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        c = self.canon
        bl, bu = c.xl[self._bounded], c.xu[self._bounded]
        lo = np.concatenate([c.rl, bl])
        hi = np.concatenate([c.ru, bu])
        return np.clip(lo, -INF, INF), np.clip(hi, -INF, INF)

    def _build(self) -> None:
        import osqp
        c = self.canon
        self._bounded = np.flatnonzero(np.isfinite(c.xl) | np.isfinite(c.xu))
        eye = sp.csr_matrix((np.ones(self._bounded.size), (np.arange(self._bounded.size), self._bounded)),
                            shape=(self._bounded.size, c.n))
        A = sp.vstack([c.A, eye], format="csc")
        P = sp.csc_matrix((c.n, c.n)) if c.P is None else sp.triu(c.P, format="csc")
        lo, hi = self._stacked_bounds()
        settings = {**DEFAULTS, **({"adaptive_rho": False} if c.P is None else {}),
                    **dict(self.spec.options)}
        settings["verbose"] = bool(self.spec.verbose or settings.get("verbose"))
        if self.spec.time_limit is not None:
            settings["time_limit"] = float(self.spec.time_limit)
        self.solver = osqp.OSQP()
        try:
            self.solver.setup(P=P, q=c.c, A=A, l=lo, u=hi, **settings)
        except (ValueError, TypeError) as exc:  # a bad setting value
            raise ConfigError(f"OSQP refused the settings {dict(self.spec.options)}: {exc}") from None

    def _costs_changed(self) -> None:
        if not self._dirty:
            self.solver.update(q=self.canon.c)

    def _row_bounds_changed(self, s: slice) -> None:
        if not self._dirty:
            lo, hi = self._stacked_bounds()
            self.solver.update(l=lo, u=hi)

    def _col_bounds_changed(self, s: slice) -> None:
        # the set of bounded columns may change: rebuild only then
        bounded = np.flatnonzero(np.isfinite(self.canon.xl) | np.isfinite(self.canon.xu))
        if self._dirty or not np.array_equal(bounded, self._bounded):
            self._dirty = True
        else:
            lo, hi = self._stacked_bounds()
            self.solver.update(l=lo, u=hi)

    def _run(self) -> RawResult:
        res = self.solver.solve(raise_error=False)
        status = INFO.map_status(str(res.info.status).lower())
        log = f"OSQP status: {res.info.status} after {res.info.iter} iterations"
        if status is Status.NUMERICAL:
            log += " (solution inaccurate: tighten eps_abs/eps_rel or raise max_iter)"
        if status not in (Status.OPTIMAL, Status.TIME_LIMIT, Status.ITERATION_LIMIT):
            return RawResult(status, iterations=int(res.info.iter), log=log)
        m = self.canon.m
        y_all = -np.asarray(res.y)
        z = np.zeros(self.canon.n)
        z[self._bounded] = y_all[m:]
        return RawResult(status, np.asarray(res.x), y_all[:m], z, int(res.info.iter), log)


def compile(program: Any, spec: SolverSpec) -> OsqpModel:
    return OsqpModel(program, spec)
