"""The interface of a constraint moment and the helpers every moment shares.

See :mod:`fairopt.reductions.moments`, which re-exports :class:`Moment`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._docstrings import fill_doc, inherit_docs, register
from fairopt.errors import DataValidationError
from fairopt.reductions import game as _game  # noqa: F401 -- registers the ``lam`` docstring piece
from fairopt.reductions.problems import LearnerProblem
from fairopt.validation import as_groups, check_weights

if TYPE_CHECKING:
    import pandas as pd

    from fairopt.validation import Groups

# ---- docstring pieces shared by the moments' methods ----------------------------------------
_STATS_RETURNS = """Returns
-------
cost : float
    Mean loss.
g : ndarray of shape (n_rows,)
    Value of every constraint row (compared with ``bound``)."""
_FIT_GROUPS = """sensitive : array-like of shape (n_samples,)
    Group labels (raw values or codes).
sample_weight : array-like of shape (n_samples,), optional
    Nonnegative row weights, normalised to mean 1.

Returns
-------
self
    The fitted moment."""
register("moment_stats_returns", _STATS_RETURNS)
register("moment_fit_groups", _FIT_GROUPS)
# the regression moments (labels and predictions in [0, 1]) share the whole sections
register("moment_fit_unit", "Parameters\n----------\ny : array-like of shape (n_samples,)\n"
                            "    Labels in ``[0, 1]``.\n" + _FIT_GROUPS)
register("moment_stats_unit", "Parameters\n----------\npred : ndarray of shape (n_samples,)\n"
                              "    Predictions in ``[0, 1]``.\n\n" + _STATS_RETURNS)


def _row_weights(sample_weight: ArrayLike | None, n: int) -> np.ndarray | None:
    r"""Sample weights rescaled to mean 1 (``None`` when unweighted, keeping the unweighted arithmetic).

    Every moment then works with the weighted empirical distribution: means become
    :math:`\frac1n\sum_i w_i(\cdot)` and group counts :math:`\sum_{i\in a} w_i`.
    """
    if sample_weight is None:
        return None
    w = check_weights(sample_weight, n)
    out: np.ndarray | None = w * (n / w.sum())
    return out


def _wmean(values: NDArray[np.float64], w: NDArray[np.float64] | None) -> float:
    return float(np.mean(values if w is None else w * values))


def per_group(value: ArrayLike | dict[Any, float], groups: np.ndarray, what: str) -> np.ndarray:
    """Broadcast a scalar, sequence (sorted group order) or ``{group: value}`` mapping."""
    if isinstance(value, dict):
        missing = [g for g in groups.tolist() if g not in value]
        if missing:
            raise DataValidationError(f"{what} has no value for groups {missing}; give one per group.")
        out = np.array([float(value[g]) for g in groups.tolist()])
    else:
        out = np.broadcast_to(np.asarray(value, dtype=float), (groups.size,)).astype(float) \
            if np.ndim(value) == 0 else np.asarray(value, dtype=float)
        if out.shape != (groups.size,):
            raise DataValidationError(f"{what} must be a scalar or have one value per group "
                                      f"({groups.size}), got shape {out.shape}.")
    if not np.all(np.isfinite(out)) or np.any(out < 0):
        raise DataValidationError(f"{what} must be finite and non-negative, got {out.tolist()}.")
    return out


class Moment:
    """Interface of a constraint moment (see the module docstring).

    Attributes set by :meth:`fit`: ``bound`` (``b``), ``groups`` (sorted group values),
    ``group`` (codes), ``n`` (rows), ``sample_weight`` (row weights with mean 1, or ``None``).
    ``fit(y, sensitive, sample_weight=None)`` takes raw group labels or a
    :class:`~fairopt.validation.Groups`.

    Examples
    --------
    >>> from fairopt.reductions import DemographicParity, StatisticalParity
    >>> issubclass(DemographicParity, Moment), issubclass(StatisticalParity, Moment)
    (True, True)
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        inherit_docs(cls)   # overrides without a docstring document what this class's method does


    #: row weights with mean 1 (``None``: unweighted), set by ``fit``
    sample_weight: np.ndarray | None = None
    #: the bound ``b`` of every constraint row, set by ``fit``
    bound: np.ndarray
    #: sorted group labels, each row's group code and the number of rows, set by ``fit``
    groups: pd.Index
    group: np.ndarray
    n: int
    #: the learner problem this moment produces (see :meth:`learner_problem`)
    problem: type[LearnerProblem] = LearnerProblem
    #: range of per-example costs (2 for costs in [-1, 1], 1 for [0, 1]); enters the violation
    #: guarantee ``(cost_range + 2 nu) / B`` and the published step size
    cost_range = 1.0
    #: the published step size is ``nu / (eta_divisor * B)``
    eta_divisor = 8.0
    #: whether the problem can be infeasible for every hypothesis class (BGL)
    may_be_infeasible = False
    name = "moment"

    @property
    def n_rows(self) -> int:
        """Number of constraint rows."""
        return int(self.bound.size)

    def lagrangian(self, cost: ArrayLike, g: ArrayLike, lam: ArrayLike) -> np.ndarray:
        """``cost + lam @ (g - b)``; ``cost``/``g`` may be stacked over hypotheses."""
        out: np.ndarray = np.asarray(cost) + (np.asarray(g) - self.bound) @ np.asarray(lam)
        return out

    def row_names(self) -> list[str]:  # pragma: no cover - interface
        """Name of every constraint row, in row order.

        Returns
        -------
        list of str
            One name per row.
        """
        raise AttributeError("subclasses define row_names")

    @fill_doc
    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:  # pragma: no cover - interface
        """Cost and constraint values ``(cost, g)`` of the training predictions ``pred``.

        Parameters
        ----------
        pred : array-like of shape (n_samples,)
            Predictions of one hypothesis on the rows the moment was fitted on.

        {moment_stats_returns}
        """
        raise AttributeError("subclasses define stats")

    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> Moment:  # pragma: no cover - interface
        """Record the labels, groups and row weights the rows are computed on.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels.
        sensitive : array-like of shape (n_samples,) or Groups
            Group labels (raw values or codes).
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative row weights.

        Returns
        -------
        self
            The fitted moment.
        """
        raise AttributeError("subclasses define fit")

    @fill_doc
    def learner_problem(self, lam: np.ndarray) -> LearnerProblem:  # pragma: no cover - interface
        r"""The learner's problem at ``lam``, whose solution is :math:`\arg\min_h L(h, \lambda)`.

        Parameters
        ----------
        {lam}

        Returns
        -------
        LearnerProblem
            Costs or weights the oracle minimises.
        """
        raise AttributeError("subclasses define learner_problem")

    def block_of_row(self, j: int) -> str:
        """Name of the constraint block containing row ``j`` (for error messages)."""
        return self.row_names()[j]

    def _fit_groups(self, n: int, sensitive: ArrayLike | Groups,
                    sample_weight: ArrayLike | None) -> NDArray[np.float64] | None:
        """Set ``sample_weight``, ``groups``, ``group``, ``n`` and ``n_groups``; return the row weights."""
        self.sample_weight = w = _row_weights(sample_weight, n)
        grp = as_groups(sensitive, n)
        self.groups, self.group = grp.labels, grp.codes.astype(np.int64)
        self.n = n
        self.n_groups = int(self.groups.size)
        return w

    def _group_totals(self) -> NDArray[np.float64]:
        """Total row weight of each group, refusing a group without positive weight."""
        counts: NDArray[np.float64] = np.bincount(self.group, weights=self.sample_weight,
                                                  minlength=self.n_groups).astype(float)
        if np.any(counts <= 0):
            raise DataValidationError(f"group(s) {list(self.groups[counts <= 0])} have zero total "
                                      "sample weight; give them positive weight or drop the group.")
        return counts
