"""Shared parts of the in-processing estimators: fit-input checks, the randomized mixture, the
uniform not-optimal policy."""
from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from fairopt._utils import as_generator
from fairopt.criteria import canonical, resolve
from fairopt.errors import ConfigError, NotOptimalWarning
from fairopt.validation import (
    align_features,
    as_numeric_array,
    check_dense,
    check_group_weights,
    check_groups,
    check_is_fitted,
    check_numbers,
    check_numeric_columns,
    check_target,
    check_weights,
    check_X,
    encode_labels,
    num_rows,
    parameter_error,
    record_features,
    to_native_numeric,
)

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

    from fairopt.reductions.game import GameResult
    from fairopt.reductions.moments import Moment
    from fairopt.validation import Groups

#: in-sample violation of a fairness row above which a fit is reported as not optimal
VIOLATION_TOL = 1e-7


def check_fit_inputs(estimator: BaseEstimator, X: Any, y: ArrayLike, sensitive_features: ArrayLike | None,
                     sample_weight: ArrayLike | None, what: str, *, target: str = "continuous",
                     interval: tuple[float, float] | None = None, dense: bool = False,
                     numeric: bool = False) -> tuple[Any, np.ndarray, Groups, np.ndarray | None]:
    """Validated ``(X, y, groups, sample_weight)`` of an in-processing ``fit``.

    ``target="labels"``: ``y`` holds any two class labels and is returned encoded to 0/1 (see
    :func:`fit_labels`).

    ``groups`` is a :class:`~fairopt.validation.Groups` with at least two groups (several
    sensitive columns give intersectional groups), each with positive total weight;
    ``sample_weight`` stays ``None`` when not given. ``dense`` refuses sparse ``X`` and
    ``numeric`` refuses string/categorical columns, both up front with a typed error.
    Records ``n_features_in_`` / ``feature_names_in_`` on ``estimator``.
    """
    # the numeric fast path reads a numeric polars/pyarrow frame into one float array (one copy)
    X = check_X(to_native_numeric(X, sensitive_features) if numeric else X, what)
    n = num_rows(X)
    groups = check_groups(sensitive_features, n, X=X, min_groups=2, name=f"{what}: sensitive_features")
    if groups.columns is not None:      # groups named by column: read from X, not used as features
        X = X.drop(columns=list(groups.columns))
    if dense:
        check_dense(X, f"{what}: X")
    if numeric:
        check_numeric_columns(X, f"{what}: X", hint=", or pass an estimator (e.g. a Pipeline) that encodes them")
    if target == "labels":      # any two class labels, encoded once here to 0/1 (1 = pos_label)
        y = fit_labels(estimator, y, n, f"{what}: y")
    else:
        y = check_target(y, n, kind=target, name=f"{what}: y", interval=interval)
    w = None if sample_weight is None else check_weights(sample_weight, n, f"{what}: sample_weight")
    check_group_weights(groups, w, what)
    record_features(estimator, X, ignore=groups.columns)
    # the numeric fast path: convert a frame once here, so the learner refitted in every round of the
    # game validates a plain float array (a DataFrame was 4x slower on Adult)
    estimator._fit_on_array = numeric
    return (as_numeric_array(X) if numeric else X), y, groups, w


def fit_labels(estimator: BaseEstimator, y: ArrayLike, n: int, name: str) -> np.ndarray:
    """``y`` encoded to float 0/1 with 1 the favourable label ``estimator.pos_label``; records the
    caller's labels in ``classes_`` and the favourable one in ``pos_label_``."""
    enc = encode_labels(y, n, pos_label=getattr(estimator, "pos_label", None), name=name)
    estimator.classes_, estimator.pos_label_ = enc.classes, enc.classes.tolist()[enc.pos_index]
    estimator._pos_index = enc.pos_index
    return enc.y


def moment_from(constraint: str | Moment, known: Mapping[str, Callable[..., Moment]], what: str,
                **kwargs: Any) -> Moment:
    """A fresh moment: ``constraint`` is a name in ``known`` (built with ``kwargs``) or a
    :class:`~fairopt.reductions.moments.Moment` instance (deep-copied, so ``fit`` never changes
    the estimator's parameter)."""
    import copy

    from fairopt.reductions.moments import Moment
    if isinstance(constraint, Moment):
        return copy.deepcopy(constraint)
    # names and aliases resolve in one place (fairopt.criteria); ``known`` may use either
    known = {canonical(k) or k: make for k, make in known.items()}
    if not isinstance(constraint, str):
        raise ConfigError(f"{what}(constraint={constraint!r}); use one of {sorted(known)} or a "
                          "fairopt.reductions.Moment instance.")
    try:
        key = resolve(constraint, allowed=known, what=f"{what}(constraint)")
    except ConfigError as exc:
        raise ConfigError(f"{exc} A fairopt.reductions.Moment instance works too.") from None
    return known[key](**kwargs)


def check_eps(estimator: BaseEstimator, high: float | None = 1.0) -> None:
    """``eps`` as a scalar, sequence or ``{group: value}``: finite numbers in ``[0, high]`` (rates
    lie in [0, 1], so a larger tolerance is a typo), checked entry by entry."""
    check_numbers(estimator, "eps", estimator.eps, high=high)


def check_lambda_scales(estimator: BaseEstimator) -> None:
    """``lambda_scales``: a non-empty sequence of finite positive multipliers."""
    scales = estimator.lambda_scales
    if isinstance(scales, (str, bytes)) or np.ndim(scales) != 1:
        raise parameter_error(estimator, "lambda_scales", "a non-empty sequence of positive numbers", scales)
    check_numbers(estimator, "lambda_scales", scales, low_open=True)


def warn_if_not_optimal(estimator: BaseEstimator, res: GameResult) -> None:
    """The uniform policy of the game estimators: a fit without a convergence certificate, or whose
    mixture violates a fairness row on the training data, warns (:class:`NotOptimalWarning`)."""
    if res.status == "converged" and res.max_violation <= VIOLATION_TOL and res.lp_slack <= VIOLATION_TOL:
        return
    warnings.warn(
        f"{type(estimator).__name__}: the game ended with status {res.status!r}, duality gap {res.gap:.3g} "
        f"(tolerance {res.nu:.3g}) and worst training violation {res.max_violation:.3g}; the mixture is not "
        "certified. Raise max_iter or B, or loosen nu/eps.", NotOptimalWarning, stacklevel=3)


class RandomizedMixture:
    """Randomized prediction from ``predictors_`` and ``weights_``."""

    # set by the estimators that use the mixin (declared for the type checker)
    random_state: Any
    weights_: np.ndarray

    def _check_fitted(self) -> None:
        check_is_fitted(self, "weights_")

    def _features(self, X: ArrayLike) -> Any:
        """Predict-time features in the fitted column layout."""
        self._check_fitted()
        X = align_features(self, check_X(X, f"{type(self).__name__}.predict"))
        return as_numeric_array(X) if getattr(self, "_fit_on_array", False) else X

    def _draw(self, components: np.ndarray,
              random_state: int | np.random.RandomState | np.random.Generator | None) -> NDArray[Any]:
        seed = self.random_state if random_state is None else random_state
        rng = as_generator(seed)
        pick = rng.choice(self.weights_.size, size=components.shape[1], p=self.weights_)
        out: NDArray[Any] = components[pick, np.arange(components.shape[1])]
        return out
