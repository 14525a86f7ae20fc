"""The one vocabulary of fairness criteria: canonical names, their aliases, and what each compares.

Every place that takes a criterion by name (reduction moments, threshold debiasing, fair
log-loss, the score-atom LP, the constraint blocks, model cards) resolves it here, so
``"statistical_parity"`` and ``"demographic_parity"`` are one criterion everywhere and an unknown
name gets the same message, listing the names the caller accepts and their aliases.

A **rate criterion** bounds, across groups ``g``, the differences of conditional rates
``P(ŷ = k | Y = j, A = g)``. Its entry declares *which* rates through ``given`` (what the rate is
conditioned on besides the group), and :meth:`Criterion.events` spells them out for any set of
classes as :class:`Event` pairs ``(given, predicted)`` = ``(j, k)``, ``j = None`` meaning all rows:

============ ============================== ==============================================
``given``    rates compared                 criteria
============ ============================== ==============================================
``"all"``    ``P(ŷ=k | A=g)``               demographic parity
``"same"``   ``P(ŷ=k | Y=k, A=g)``          equal opportunity (per-class recall)
``"each"``   ``P(ŷ=k | Y=j, A=g)``, all j   equalized odds (the whole confusion matrix)
============ ============================== ==============================================

For a binary problem with a favourable class (``positive=1``) only the events predicting it are
kept: ``P(ŷ=0 | E) = 1 - P(ŷ=1 | E)``, so parity of the other class's rate on the same event
adds nothing, and equal opportunity is by convention about the favourable outcome. That gives
the familiar forms: selection-rate parity, true-positive-rate parity, and TPR plus FPR parity.
Every method derives its rows (and the label cells it needs observed in every group) from these
events, so a new rate criterion is one entry in :data:`CRITERIA`.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from fairopt.errors import ConfigError

__all__ = ["CRITERIA", "Criterion", "Event", "accepted_names", "canonical", "criterion", "resolve"]

Given = Literal["all", "same", "each"]


class Event(NamedTuple):
    """One compared rate ``P(ŷ = predicted | Y = given, A = g)`` (``given=None``: all rows).

    A plain ``(given, predicted)`` tuple, so ``Event(None, 1) == (None, 1)``.

    Examples
    --------
    >>> Event(1, 1), str(Event(None, "b"))
    (Event(given=1, predicted=1), "P(ŷ='b' | A)")
    """

    given: Hashable | None
    predicted: Hashable

    def __str__(self) -> str:
        cond = "" if self.given is None else f"Y={self.given!r}, "
        return f"P(ŷ={self.predicted!r} | {cond}A)"


@dataclass(frozen=True)
class Criterion:
    """One fairness criterion.

    Attributes
    ----------
    name : str
        Canonical name (what results and fitted attributes report).
    description : str
        One line for messages and docs.
    given : {"all", "same", "each"} or None
        For a rate criterion, what the compared rates ``P(ŷ=k | ..., A=g)`` are conditioned on
        besides the group: nothing (``"all"``), the true class being the predicted one
        (``"same"``), or every true class in turn (``"each"``); ``None`` for criteria that are not
        rate comparisons (see :meth:`events`).
    aliases : tuple of str
        Other names accepted for it.

    Examples
    --------
    >>> criterion("statistical_parity").name
    'demographic_parity'
    >>> criterion("equal_opportunity").events(3)
    (Event(given=0, predicted=0), Event(given=1, predicted=1), Event(given=2, predicted=2))
    """

    name: str
    description: str
    given: Given | None
    aliases: tuple[str, ...] = ()

    @property
    def is_rate(self) -> bool:
        """Whether the criterion compares conditional rates of the decision (has :meth:`events`).

        Examples
        --------
        >>> criterion("covariance").is_rate, criterion("equalized_odds").is_rate
        (False, True)
        """
        return self.given is not None

    @property
    def needs_labels(self) -> bool:
        """Whether the compared rates condition on the true label (so fitting needs ``y``).

        Examples
        --------
        >>> criterion("demographic_parity").needs_labels, criterion("equal_opportunity").needs_labels
        (False, True)
        """
        return self.given in ("same", "each")

    def events(self, classes: int | Sequence[Hashable], positive: Hashable | None = None) -> tuple[Event, ...]:
        """The rates this criterion equalizes across groups, as ``(given, predicted)`` events.

        Parameters
        ----------
        classes : int or sequence
            The classes: ``K`` means ``0, ..., K-1``; a sequence gives the labels (its order is
            the order of the events).
        positive : label, optional
            Keep only the events predicting this class (the binary reduction: with two classes
            the other class's rate is one minus this one's on the same event).

        Returns
        -------
        tuple of Event
            ``given`` is the true class the rate conditions on (``None``: every row),
            ``predicted`` the decided class; ordered by ``given`` then ``predicted``, each in the
            order of ``classes``. The rows of a fairness constraint: for every event ``e`` and
            group ``g``, ``|P_e(g) - P_e| <= eps`` (or the difference form between groups).

        Raises
        ------
        ConfigError
            The criterion is not a rate criterion, ``positive`` is not one of ``classes``, or
            there are fewer than two classes.

        Examples
        --------
        >>> criterion("demographic_parity").events(2)
        (Event(given=None, predicted=0), Event(given=None, predicted=1))
        >>> criterion("equal_opportunity").events(2, positive=1)    # TPR parity
        (Event(given=1, predicted=1),)
        >>> criterion("equalized_odds").events((1, 0), positive=1)  # TPR and FPR parity
        (Event(given=1, predicted=1), Event(given=0, predicted=1))
        >>> len(criterion("equalized_odds").events(3))
        9
        """
        if self.given is None:
            raise ConfigError(f"criterion {self.name!r} ({self.description}) compares no rates of the decision; "
                              f"rate criteria: {', '.join(c.name for c in CRITERIA.values() if c.is_rate)}.")
        labels = tuple(range(classes)) if isinstance(classes, int) else tuple(classes)
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise ConfigError(f"criterion {self.name!r}: give at least two distinct classes, got {classes!r}.")
        if positive is not None and positive not in labels:
            raise ConfigError(f"criterion {self.name!r}: positive={positive!r} is not one of the classes {labels}.")
        pairs: list[tuple[Hashable | None, Hashable]]
        if self.given == "all":
            pairs = [(None, k) for k in labels]
        elif self.given == "same":
            pairs = [(k, k) for k in labels]
        else:
            pairs = [(j, k) for j in labels for k in labels]
        return tuple(Event(j, k) for j, k in pairs if positive is None or k == positive)

    @property
    def conditions(self) -> tuple[int, ...] | None:
        """The binary form: label values (1 favourable, then 0) conditioning the compared rates of
        ``ŷ = 1`` (``()``: all rows); ``None`` for criteria that are not rate comparisons.

        Examples
        --------
        >>> criterion("equalized_odds").conditions, criterion("demographic_parity").conditions
        ((1, 0), ())
        """
        if self.given is None:
            return None
        return tuple(e.given for e in self.events((1, 0), positive=1) if e.given is not None)  # type: ignore[misc]

    def label_cells(self, classes: int | Sequence[Hashable], positive: Hashable | None = None) -> tuple[Hashable, ...]:
        """True classes that every group must contain for the compared rates to be defined (the
        ``given`` of the events, in order, without repeats).

        Examples
        --------
        >>> criterion("equalized_odds").label_cells((1, 0), positive=1)
        (1, 0)
        >>> criterion("demographic_parity").label_cells(2)
        ()
        """
        return tuple(dict.fromkeys(e.given for e in self.events(classes, positive) if e.given is not None))


#: every criterion fairopt knows, by canonical name
CRITERIA: dict[str, Criterion] = {c.name: c for c in (
    Criterion("demographic_parity", "equal rate of every decision in every group", "all",
              ("statistical_parity", "selection_rate_parity")),
    Criterion("equal_opportunity", "equal true-positive rate (per-class recall) in every group", "same",
              ("true_positive_rate_parity",)),
    Criterion("equalized_odds", "equal rate of every decision among every label in every group", "each"),
    Criterion("covariance", "bounded covariance between decisions and a binary group", None),
    Criterion("bounded_group_loss", "every group's loss below a bound", None),
)}
_NAMES = {**{c.name: c.name for c in CRITERIA.values()},
          **{a: c.name for c in CRITERIA.values() for a in c.aliases}}


def canonical(name: str) -> str | None:
    """The canonical name of criterion ``name`` (an alias or itself), or None if unknown.

    Examples
    --------
    >>> canonical("true_positive_rate_parity"), canonical("fairness")
    ('equal_opportunity', None)
    """
    return _NAMES.get(name) if isinstance(name, str) else None


def accepted_names(allowed: Iterable[str]) -> set[str]:
    """Every name (canonical or alias) that :func:`resolve` accepts for the criteria ``allowed``;
    for declaring a parameter's options.

    Examples
    --------
    >>> sorted(accepted_names(("equal_opportunity",)))
    ['equal_opportunity', 'true_positive_rate_parity']
    """
    allowed = tuple(allowed)
    wanted = {canonical(a) or a for a in allowed}
    return {n for n, c in _NAMES.items() if c in wanted} | set(allowed)


def criterion(name: str) -> Criterion:
    """The :class:`Criterion` called ``name`` (or one of its aliases); :class:`ConfigError` if
    unknown.

    Examples
    --------
    >>> criterion("equalized_odds").events(2, positive=1)
    (Event(given=0, predicted=1), Event(given=1, predicted=1))
    """
    return CRITERIA[resolve(name)]


def resolve(name: str, allowed: Iterable[str] | None = None, what: str = "constraint") -> str:
    """Canonical name of criterion ``name``, checked against ``allowed`` (canonical names or
    aliases; default every criterion).

    Raises
    ------
    ConfigError
        ``name`` is no criterion, or not one the caller accepts; the message names ``what`` and
        lists the accepted names with their aliases.

    Examples
    --------
    >>> resolve("statistical_parity", allowed=("demographic_parity", "equalized_odds"))
    'demographic_parity'
    """
    accepted = [canonical(a) or a for a in (CRITERIA if allowed is None else allowed)]
    found = canonical(name)
    if found is None or found not in accepted:
        listed = ", ".join(repr(a) + (f" (or {', '.join(map(repr, CRITERIA[a].aliases))})"
                                      if a in CRITERIA and CRITERIA[a].aliases else "")
                           for a in accepted)
        raise ConfigError(f"{what}={name!r} is not a criterion this accepts; use one of {listed}.")
    return found
