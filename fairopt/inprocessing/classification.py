"""Fair classification by reductions (Agarwal et al. 2018): :class:`FairClassifier`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from fairopt._param_validation import HasMethods, Interval, StrOptions
from fairopt.criteria import accepted_names
from fairopt.errors import DataValidationError
from fairopt.guarantees import HOLDOUT_ATTEMPTS, Certificate, certify_in_turn, warn_if_uncertified
from fairopt.inprocessing._certify import Holdout, _rows
from fairopt.inprocessing._mixture import (
    RandomizedMixture,
    check_eps,
    check_fit_inputs,
    moment_from,
    warn_if_not_optimal,
)
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import resolve_solver
from fairopt.reductions import ExponentiatedGradient, make_oracle
from fairopt.reductions.moments import CLASSIFICATION_MOMENTS, Moment
from fairopt.reductions.oracles import Oracle
from fairopt.validation import (
    RANDOM_STATE,
    check_weights,
    decode_labels,
    label_codes,
    proba_columns,
    validate_params,
)

if TYPE_CHECKING:
    from sklearn.utils import Tags

    from fairopt._progress import Progress

__all__ = ["FairClassifier"]


class FairClassifier(RandomizedMixture, ClassifierMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Fair classification by reductions (Agarwal et al. 2018) through the exponentiated-gradient game.

    The learner is called on weighted classification problems: at multipliers :math:`\\lambda`
    example ``i`` gets the label :math:`1\\{c_i<0\\}` and weight :math:`|c_i|`, with
    :math:`c_i` its cost of predicting 1 rather than 0 in the Lagrangian; weights are rescaled to
    sum to ``n`` so regularised learners keep the regularisation strength they have on the raw
    data.

    Parameters
    ----------
    estimator : classifier or Oracle, optional
        Any scikit-learn classifier accepting ``sample_weight`` (default ``LogisticRegression``),
        or a :class:`fairopt.reductions.oracles.Oracle`.
    constraint : {"demographic_parity", "equal_opportunity", "equalized_odds"} or Moment
        Selection rates (DP), true-positive rates (EO) or both true- and false-positive rates
        (equalized odds) of each group may differ from the overall rate by at most ``eps``.
    eps : float, sequence or dict, default=0.01
        Allowed difference per group: the constraint bound itself. In fairlearn the bound is the
        moment's ``difference_bound`` and ``ExponentiatedGradient(eps=...)`` sets the game's
        tolerance and multiplier bound ``1/eps``; see ``docs/fairlearn_differences.md``.
    solver : str, SolverSpec, dict or None, default=None
        LP back end of the best-mixture LP.
    max_iter : int, default=50
    random_state : int or None
        Seed of the randomized ``predict``.
    B : float, optional
        Bound on the multipliers' l1 norm; default ``1 / eps`` (a violation of ``eps`` then costs
        as much as the whole error range, so the penalty is exact for the usual bounds).
    nu : float, optional
        Duality-gap tolerance (default 1e-9 practical, 0.01 faithful).
    mode : {"practical", "faithful"}, default="practical"
    min_iter : int, default=5
        Practical mode: rounds played before the gap may stop the game (the gap of heuristic
        learners is an estimate; more rounds add columns to the mixture LP).
    pos_label : str, int, bool or None, default=None
        The favourable label of ``y``: the one whose rates the constraint counts. ``None`` means
        1 when the labels are 0/1, otherwise the greater of the two sorted labels
        (``classes_[1]``, scikit-learn's positive class). Demographic parity and equalized odds
        are symmetric in the two labels, so the choice only relabels their fit; equal opportunity
        bounds the true-positive rates of ``pos_label``, so it changes with it. ``y`` is encoded
        once to 0/1 (1 = ``pos_label``) and predictions are decoded back to the labels of ``y``.

    confidence : float in (0, 1) or None, default None
        Certify the constraint on the population: a share ``certify_size`` of the rows
        (stratified by group, and by label for the error-rate criteria) is held out, the game is
        played on the rest with ``eps`` minus the Hoeffding margin the held-out group sizes
        allow, and the fitted (fixed) rule is certified on the held-out rows, so that with
        probability at least ``confidence`` every group's population rate is within
        ``certified_eps_`` of the population's overall rate (see :doc:`/guarantees`). Needs one
        number ``eps``, unweighted rows and a criterion named by a string.
    certify_size : float in (0, 1), default 0.3
        Share of the rows held out to certify the rule when ``confidence`` is set.

    Attributes
    ----------
    eps_ : float or sequence or dict
        Tolerance the game was played with (``eps`` minus the margin with ``confidence``).
    guarantee_ : Certificate or None
        With ``confidence``: the held-out gap, the margin and the method
        (:class:`fairopt.guarantees.Certificate`); ``None`` otherwise.
    certified_eps_ : float
        With ``confidence``: population bound on every group's distance to the overall rate.
    predictors_, weights_, lambda_, gap_, status_, n_iter_, n_oracle_calls_, constraint_names_
        As in :class:`~fairopt.inprocessing.FairRegressor`.
    classes_ : ndarray of shape (2,)
        The two labels of ``y``, sorted (``[0, 1]`` for 0/1 labels); ``predict`` returns them and
        ``predict_proba``'s columns follow their order.
    pos_label_ : object
        The favourable label (``pos_label`` resolved).
    groups_ : pandas.Index
        Group labels seen at fit (tuples for several sensitive columns).
    oracle_exact_ : bool
        Whether the learner is an exact best-response oracle. A fitted estimator is not (it
        minimises a surrogate of the weighted 0-1 loss): ``status_ == "converged"`` and ``gap_``
        then certify optimality over the hypotheses the learner returned, not over its class.
    certificate_ : str
        What ``gap_`` certifies, in words.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.inprocessing import FairClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3))
    >>> a = np.where(X[:, 0] + rng.normal(size=400) > 0, "p", "q")
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> clf = FairClassifier(eps=0.02, random_state=0).fit(X, y, sensitive_features=a)
    >>> p = clf.predict_proba(X)[:, 1]
    >>> bool(abs(p[a == "p"].mean() - p[a == "q"].mean()) <= 0.04 + 1e-9)
    True
    >>> clf.oracle_exact_
    False

    Any two labels work; the favourable one is ``pos_label`` (by default the greater one):

    >>> labels = np.where(y == 1, "good", "bad")
    >>> clf = FairClassifier(eps=0.02, random_state=0).fit(X, labels, sensitive_features=a)
    >>> clf.classes_.tolist(), clf.pos_label_
    (['bad', 'good'], 'good')
    >>> sorted(set(clf.predict(X).tolist()))
    ['bad', 'good']
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": [None, HasMethods(["fit", "predict"]), Oracle],
        "constraint": [StrOptions(accepted_names(CLASSIFICATION_MOMENTS)), Moment],
        "eps": [Interval(Real, 0, 1, closed="both"), "array-like", dict],
        "solver": [None, str, SolverSpec, dict],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "B": [None, Interval(Real, 0, None, closed="neither")],
        "nu": [None, Interval(Real, 0, None, closed="neither")],
        "mode": [StrOptions({"practical", "faithful"})],
        "min_iter": [Interval(Integral, 0, None, closed="left")],
        "pos_label": [None, str, Real, "boolean"],   # checked against the labels of y at fit
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
        "certify_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator: BaseEstimator | Oracle | None = None, constraint: str | Moment = "demographic_parity",
                 eps: float | Sequence[float] | dict[Any, float] = 0.01,
                 solver: str | SolverSpec | Mapping[str, Any] | None = None, max_iter: int = 50,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 B: float | None = None, nu: float | None = None, mode: Literal["practical", "faithful"] = "practical",
                 min_iter: int = 5, pos_label: str | int | bool | None = None, confidence: float | None = None,
                 certify_size: float = 0.3) -> None:
        self.estimator = estimator
        self.constraint = constraint
        self.eps = eps
        self.solver = solver
        self.max_iter = max_iter
        self.random_state = random_state
        self.B = B
        self.nu = nu
        self.mode = mode
        self.min_iter = min_iter
        self.pos_label = pos_label
        self.confidence = confidence
        self.certify_size = certify_size

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False     # two labels, pos_label favourable
        tags.input_tags.sparse = self.estimator is None   # the default LogisticRegression takes sparse X
        return tags

    def _B(self) -> float:
        if self.B is not None:
            return self.B
        eps = np.min(list(self.eps.values()) if isinstance(self.eps, dict) else self.eps)
        return 1.0 / float(eps) if eps > 0 else 10.0 / 0.01   # eps = 0: the B of eps = 0.001

    def fit(self, X: ArrayLike, y: ArrayLike, *, sensitive_features: ArrayLike,
            sample_weight: ArrayLike | None = None, progress: Progress | None = None) -> FairClassifier:
        """Play the game on ``(X, y)``; ``y`` holds two class labels (``pos_label`` favourable).

        ``sensitive_features`` may hold several columns (intersectional groups); ``sample_weight``
        makes every rate and the error weighted means.
        """
        validate_params(self)
        check_eps(self)
        X, y, groups, w = check_fit_inputs(self, X, y, sensitive_features, sample_weight,
                                           "FairClassifier.fit", target="labels",
                                           numeric=self.estimator is None)
        if np.unique(y).size < 2:       # y is encoded: 1 = pos_label
            present = self.classes_[self._pos_index] if y.size and y[0] == 1 else self.classes_[1 - self._pos_index]
            raise DataValidationError(f"FairClassifier needs both labels {self.classes_.tolist()} in y, got 1 "
                                      f"class [{present!r}].")
        solver = resolve_solver(self.solver, "LP")   # parsed once; an unknown solver is refused here
        self.guarantee_ = None
        if self.confidence is None:
            self._play(X, y, groups, w, self.eps, solver, progress)
            return self
        holdout = Holdout(self, y, groups, w, "FairClassifier.fit", attempts=HOLDOUT_ATTEMPTS)
        Xf, yf, gf = holdout.part(X, y, groups)
        wf = None if w is None else w[holdout.fit]     # constant weights: the only ones certified
        cert_X = _rows(X, holdout.cert)

        def fit_at(t: float) -> dict[str, Any]:
            self._play(Xf, yf, gf, wf, t, solver, progress)
            return dict(self.__dict__)

        def certify(state: dict[str, Any]) -> Certificate:
            self.__dict__.update(state)
            return holdout.certify(self.predict_proba(cert_X)[:, self._pos_index], y, groups)

        state, cert, trained = certify_in_turn(fit_at, certify, holdout.eps, holdout.margin, holdout.confidence,
                                               "FairClassifier")
        self.__dict__.update(state)
        self.guarantee_, self.certified_eps_ = cert, cert.certified_eps
        warn_if_uncertified("FairClassifier", cert, holdout.eps, trained)
        return self

    def _play(self, X: Any, y: np.ndarray, groups: Any, w: np.ndarray | None, eps: Any, solver: SolverSpec,
              progress: Progress | None) -> None:
        """Run the game at tolerance ``eps`` on ``(X, y)`` and store the fitted attributes."""
        moment = moment_from(self.constraint, {k: (lambda c=c: c(eps=eps))
                                               for k, c in CLASSIFICATION_MOMENTS.items()}, "FairClassifier")
        est = self.estimator if self.estimator is not None else LogisticRegression(max_iter=1000)
        game = ExponentiatedGradient(moment, make_oracle(moment, est), B=self._B(), nu=self.nu,
                                     max_iter=self.max_iter, mode=self.mode, solver=solver,
                                     min_iter=self.min_iter, progress=progress)
        res = game.run(X, y, groups, sample_weight=w)
        self.result_, self.moment_ = res, moment
        self.groups_ = moment.groups
        self.predictors_, self.weights_ = res.hypotheses, res.weights
        self.lambda_, self.gap_, self.status_ = res.lambda_, res.gap, res.status
        self.n_oracle_calls_, self.n_iter_ = res.n_oracle_calls, res.n_iter
        self.constraint_names_ = moment.row_names()
        self.oracle_exact_, self.certificate_ = res.oracle_exact, res.certificate
        self.eps_ = eps
        warn_if_not_optimal(self, res)

    def predict_components(self, X: ArrayLike) -> np.ndarray:
        """Predictions of every classifier in the fitted mixture.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        ndarray of shape (n_predictors, n_samples)
            Row ``k`` is ``predictors_[k]``'s 0/1 prediction (1 = ``pos_label_``); ``weights_``
            mixes them.
        """
        X = self._features(X)
        return np.vstack([h.predict(X) for h in self.predictors_])

    def predict(self, X: ArrayLike,
                random_state: int | np.random.RandomState | np.random.Generator | None = None) -> np.ndarray:
        """Randomized labels (seeded), in the labels of ``classes_``."""
        return decode_labels(self._draw(self.predict_components(X), random_state), self.classes_,
                             self._pos_index)

    def score(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> float:
        """Accuracy of the randomized :meth:`predict` (seeded by ``random_state``); ``y`` must hold
        labels of ``classes_`` and ``sample_weight`` must be finite and >= 0."""
        pred = self.predict(X)
        n = pred.shape[0]
        codes = label_codes(y, self.classes_, n, "FairClassifier.score: y")
        w = check_weights(sample_weight, n, "FairClassifier.score: sample_weight")
        return float(np.average(label_codes(pred, self.classes_, n) == codes, weights=w))

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Probability that the randomized classifier predicts each class, columns in the order
        of ``classes_``."""
        self._check_fitted()
        p1 = self.weights_ @ self.predict_components(X)
        out: np.ndarray = proba_columns(p1, self._pos_index)
        return out

    def decision_scores(self, X: ArrayLike) -> np.ndarray:
        """Real-valued scores of the support members (their probabilities of ``pos_label_``), ``(K, n)``."""
        X = self._features(X)
        return np.vstack([h.score(X) for h in self.predictors_])
