"""Fairness rows of the fair robust log-loss model and its exact inner multiplier λ*(θ).

Rezaei et al. (2020), Eq. 1: every constraint compares two groups ``G1, G0`` of training rows,
``mean_{G1} P = mean_{G0} P``, with frequencies ``p_γj = N_j / n`` over the whole sample. The
multiplier ``λ`` enters each row as ``c_i = λ/p_γ1`` on ``G1``, ``−λ/p_γ0`` on ``G0`` and 0
elsewhere (Eq. 27), and the predictor is the truncated logistic rule (Eq. 11)::

    P_i = min(P_e,i, 1/c_i)  if c_i > 0,   max(P_e,i, 1 + 1/c_i)  if c_i < 0,   P_e,i  if c_i = 0

with approximator ``q_i = P_i (1 + c_i (1 − P_i))`` (Eq. 12). For fixed θ, λ*(θ) equalises the
group means of ``P`` (Appendix B): with ``u = 1/λ`` the gap ``h(u)`` is piecewise linear and
nondecreasing, so one sort of the breakpoints and a prefix sum find the active piece and
``u* = n [(S₀ + k₀)/N₀ − S₁/N₁] / (k₁ + k₀)`` in closed form; bisection on ``h`` is the fallback
and the cross-check.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from fairopt.criteria import criterion, resolve
from fairopt.errors import ConfigError, DataValidationError

#: binary-group constraints handled by the exact native solver
CONSTRAINTS = ("demographic_parity", "equal_opportunity", "equalized_odds")


@dataclass
class FairnessRows:
    """Constraint rows ``Σ_i coef[r, i] P_i / n = 0`` over ``n`` training rows.

    ``coef[r, i]`` is what one unit of ``λ_r`` adds to ``c_i``; it depends on the row only through
    its group ``a`` and label ``y`` (``table[r, a, y]``), which is how test rows get their ``c``.
    Two-group rows have ``coef = 1/p_γ1`` on ``G1``, ``−1/p_γ0`` on ``G0`` (``Σ coef P/n`` is the
    gap of group means); the ``K``-group demographic-parity rows are
    ``mean_{G_k} P − mean P`` for ``k < K`` (``coef = 1/π_k·[a=k] − 1``; the last group is implied).

    Attributes
    ----------
    names : list of str
        One name per row (``"demographic_parity"``, ``"equalized_odds:y=1"``, ...).
    table : ndarray (R, K, 2)
        Coefficient per unit multiplier for a row of group ``a`` with label ``y``.
    group, y : ndarray (n,)
        Training group codes and labels.
    binary : bool
        Two-group comparisons (the exact native λ* applies).
    label_value : list
        For y-conditional rows, the label the row conditions on (else None).
    """

    names: list[Any]
    table: np.ndarray
    group: np.ndarray
    y: np.ndarray
    binary: bool = True
    label_value: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.coef = self.table[:, self.group, self.y] if self.table.size else np.zeros((0, self.n))
        self._members = [(np.flatnonzero(c > 0), np.flatnonzero(c < 0)) for c in self.coef]

    @property
    def n(self) -> int:
        out: int = self.group.shape[0]
        return out

    @property
    def n_rows(self) -> int:
        return len(self.names)

    def c(self, lam: np.ndarray) -> np.ndarray:
        """``c_i = Σ_r λ_r coef[r, i]`` on the training rows."""
        return lam @ self.coef if self.n_rows else np.zeros(self.n)

    def c_at(self, lam: np.ndarray, group: np.ndarray, y: int) -> np.ndarray:
        """``c`` of rows of group ``group`` if their label were ``y`` (test time)."""
        return lam @ self.table[:, group, y] if self.n_rows else np.zeros(group.shape[0])

    def members(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices of ``G1`` and ``G0`` of two-group row ``r``."""
        return self._members[r]

    def shares(self, r: int) -> tuple[float, float]:
        """``(p_γ1, p_γ0)`` of two-group row ``r``."""
        i1, i0 = self._members[r]
        return i1.size / self.n, i0.size / self.n

    def gaps(self, P: np.ndarray) -> np.ndarray:
        """``Σ_i coef[r, i] P_i / n`` per row (gap of group means)."""
        out: np.ndarray = self.coef @ P / self.n
        return out


def fairness_rows(group: np.ndarray, y: np.ndarray, constraint: str | None,
                  n_groups: int | None = None) -> FairnessRows:
    """Rows of ``constraint`` for group codes ``0..K−1`` (with ``K = 2``, code 1 is ``G1``).

    ``demographic_parity``: ``γ_j = I(A=j)`` (``K > 2``: each group mean equals the overall mean);
    ``equal_opportunity``: ``γ_j = I(A=j, Y=1)``; ``equalized_odds``: one row for ``Y=1`` and one
    for ``Y=0``; ``None``: no row (plain L2 logistic regression).
    """
    group = np.asarray(group, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    K = int(n_groups if n_groups is not None else group.max() + 1)
    n = group.shape[0]
    if constraint is None or constraint == "none":
        return FairnessRows([], np.zeros((0, K, 2)), group, y, True, [])
    constraint = resolve(constraint, CONSTRAINTS)   # or "none"; aliases resolve in fairopt.criteria
    counts = np.zeros((K, 2))
    np.add.at(counts, (group, y), 1.0)
    events = criterion(constraint).events((1, 0), positive=1)   # the compared rates, from the registry
    if K > 2:
        if criterion(constraint).needs_labels:
            raise ConfigError(f"{constraint} is implemented for a binary protected attribute; with "
                              f"{K} groups use constraint='demographic_parity'.")
        sizes = counts.sum(axis=1)
        if np.any(sizes == 0):
            raise DataValidationError(f"demographic_parity: group(s) {np.flatnonzero(sizes == 0).tolist()} "
                                      "have no training rows.")
        table = np.full((K - 1, K, 2), -1.0)
        for k in range(K - 1):
            table[k, k, :] += n / sizes[k]
        return FairnessRows([f"{constraint}:group={k}" for k in range(K - 1)], table, group, y,
                            False, [None] * (K - 1))
    # one row per event: the rows with label ``given`` (all rows for None), compared across groups
    conds: list[tuple[str, tuple[int, ...], int | None]] = [
        (constraint if len(events) == 1 else f"{constraint}:y={e.given}",
         (0, 1) if e.given is None else (int(e.given),), None if e.given is None else int(e.given))  # type: ignore[call-overload]
        for e in events]
    table = np.zeros((len(conds), 2, 2))
    for r, (name, labels, lab) in enumerate(conds):
        n1, n0 = counts[1, list(labels)].sum(), counts[0, list(labels)].sum()
        if n1 == 0 or n0 == 0:
            which = f"y={lab} " if lab is not None else ""
            raise DataValidationError(
                f"{name}: a compared group is empty ({which}rows per group: {int(n0)} and "
                f"{int(n1)}); the constraint needs training rows in both groups.")
        table[r, 1, list(labels)] = n / n1
        table[r, 0, list(labels)] = -n / n0
    return FairnessRows([c[0] for c in conds], table, group, y, True, [c[2] for c in conds])


# ------------------------------------------------------------------------------ truncation rule
def truncate(pe: np.ndarray, pe_bar: np.ndarray,
             c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Eq. 11: ``(P, 1 − P, capped, floored)`` from ``P_e``, ``1 − P_e`` and ``c``.

    ``1 − P`` is formed directly (``min(1 − P_e, −1/c)`` on floored rows) so that neither tail
    loses precision.
    """
    pos, neg = c > 0, c < 0
    inv = np.divide(1.0, c, out=np.zeros_like(c), where=c != 0)
    capped = pos & (pe > inv)
    floored = neg & (pe_bar > -inv)
    P = np.where(capped, inv, pe)
    P_bar = np.where(floored, -inv, pe_bar)
    P = np.where(floored, 1.0 + inv, P)
    P_bar = np.where(capped, 1.0 - inv, P_bar)
    return P, P_bar, capped, floored


def approximator(P: np.ndarray, P_bar: np.ndarray, c: np.ndarray, capped: np.ndarray | None = None,
                 floored: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 12: ``ℚ(ŷ=1) = P(1 + c(1 − P))`` and ``ℚ(ŷ=0) = (1 − P)(1 − cP)`` (product form).

    At truncated rows (masks from :func:`truncate`) the values are exactly 1/0 (capped) and
    0/1 (floored), which the product form reproduces only up to rounding.
    """
    q1, q0 = P * (1.0 + c * P_bar), P_bar * (1.0 - c * P)
    if capped is not None:
        q1, q0 = np.where(capped, 1.0, q1), np.where(capped, 0.0, q0)
    if floored is not None:
        q1, q0 = np.where(floored, 0.0, q1), np.where(floored, 1.0, q0)
    return q1, q0


# ------------------------------------------------------------------------------ exact λ*(θ)
def _positive_root(e1: np.ndarray, e1_bar: np.ndarray, e0: np.ndarray, e0_bar: np.ndarray, n: int,
                   order: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """``u* = 1/λ*`` when ``mean e1 > mean e0`` (caps on G1, floors on G0); returns ``(u, order)``.

    Breakpoints: a G1 row is capped once ``u < e/p₁``, a G0 row floored once ``u < (1 − e)/p₀``.
    Walking them in descending order, ``h`` at each breakpoint comes from prefix sums; the first
    breakpoint with ``h ≤ 0`` closes the active piece.
    """
    N1, N0 = e1.shape[0], e0.shape[0]
    b = np.concatenate([e1 * (n / N1), e0_bar * (n / N0)])
    if order is None or order.shape[0] != b.shape[0]:
        order = np.argsort(-b, kind="stable")
    else:  # the previous order is nearly sorted: Timsort finishes it in close to linear time
        order = order[np.argsort(-b[order], kind="stable")]
    bs = b[order]
    in1 = order < N1
    vals = np.concatenate([e1, e0])[order]
    k1 = np.cumsum(in1) - in1                       # truncated rows *before* each breakpoint
    k0 = np.arange(bs.shape[0]) - k1
    removed1 = np.cumsum(np.where(in1, vals, 0.0))
    removed0 = np.cumsum(np.where(in1, 0.0, vals))
    S1 = e1.sum() - (removed1 - np.where(in1, vals, 0.0))
    S0 = e0.sum() - (removed0 - np.where(in1, 0.0, vals))
    h = S1 / N1 - (S0 + k0) / N0 + (k1 + k0) * bs / n
    hit = np.flatnonzero(h <= 0)
    if hit.size == 0:                               # every row truncated
        return n / (N1 + N0), order
    t = hit[0]
    u = n * ((S0[t] + k0[t]) / N0 - S1[t] / N1) / (k1[t] + k0[t])
    return float(u), order


def _gap_at(u: float, e1: np.ndarray, e0_bar: np.ndarray, n: int) -> float:
    """``h(u) = mean_{G1} min(e, p₁u) − mean_{G0} max(e, 1 − p₀u)``."""
    N1, N0 = e1.shape[0], e0_bar.shape[0]
    return float(np.minimum(e1, N1 * u / n).mean() - 1.0 + np.minimum(e0_bar, N0 * u / n).mean())


def _bisect_root(e1: np.ndarray, e1_bar: np.ndarray, e0: np.ndarray, e0_bar: np.ndarray, n: int) -> float:
    """Bisection of ``h`` on ``[1/(p₁+p₀), 1/min(p₁,p₀)]``, polished by the piece formula."""
    N1, N0 = e1.shape[0], e0.shape[0]
    lo, hi = n / (N1 + N0), n / min(N1, N0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _gap_at(mid, e1, e0_bar, n) > 0:
            hi = mid
        else:
            lo = mid
    u = 0.5 * (lo + hi)
    A1, A0 = e1 > N1 * u / n, e0_bar > N0 * u / n
    k = A1.sum() + A0.sum()
    if k:
        S1, S0 = e1[~A1].sum(), e0[~A0].sum()
        polished = n * ((S0 + A0.sum()) / N0 - S1 / N1) / k
        if lo <= polished <= hi:
            u = polished
    return float(u)


def pair_lambda(e1: np.ndarray, e1_bar: np.ndarray, e0: np.ndarray, e0_bar: np.ndarray, n: int,
                order: np.ndarray | None = None,
                method: Literal["sort", "bisect"] = "sort") -> tuple[float, np.ndarray | None]:
    """λ* of one row from ``P_e`` (and ``1 − P_e``) of its two groups; returns ``(λ, order)``.

    ``d = mean e1 − mean e0``: ``d = 0`` gives ``λ* = 0`` (exact zero only); ``d < 0`` swaps
    the groups and negates λ. ``method="bisect"`` uses the bisection fallback.
    """
    d = e1.mean() - e0.mean()
    if d == 0:
        return 0.0, order
    sign = 1.0
    if d < 0:   # swap G1 <-> G0: caps become floors; λ changes sign
        e1, e1_bar, e0, e0_bar = e0, e0_bar, e1, e1_bar
        sign = -1.0
    if method == "bisect":
        return sign / _bisect_root(e1, e1_bar, e0, e0_bar, n), order
    u, order = _positive_root(e1, e1_bar, e0, e0_bar, n, order)
    # a closed form that misses the root (ties in rounding) falls back to bisection
    if abs(_gap_at(u, e1, e0_bar, n)) > 1e-11:
        u = _bisect_root(e1, e1_bar, e0, e0_bar, n)
    return sign / u, order


def exact_lambda(pe: np.ndarray, pe_bar: np.ndarray, rows: FairnessRows,
                 orders: Sequence[np.ndarray | None] | None = None,
                 method: Literal["sort", "bisect"] = "sort") -> tuple[np.ndarray, list[np.ndarray | None]]:
    """λ*(θ) for every row (rows touch disjoint training rows, so they separate).

    Returns ``(lam, orders)``; pass ``orders`` back in to reuse the sort of the last call.
    """
    if not rows.binary:
        raise ConfigError("the exact λ*(θ) step compares two groups; with more groups solve the "
                          "joint convex form (solver='cvxpy').")
    lam = np.zeros(rows.n_rows)
    orders = list(orders) if orders is not None else [None] * rows.n_rows
    for r in range(rows.n_rows):
        i1, i0 = rows.members(r)
        lam[r], orders[r] = pair_lambda(pe[i1], pe_bar[i1], pe[i0], pe_bar[i0], rows.n,
                                        orders[r], method)
    return lam, orders


def no_truncation_interval(pe: np.ndarray, pe_bar: np.ndarray, rows: FairnessRows) -> np.ndarray:
    """``[λ_b⁻, λ_b⁺]`` per row: the multipliers that truncate no row (the kink's subdifferential)."""
    out = np.zeros((rows.n_rows, 2))
    for r in range(rows.n_rows):
        i1, i0 = rows.members(r)
        p1, p0 = rows.shares(r)
        out[r, 1] = min(p1 / pe[i1].max(), p0 / pe_bar[i0].max())
        out[r, 0] = -min(p1 / pe_bar[i1].max(), p0 / pe[i0].max())
    return out


@dataclass
class RowTerms:
    """Everything the oracles need at one ``(θ, λ)``."""

    s: np.ndarray
    pe: np.ndarray
    pe_bar: np.ndarray
    lam: np.ndarray
    c: np.ndarray
    P: np.ndarray
    P_bar: np.ndarray
    capped: np.ndarray
    floored: np.ndarray
    q: np.ndarray

    @property
    def truncated(self) -> np.ndarray:
        out: np.ndarray = self.capped | self.floored
        return out
