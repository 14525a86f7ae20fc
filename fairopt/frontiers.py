"""Whole fairness–objective frontiers, exact for the LP methods and certified for the games.

:func:`frontier` takes an estimator and its training data and returns a :class:`Frontier`:

* **LP methods** (an estimator whose fitted model offers ``parametric_problem()``): the optimal
  training objective is a convex piecewise-linear function of ``eps``. It is computed exactly by
  :func:`fairopt.modeling.parametric.value_curve` (warm-started re-solves of one compiled LP,
  breakpoints from the duals), so ``value == lower_bound == upper_bound`` up to the solver's
  tolerance and ``breakpoints`` lists every kink.
* **Games** (an estimator that keeps its game's ``result_`` and fitted ``moment_``, such as
  ``FairClassifier`` and ``FairRegressor``): one fit per ``eps``. ``value`` is the objective the
  returned randomized mixture achieves; ``lower_bound`` is the Lagrangian dual value
  ``min_h cost(h) + lambda @ (g(h) - bound)`` over the hypotheses the oracle returned, at the
  game's final multipliers, which by weak duality is at most the best objective any feasible
  mixture of those hypotheses reaches at that ``eps``. With an exact oracle the bound holds over
  the whole hypothesis class.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt.errors import DataValidationError
from fairopt.modeling.parametric import ParametricProblem, value_curve
from fairopt.parallel import get_executor

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["Frontier", "frontier"]


@dataclass
class Frontier:
    """A fairness–objective frontier: the training objective at each tolerance ``eps``.

    Attributes
    ----------
    eps : ndarray
        Tolerances, increasing.
    value : ndarray
        Training objective at each ``eps``, in the estimator's own units (``objective``).
    lower_bound, upper_bound : ndarray
        Certified interval of the best objective at each ``eps`` (equal to ``value`` within the
        solver's tolerance for the LP methods).
    breakpoints : ndarray
        The tolerances where the exact frontier's slope changes (LP methods; empty for games).
    objective : str
        What ``value`` measures (e.g. ``"expected error"``, ``"TV distance"``).
    method : str
        ``"exact LP"`` (one parametric LP), ``"exact fits"`` (an exact method fitted once per
        point, e.g. ``RegressionDebiaser``, whose output grid the fit chooses) or
        ``"certified game"``.
    certified_eps : ndarray or None
        With ``confidence``: the population gap that holds at that confidence for each point.
    confidence : float or None
        The confidence of ``certified_eps``.
    solves : int
        LP solves (exact) or fits (games) used.

    Examples
    --------
    >>> import numpy as np
    >>> f = Frontier(np.array([0.0, 0.1]), np.array([0.2, 0.15]), np.array([0.2, 0.15]),
    ...              np.array([0.2, 0.15]), np.array([]), "expected error", "exact LP")
    >>> f.to_frame().shape
    (2, 4)
    """

    eps: NDArray[np.float64]
    value: NDArray[np.float64]
    lower_bound: NDArray[np.float64]
    upper_bound: NDArray[np.float64]
    breakpoints: NDArray[np.float64]
    objective: str
    method: str
    certified_eps: NDArray[np.float64] | None = None
    confidence: float | None = None
    solves: int = 0
    details: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def gap(self) -> NDArray[np.float64]:
        """``upper_bound - lower_bound`` at each point."""
        return self.upper_bound - self.lower_bound

    def to_frame(self) -> Any:
        """The points as a pandas DataFrame (``eps``, ``value``, ``lower_bound``, ``upper_bound``,
        and ``certified_eps`` when present)."""
        import pandas as pd
        cols = {"eps": self.eps, "value": self.value, "lower_bound": self.lower_bound,
                "upper_bound": self.upper_bound}
        if self.certified_eps is not None:
            cols["certified_eps"] = self.certified_eps
        return pd.DataFrame(cols)

    def plot(self, ax: Axes | None = None, *, label: str | None = None) -> Axes:
        """Draw the frontier with its certified band and breakpoints (needs matplotlib).

        With ``certified_eps``, a second line shows the objective against the population gap
        certified at ``confidence``.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as err:   # pragma: no cover - the plot extra
            raise ImportError("Frontier.plot needs matplotlib: pip install 'fairopt[plot]'.") from err
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        line = ax.plot(self.eps, self.value, label=label or f"{self.method} frontier")[0]
        if np.any(self.gap > 1e-12):   # exact LP frontiers have no band to draw
            ax.fill_between(self.eps, self.lower_bound, self.upper_bound, color=line.get_color(), alpha=0.2,
                            label="certified band (dual bound to achieved)")
        if self.breakpoints.size:
            ax.plot(self.breakpoints, np.interp(self.breakpoints, self.eps, self.value), "o",
                    color=line.get_color(), ms=4, label="breakpoints")
        if self.certified_eps is not None:
            ax.plot(self.certified_eps, self.value, "--", color=line.get_color(),
                    label=f"population gap at confidence {self.confidence:g}")
        ax.set_xlabel("fairness tolerance eps")
        ax.set_ylabel(f"training {self.objective}")
        ax.legend()
        return ax


def _grid(eps: ArrayLike | None) -> np.ndarray | None:
    if eps is None:
        return None
    try:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
    except (TypeError, ValueError):
        raise DataValidationError(f"frontier: eps must be numbers (a 1-D array of tolerances), got {eps!r}.") from None
    if e.ndim != 1 or e.size == 0 or not np.all(np.isfinite(e)) or np.any(e < 0):
        raise DataValidationError(f"frontier: eps must be a non-empty 1-D array of finite values >= 0, got {eps!r}.")
    return np.unique(e)


def _exact(problem: ParametricProblem, grid: np.ndarray | None, solver: Any) -> Frontier:
    lo = problem.eps_min if grid is None else max(float(grid[0]), problem.eps_min)
    hi = problem.eps_max if grid is None else float(grid[-1])
    if grid is not None and grid[0] < problem.eps_min - 1e-12:
        from fairopt.errors import InfeasibleError
        raise InfeasibleError(f"frontier: the problem is infeasible below eps = {problem.eps_min:.6g}; the grid starts "
                              f"at {grid[0]:.6g}.", program=problem.program.name,
                              tightest={"eps": problem.eps_min})
    curve = value_curve(problem.program, problem.rows, lo, max(hi, lo), solver=solver)
    # without a grid: the ends and every breakpoint (the curve is linear in between)
    # and past the last breakpoint, where the constraint stops binding, only a short flat stretch
    if grid is None:
        end = curve.knots[-1] if curve.breakpoints.size == 0 else min(curve.knots[-1], 1.25 * curve.breakpoints[-1])
        points = np.unique(np.concatenate([[curve.knots[0], end], curve.breakpoints]))
    else:
        points = grid
    value = problem.scale * curve(points) + problem.offset
    return Frontier(eps=points, value=value, lower_bound=value.copy(), upper_bound=value.copy(),
                    breakpoints=curve.breakpoints, objective=problem.objective, method="exact LP",
                    solves=curve.solves, details={"curve": curve})


def _fit_game_point(eps: float, shared: tuple[Any, str, Any, Any, dict[str, Any]]) -> tuple[float, float, float]:
    """Fit one clone of a game estimator at ``eps`` (a picklable task for the sweep executors)."""
    from sklearn.base import clone
    estimator, eps_param, X, y, fit_kw = shared
    return _game_point(clone(estimator).set_params(**{eps_param: eps}).fit(X, y, **fit_kw))


def _fit_exact_point(eps: float, shared: tuple[Any, str, Any, Any, dict[str, Any]]) -> float:
    """Optimal training objective of one clone fitted at ``eps`` (an exact LP method without a
    parametric problem; a picklable task for the sweep executors)."""
    from sklearn.base import clone
    estimator, eps_param, X, y, fit_kw = shared
    return _exact_objective(clone(estimator).set_params(**{eps_param: eps}).fit(X, y, **fit_kw))


def _exact_objective(fitted: Any) -> float:
    return float(next(getattr(fitted, a) for a in _EXACT_OBJECTIVES if hasattr(fitted, a)))


#: fitted attributes holding the optimal training objective of an exact LP method, and its name
_EXACT_OBJECTIVES = {"train_loss_": "expected loss", "randomized_cost_": "expected cost"}


def _game_point(estimator: Any) -> tuple[float, float, float]:
    """(achieved objective, Lagrangian lower bound, worst violation) of a fitted game estimator."""
    res, moment = estimator.result_, estimator.moment_
    if res.pool_costs.size == 0:
        raise DataValidationError(f"{type(estimator).__name__}: the game kept no hypotheses to bound the optimum.")
    dual = float(np.min(moment.lagrangian(res.pool_costs, res.pool_G, res.lambda_)))
    return float(res.cost), dual, float(res.max_violation)


def frontier(estimator: Any, X: Any, y: Any = None, *, sensitive_features: Any = None,
             eps: ArrayLike | None = None, confidence: float | None = None, sample_weight: ArrayLike | None = None,
             solver: Any = None, eps_param: str = "eps", executor: str = "serial",
             callback: Callable[[int, int], None] | None = None) -> Frontier:
    """The fairness–objective frontier of ``estimator`` on its training data.

    Parameters
    ----------
    estimator : estimator
        An LP method (it or its fitted model offers ``parametric_problem()``: ``ThresholdDebiaser``,
        ``MulticlassDebiaser``, ``TVRepair`` with the ``"additive"`` or ``"target"``
        discrimination), an exact method without one (``RegressionDebiaser``: one exact fit per
        point) or a game (``FairClassifier``, ``FairRegressor``). It is fitted here (a clone; the
        argument is left untouched).
    X, y, sensitive_features
        Training data, as for the estimator's ``fit``.
    eps : array-like or None
        Tolerances to report. ``None``: for an LP method, every knot of the exact curve from the
        smallest feasible ``eps`` to where the constraint stops binding; for exact fits, 11
        points from 0 to the gap of the input (``input_gap_``); for a game, 11 points from 0 to
        the estimator's own ``eps`` (or 0.2 when it is 0).
    confidence : float in (0, 1) or None
        Also report ``certified_eps``, the population gap certified at this confidence for each
        point; only for estimators that offer ``certify_gap(eps, confidence)``.
    sample_weight : array-like or None
        Training row weights, as for the estimator's ``fit``.
    solver : str, SolverSpec or None
        LP solver of the exact curve (``None``: the registry's default).
    eps_param : str, default "eps"
        Name of the estimator's tolerance parameter (``TVRepair`` uses ``"epsilon"``; found
        automatically when ``"eps"`` is not a parameter).
    executor : str, default "serial"
        Where a game's independent fits run: ``"serial"``, ``"processes"``, ``"dask"`` or
        ``"dask://HOST:PORT"`` (``fairopt.parallel.get_executor``; Dask needs the
        ``distributed`` extra). The exact LP curve is one warm-started sequence and runs here.
    callback : callable or None
        ``callback(done, total)`` after each game fit.

    Returns
    -------
    Frontier

    Raises
    ------
    DataValidationError
        The estimator is neither an LP method nor a game, or ``eps`` is invalid.
    InfeasibleError
        An LP method is infeasible at the smallest requested ``eps`` (``tightest`` is the
        smallest feasible one).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairopt.inprocessing import FairClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); group = rng.integers(0, 2, 300)
    >>> y = (X[:, 0] + 0.8 * group + rng.normal(size=300) > 0.5).astype(int)
    >>> f = frontier(FairClassifier(LogisticRegression(), eps=0.1), X, y, sensitive_features=group,
    ...              eps=[0.02, 0.1])
    >>> bool(np.all(f.lower_bound <= f.value + 1e-9))
    True
    """
    from sklearn.base import clone
    if not (hasattr(estimator, "get_params") and hasattr(estimator, "fit")):
        raise DataValidationError(f"frontier takes a scikit-learn style estimator (get_params and fit), got "
                                  f"{type(estimator).__name__}.")
    params = estimator.get_params(deep=False)
    if eps_param not in params:
        eps_param = next((p for p in ("eps", "epsilon", "statistical_rate") if p in params), eps_param)
    if eps_param not in params:
        raise DataValidationError(f"frontier: {type(estimator).__name__} has no tolerance parameter "
                                  f"(looked for 'eps' and 'epsilon'); pass eps_param=.")
    grid = _grid(eps)
    fit_kw: dict[str, Any] = {"sensitive_features": sensitive_features}
    if sample_weight is not None:
        fit_kw["sample_weight"] = sample_weight
    first = clone(estimator)
    if grid is not None:
        first.set_params(**{eps_param: float(grid[-1])})
    first.fit(X, y, **fit_kw)
    out: Frontier
    if hasattr(first, "parametric_problem"):      # an LP method that builds its LP from the data
        problem = first.parametric_problem(X, y, sensitive_features=sensitive_features, sample_weight=sample_weight)
        out = _exact(problem, grid, solver)
    elif hasattr(getattr(first, "model_", None), "parametric_problem"):    # the fitted model holds its LP
        out = _exact(first.model_.parametric_problem(), grid, solver)
    elif hasattr(first, "result_") and hasattr(first, "moment_"):
        own = float(params[eps_param]) or 0.2
        points = grid if grid is not None else np.linspace(0.0, own, 11)
        shared = (estimator, eps_param, X, y, fit_kw)
        with get_executor(executor) as ex:     # the points are independent fits
            rows = ex.map(_fit_game_point, [float(e) for e in points], shared=shared,
                          progress=None if callback is None else (lambda d, t, _: callback(d, t)),
                          description="frontier")
        value, lower, viol = (np.array(c) for c in zip(*rows, strict=True))
        out = Frontier(eps=points, value=value, lower_bound=np.minimum(lower, value), upper_bound=value.copy(),
                       breakpoints=np.zeros(0), objective="training objective", method="certified game",
                       solves=len(points), details={"max_violation": viol,
                                                    "oracle_exact": bool(getattr(first, "oracle_exact_", False))})
    elif any(hasattr(first, a) for a in _EXACT_OBJECTIVES):    # exact fits, one per point
        end = float(getattr(first, "input_gap_", 0.0)) or float(params[eps_param]) or 0.2
        points = grid if grid is not None else np.linspace(0.0, end, 11)
        with get_executor(executor) as ex:
            value = np.array(ex.map(_fit_exact_point, [float(e) for e in points],
                                    shared=(estimator, eps_param, X, y, fit_kw),
                                    progress=None if callback is None else (lambda d, t, _: callback(d, t)),
                                    description="frontier"))
        out = Frontier(eps=points, value=value, lower_bound=value.copy(), upper_bound=value.copy(),
                       breakpoints=np.zeros(0), method="exact fits",
                       objective=next(v for a, v in _EXACT_OBJECTIVES.items() if hasattr(first, a)),
                       solves=len(points), details={})
    else:
        raise DataValidationError(f"frontier: {type(estimator).__name__} is neither an LP method (no "
                                  f"parametric_problem(), no exact training objective) nor a game (no "
                                  f"result_/moment_ after fit).")
    if confidence is not None:
        certify = getattr(first, "certify_gap", None)
        if certify is None:
            raise DataValidationError(f"frontier: {type(estimator).__name__} offers no population guarantee "
                                      f"(certify_gap); use confidence=None.")
        # a gap between rates never exceeds 1
        out.certified_eps = np.minimum(1.0, np.array([certify(float(e), confidence) for e in out.eps]))
        out.confidence = float(confidence)
    return out

