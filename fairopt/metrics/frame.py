"""``MetricFrame``: any metric per group and overall, with the group gaps (fairlearn's interface)."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from fairopt.errors import DataValidationError
from fairopt.validation import as_1d, check_groups, num_rows, to_native

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["MetricFrame"]

_METHODS = ("between_groups", "to_overall")


class MetricFrame:
    """Metrics evaluated overall and on every group, with ``by_group``, ``overall``,
    ``difference()``, ``ratio()``, ``group_min()`` and ``group_max()`` as in fairlearn's
    ``MetricFrame`` (so code written for it runs unchanged on fairopt's groups).

    Parameters
    ----------
    metrics : callable or dict of callables
        ``metric(y_true, y_pred, **params) -> float`` (scikit-learn's metric signature).
    y_true, y_pred : array-like of shape (n,)
        Any frame library's Series or column, list or numpy array.
    sensitive_features : array-like, Series, DataFrame or dict of columns
        Groups; several columns give intersectional groups (a MultiIndex).
    sample_params : dict, optional
        Per-row arguments of the metrics (``{"sample_weight": w}``), split by group like the
        data; with a dict of metrics, ``{metric name: {param: array}}``.

    Attributes
    ----------
    by_group : Series or DataFrame
        One row per group (one column per metric when ``metrics`` is a dict).
    overall : float or Series
        The metrics on all rows.

    Examples
    --------
    >>> from sklearn.metrics import accuracy_score
    >>> mf = MetricFrame(metrics=accuracy_score, y_true=[1, 0, 1, 1], y_pred=[1, 0, 0, 1],
    ...                  sensitive_features=["a", "a", "b", "b"])
    >>> mf.by_group.tolist(), mf.overall, float(mf.difference())
    ([1.0, 0.5], 0.75, 0.5)
    """

    def __init__(self, *, metrics: Callable[..., Any] | Mapping[str, Callable[..., Any]], y_true: ArrayLike,
                 y_pred: ArrayLike, sensitive_features: Any, sample_params: Mapping[str, Any] | None = None) -> None:
        y_true, y_pred = to_native(y_true), to_native(y_pred)
        n = num_rows(y_true)
        yt, yp = as_1d(y_true, "y_true", n), as_1d(y_pred, "y_pred", n)
        grp = check_groups(sensitive_features, n)
        single = callable(metrics)
        funcs: dict[str, Callable[..., Any]] = (
            {getattr(metrics, "__name__", "metric"): metrics} if callable(metrics) else dict(metrics))
        if not funcs or not all(callable(f) for f in funcs.values()):
            raise DataValidationError("metrics must be a callable or a non-empty dict of callables.")
        params = self._params(sample_params, funcs, single, n)
        rows: dict[str, tuple[Any, list[Any]]] = {}
        for name, f in funcs.items():
            p = params[name]
            per_group = []
            for g in range(grp.n_groups):     # one call per group (as fairlearn), not per row
                m = grp.codes == g
                per_group.append(f(yt[m], yp[m], **{k: v[m] for k, v in p.items()}))
            rows[name] = (f(yt, yp, **p), per_group)
        if single:
            name = next(iter(rows))
            self.overall = rows[name][0]
            self.by_group = pd.Series(rows[name][1], index=grp.labels, name=name)
        else:
            self.overall = pd.Series({k: v[0] for k, v in rows.items()})
            self.by_group = pd.DataFrame({k: v[1] for k, v in rows.items()}, index=grp.labels)

    @staticmethod
    def _params(sample_params: Mapping[str, Any] | None, funcs: Mapping[str, Callable[..., Any]], single: bool,
                n: int) -> dict[str, dict[str, np.ndarray]]:
        if not sample_params:
            return {k: {} for k in funcs}
        nested = {next(iter(funcs)): sample_params} if single else dict(sample_params)
        unknown = [k for k in nested if k not in funcs]
        if unknown:
            raise DataValidationError(f"sample_params names metric(s) {unknown} not in metrics {list(funcs)}.")
        return {k: {p: as_1d(to_native(v), f"sample_params[{k!r}][{p!r}]", n) for p, v in nested.get(k, {}).items()}
                for k in funcs}

    def group_min(self) -> float | pd.Series:
        """Smallest value over the groups (per metric)."""
        return self.by_group.min()

    def group_max(self) -> float | pd.Series:
        """Largest value over the groups (per metric)."""
        return self.by_group.max()

    def difference(self, method: Literal["between_groups", "to_overall"] = "between_groups") -> float | pd.Series:
        """``max - min`` over the groups, or (``"to_overall"``) the largest ``|group - overall|``."""
        if method not in _METHODS:
            raise DataValidationError(f"method must be one of {_METHODS}, got {method!r}.")
        if method == "between_groups":
            return self.group_max() - self.group_min()
        return (self.by_group - self.overall).abs().max()

    def ratio(self, method: Literal["between_groups", "to_overall"] = "between_groups") -> float | pd.Series:
        """``min / max`` over the groups, or (``"to_overall"``) the smallest of
        ``min(group, overall) / max(group, overall)``."""
        if method not in _METHODS:
            raise DataValidationError(f"method must be one of {_METHODS}, got {method!r}.")
        if method == "between_groups":
            return self.group_min() / self.group_max()
        overall = self.by_group * 0 + self.overall      # broadcast per metric column
        lo = self.by_group.where(self.by_group <= overall, overall)
        hi = self.by_group.where(self.by_group >= overall, overall)
        return (lo / hi).min()
