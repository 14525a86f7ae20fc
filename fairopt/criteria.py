"""The one vocabulary of fairness criteria: canonical names, their aliases, and what each compares.

Every place that takes a criterion by name (reduction moments, threshold debiasing, fair
log-loss, the score-atom LP, model cards) resolves it here, so ``"statistical_parity"`` and
``"demographic_parity"`` are one criterion everywhere and an unknown name gets the same
message, listing the names the caller accepts and their aliases.

A rate criterion compares the mean decision across groups within the rows whose label is in
``conditions``: ``()`` compares all rows (demographic parity), ``(1,)`` the positives (equal
opportunity), ``(1, 0)`` positives and negatives separately (equalized odds).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fairopt.errors import ConfigError

__all__ = ["CRITERIA", "Criterion", "accepted_names", "canonical", "criterion", "resolve"]


@dataclass(frozen=True)
class Criterion:
    """One fairness criterion.

    Attributes
    ----------
    name : str
        Canonical name (what results and fitted attributes report).
    description : str
        One line for messages and docs.
    conditions : tuple of int or None
        For a rate criterion, the label values that condition the compared rates (``()``: all
        rows); ``None`` for criteria that are not rate comparisons.
    aliases : tuple of str
        Other names accepted for it.

    Examples
    --------
    >>> criterion("statistical_parity").name
    'demographic_parity'
    """

    name: str
    description: str
    conditions: tuple[int, ...] | None
    aliases: tuple[str, ...] = ()


#: every criterion fairopt knows, by canonical name
CRITERIA: dict[str, Criterion] = {c.name: c for c in (
    Criterion("demographic_parity", "equal rate of positive decisions in every group", (),
              ("statistical_parity", "selection_rate_parity")),
    Criterion("equal_opportunity", "equal true-positive rate in every group", (1,),
              ("true_positive_rate_parity",)),
    Criterion("equalized_odds", "equal true- and false-positive rates in every group", (1, 0)),
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
    wanted = {canonical(a) or a for a in allowed}
    return {n for n, c in _NAMES.items() if c in wanted} | set(allowed)


def criterion(name: str) -> Criterion:
    """The :class:`Criterion` called ``name`` (or one of its aliases); :class:`ConfigError` if
    unknown.

    Examples
    --------
    >>> criterion("equalized_odds").conditions
    (1, 0)
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
