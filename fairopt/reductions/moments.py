r"""Constraint moments for the exponentiated-gradient game.

A moment turns training predictions of one hypothesis into the game's sufficient statistics:
an objective value ``cost`` and a vector ``g`` of constraint values, with constraints written as
one-sided rows ``g_j <= b_j`` (two-sided constraints contribute a ``+`` and a ``-`` row). The
Lagrangian of hypothesis ``h`` at multipliers :math:`\lambda \ge 0` is

.. math:: L(h, \lambda) = \mathrm{cost}(h) + \lambda^\top (g(h) - b),

and is linear in the mixture weights of a randomized predictor. Each moment also declares the
learner problem it produces (``problem``, a class of :mod:`fairopt.reductions.problems`) and turns
:math:`\lambda` into an instance of it with :meth:`Moment.learner_problem`: a cost table for
statistical parity, per-example weights for bounded group loss, per-example costs for
classification. Oracles declare which problem classes they solve.

Moments (Agarwal, Dudík & Wu 2019 for regression; Agarwal et al. 2018 for classification):

* :class:`StatisticalParity` -- SP of a real-valued predictor on ``N`` thresholds (KS distance of
  each group's survival function to the pooled one).
* :class:`BoundedGroupLoss` -- per-group mean loss at most :math:`\zeta_a`.
* :class:`DemographicParity`, :class:`EqualOpportunity`, :class:`EqualizedOdds` -- for 0/1
  classifiers.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt.criteria import Event, canonical, criterion, resolve
from fairopt.errors import DataValidationError
from fairopt.reductions.discretization import (
    Grid,
    cost_table,
    label_cover,
    prefix_table,
    snap_labels,
    survival_by_group,
)
from fairopt.reductions.losses import Loss, get_loss
from fairopt.reductions.problems import CostTable, ExampleCosts, LearnerProblem, SampleWeights
from fairopt.validation import as_groups, check_weights

if TYPE_CHECKING:
    import pandas as pd

    from fairopt.validation import Groups


def _row_weights(sample_weight: ArrayLike | None, n: int) -> np.ndarray | None:
    r"""Sample weights rescaled to mean 1 (``None`` when unweighted, keeping the unweighted arithmetic).

    Every moment then works with the weighted empirical distribution: means become
    :math:`\frac1n\sum_i w_i(\cdot)` and group counts :math:`\sum_{i\in a} w_i`.
    """
    if sample_weight is None:
        return None
    w = check_weights(sample_weight, n)
    return w * (n / w.sum())


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
        return np.asarray(cost) + (np.asarray(g) - self.bound) @ np.asarray(lam)

    def row_names(self) -> list[str]:  # pragma: no cover - interface
        """Name of every constraint row, in row order.

        Returns
        -------
        list of str
            One name per row.
        """
        raise AttributeError("subclasses define row_names")

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:  # pragma: no cover - interface
        """Cost and constraint values ``(cost, g)`` of the training predictions ``pred``.

        Parameters
        ----------
        pred : array-like of shape (n_samples,)
            Predictions of one hypothesis on the rows the moment was fitted on.

        Returns
        -------
        cost : float
            The objective.
        g : ndarray of shape (n_rows,)
            The constraint values.
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

    def learner_problem(self, lam: np.ndarray) -> LearnerProblem:  # pragma: no cover - interface
        r"""The problem whose solution is :math:`\arg\min_h L(h, \lambda)`."""
        raise AttributeError("subclasses define learner_problem")

    def block_of_row(self, j: int) -> str:
        """Name of the constraint block containing row ``j`` (for error messages)."""
        return self.row_names()[j]


class StatisticalParity(Moment):
    r"""Statistical parity of a real-valued predictor, discretised on ``N`` thresholds.

    Rows :math:`\pm\hat\gamma_{a,z} \le \hat\varepsilon_a` with
    :math:`\hat\gamma_{a,z} = \hat P[f \ge z \mid A=a] - \hat P[f \ge z]`; the objective is
    :math:`\widehat{\mathrm{cost}}(h_f) = \hat{\mathbb E}[\ell_\alpha(Y,f(X)) - \ell(\underline Y,\alpha/2)]`
    (Lemma 1). Row order: all ``+`` rows (group-major, then threshold), then all ``-`` rows.

    Parameters
    ----------
    eps : float, sequence or dict
        Slack :math:`\hat\varepsilon_a` per group (scalar = same for all groups).
    grid_size : int, default=40
        ``N``.
    loss : str or Loss, default="square"

    Examples
    --------
    >>> import numpy as np
    >>> moment = StatisticalParity(eps=0.05, grid_size=4).fit(np.array([0.2, 0.8, 0.5, 0.1]),
    ...                                                       ["a", "a", "b", "b"])
    >>> moment.n_rows, moment.row_names()[0]
    (16, 'statistical_parity[a, z=0.25, +]')
    """

    problem = CostTable
    cost_range = 2.0
    eta_divisor = 8.0
    name = "statistical_parity"

    def __init__(self, eps: ArrayLike | dict[Any, float] = 0.05, grid_size: int = 40,
                 loss: str | Loss = "square") -> None:
        self.eps = eps
        self.grid_size = grid_size
        self.loss = loss

    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> StatisticalParity:
        """Record the labels, groups and weights the moment's rows are computed on.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels in ``[0, 1]``.
        sensitive : array-like of shape (n_samples,)
            Group labels (raw values or codes).
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative row weights, normalised to mean 1.

        Returns
        -------
        self
            The fitted moment.
        """
        y = np.asarray(y, dtype=float)
        self.sample_weight = w = _row_weights(sample_weight, y.size)
        self.loss_ = get_loss(self.loss)
        self.grid = Grid(self.grid_size)
        grp = as_groups(sensitive, y.size)
        self.groups, self.group = grp.labels, grp.codes.astype(np.int64)
        self.n = y.size
        self.n_groups = self.groups.size
        self.counts = np.bincount(self.group, weights=w, minlength=self.n_groups).astype(float)
        if np.any(self.counts <= 0):
            raise DataValidationError(f"group(s) {list(self.groups[self.counts <= 0])} have zero total "
                                      "sample weight; give them positive weight or drop the group.")
        self.p = self.counts / self.n
        self.cover = label_cover(y, self.grid.alpha)
        self.ycode = snap_labels(y, self.cover, self.grid.alpha)
        self.c = cost_table(self.loss_, self.cover, self.grid)           # (|Y~|, N)
        self.T = prefix_table(self.c)                                    # (|Y~|, N+1)
        self.offset = _wmean(self.loss_.value(self.cover[self.ycode], 0.5 * self.grid.alpha), w)
        self.eps_ = per_group(self.eps, self.groups, "eps")
        self.bound = np.concatenate([np.repeat(self.eps_, self.grid.size)] * 2)
        return self

    # ---- statistics of one hypothesis -------------------------------------------------------
    def gamma(self, pred: ArrayLike) -> np.ndarray:
        """:math:`\\hat\\gamma_{a,z}` for the rounded predictor, shape ``(|A|, N)``."""
        k = self.grid.index(pred)
        surv = survival_by_group(k, self.group, self.n_groups, self.grid.size, self.sample_weight)
        return surv - self.p @ surv

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        Parameters
        ----------
        pred : ndarray of shape (n_samples,)
            Predictions in ``[0, 1]``.

        Returns
        -------
        cost : float
            Mean loss.
        g : ndarray of shape (n_rows,)
            Value of every constraint row (compared with ``bound``).
        """
        k = self.grid.index(pred)
        cost = _wmean(self.T[self.ycode, k], self.sample_weight)
        surv = survival_by_group(k, self.group, self.n_groups, self.grid.size, self.sample_weight)
        gam = (surv - self.p @ surv).ravel()
        return cost, np.concatenate([gam, -gam])

    def loss_from_cost(self, cost: ArrayLike) -> np.ndarray:
        """Discretised loss :math:`\\widehat{\\mathrm{loss}}_\\alpha` from the game's cost (Lemma 1)."""
        return np.asarray(cost) + self.offset

    # ---- learner problem --------------------------------------------------------------------
    def signed_lambda(self, lam: np.ndarray) -> np.ndarray:
        """:math:`\\lambda_{a,z} = \\lambda^+_{a,z} - \\lambda^-_{a,z}`, shape ``(|A|, N)``."""
        lam = np.asarray(lam, dtype=float)
        half = self.n_groups * self.grid.size
        return (lam[:half] - lam[half:]).reshape(self.n_groups, self.grid.size)

    def cost_sensitive_table(self, lam: np.ndarray) -> np.ndarray:
        r"""Eq. (12): :math:`c_\lambda(\tilde y, a, z) = c(\tilde y,z) + N\lambda_{a,z}/p_a - N\sum_{a'}\lambda_{a',z}`.

        Shape ``(|Y~|, |A|, N)``; the cost of augmented row ``(i, z)`` is
        ``table[ycode[i], group[i], z]``.
        """
        lam_s = self.signed_lambda(lam)
        N = self.grid.size
        shift = N * lam_s / self.p[:, None] - N * lam_s.sum(axis=0)[None, :]
        return self.c[:, None, :] + shift[None, :, :]

    def learner_problem(self, lam: np.ndarray) -> CostTable:
        r"""The learner's problem at ``lam``, whose solution is :math:`\arg\min_h L(h, \lambda)`.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers.

        Returns
        -------
        LearnerProblem
            Costs or weights the oracle minimises.
        """
        return CostTable(self.cost_sensitive_table(lam), self.ycode, self.group, self.sample_weight)

    def row_names(self) -> list[str]:
        """Name of every constraint row, in row order.

        Returns
        -------
        list of str
            One name per row.
        """
        names = [f"statistical_parity[{a}, z={z:.4g}, {s}]"
                 for s in ("+", "-") for a in self.groups.tolist() for z in self.grid.grid]
        return names

    def block_of_row(self, j: int) -> str:
        """Name of the group block containing row ``j`` (for error messages).

        Parameters
        ----------
        j : int
            Row index.

        Returns
        -------
        str
            ``statistical_parity[<group>]``.
        """
        a = (j % (self.n_groups * self.grid.size)) // self.grid.size
        return f"statistical_parity[{self.groups[a]}]"


class BoundedGroupLoss(Moment):
    r"""Bounded group loss: rows :math:`\hat{\mathbb E}[\ell(Y,f(X)) \mid A=a] \le \hat\zeta_a`.

    The objective is the overall mean loss. Best responses are one weighted risk minimisation
    with :math:`W_i = 1/n + \lambda_{A_i}/n_{A_i}` (Sec. 5).

    Parameters
    ----------
    bound : float, sequence or dict
        :math:`\hat\zeta_a` per group.
    loss : str or Loss, default="square"

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0.2, 0.8, 0.5, 0.1])
    >>> moment = BoundedGroupLoss(bound=0.1).fit(y, ["a", "a", "b", "b"])
    >>> moment.row_names()
    ['bounded_group_loss[a]', 'bounded_group_loss[b]']
    >>> cost, group_losses = moment.stats(y)          # a perfect predictor
    >>> cost, group_losses.tolist()
    (0.0, [0.0, 0.0])
    """

    problem = SampleWeights
    cost_range = 1.0
    eta_divisor = 2.0
    may_be_infeasible = True
    name = "bounded_group_loss"

    def __init__(self, bound: ArrayLike | dict[Any, float] = 0.1, loss: str | Loss = "square") -> None:
        self.bound_param = bound
        self.loss = loss

    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> BoundedGroupLoss:
        """Record the labels, groups and weights the moment's rows are computed on.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Labels in ``[0, 1]``.
        sensitive : array-like of shape (n_samples,)
            Group labels (raw values or codes).
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative row weights, normalised to mean 1.

        Returns
        -------
        self
            The fitted moment.
        """
        self.y = np.asarray(y, dtype=float)
        self.sample_weight = w = _row_weights(sample_weight, self.y.size)
        self.loss_: Loss = get_loss(self.loss)
        grp = as_groups(sensitive, self.y.size)
        self.groups, self.group = grp.labels, grp.codes.astype(np.int64)
        self.n = self.y.size
        self.n_groups = self.groups.size
        self.counts = np.bincount(self.group, weights=w, minlength=self.n_groups).astype(float)
        if np.any(self.counts <= 0):
            raise DataValidationError(f"group(s) {list(self.groups[self.counts <= 0])} have zero total "
                                      "sample weight; give them positive weight or drop the group.")
        self.bound = per_group(self.bound_param, self.groups, "bound (zeta)")
        return self

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        Parameters
        ----------
        pred : ndarray of shape (n_samples,)
            Predictions in ``[0, 1]``.

        Returns
        -------
        cost : float
            Mean loss.
        g : ndarray of shape (n_rows,)
            Value of every constraint row (compared with ``bound``).
        """
        losses = self.loss_.value(self.y, pred)
        if self.sample_weight is not None:
            losses = self.sample_weight * losses
        g = np.bincount(self.group, weights=losses, minlength=self.n_groups) / self.counts
        return float(losses.mean()), g

    def sample_weights(self, lam: np.ndarray) -> np.ndarray:
        """:math:`W_i = w_i(1/n + \\lambda_{A_i}/n_{A_i})` (``w_i`` = 1 without sample weights)."""
        lam = np.asarray(lam, dtype=float)
        W = 1.0 / self.n + (lam / self.counts)[self.group]
        return W if self.sample_weight is None else self.sample_weight * W

    def learner_problem(self, lam: np.ndarray) -> SampleWeights:
        r"""The learner's problem at ``lam``, whose solution is :math:`\arg\min_h L(h, \lambda)`.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers.

        Returns
        -------
        LearnerProblem
            Costs or weights the oracle minimises.
        """
        return SampleWeights(self.sample_weights(lam))

    def row_names(self) -> list[str]:
        """Name of every constraint row, in row order.

        Returns
        -------
        list of str
            One name per row.
        """
        return [f"bounded_group_loss[{a}]" for a in self.groups.tolist()]


class _ClassificationMoment(Moment):
    r"""Conditional-rate parity for 0/1 classifiers (Agarwal et al. 2018).

    Rows :math:`\pm\gamma_{a,e} \le \varepsilon_a` with
    :math:`\gamma_{a,e} = \hat{\mathbb E}[h \mid A=a, E=e] - \hat{\mathbb E}[h \mid E=e]`; the
    objective is the classification error. The events ``E`` are the criterion's (``name``) in
    :mod:`fairopt.criteria`, in their binary form (rates of :math:`h=1`, labels 0/1): a subclass
    only names its criterion.
    """

    problem = ExampleCosts
    cost_range = 1.0
    eta_divisor = 8.0
    events_: tuple[str, ...] = ()

    def __init__(self, eps: ArrayLike | dict[Any, float] = 0.05) -> None:
        self.eps = eps

    @staticmethod
    def _binary_events(name: str) -> tuple[Event, ...]:
        return criterion(name).events((0, 1), positive=1)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "events_" in cls.__dict__ or canonical(cls.name) is None:
            return   # a subclass defining its own events (and ``_event_codes``)
        # the row names' event part ("all", "y=1", ...), from the registry entry
        cls.events_ = tuple("all" if e.given is None else f"y={e.given}" for e in cls._binary_events(cls.name))

    def _event_codes(self, y: np.ndarray) -> np.ndarray:
        """Index of each row's event in ``events_`` (-1: in none); a loop over events, not rows."""
        codes = np.full(y.size, -1, dtype=np.int64)
        for i, e in enumerate(self._binary_events(self.name)):
            codes[(y == e.given) if e.given is not None else slice(None)] = i
        return codes

    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> _ClassificationMoment:
        """Record the labels, groups and weights the moment's rows are computed on.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Binary labels in ``{0, 1}``.
        sensitive : array-like of shape (n_samples,)
            Group labels (raw values or codes).
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative row weights, normalised to mean 1.

        Returns
        -------
        self
            The fitted moment.

        Raises
        ------
        DataValidationError
            If a label is not 0 or 1.
        """
        self.y = np.asarray(y, dtype=float)
        self.sample_weight = w = _row_weights(sample_weight, self.y.size)
        if not np.all(np.isin(self.y, (0.0, 1.0))):
            raise DataValidationError(f"{self.name} needs binary labels in {{0, 1}}.")
        grp = as_groups(sensitive, self.y.size)
        self.groups, self.group = grp.labels, grp.codes.astype(np.int64)
        self.n = self.y.size
        self.n_groups = self.groups.size
        self.event = self._event_codes(self.y)         # -1 = no event
        n_events = len(self.events_)
        self.n_events = n_events
        has = self.event >= 0
        flat = self.group[has] * n_events + self.event[has]
        self.n_ae = np.bincount(flat, weights=None if w is None else w[has],
                                minlength=self.n_groups * n_events).reshape(
            self.n_groups, n_events).astype(float)
        self.n_e = self.n_ae.sum(axis=0)
        empty = np.argwhere(self.n_ae <= 0)
        if empty.size:   # a rate conditioned on an event the group never has is undefined, not 0
            names = self.groups.tolist()
            bad = ", ".join(f"group {names[a]!r} has no (positively weighted) row"
                            + ("" if self.events_[e] == "all" else f" with {self.events_[e]}") for a, e in empty[:5])
            raise DataValidationError(f"{self.name}: {bad}, so its conditional rate is undefined; give every group "
                                      "rows of every event (both labels for equalized odds, y=1 for equal "
                                      "opportunity), or use another constraint.")
        eps = per_group(self.eps, self.groups, "eps")
        self.bound = np.concatenate([np.repeat(eps, n_events)] * 2)
        return self

    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        Parameters
        ----------
        pred : ndarray of shape (n_samples,)
            0/1 predictions (or probabilities of 1).

        Returns
        -------
        cost : float
            Mean loss.
        g : ndarray of shape (n_rows,)
            Value of every constraint row (compared with ``bound``).
        """
        h = np.asarray(pred, dtype=float)
        w = self.sample_weight
        err = _wmean(np.abs(h - self.y), w)
        has = self.event >= 0
        flat = self.group[has] * self.n_events + self.event[has]
        hw = h[has] if w is None else (w * h)[has]
        s_ae = np.bincount(flat, weights=hw, minlength=self.n_groups * self.n_events)
        s_ae = s_ae.reshape(self.n_groups, self.n_events)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate_ae = np.where(self.n_ae > 0, s_ae / np.maximum(self.n_ae, 1), 0.0)
            rate_e = s_ae.sum(axis=0) / np.maximum(self.n_e, 1)
        gam = np.where(self.n_ae > 0, rate_ae - rate_e[None, :], 0.0).ravel()
        return err, np.concatenate([gam, -gam])

    def example_costs(self, lam: np.ndarray) -> np.ndarray:
        """Per-example cost of predicting 1 rather than 0 in :math:`L(h, \\lambda)`."""
        lam = np.asarray(lam, dtype=float)
        half = self.n_groups * self.n_events
        lam_s = (lam[:half] - lam[half:]).reshape(self.n_groups, self.n_events)
        per_ae = np.where(self.n_ae > 0, lam_s / np.maximum(self.n_ae, 1), 0.0) \
            - (lam_s * (self.n_ae > 0)).sum(axis=0)[None, :] / np.maximum(self.n_e, 1)[None, :]
        c = (1.0 - 2.0 * self.y) / self.n
        has = self.event >= 0
        c[has] += per_ae[self.group[has], self.event[has]]
        return c if self.sample_weight is None else self.sample_weight * c

    def learner_problem(self, lam: np.ndarray) -> ExampleCosts:
        r"""The learner's problem at ``lam``, whose solution is :math:`\arg\min_h L(h, \lambda)`.

        Parameters
        ----------
        lam : ndarray of shape (n_rows,)
            Nonnegative multipliers.

        Returns
        -------
        LearnerProblem
            Costs or weights the oracle minimises.
        """
        return ExampleCosts(self.example_costs(lam))

    def row_names(self) -> list[str]:
        """Name of every constraint row, in row order.

        Returns
        -------
        list of str
            One name per row.
        """
        return [f"{self.name}[{a}, {e}, {s}]" for s in ("+", "-")
                for a in self.groups.tolist() for e in self.events_]


class DemographicParity(_ClassificationMoment):
    """Equal selection rates :math:`P[h=1 \\mid A=a]` across groups.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairopt.reductions import CostSensitiveOracle, ExponentiatedGradient
    >>> rng = np.random.default_rng(0)
    >>> group = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(size=400), group + rng.normal(size=400)])
    >>> y = (X.sum(axis=1) > 0.5).astype(int)
    >>> game = ExponentiatedGradient(DemographicParity(eps=0.02),
    ...                              CostSensitiveOracle(LogisticRegression()), max_iter=30)
    >>> result = game.run(X, y, group)
    >>> bool(result.max_violation <= 1e-6)
    True
    """

    name = "demographic_parity"


class EqualOpportunity(_ClassificationMoment):
    """Equal true-positive rates :math:`P[h=1 \\mid A=a, Y=1]`.

    Examples
    --------
    >>> import numpy as np
    >>> moment = EqualOpportunity(eps=0.05).fit(np.array([1, 0, 1, 0]), ["a", "a", "b", "b"])
    >>> moment.row_names()[:2]
    ['equal_opportunity[a, y=1, +]', 'equal_opportunity[b, y=1, +]']
    """

    name = "equal_opportunity"


class EqualizedOdds(_ClassificationMoment):
    """Equal true- and false-positive rates :math:`P[h=1 \\mid A=a, Y=y]`, ``y`` in {0, 1}.

    Examples
    --------
    >>> import numpy as np
    >>> moment = EqualizedOdds(eps=0.05).fit(np.array([1, 0, 1, 0]), ["a", "a", "b", "b"])
    >>> moment.n_rows
    8
    """

    name = "equalized_odds"


#: moments by canonical criterion name (:mod:`fairopt.criteria` resolves aliases such as
#: ``statistical_parity``); regression's demographic parity is the thresholded statistical parity
CLASSIFICATION_MOMENTS = {resolve(m.name): m for m in (DemographicParity, EqualOpportunity, EqualizedOdds)}
REGRESSION_MOMENTS = {resolve(m.name): m for m in (StatisticalParity, BoundedGroupLoss)}
