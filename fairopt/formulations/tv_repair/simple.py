"""Calmon-style total-variation repair (the simple baseline of Celis et al. 2020, Section 2.4).

Find the distribution ``p`` on a product domain closest in total variation to the empirical
distribution ``q`` such that the favourable-outcome rates of the protected groups satisfy a
statistical-rate constraint and the group masses are fixed (or meet a representation rate):

    min  1/2 sum_w (u_w + v_w)
    s.t. p_w = q_w + u_w - v_w,   u >= 0,   0 <= v <= q
         sum_{x,y} p(d,x,y) = r_d                               (group_mass)
         P_p(y+|d) >= tau * P_p(y+|d')   for ordered pairs d != d'   (statistical_rate, ratio form)
      or |P_p(y+|d) - P_p(y+|d')| <= eps  for unordered pairs   (statistical_rate, difference form)

The split ``p = q + u - v`` with ``v <= q`` is exact (some optimum has ``u_w v_w = 0``) and keeps
``p >= 0`` without a variable for ``p``.

**Exact aggregation.** Every constraint sees ``p`` only through the block masses
``s_{d,y} = sum_x p(d,x,y)``, so the LP over the ``|D|*|Y|`` blocks has the same optimum as the
LP over all cells (triangle inequality one way, a proportional lift the other). ``form="aggregated"``
(the default) solves the block LP and lifts ``p(x|d,y) = q(x|d,y)``; it therefore runs on domains of
any size, including the 10^11-cell COMPAS domain the max-entropy paper reports as infeasible for
this baseline. ``form="full"`` builds the enumerated per-cell LP (domains up to
``MAX_FULL_CELLS`` cells) and exists to verify the aggregation.

**Price of fairness.** The duals of the ``statistical_rate`` rows are the marginal TV cost of
tightening each pairwise row's bound. The result reports ``d TV*/d tau`` (ratio form: each
pair's |dual| times the repaired favourable rate of its reference group, summed over pairs, since
the bound of ``rate_a >= tau * rate_b`` moves with ``rate_b``) or ``d TV*/d eps`` (difference
form: the sum of the |duals|).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import combinations, pairwise, permutations
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.data.domain import Domain
from fairopt.errors import DataValidationError
from fairopt.formulations.tv_repair._types import RandomState, SolverArg
from fairopt.metrics import representation_rate, statistical_rate
from fairopt.modeling import Program, Solution

#: largest domain the enumerated (``form="full"``) program accepts
MAX_FULL_CELLS = 2_000_000


def check_roles(domain: Domain, protected: str, label: str) -> None:
    """The protected and label attributes exist in ``domain`` and differ."""
    for role, attr in (("protected", protected), ("label", label)):
        if attr not in domain.names:
            raise DataValidationError(f"{role} attribute {attr!r} is not in the domain {list(domain.names)}.")
    if protected == label:
        raise DataValidationError("protected and label must be different attributes.")


@dataclass
class TVRepairResult:
    """Solution of a :class:`TVRepair` model.

    Attributes
    ----------
    tv : float
        Optimal total-variation distance ``TV(p*, q)``.
    cells, q, p : ndarray
        Support cells (codes ``(M, F)``), their empirical and repaired probabilities. The support
        is the observed cells, plus any canonical cells that received mass in empty blocks.
    blocks : DataFrame
        One row per (group, label) block: raw and repaired mass.
    statistical_rate, representation_rate : dict
        ``{"before": ..., "after": ...}`` for the favourable label.
    price_of_fairness : float
        ``d TV*/d tau`` (ratio form; >= 0; the left derivative at tau = 1) or ``d TV*/d eps``
        (difference form; <= 0). NaN for exact parity among three or more groups, where the
        duals do not determine the one-sided derivative (solve at tau < 1 or eps > 0 instead).
    fairness_duals : Series
        Dual of each pairwise statistical-rate row, indexed by the pair.
    solution : Solution
        The raw named solution of the program.

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> from fairopt.formulations.tv_repair import TVRepair
    >>> compas = load_builtin("compas")
    >>> cells, counts = compas.codes()
    >>> result = TVRepair(compas.domain, cells, counts, protected="race", label="two_year_recid",
    ...                   favourable_label=0, statistical_rate=0.9).solve()
    >>> type(result).__name__, round(result.statistical_rate["after"], 6)
    ('TVRepairResult', 0.9)
    """

    tv: float
    status: str
    domain: Domain
    cells: np.ndarray
    q: np.ndarray
    p: np.ndarray
    blocks: pd.DataFrame
    statistical_rate: dict[str, Any]
    representation_rate: dict[str, Any]
    price_of_fairness: float
    fairness_duals: pd.Series
    solution: Solution
    build_seconds: float
    solve_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """Support cells with their level values and columns ``q`` and ``p``."""
        out = self.domain.decode(self.cells)
        out["q"], out["p"] = self.q, self.p
        return out

    def sample(self, n: int, random_state: RandomState = None) -> pd.DataFrame:
        """Draw ``n`` records from the repaired distribution (seeded, vectorised)."""
        if int(n) < 0:
            raise DataValidationError(f"n must be non-negative, got {n}.")
        rng = np.random.default_rng(random_state)
        idx = rng.choice(len(self.p), size=int(n), p=self.p / self.p.sum())
        return self.domain.decode(self.cells[idx])


def _pairwise_rows(n_groups: int, ordered: bool) -> list[tuple[int, int]]:
    return list(permutations(range(n_groups), 2) if ordered else combinations(range(n_groups), 2))


class TVRepair:
    """Total-variation repair on a product domain, as a solver-agnostic LP.

    Parameters
    ----------
    domain : Domain
        Product domain containing the protected attribute and the label.
    cells : array (M, F)
        Integer codes of the observed cells (see :meth:`Domain.unique_codes`).
    counts : array (M,)
        Record counts (or weights) of the cells.
    protected : str
        Protected attribute ``D``.
    label : str
        Outcome attribute ``Y``.
    favourable_label : level of ``label``
        The favourable outcome ``y+``.
    statistical_rate : float in (0, 1], optional
        Ratio form: every group's favourable rate is at least ``statistical_rate`` times every
        other group's. ``1.0`` is exact statistical parity. Default 1.0 unless ``sr_difference``.
    sr_difference : float >= 0, optional
        Difference form: group favourable rates differ by at most this much (exclusive with
        ``statistical_rate``).
    representation : {"data", "balanced"} or array of group masses
        Fixed group masses ``r_d``: the empirical shares (Calmon's default; the representation
        rate is unchanged), equal shares, or explicit masses summing to one.
    form : {"aggregated", "full"}
        Solve over (group, label) blocks (exact, any domain size) or over every cell.
    name : str
        Program name.

    Examples
    --------
    Repair the built-in COMPAS counts to exact statistical parity by race (favourable label
    ``two_year_recid = 0``):

    >>> from fairopt.data import load_builtin
    >>> compas = load_builtin("compas")
    >>> cells, counts = compas.codes()
    >>> model = TVRepair(compas.domain, cells, counts, protected="race", label="two_year_recid",
    ...                  favourable_label=0, statistical_rate=1.0)
    >>> result = model.solve()
    >>> round(result.tv, 5), round(result.statistical_rate["after"], 6)
    (0.03308, 1.0)
    >>> round(result.price_of_fairness, 4)
    0.1742
    """

    def __init__(self, domain: Domain, cells: ArrayLike, counts: ArrayLike, *, protected: str, label: str,
                 favourable_label: object = 1, statistical_rate: float | None = None,
                 sr_difference: float | None = None, representation: str | ArrayLike = "data",
                 form: str = "aggregated", name: str = "tv_repair") -> None:
        self.domain = domain
        self.protected, self.label = protected, label
        self.favourable_label = favourable_label
        self.form, self.name = form, name
        self._validate(cells, counts, statistical_rate, sr_difference, representation)

    @classmethod
    def from_frame(cls, data: pd.DataFrame, domain: Domain, *, count_column: str | None = None,
                   **kwargs: Any) -> TVRepair:
        """Build from records (one row each) or a counts table (``count_column`` given)."""
        weights = None
        if count_column is not None:
            if count_column not in data.columns:
                raise DataValidationError(f"count column {count_column!r} is not in the data.")
            weights = data[count_column].to_numpy(dtype=float)
        cells, counts = domain.unique_codes(data, sample_weight=weights)
        return cls(domain, cells, counts, **kwargs)

    # ------------------------------------------------------------------ validation
    def _validate(self, cells: ArrayLike, counts: ArrayLike, statistical_rate: float | None,
                  sr_difference: float | None, representation: str | ArrayLike) -> None:
        dom = self.domain
        check_roles(dom, self.protected, self.label)
        self._d, self._y = dom.index(self.protected), dom.index(self.label)
        levels = dom.levels[self.label]
        if self.favourable_label not in levels:
            raise DataValidationError(f"favourable_label {self.favourable_label!r} is not a level of "
                                      f"{self.label!r} (levels {list(levels)}).")
        self._ypos = levels.index(self.favourable_label)
        self.cells = dom.check_codes(cells)
        counts = np.asarray(counts, dtype=float).reshape(-1)
        if counts.shape[0] != self.cells.shape[0]:
            raise DataValidationError(f"counts has {counts.shape[0]} entries for {self.cells.shape[0]} cells.")
        if not np.isfinite(counts).all() or (counts < 0).any() or counts.sum() <= 0:
            raise DataValidationError("counts must be finite, non-negative and not all zero.")
        keep = counts > 0
        self.cells, counts = self.cells[keep], counts[keep]
        if len(np.unique(dom.ravel(self.cells))) != len(self.cells):
            raise DataValidationError("cells must be distinct; collapse records with Domain.unique_codes.")
        self.q = counts / counts.sum()
        if statistical_rate is not None and sr_difference is not None:
            raise DataValidationError("give statistical_rate (ratio form) or sr_difference (difference "
                                      "form), not both.")
        if statistical_rate is None and sr_difference is None:
            statistical_rate = 1.0
        if statistical_rate is not None and not 0 < statistical_rate <= 1:
            raise DataValidationError(f"statistical_rate must be in (0, 1], got {statistical_rate}; "
                                      "1 is exact statistical parity.")
        if sr_difference is not None and not sr_difference >= 0:
            raise DataValidationError(f"sr_difference must be >= 0, got {sr_difference}.")
        self.statistical_rate, self.sr_difference = statistical_rate, sr_difference
        n_groups = dom.cardinalities[self._d]
        group_q = np.bincount(self.cells[:, self._d], weights=self.q, minlength=n_groups)
        if isinstance(representation, str):
            if representation == "data":
                r = group_q
            elif representation == "balanced":
                r = np.full(n_groups, 1.0 / n_groups)
            else:
                raise DataValidationError(f"representation must be 'data', 'balanced' or an array of "
                                          f"group masses, got {representation!r}.")
        else:
            r = np.asarray(representation, dtype=float).reshape(-1)
            if r.shape[0] != n_groups or (r < 0).any() or abs(r.sum() - 1) > 1e-9:
                raise DataValidationError(f"representation masses must be {n_groups} non-negative "
                                          "numbers summing to 1, one per level of "
                                          f"{self.protected!r} {list(dom.levels[self.protected])}.")
        empty = (group_q <= 0) & (r > 0)
        if empty.any():
            g = dom.levels[self.protected][int(np.argmax(empty))]
            raise DataValidationError(f"group {self.protected}={g!r} has no records but is given "
                                      "positive mass; drop the level from the domain or give it mass 0.")
        self.representation = representation if isinstance(representation, str) else "explicit"
        self.r = r
        self._active_groups = np.flatnonzero(r > 0)
        if self.form not in ("aggregated", "full"):
            raise DataValidationError(f"form must be 'aggregated' or 'full', got {self.form!r}.")
        if self.form == "full" and dom.size > MAX_FULL_CELLS:
            raise DataValidationError(f"form='full' enumerates all {dom.size} cells; the limit is "
                                      f"{MAX_FULL_CELLS}. Use form='aggregated' (exact, any size).")

    # ------------------------------------------------------------------ model
    def _support(self) -> tuple[np.ndarray, np.ndarray]:
        """Cells the program has variables for, and their empirical mass."""
        if self.form == "aggregated":
            n_d, n_y = self.domain.cardinalities[self._d], self.domain.cardinalities[self._y]
            blocks = np.column_stack([np.repeat(np.arange(n_d), n_y), np.tile(np.arange(n_y), n_d)])
            q = np.zeros(n_d * n_y)
            np.add.at(q, self.cells[:, self._d] * n_y + self.cells[:, self._y], self.q)
            return blocks, q
        all_cells = self.domain.unravel(np.arange(self.domain.size, dtype=np.int64))
        q = np.zeros(self.domain.size)
        q[self.domain.ravel(self.cells)] = self.q
        return all_cells, q

    def _block_of(self, support: np.ndarray) -> np.ndarray:
        if self.form == "aggregated":
            return support
        return support[:, [self._d, self._y]]

    def build(self) -> Program:
        """The LP as a :class:`~fairopt.modeling.Program` (variables ``gain``/``loss``; rows
        ``group_mass`` and ``statistical_rate``)."""
        support, q = self._support()
        self._support_cells, self._support_q = support, q
        gd = self._block_of(support)
        groups, labels = gd[:, 0], gd[:, 1]
        n = len(q)
        n_groups = self.domain.cardinalities[self._d]
        prog = Program(self.name)
        prog.add_variables("gain", shape=(n,), lb=0.0)
        prog.add_variables("loss", shape=(n,), lb=0.0, ub=q)
        # group masses: sum over the group's cells of (gain - loss) = r_d - q_d
        G = sp.csr_matrix((np.ones(n), (groups, np.arange(n))), shape=(n_groups, n))
        q_group = G @ q
        prog.add_constraints("group_mass", {"gain": G, "loss": -G}, lb=self.r - q_group,
                             ub=self.r - q_group)
        # favourable rate of group d under p: F_d (q + gain - loss) / r_d
        fav = labels == self._ypos
        Fav = sp.csr_matrix((np.ones(fav.sum()), (groups[fav], np.flatnonzero(fav))), shape=(n_groups, n))
        act = self._active_groups
        # exact parity (tau = 1 or eps = 0) is a chain of equality rows between consecutive
        # groups: pairwise rows would be linearly dependent and make the duals non-unique
        ordered = self.sr_difference is None and self.statistical_rate is not None and self.statistical_rate < 1
        exact = (self.sr_difference == 0) or (self.sr_difference is None and not ordered)
        if exact:
            pairs = list(pairwise(act))
        else:
            pairs = [(act[i], act[j]) for i, j in _pairwise_rows(len(act), ordered)]
        self._pairs = pairs
        if pairs:
            a = np.array([i for i, _ in pairs])
            b = np.array([j for _, j in pairs])
            scale_b = self.statistical_rate if ordered else 1.0
            # row: rate_a - scale_b * rate_b  (>= 0 in ratio form, within +-eps in difference form)
            R = (sp.diags(1.0 / self.r[a]) @ Fav[a]) - (sp.diags(scale_b / self.r[b]) @ Fav[b])
            base = R @ q
            eps = 0.0 if self.sr_difference is None else self.sr_difference
            lb, ub = (-base, np.inf) if ordered else (-eps - base, eps - base)
            prog.add_constraints("statistical_rate", {"gain": R, "loss": -R}, lb=lb, ub=ub)
        prog.set_objective(linear={"gain": np.full(n, 0.5), "loss": np.full(n, 0.5)})
        return prog

    def summary(self) -> str:
        """Formulation summary: the program's blocks plus the fairness setting."""
        prog = self.build()
        form = (f"ratio statistical rate >= {self.statistical_rate}" if self.sr_difference is None
                else f"difference statistical rate <= {self.sr_difference}")
        return (f"TV repair on {self.domain.size} cells ({len(self.cells)} observed), "
                f"protected={self.protected!r}, label={self.label!r} (favourable "
                f"{self.favourable_label!r}), {form}, representation={self.representation}, "
                f"form={self.form}\n{prog.summary()}")

    # ------------------------------------------------------------------ solve
    def solve(self, solver: SolverArg = None, **kwargs: Any) -> TVRepairResult:
        """Build, solve on any LP solver (default: the registry's) and lift the block solution to cells."""
        t0 = time.perf_counter()
        prog = self.build()
        comp = prog.compile(solver, **kwargs)
        build_seconds = time.perf_counter() - t0
        sol = comp.solve(require_optimal=True)
        delta = sol.primal["gain"] - sol.primal["loss"]
        s = np.clip(self._support_q + delta, 0.0, None)
        cells, q, p = self._lift(s)
        return TVRepairResult(
            tv=float(sol.objective), status=sol.status.value, domain=self.domain, cells=cells, q=q,
            p=p, blocks=self._block_table(s), statistical_rate={
                "before": self._rate_ratio(self.cells, self.q), "after": self._rate_ratio(cells, p)},
            representation_rate={"before": self._rr(self.cells, self.q), "after": self._rr(cells, p)},
            price_of_fairness=self._price(sol, s), fairness_duals=self._duals(sol), solution=sol,
            build_seconds=build_seconds + comp.build_seconds, solve_seconds=sol.solve_seconds)

    def _lift(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cell distribution with block masses ``s`` and ``p(x|d,y) = q(x|d,y)``."""
        if self.form == "full":
            keep = s > 0
            cells = self._support_cells[keep]
            q_full = self._support_q[keep]
            return cells, q_full, s[keep] / s.sum()
        n_y = self.domain.cardinalities[self._y]
        block = self.cells[:, self._d] * n_y + self.cells[:, self._y]
        qbar = self._support_q
        ratio = np.divide(s, qbar, out=np.zeros_like(s), where=qbar > 0)
        p = self.q * ratio[block]
        cells, q = self.cells, self.q
        orphan = np.flatnonzero((qbar <= 0) & (s > 1e-15))
        if orphan.size:
            # an empty block that must gain mass: copy the group's feature distribution and
            # relabel it (deterministic canonical choice; the optimum is not unique there)
            extra_cells, extra_p = [], []
            for k in orphan:
                d, y = divmod(int(k), n_y)
                mine = self.cells[:, self._d] == d
                c = self.cells[mine].copy()
                c[:, self._y] = y
                w = self.q[mine] / self.q[mine].sum()
                extra_cells.append(c)
                extra_p.append(s[k] * w)
            cells = np.vstack([cells, *extra_cells])
            p = np.concatenate([p, *extra_p])
            q = np.concatenate([q, np.zeros(len(p) - len(q))])
            flat = self.domain.ravel(cells)
            uniq, inv = np.unique(flat, return_inverse=True)
            cells = self.domain.unravel(uniq)
            p = np.bincount(inv, weights=p)
            q = np.bincount(inv, weights=q)
        return cells, q, p / p.sum()

    def _block_table(self, s: np.ndarray) -> pd.DataFrame:
        gd = self._block_of(self._support_cells)
        n_d, n_y = self.domain.cardinalities[self._d], self.domain.cardinalities[self._y]
        key = gd[:, 0] * n_y + gd[:, 1]
        raw = np.bincount(key, weights=self._support_q, minlength=n_d * n_y)
        rep = np.bincount(key, weights=s, minlength=n_d * n_y)
        d, y = np.divmod(np.arange(n_d * n_y), n_y)
        return pd.DataFrame({self.protected: np.asarray(self.domain.levels[self.protected], dtype=object)[d],
                             self.label: np.asarray(self.domain.levels[self.label], dtype=object)[y],
                             "raw_mass": raw, "repaired_mass": rep})

    def _rate_ratio(self, cells: np.ndarray, w: np.ndarray) -> float:
        keep = w > 0   # statistical rate of the support (cells of zero mass are not records)
        return statistical_rate(cells[keep, self._y] == self._ypos, cells[keep, self._d], sample_weight=w[keep])

    def _rr(self, cells: np.ndarray, w: np.ndarray) -> float:
        keep = w > 0
        groups = np.asarray(self.domain.levels[self.protected], dtype=object)
        return representation_rate(groups[cells[keep, self._d]], sample_weight=w[keep],
                                   groups=list(groups[self._active_groups]))

    def _duals(self, sol: Solution) -> pd.Series:
        levels = self.domain.levels[self.protected]
        ratio = self.sr_difference is None and self.statistical_rate is not None and self.statistical_rate < 1
        sep = " >= tau * " if ratio else " vs "
        index = [f"{levels[a]}{sep}{levels[b]}" for a, b in self._pairs]
        values = sol.dual.get("statistical_rate", np.zeros(0))
        return pd.Series(values, index=index, name="dual", dtype=float)

    def _price(self, sol: Solution, s: np.ndarray) -> float:
        if not self._pairs:
            return 0.0  # a single group: no fairness rows, fairness costs nothing
        y = sol.dual.get("statistical_rate")
        if y is None or len(y) != len(self._pairs):
            return float("nan")  # the back end reported no duals
        if self.sr_difference is not None and self.sr_difference > 0:
            return float(-np.abs(y).sum())   # relaxing eps moves the active side outward
        if len(self._active_groups) > 2 and (self.sr_difference == 0 or self.statistical_rate == 1):
            # exact parity among 3+ groups is a chain of equalities; relaxing it also relaxes
            # pairs outside the chain, so the duals do not determine the one-sided derivative
            return float("nan")
        # ratio rows: rate_a - tau*rate_b >= 0; raising tau by dt raises the row's bound by
        # rate_b(p*) dt, so d TV*/d tau = sum_rows dual * rate_b(p*). At tau = 1 the rows are
        # equalities whose dual sign tells the binding direction: the left derivative is |dual|*rate.
        gd = self._block_of(self._support_cells)
        n_groups = self.domain.cardinalities[self._d]
        mass = np.bincount(gd[:, 0], weights=s, minlength=n_groups)
        fav = np.bincount(gd[:, 0], weights=s * (gd[:, 1] == self._ypos), minlength=n_groups)
        rates = np.divide(fav, mass, out=np.zeros_like(mass), where=mass > 0)
        b = np.array([j for _, j in self._pairs])
        return float(np.sum(np.abs(y) * rates[b]))
