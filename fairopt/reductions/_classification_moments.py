"""Conditional-rate parity moments for 0/1 classifiers; re-exported by :mod:`fairopt.reductions.moments`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from fairopt._docstrings import fill_doc, register
from fairopt.criteria import Event, canonical, criterion
from fairopt.errors import DataValidationError
from fairopt.reductions.moment_base import Moment, _wmean, per_group
from fairopt.reductions.problems import ExampleCosts

if TYPE_CHECKING:
    from fairopt.validation import Groups


#: the data of the examples below: two groups, each with both labels
register("example_binary_labels", """>>> import numpy as np
>>> y, groups = np.array([1, 0, 1, 0]), ["a", "a", "b", "b"]""")


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

    @fill_doc
    def fit(self, y: ArrayLike, sensitive: ArrayLike | Groups,
            sample_weight: ArrayLike | None = None) -> _ClassificationMoment:
        """Record the labels, groups and weights the moment's rows are computed on.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Binary labels in ``{0, 1}``.
        {moment_fit_groups}

        Raises
        ------
        DataValidationError
            If a label is not 0 or 1.
        """
        self.y = np.asarray(y, dtype=float)
        if not np.all(np.isin(self.y, (0.0, 1.0))):
            raise DataValidationError(f"{self.name} needs binary labels in {{0, 1}}.")
        w = self._fit_groups(self.y.size, sensitive, sample_weight)
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

    @fill_doc
    def stats(self, pred: ArrayLike) -> tuple[float, np.ndarray]:
        """Cost and constraint values of one predictor.

        Parameters
        ----------
        pred : ndarray of shape (n_samples,)
            0/1 predictions (or probabilities of 1).

        {moment_stats_returns}
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
        return ExampleCosts(self.example_costs(lam))

    def row_names(self) -> list[str]:
        return [f"{self.name}[{a}, {e}, {s}]" for s in ("+", "-")
                for a in self.groups.tolist() for e in self.events_]


@fill_doc
class DemographicParity(_ClassificationMoment):
    """Equal selection rates :math:`P[h=1 \\mid A=a]` across groups.

    Examples
    --------
    {example_binary_labels}
    >>> moment = DemographicParity(eps={"a": 0.05, "b": 0.1}).fit(y, groups)
    >>> moment.bound.tolist()                  # each group's eps on its + and - rows
    [0.05, 0.1, 0.05, 0.1]
    """

    name = "demographic_parity"


@fill_doc
class EqualOpportunity(_ClassificationMoment):
    """Equal true-positive rates :math:`P[h=1 \\mid A=a, Y=1]`.

    Examples
    --------
    {example_binary_labels}
    >>> moment = EqualOpportunity(eps=0.05).fit(y, groups)
    >>> moment.row_names()[:2]
    ['equal_opportunity[a, y=1, +]', 'equal_opportunity[b, y=1, +]']
    """

    name = "equal_opportunity"


@fill_doc
class EqualizedOdds(_ClassificationMoment):
    """Equal true- and false-positive rates :math:`P[h=1 \\mid A=a, Y=y]`, ``y`` in {0, 1}.

    Examples
    --------
    {example_binary_labels}
    >>> moment = EqualizedOdds(eps=0.05).fit(y, groups)
    >>> moment.n_rows
    8
    """

    name = "equalized_odds"
