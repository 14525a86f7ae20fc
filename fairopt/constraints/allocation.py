"""α-fair objectives over group utilities of a divisible allocation ``x``.

Group ``a``'s utility is linear in the user's decision vector: ``U_a(x) = sum_{i in a} u_i x_i``
divided by the group size (``normalize="mean"``, per-capita utility) or not (``"sum"``). The
α-fair welfare (Mo & Walrand 2000) with group weights ``w_a > 0`` is

- ``alpha = 0``: utilitarian, ``sum_a w_a U_a`` (linear: every LP back end);
- ``alpha = 1``: proportional fairness, ``sum_a w_a log U_a`` (cvxpy, exponential cone);
- ``alpha > 0, != 1``: ``sum_a w_a U_a^(1 - alpha) / (1 - alpha)`` (cvxpy, power cone);
- ``alpha = inf``: max-min (Rawlsian), ``max z s.t. U_a >= z`` (an epigraph LP: every LP back
  end; the dual of row ``a`` is the weight group ``a`` gets at the max-min optimum).

As ``alpha`` grows the α-fair group utilities converge to the max-min ones. For ``0 < alpha <
inf`` the cvxpy objective is not the welfare itself but the weighted power mean of the group
utilities with exponent ``1 - alpha`` (geometric at ``alpha = 1``): an increasing transform of
the welfare, so the maximisers are the same, and homogeneous of degree 1, so it is as well
scaled at ``alpha = 64`` as at ``alpha = 2`` (the raw ``U^(1 - alpha)`` overflows the conic
solvers' tolerances from ``alpha`` about 8).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt.constraints._scaling import power_of_two
from fairopt.constraints.block import FairnessBlock
from fairopt.constraints.builders import (
    _group_matrix,
    _per_group,
    _vector,
    encode_groups,
)
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    import cvxpy as cp
    from numpy.typing import ArrayLike

    from fairopt.modeling import Program


@dataclass(eq=False)
class AlphaFairObjective:
    """An α-fair welfare over group utilities; build with :func:`alpha_fairness`.

    Attributes
    ----------
    U : sparse matrix of shape (K, n)
        ``U @ x`` are the group utilities.
    alpha : float
        0, a positive number, or ``inf``.
    weights : ndarray of shape (K,)
    groups : Index

    Examples
    --------
    >>> obj = alpha_fairness(["a", "b"], [1.0, 2.0], alpha=0)
    >>> obj.welfare([1.0, 0.5]), obj.is_linear
    (2.0, True)
    """

    name: str
    groups: pd.Index
    U: sp.csr_matrix
    alpha: float
    weights: np.ndarray
    epigraph: FairnessBlock | None = None

    @property
    def is_linear(self) -> bool:
        """Whether the objective is an LP (``alpha`` is 0 or ``inf``)."""
        return self.alpha == 0 or np.isinf(self.alpha)

    def group_utilities(self, x: ArrayLike) -> pd.Series:
        """``U_a(x)`` per group."""
        return pd.Series(self.U @ np.asarray(x, dtype=float).reshape(-1), index=self.groups)

    def welfare(self, x: ArrayLike) -> float:
        """The α-fair welfare at ``x``."""
        Ua = self.group_utilities(x).to_numpy()
        if self.alpha == 0:
            return float(self.weights @ Ua)
        if np.isinf(self.alpha):
            return float(Ua.min())
        if self.alpha == 1:
            return float(self.weights @ np.log(Ua))
        return float(self.weights @ Ua ** (1 - self.alpha) / (1 - self.alpha))

    def _need_linear(self, where: str) -> None:
        if not self.is_linear:
            raise DataValidationError(f"{where} takes the LP forms (alpha = 0 or inf); alpha={self.alpha:g} "
                                      "is a conic objective: use to_cvxpy.")

    # ------------------------------------------------------------------ targets
    def add_to(self, program: Program, var: str) -> FairnessBlock | None:
        """Set the program's objective to the welfare (``alpha`` 0 or ``inf``); for max-min also
        add the epigraph block (rows ``name``, level ``name + "_aux"``). Returns the epigraph block
        (``None`` for ``alpha = 0``). For utilities outside ``[2^-10, 2^10]`` the level variable is in
        units of the power of two ``q`` nearest to the largest one (the objective is in the caller's units)."""
        self._need_linear("Program")
        if self.alpha == 0:
            program.set_objective(linear={var: np.asarray(self.weights @ self.U).ravel()}, sense="maximize")
            return None
        assert self.epigraph is not None  # built for alpha = inf, the other linear case
        self.epigraph.add_to(program, var)
        program.set_objective(linear={self.epigraph.aux_name: [power_of_two(float(abs(self.U).max()))]},
                              sense="maximize")
        return self.epigraph

    def to_pyomo(self, var: Any, name: str | None = None, index: Any = None) -> Any:
        """Add the objective (``alpha`` 0 or ``inf``) to the pyomo model of ``var``; returns the
        epigraph block (its ``aux[0]`` is the max-min level) or the ``Objective``."""
        import pyomo.environ as pyo
        from pyomo.core.expr.numeric_expr import LinearExpression
        self._need_linear("to_pyomo")
        keys = list(var.index_set()) if index is None else list(index)
        model = var.parent_block()
        name = name or self.name
        if self.alpha == 0:
            c = np.asarray(self.weights @ self.U).ravel()
            nz = np.flatnonzero(c)
            obj = pyo.Objective(expr=LinearExpression(constant=0.0, linear_coefs=c[nz].tolist(),
                                                      linear_vars=[var[keys[j]] for j in nz]),
                                sense=pyo.maximize)
            model.add_component(name, obj)
            return obj
        assert self.epigraph is not None  # built for alpha = inf, the other linear case
        blk = self.epigraph.to_pyomo(var, name=name, index=index)
        blk.objective = pyo.Objective(expr=blk.aux[0], sense=pyo.maximize)
        return blk

    def to_cvxpy(self, x: Any) -> tuple[Any, list[Any]]:
        """``(objective, constraints)`` for a cvxpy problem on the user's ``x`` (a Variable or an
        affine expression of ``n`` entries): ``cp.Problem(objective, constraints + yours)``.

        For ``0 < alpha < inf`` the objective is the weighted power mean of the group utilities
        with exponent ``1 - alpha`` (normalised weights; the geometric mean at ``alpha = 1``), an
        increasing transform of the welfare with the same maximisers that is scale-free, so every
        ``alpha`` solves on the conic solvers; the problem's value is that mean, in the units of
        the utilities, and :meth:`welfare` gives the welfare at the solution. Utilities whose largest
        coefficient lies outside ``[2^-10, 2^10]`` enter divided by the power of two ``q`` nearest to it
        (the maximisers are the same; a conic solver's absolute tolerances would read an objective of
        1e-9 as zero), and the problem's value is then in units of ``q``.

        Examples
        --------
        >>> import cvxpy as cp, numpy as np
        >>> obj = alpha_fairness(["a", "b"], [2.0, 1.0], alpha=64)
        >>> x = cp.Variable(2)
        >>> objective, cons = obj.to_cvxpy(x)
        >>> prob = cp.Problem(objective, [*cons, x >= 0, cp.sum(x) <= 1])
        >>> _ = prob.solve(solver="CLARABEL")
        >>> obj.group_utilities(x.value).round(3).tolist()   # close to max-min's 2/3 each
        [0.671, 0.664]
        """
        import cvxpy as cp
        size = int(np.prod(x.shape)) if x.shape else 1
        if size != self.U.shape[1]:
            raise DataValidationError(f"x has {size} entries but the objective {self.name!r} was built for "
                                      f"{self.U.shape[1]}.")
        xv = x if len(x.shape) == 1 else cp.reshape(x, (size,), order="C")
        # utilities of extreme magnitude enter in units of a power of two q (conic solvers' tolerances are
        # absolute: an objective of 1e-9 reads as zero), so the problem's value is then in units of q
        q = power_of_two(float(abs(self.U).max()) if self.U.nnz else 0.0)
        Ua = (self.U / q) @ xv
        w = self.weights
        if self.alpha == 0:
            return cp.Maximize(w @ Ua), []
        if np.isinf(self.alpha):
            assert self.epigraph is not None  # built for alpha = inf
            cons = self.epigraph.to_cvxpy(xv)
            assert cons.aux is not None  # the epigraph has its level variable
            return cp.Maximize(cons.aux[0]), cons
        level, rows = _power_mean(Ua, w / w.sum(), self.alpha)
        return cp.Maximize(level), rows


def _power_mean(Ua: cp.Expression, w: np.ndarray, alpha: float) -> tuple[cp.Expression, list[Any]]:
    """A level ``t`` and power-cone rows with ``t <= M(U)``, the weighted power mean
    ``M(U) = (sum_a w_a U_a^(1 - alpha))^(1 / (1 - alpha))`` (``sum_a w_a = 1``).

    For ``alpha > 0`` the welfare is an increasing function of ``M`` (``M^(1-alpha) / (1-alpha)``
    summed, or its log at ``alpha = 1``), so maximising ``t`` gives the welfare's maximisers;
    unlike the welfare, ``M`` is homogeneous of degree 1 in ``U``, stays in the utilities' units
    whatever ``alpha`` and tends to ``min_a U_a`` as ``alpha`` grows. The rows are homogeneous:

    - ``alpha > 1``: ``r_a >= t (U_a / t)^(1 - alpha)``, i.e. ``r_a^(1/alpha) U_a^(1 - 1/alpha)
      >= t`` (one 3-D power cone per group), and ``sum_a w_a r_a <= t``;
    - ``0 < alpha < 1``: ``r_a <= t (U_a / t)^(1 - alpha)``, i.e. ``U_a^(1-alpha) t^alpha >= r_a``,
      and ``sum_a w_a r_a >= t``;
    - ``alpha = 1``: the weighted geometric mean.

    Where ``U^(1 - alpha)`` unscaled made CLARABEL report a feasible problem infeasible at
    ``alpha = 16`` and fail at ``alpha = 8``, these solve at every ``alpha`` up to 64.
    """
    import cvxpy as cp
    if alpha == 1:
        try:
            return cp.geo_mean(Ua, w, approx=False), []
        except TypeError:  # pragma: no cover - older cvxpy
            return cp.geo_mean(Ua, w), []
    K = w.shape[0]
    t, r = cp.Variable(), cp.Variable(K)
    ones = np.ones(K)
    if alpha > 1:
        return t, [cp.PowCone3D(r, Ua, t * ones, 1.0 / alpha), w @ r <= t]
    return t, [cp.PowCone3D(Ua, t * ones, r, 1.0 - alpha), w @ r >= t]


def alpha_fairness(groups: ArrayLike, utility: ArrayLike | sp.spmatrix, alpha: float, *,
                   weights: ArrayLike | Mapping[Any, float] | None = None, normalize: str = "mean",
                   name: str = "alpha_fair") -> AlphaFairObjective:
    """α-fair welfare over group utilities ``U_a(x)`` (see the module docstring).

    Parameters
    ----------
    groups : array-like of shape (n,)
        Group of each decision entry.
    utility : array-like of shape (n,)
        Nonnegative utility per unit of ``x_i``.
    alpha : float
        0 (utilitarian), 1 (proportional), any positive number, or ``float("inf")`` (max-min).
    weights : scalar, mapping group -> float or sequence, optional
        Positive group weights ``w_a`` (default 1).
    normalize : {"mean", "sum"}
        Per-capita group utility (divide by the group size) or total.
    name : str

    Returns
    -------
    AlphaFairObjective

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> g = np.array(["a", "a", "b"])
    >>> maxmin = alpha_fairness(g, [1.0, 1.0, 0.5], float("inf"))
    >>> prog = Program("share")
    >>> _ = prog.add_variables("x", shape=3, lb=0, ub=1)
    >>> _ = prog.add_constraints("supply", {"x": np.ones((1, 3))}, ub=1.5)
    >>> _ = maxmin.add_to(prog, "x")
    >>> sol = prog.solve()
    >>> maxmin.group_utilities(sol.primal["x"]).round(6).tolist()
    [0.375, 0.375]
    """
    codes, labels = encode_groups(groups)
    n, K = codes.shape[0], len(labels)
    u = _vector(utility, n, "utility", lo=0.0)
    alpha = float(alpha)
    if np.isnan(alpha) or alpha < 0:
        raise DataValidationError(f"alpha must be >= 0 (0 utilitarian, 1 proportional, inf max-min), got {alpha}.")
    if normalize not in ("mean", "sum"):
        raise DataValidationError(f"normalize must be 'mean' or 'sum', got {normalize!r}.")
    w = _per_group(weights, labels, "weights", 1.0)
    if (w <= 0).any() or not np.isfinite(w).all():
        raise DataValidationError(f"group weights must be positive and finite, got {w.tolist()}.")
    scale = 1.0 / np.bincount(codes, minlength=K) if normalize == "mean" else np.ones(K)
    U = _group_matrix(codes, K, u * scale[codes])
    if (np.asarray(U.sum(axis=1)).ravel() <= 0).any():
        a = labels[int(np.argmax(np.asarray(U.sum(axis=1)).ravel() <= 0))]
        raise DataValidationError(f"group {a!r} gets no utility from any allocation (all utilities 0); "
                                  "its welfare term is -inf for alpha >= 1.")
    epi = None
    if np.isinf(alpha):
        # the level in units of a power of two near the utilities' magnitude (the identity for ordinary ones)
        q = power_of_two(float(abs(U).max()))
        epi = FairnessBlock(name=name, kind="max_min", groups=labels, A=U / q, T=-np.ones((K, 1)),
                            sense=np.ones(K, dtype=np.int8), bound=np.zeros(K),
                            row_labels=[f"utility[{g}] - level >= 0" for g in labels],
                            aux_names=["level"], parameters={}, sensitivity={})
    return AlphaFairObjective(name=name, groups=labels, U=U, alpha=alpha, weights=w, epigraph=epi)


__all__ = ["AlphaFairObjective", "alpha_fairness"]
