"""The solved mapping as a :class:`MappingResult`: mapping matrix, rates before and after,
distortion levels, and the duals of the discrimination rows summed into a price of fairness.
Mixed into :class:`~fairopt.formulations.tv_repair.mapping.OptimizedPreprocessing`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.formulations.tv_repair._types import RowMeta
from fairopt.formulations.tv_repair.result import MappingResult

if TYPE_CHECKING:
    from fairopt.data.domain import Domain
    from fairopt.modeling import Solution


class MappingReport:
    """Methods of the mapping model that turn a solution into a :class:`MappingResult` (needs
    ``_rate_matrix`` and the model's fields)."""

    # fields of the model this is mixed into (set by its constructor and build)
    protected: str
    label: str
    discrimination: str
    columns_mode: str
    clist: list[float]
    max_expected_distortion: float | Mapping[object, float] | None
    dxy_domain: Domain
    xy_domain: Domain
    rows: np.ndarray
    q: np.ndarray
    q_group: np.ndarray
    group: np.ndarray
    groups: np.ndarray
    candidates: np.ndarray
    var_row: np.ndarray
    var_col: np.ndarray
    var_delta: np.ndarray
    row_ptr: np.ndarray
    _disc_meta: list[RowMeta]
    _disc_slope: np.ndarray | None

    if TYPE_CHECKING:
        def _rate_matrix(self) -> sp.csr_matrix: ...

    def _result(self, sol: Solution, build_seconds: float) -> MappingResult:
        x = np.clip(sol.primal["mapping"], 0.0, None)
        P = sp.csr_matrix((x, self.var_col, self.row_ptr), shape=(len(self.q), len(self.candidates)))
        Pi = self._rate_matrix()
        after = Pi @ x
        n_y = self.xy_domain.cardinalities[-1]
        gi = np.searchsorted(self.groups, self.group)
        before = np.bincount(gi * n_y + self.rows[:, -1], weights=self.q / self.q_group[self.group],
                             minlength=len(self.groups) * n_y)
        g_levels = np.asarray(self.dxy_domain.levels[self.protected], dtype=object)[self.groups]
        y_levels = np.asarray(self.xy_domain.levels[self.label], dtype=object)
        rates = pd.DataFrame({self.protected: np.repeat(g_levels, n_y), self.label: np.tile(y_levels, len(g_levels)),
                              "before": before, "after": after})
        duals, price, slope = self._price(sol, after.reshape(len(self.groups), n_y), g_levels, y_levels)
        approx = ["columns restricted to observed (x, y)"] if self.columns_mode == "observed" else []
        return MappingResult(objective=float(sol.objective), status=sol.status.value, mapping=P, rows=self.rows,
                             columns=self.candidates, q=self.q, dxy_domain=self.dxy_domain,
                             xy_domain=self.xy_domain, rates=rates, distortion=self._levels(x),
                             fairness_duals=duals, price_of_fairness=price, d_objective_d_epsilon=slope,
                             solution=sol, build_seconds=build_seconds, solve_seconds=sol.solve_seconds,
                             approximations=approx)

    def _levels(self, x: np.ndarray) -> dict[str, float]:
        out = {}
        rows = len(self.q)
        if self.max_expected_distortion is not None:
            out["expected"] = float(np.bincount(self.var_row, weights=self.var_delta * x, minlength=rows).max())
        for c in self.clist:
            out[f"excess>={c:g}"] = float(np.bincount(self.var_row, weights=x * (self.var_delta >= c),
                                                      minlength=rows).max())
        return out

    def _price(self, sol: Solution, pi: np.ndarray, g_levels: np.ndarray,
               y_levels: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame, float]:
        meta = self._disc_meta
        dual = sol.dual.get("discrimination")
        cols = ["group", "other", self.label, "dual"]
        if not meta or dual is None or len(dual) != len(meta):
            nan = float("nan") if meta else 0.0
            pairs = pd.DataFrame(columns=["pair", "sum_abs_dual", "d_objective_d_epsilon"])
            return pd.DataFrame(columns=cols), pairs, nan
        i = np.array([m[0] for m in meta])
        j = np.array([m[1] for m in meta])
        y = np.array([m[2] for m in meta])
        # d bound / d eps per row: ratio rows' upper bound moves by pi_{j,y}; others by their slope
        slope = pi[j, y] if self.discrimination == "ratio" else self._disc_slope
        contrib = -np.abs(dual) * slope
        other = np.where(j >= 0, np.asarray(g_levels, dtype=object)[np.maximum(j, 0)], "target")
        table = pd.DataFrame({"group": np.asarray(g_levels, dtype=object)[i], "other": other,
                              self.label: y_levels[y], "dual": dual})
        sep = " vs " if self.discrimination != "ratio" else " <= (1+eps) "
        pair = np.array([f"{a}{sep}{b}" for a, b in zip(table["group"], table["other"], strict=True)], dtype=object)
        # per pair, in order of first appearance (one entry per discrimination row, not per record)
        names, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first)] = np.arange(len(first))
        key = rank[inverse]
        price = pd.DataFrame({"pair": names[np.argsort(first)].tolist(),
                              "sum_abs_dual": np.bincount(key, weights=np.abs(dual), minlength=len(first)),
                              "d_objective_d_epsilon": np.bincount(key, weights=contrib, minlength=len(first))})
        return table, price, float(contrib.sum())
