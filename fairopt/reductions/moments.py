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
from numpy.typing import ArrayLike

from fairopt._docstrings import fill_doc
from fairopt.criteria import resolve
from fairopt.reductions._classification_moments import DemographicParity as DemographicParity
from fairopt.reductions._classification_moments import EqualizedOdds as EqualizedOdds
from fairopt.reductions._classification_moments import EqualOpportunity as EqualOpportunity
from fairopt.reductions._classification_moments import _ClassificationMoment as _ClassificationMoment
from fairopt.reductions.discretization import (
    Grid,
    cost_table,
    label_cover,
    prefix_table,
    snap_labels,
    survival_by_group,
)
from fairopt.reductions.losses import Loss, get_loss
from fairopt.reductions.moment_base import Moment as Moment
from fairopt.reductions.moment_base import _wmean
from fairopt.reductions.moment_base import per_group as per_group
from fairopt.reductions.problems import CostTable, SampleWeights

if TYPE_CHECKING:
    from fairopt.validation import Groups


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

    @fill_doc
    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> StatisticalParity:
        """Record the labels, groups and weights the moment's rows are computed on.

        {moment_fit_unit}
        """
        y = np.asarray(y, dtype=float)
        w = self._fit_groups(y.size, sensitive, sample_weight)
        self.loss_ = get_loss(self.loss)
        self.grid = Grid(self.grid_size)
        self.counts = self._group_totals()
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
        out: np.ndarray = surv - self.p @ surv
        return out

    @fill_doc
    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        {moment_stats_unit}
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
        out: np.ndarray = (lam[:half] - lam[half:]).reshape(self.n_groups, self.grid.size)
        return out

    def cost_sensitive_table(self, lam: np.ndarray) -> np.ndarray:
        r"""Eq. (12): :math:`c_\lambda(\tilde y, a, z) = c(\tilde y,z) + N\lambda_{a,z}/p_a - N\sum_{a'}\lambda_{a',z}`.

        Shape ``(|Y~|, |A|, N)``; the cost of augmented row ``(i, z)`` is
        ``table[ycode[i], group[i], z]``.
        """
        lam_s = self.signed_lambda(lam)
        N = self.grid.size
        shift = N * lam_s / self.p[:, None] - N * lam_s.sum(axis=0)[None, :]
        out: np.ndarray = self.c[:, None, :] + shift[None, :, :]
        return out

    def learner_problem(self, lam: np.ndarray) -> CostTable:
        return CostTable(self.cost_sensitive_table(lam), self.ycode, self.group, self.sample_weight)

    def row_names(self) -> list[str]:
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

    @fill_doc
    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> BoundedGroupLoss:
        """Record the labels, groups and weights the moment's rows are computed on.

        {moment_fit_unit}
        """
        self.y = np.asarray(y, dtype=float)
        self._fit_groups(self.y.size, sensitive, sample_weight)
        self.loss_: Loss = get_loss(self.loss)
        self.counts = self._group_totals()
        self.bound = per_group(self.bound_param, self.groups, "bound (zeta)")
        return self

    @fill_doc
    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        {moment_stats_unit}
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
        out: np.ndarray = W if self.sample_weight is None else self.sample_weight * W
        return out

    def learner_problem(self, lam: np.ndarray) -> SampleWeights:
        return SampleWeights(self.sample_weights(lam))

    def row_names(self) -> list[str]:
        return [f"bounded_group_loss[{a}]" for a in self.groups.tolist()]

#: moments by canonical criterion name (:mod:`fairopt.criteria` resolves aliases such as
#: ``statistical_parity``); regression's demographic parity is the thresholded statistical parity
CLASSIFICATION_MOMENTS = {resolve(m.name): m for m in (DemographicParity, EqualOpportunity, EqualizedOdds)}
REGRESSION_MOMENTS = {resolve(m.name): m for m in (StatisticalParity, BoundedGroupLoss)}
