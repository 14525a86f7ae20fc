r"""Learner problems: what a constraint moment asks the learner to solve at multipliers :math:`\lambda`.

A moment declares the problem class it produces (its ``problem`` attribute) and builds one
instance per game round with ``moment.learner_problem(lam)``; an oracle declares the classes it
can solve (its ``problems`` attribute). Minimising :math:`L(h, \lambda)` over ``h`` is:

:class:`CostTable`
    cost-sensitive classification on augmented rows ``(i, z)`` with costs
    :math:`c_\lambda(\tilde y_i, a_i, z)` (statistical parity of a real-valued predictor, Eq. 12
    of Agarwal, Dudík & Wu 2019);
:class:`SampleWeights`
    one weighted risk minimisation of the task loss with weights :math:`W_i` (bounded group loss);
:class:`ExampleCosts`
    weighted binary classification: :math:`c_i` is the cost of predicting 1 rather than 0, so the
    learner fits labels :math:`1\{c_i<0\}` with weights :math:`|c_i|` (classification moments,
    Agarwal et al. 2018).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class LearnerProblem:
    """Base class of the learner problems."""


@dataclass
class CostTable(LearnerProblem):
    """Costs ``w_i table[ycode[i], group[i], z]`` of predicting at threshold cell ``z``.

    ``table`` has shape ``(|Y~|, |A|, N)``; ``weights`` are the rows' sample weights (mean 1) or
    ``None``. A positive row weight scales all of a row's costs, so it leaves the row's minimising
    cell unchanged and enters the learner's fit as a sample weight.
    """

    table: np.ndarray
    ycode: np.ndarray
    group: np.ndarray
    weights: np.ndarray | None = None

    def row_costs(self) -> np.ndarray:
        """Costs per training row and threshold, shape ``(n, N)``."""
        C = self.table[self.ycode, self.group, :]
        return C if self.weights is None else self.weights[:, None] * C


@dataclass
class SampleWeights(LearnerProblem):
    """Fit the targets with per-example weights ``weights`` (non-negative)."""

    weights: np.ndarray


@dataclass
class ExampleCosts(LearnerProblem):
    """Per-example cost ``costs[i]`` of predicting 1 rather than 0."""

    costs: np.ndarray

    def labels(self) -> np.ndarray:
        """The cheaper label of every example, ``1{c_i < 0}``."""
        return (self.costs < 0).astype(int)

    def weights(self) -> np.ndarray:
        """``|c_i|`` rescaled to sum to ``n``.

        The Lagrangian fixes weights only up to a positive factor, but a regularised learner
        (``LogisticRegression(C=1)``) is not scale-invariant: with weights summing to about 1 its
        penalty dominates and it predicts one class. Summing to ``n`` puts the penalty at the
        strength it has on unweighted data.
        """
        w = np.abs(self.costs)
        total = w.sum()
        out: np.ndarray = w * (w.size / total) if total > 0 else w
        return out
