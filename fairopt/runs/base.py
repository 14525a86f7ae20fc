"""Shared types of the model-card runners."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Protocol, runtime_checkable

from pydantic import AfterValidator, BeforeValidator

from fairopt._progress import Progress, no_progress

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike
    from pydantic import BaseModel

    from fairopt.modeling import SolverSpec

__all__ = ["Progress", "RunOutput", "Runner", "Table", "no_progress", "split_rows"]


def _one_or_many(value: object) -> object:
    return [value] if isinstance(value, str) else value


def _three_fractions(value: list[float]) -> list[float]:
    if len(value) != 3 or min(value) <= 0 or abs(sum(value) - 1) > 1e-9:
        raise ValueError("splits must be three positive fractions (train, post, test) summing to 1")
    return value


#: a card field naming one column or several (``sensitive = "sex"`` is ``["sex"]``)
Columns = Annotated[list[str], BeforeValidator(_one_or_many)]
#: a card's train / post-processing / test fractions
ThreeSplits = Annotated[list[float], AfterValidator(_three_fractions)]


@dataclass
class Table:
    """A small table printed by the CLI (and stored in ``result.json`` under ``tables``).

    Examples
    --------
    >>> Table("rates", ["group", "rate"], [["a", 0.5], ["b", 0.4]]).columns
    ['group', 'rate']
    """

    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class RunOutput:
    """What a runner returns to the CLI.

    ``metrics`` must be a flat ``{name: float}`` mapping (durations named ``*_seconds`` are
    moved to ``timings``); ``status`` is a :class:`fairopt.modeling.Status` value string
    (``"optimal"``, ``"time_limit"``, ...); ``parameters`` records values the run resolved from
    defaults (e.g. the data set's favourable label), written over the card's parameters.

    Examples
    --------
    >>> out = RunOutput(backend="highs", solver="highs", status="optimal",
    ...                 metrics={"tv_distance": 0.03308}, build_seconds=0.01, solve_seconds=0.01)
    >>> out.status, out.metrics["tv_distance"]
    ('optimal', 0.03308)
    """

    backend: str
    solver: str
    status: str
    metrics: dict[str, float]
    build_seconds: float
    solve_seconds: float
    tables: list[Table] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FrontierSpec:
    """Which metrics a sweep's frontier plots (``fairopt frontier``).

    ``objective`` is the accuracy or loss (``objective_sense`` says whether larger or smaller is
    better); ``fairness`` maps each fairness metric to the direction that is fairer
    (``"max"`` for rates where 1 is parity, ``"min"`` for gaps and distances).
    """

    objective: str
    objective_sense: str = "min"
    fairness: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Runner(Protocol):
    """The contract of a model-card runner: the module ``fairopt.runs.<name>`` that
    :func:`fairopt.runs.get_runner` returns for ``formulation.name = "<name>"``. The card loader,
    ``fairopt run``, sweeps and frontiers read nothing else from it.

    Required
        ``Data`` and ``Parameters``: pydantic models (``extra="forbid"``) validating the card's
        ``[data]`` and ``[parameters]`` tables;
        ``run(card, params, data, solver, progress) -> RunOutput``: fits and evaluates the
        card's model, with ``card`` the loaded :class:`~fairopt.runs.card.Card` (typed ``Any``
        here: the card module imports this one), ``params`` / ``data`` the validated tables, ``solver`` the card's
        :class:`~fairopt.modeling.SolverSpec` (``None``: the registry's default) and
        ``progress(step, total, message)`` the progress callback.
    Optional (absent: the feature is off for this formulation)
        ``build(card, params, data) -> Program``: the program the run solves, for
        ``fairopt inspect`` and LP/MPS export; ``EXPORT_NOTE``: what that export holds;
        ``FRONTIER``: a :class:`FrontierSpec` for ``fairopt frontier`` of a sweep folder;
        ``frontier_inputs(card, params, data) -> (estimator, X, y, sensitive_features)``: the
        unfitted estimator and its fitting rows, for ``fairopt frontier CARD.toml`` (an exact or
        certified frontier through :func:`fairopt.frontier`).

    A runner uses estimators and formulations through their public API only (no ``_private``
    methods), so an estimator's internals can change without breaking a card.

    Examples
    --------
    >>> from fairopt.runs import get_runner
    >>> isinstance(get_runner("tv_repair"), Runner)
    True
    """

    Data: type[BaseModel]
    Parameters: type[BaseModel]

    def run(self, card: Any, params: Any, data: Any, solver: SolverSpec | None,
            progress: Progress) -> RunOutput:
        """Fit and evaluate the card's model."""
        ...


def split_rows(n: int, fractions: ArrayLike | None, rng: np.random.Generator, sort: bool = False,
               sizes: ArrayLike | None = None) -> list[np.ndarray]:
    """The one random train/test (or train/post/test) split of the runners.

    Rows ``0 … n-1`` are permuted by ``rng`` (a ``numpy.random.Generator``); block ``k`` takes the
    next ``round(n * fractions[k])`` rows (half to even) and the last block the rest, so
    ``len(fractions) + 1`` blocks come back. ``sizes`` gives the leading block sizes in rows instead
    of fractions. ``sort`` returns each block's row numbers in increasing order (otherwise in the
    permutation's order, which fixes the order of rows given to a learner).

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.runs.base import split_rows
    >>> test, train = split_rows(10, [0.3], np.random.default_rng(0), sort=True)
    >>> len(test), len(train), sorted(np.concatenate([test, train]).tolist()) == list(range(10))
    (3, 7, True)
    """
    import numpy as np
    perm = rng.permutation(n)
    if sizes is None:
        sizes = np.round(np.asarray(fractions, dtype=float) * n).astype(int)
    blocks = np.split(perm, np.cumsum(np.asarray(sizes, dtype=int)))
    return [np.sort(b) for b in blocks] if sort else blocks
