"""Fair post-processing of any multiclass classifier: :class:`MulticlassDebiaser`."""
from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted as sk_check_is_fitted

from fairopt._labels import label_codes
from fairopt._param_validation import HasMethods, Interval, StrOptions
from fairopt._utils import as_generator
from fairopt.criteria import accepted_names, canonical
from fairopt.errors import ConfigError, DataValidationError, NotFittedError
from fairopt.formulations.constrained_classification.multiclass_lp import (
    MULTICLASS_CONSTRAINTS,
    MulticlassTransportLP,
    VectorAtoms,
    adjusted_costs,
    collapse_vectors,
)
from fairopt.formulations.constrained_classification.multiclass_working_set import solve_auto
from fairopt.guarantees import HOLDOUT_ATTEMPTS, Certificate, certify_in_turn, warn_if_uncertified
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import default_spec
from fairopt.postprocessing._certify import MulticlassHoldout
from fairopt.postprocessing.multiclass_calibration import OneVsRestIsotonic, check_score_matrix, quantise_scores
from fairopt.postprocessing.multiclass_chunked import is_chunked_scores
from fairopt.postprocessing.multiclass_stats import rule_stats
from fairopt.validation import RANDOM_STATE, Groups, check_groups, check_weights, num_rows, validate_params

if TYPE_CHECKING:
    from fairopt.modeling.parametric import ParametricProblem

__all__ = ["MulticlassDebiaser"]

CALIBRATIONS = ("isotonic", "isotonic_per_group")


class MulticlassDebiaser(ClassifierMixin, BaseEstimator):  # type: ignore[misc,unused-ignore]  # sklearn: no stubs
    """Optimal fair post-processing of a multiclass classifier's class probabilities.

    Reads the scores as calibrated class probabilities ``s(x)`` and fits the randomized
    group-dependent rule ``q_k(s, g)`` (probability of predicting class ``k``) of least expected
    cost ``sum_i w_i sum_k q_k(x_i) (s(x_i) C)_k / sum_i w_i`` subject to the fairness
    constraint on the fitting sample, exactly (an LP over the distinct score vectors; see
    :mod:`~fairopt.formulations.constrained_classification.multiclass_lp`). The rule is an
    offset-adjusted argmin of the expected cost, randomized only where classes tie.

    Parameters
    ----------
    estimator : estimator with ``predict_proba`` or None, default None
        Model whose probabilities are post-processed. ``None``: ``X`` is itself the
        ``(n_rows, n_classes)`` matrix of class probabilities, columns in the order of the sorted
        labels of ``y``.
    prefit : bool, default False
        ``estimator`` is already fitted (keep the post-processing sample disjoint from its
        training data); otherwise it is fitted on ``(X, y)`` first.
    constraint : {"demographic_parity", "equal_opportunity", "equalized_odds"}
        ``demographic_parity``: ``|P(yhat = k | A = g) - P(yhat = k)| <= eps`` for every group and
        class; ``equal_opportunity``: ``|P(yhat = k | Y = k, A = g) - P(yhat = k | Y = k)| <= eps``
        for every class; ``equalized_odds``: ``|P(yhat = k | Y = j, A = g) - P(yhat = k | Y = j)|
        <= eps`` for every true class ``j`` and predicted ``k``. Conditional rates weight a row by
        its probability ``s_j(x)`` of class ``j``, so the rule never reads the labels.
    eps : float >= 0, default 0.0
        Largest deviation of a group's rate from the pooled rate. Every ``eps >= 0`` is feasible
        (a rule ignoring the score meets all constraints).
    cost : array-like of shape (n_classes, n_classes) or None
        ``cost[j, k]``: cost of predicting ``k`` when the true class is ``j`` (default 0-1, so
        the expected cost is the expected error).
    deterministic : bool, default False
        Deploy the rule without randomisation: on tied training score vectors, the first class
        (in ``classes_`` order) the optimal rule uses. ``train_gap_`` then exceeds ``eps`` by at
        most ``determinism_bound_ - eps`` (the mass of tied rows; see the docs page).
    score_bins : int >= 2 or None, default None
        Round every probability to a multiple of ``1 / score_bins`` (at fit and predict) so that
        many rows share a score vector; the expected cost of any rule moves by at most
        ``K max|C| / (2 score_bins)``.
    calibration : {None, "isotonic", "isotonic_per_group"}, default None
        One-vs-rest isotonic recalibration of every class column on the labelled fitting sample
        (rows renormalised), pooled or per group. For two classes it equals
        :class:`ThresholdDebiaser`'s isotonic calibration.
    solver : str, SolverSpec, dict or None, default None
        LP solver (``None``: the registry's default LP solver).
    random_state : int, Generator or None
        Seed of ``predict``'s draws (and of the certification split with ``confidence``).
    confidence : float in (0, 1) or None, default None
        Certify the constraint on the population: a share ``certify_size`` of the rows
        (stratified by group and, for the error-rate criteria, by true class) is held out, the
        rule is fitted on the rest with ``eps`` tightened by the Hoeffding margin the held-out
        cell sizes allow, and the fixed rule is certified on the held-out rows (up to
        ``HOLDOUT_ATTEMPTS`` training tolerances fixed in advance are certified in turn, the
        confidence shared among them by a union bound, as in
        :func:`~fairopt.guarantees.certify_in_turn`): with probability
        at least ``confidence`` every ``|P(yhat = k | E, A = g) - P(yhat = k | E)|`` on the
        population (``E`` the true class ``j`` for the error-rate criteria, with the true labels,
        not the scores) is at most ``certified_eps_`` (see :doc:`/guarantees`). Needs unweighted
        rows, and ``y`` for the error-rate criteria.
    certify_size : float in (0, 1), default 0.3
        Share of the rows held out to certify the rule when ``confidence`` is set.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels, the columns of ``predict_proba``.
    groups_ : pandas.Index
        Groups seen at fit.
    events_ : list of tuple
        The constrained events ``(j, k)`` (``j`` None for demographic parity).
    train_cost_, train_gap_ : float
        Expected cost and largest ``|group rate - pooled rate|`` of the deployed rule on the
        fitting sample.
    randomized_cost_, randomized_gap_ : float
        The same for the randomized optimum.
    determinism_bound_ : float
        ``eps`` plus the largest tied mass (group share plus pooled share) over groups and events:
        a bound on the deterministic rule's gap.
    price_of_fairness_ : pandas.DataFrame
        ``|dual|`` of every gap row (groups x events): the decrease of the optimal cost per unit
        of ``eps`` on that row.
    offsets_ : tuple of ndarray
        ``(D, b)``: the rule predicts ``argmin_k (s (C + D_g))_k + b_{g,k}`` on new score vectors.
    solution_ : MulticlassSolution
        The LP result.
    atoms_ : VectorAtoms
        The fitting sample's distinct (group, score vector) pairs; ``predict_proba`` gives a row
        equal to one of them that atom's fitted probabilities.
    eps_ : float
        Tolerance the LP was solved with (``eps`` minus the margin with ``confidence``).
    guarantee_ : Certificate or None
        With ``confidence``: the held-out gap, the margin and the method
        (:class:`~fairopt.guarantees.Certificate`); None otherwise.
    certified_eps_ : float
        With ``confidence``: population bound on every group's distance to the pooled rate.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> S = rng.dirichlet([1, 1, 1], 200); g = rng.integers(0, 2, 200)
    >>> S[g == 1] = 0.5 * S[g == 1] + [0.5, 0, 0]
    >>> deb = MulticlassDebiaser(constraint="demographic_parity").fit(S, sensitive_features=g)
    >>> P = deb.predict_proba(S, sensitive_features=g)
    >>> rates = np.array([P[g == k].mean(0) for k in (0, 1)])
    >>> bool(np.abs(rates[0] - rates[1]).max() < 1e-8), deb.classes_.tolist()
    (True, [0, 1, 2])
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": [None, HasMethods(["predict_proba"])],
        "prefit": ["boolean"],
        "constraint": [StrOptions(accepted_names(MULTICLASS_CONSTRAINTS))],
        "eps": [Interval(Real, 0, None, closed="left")],
        "cost": [None, "array-like"],
        "deterministic": ["boolean"],
        "score_bins": [None, Interval(Integral, 2, None, closed="left")],
        "calibration": [None, StrOptions(set(CALIBRATIONS))],
        "solver": [None, str, SolverSpec, dict],
        "random_state": RANDOM_STATE,
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
        "certify_size": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator: BaseEstimator | None = None, prefit: bool = False,
                 constraint: str = "demographic_parity", eps: float = 0.0, cost: ArrayLike | None = None,
                 deterministic: bool = False, score_bins: int | None = None, calibration: str | None = None,
                 solver: str | SolverSpec | dict[str, Any] | None = None,
                 random_state: int | np.random.Generator | None = None, confidence: float | None = None,
                 certify_size: float = 0.3) -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.constraint = constraint
        self.eps = eps
        self.cost = cost
        self.deterministic = deterministic
        self.score_bins = score_bins
        self.calibration = calibration
        self.solver = solver
        self.random_state = random_state
        self.confidence = confidence
        self.certify_size = certify_size

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.estimator is not None:
            from sklearn.utils import get_tags
            tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        return tags

    def __sklearn_clone__(self) -> MulticlassDebiaser:
        """Clone without refitting a prefit estimator (shared, as :class:`ThresholdDebiaser` does)."""
        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items() if k != "estimator"}
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, **params)

    # ------------------------------------------------------------------ inputs
    def _raw_scores(self, X: Any) -> np.ndarray:
        if self.estimator is None:
            if isinstance(X, pd.DataFrame) and getattr(self, "sensitive_columns_", None):
                X = X.drop(columns=self.sensitive_columns_)
            S = np.asarray(X, dtype=float)
        else:
            S = np.asarray(self.estimator_.predict_proba(X), dtype=float)
        return check_score_matrix(S, len(self.classes_) if hasattr(self, "classes_") else None)

    def _fit_labels_and_estimator(self, X: Any, y: Any, n: int, sw: np.ndarray | None) -> np.ndarray | None:
        if self.estimator is not None:
            if self.prefit:
                try:
                    sk_check_is_fitted(self.estimator)
                except Exception as exc:
                    raise NotFittedError(f"prefit=True but {type(self.estimator).__name__} is not fitted; fit it "
                                         "first or set prefit=False.") from exc
                self.estimator_ = self.estimator
            else:
                if y is None:
                    raise DataValidationError("y is required to fit the wrapped estimator (prefit=False): it requires "
                                              "y to be passed, but the target y is None.")
                self.estimator_ = clone(self.estimator)
                self.estimator_.fit(X, y, **({} if sw is None else {"sample_weight": sw}))
            self.classes_ = np.asarray(self.estimator_.classes_)
            for attr in ("n_features_in_", "feature_names_in_"):
                if hasattr(self.estimator_, attr):
                    setattr(self, attr, getattr(self.estimator_, attr))
            return None if y is None else label_codes(y, self.classes_, n, "MulticlassDebiaser.fit: y")
        if y is None:
            return None
        yv = np.asarray(y).reshape(-1)
        if yv.shape[0] != n:
            raise DataValidationError(f"y has {yv.shape[0]} labels but X has {n} rows.")
        codes, classes = pd.factorize(yv, sort=True)
        if (codes < 0).any():
            raise DataValidationError("y has missing labels.")
        self.classes_ = np.asarray(classes)
        out: np.ndarray = codes.astype(np.intp)
        return out

    def _cost(self, K: int) -> np.ndarray:
        if self.cost is None:
            return 1.0 - np.eye(K)
        C = np.asarray(self.cost, dtype=float)
        if C.shape != (K, K) or not np.isfinite(C).all():
            raise ConfigError(f"cost must be a finite {K} x {K} matrix (true class x predicted class) "
                              f"for the {K} classes {list(self.classes_)}; got shape {C.shape}.")
        return C

    def _prepare(self, S: np.ndarray, codes: np.ndarray) -> np.ndarray:
        if self.calibrator_ is not None:
            S = self.calibrator_.transform(S, codes)
        if self.score_bins is not None:
            S = quantise_scores(S, int(self.score_bins))
        return S

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any = None,
            sample_weight: ArrayLike | None = None) -> MulticlassDebiaser:
        """Fit the fair rule on the post-processing sample.

        Parameters
        ----------
        X : array-like or DataFrame
            Features for ``estimator``, or the ``(n_rows, n_classes)`` probability matrix.
        y : array-like, optional
            Labels: needed to fit a non-prefit estimator and for ``calibration``; without an
            estimator they name the probability columns (sorted). The rule itself never reads them.
        sensitive_features : array-like, DataFrame, or column name(s) of X
            Group of every row; several columns define intersectional groups.
        sample_weight : array-like, optional
            Non-negative row weights.

        Returns
        -------
        self : MulticlassDebiaser

        Raises
        ------
        InfeasibleError
            With ``confidence``: ``eps`` is below the margin the held-out sample allows
            (``tightest`` holds the smallest certifiable ``eps``).
        """
        validate_params(self)
        self.__dict__.pop("certified_eps_", None)
        if self._chunked(X):
            if y is not None:
                raise ConfigError("a chunked or Dask score matrix is fitted from the scores alone (classes_ are the "
                                  "column indices 0..K-1); pass y=None.")
            self._fit_chunked(X, sensitive_features, sample_weight)
            self.guarantee_ = None
            return self
        if self.confidence is None:
            self._fit(X, y, sensitive_features, sample_weight)
            self.guarantee_ = None
            return self
        holdout = MulticlassHoldout(self, X, y, sensitive_features, sample_weight, attempts=HOLDOUT_ATTEMPTS)
        atoms, cost, constraint = self._prepare_fit(*holdout.part())

        def fit_at(t: float) -> dict[str, Any]:
            self.eps_ = t
            self._solve_atoms(atoms, cost, constraint)
            return dict(self.__dict__)

        def certify(state: dict[str, Any]) -> Certificate:
            self.__dict__.update(state)
            return holdout.certify(self)

        state, cert, trained = certify_in_turn(fit_at, certify, holdout.eps, holdout.held_out_margin(self.classes_),
                                               holdout.confidence, "MulticlassDebiaser")
        self.__dict__.update(state)
        self.guarantee_, self.certified_eps_ = cert, cert.certified_eps
        warn_if_uncertified("MulticlassDebiaser", cert, holdout.eps, trained)
        return self

    def _fit(self, X: Any, y: Any, sensitive_features: Any, sample_weight: ArrayLike | None) -> None:
        """Fit at ``eps`` on all the rows."""
        atoms, cost, constraint = self._prepare_fit(X, y, sensitive_features, sample_weight)
        self.eps_ = float(self.eps)
        self._solve_atoms(atoms, cost, constraint)

    def _prepare_fit(self, X: Any, y: Any, sensitive_features: Any, sample_weight: ArrayLike | None
                     ) -> tuple[VectorAtoms, np.ndarray, str]:
        """Everything before the LP: groups, labels, the estimator, calibration and the atoms."""
        constraint = canonical(self.constraint)
        assert constraint is not None   # the parameter check accepts known names only
        n = num_rows(X)
        if n == 0:
            raise DataValidationError("X has no rows.")
        sw = None if sample_weight is None else check_weights(sample_weight, n)
        for attr in ("classes_", "sensitive_columns_"):
            self.__dict__.pop(attr, None)
        grp = check_groups(sensitive_features, n, X=X, min_groups=2)   # a constraint compares groups
        self.groups_ = grp.labels
        self.sensitive_columns_ = None if grp.columns is None else list(grp.columns)
        codes = grp.codes.astype(np.int64, copy=False)
        yv = self._fit_labels_and_estimator(X, y, n, sw)
        S = self._raw_scores(X)
        if not hasattr(self, "classes_"):
            self.classes_ = np.arange(S.shape[1])
        K, G = S.shape[1], len(self.groups_)
        cost = self._cost(K)
        self.calibrator_ = None
        if self.calibration is not None:
            if yv is None:
                raise DataValidationError(f"calibration={self.calibration!r} fits P(Y = k | score) on the fitting "
                                          "sample, so fit needs its labels y; pass y or set calibration=None.")
            self.calibrator_ = OneVsRestIsotonic(self.calibration == "isotonic_per_group")
            S = self.calibrator_.fit_transform(S, yv, codes, G, sw)
        if self.score_bins is not None:
            S = quantise_scores(S, int(self.score_bins))
        w = np.ones(n) if sw is None else sw
        return collapse_vectors(S, codes, w), cost, constraint

    def _chunked(self, X: Any) -> bool:
        """The fit reads ``X`` in chunks: a Dask array or a ``.npy`` path, or a memmap of scores
        with ``score_bins`` (a memmap of features, or without ``score_bins``, is read in memory)."""
        if not is_chunked_scores(X):
            return False
        if isinstance(X, np.memmap):
            return self.estimator is None and self.score_bins is not None
        return True

    def _fit_chunked(self, X: Any, sensitive_features: Any, sample_weight: Any) -> None:
        """The fit from a chunked or Dask score matrix: atoms accumulated chunk by chunk."""
        from fairopt.postprocessing.multiclass_chunked import chunked_atoms
        for what, bad in (("estimator=None (score the rows where they live, e.g. with map_blocks)",
                           self.estimator is not None),
                          ("score_bins (the statistics are counts per rounded score vector)", self.score_bins is None),
                          ("calibration=None", self.calibration is not None),
                          ("confidence=None", self.confidence is not None)):
            if bad:
                raise ConfigError(f"a chunked or Dask score matrix needs {what}.")
        constraint = canonical(self.constraint)
        assert constraint is not None   # the parameter check accepts known names only
        bins = self.score_bins
        assert bins is not None   # checked above
        atoms, labels = chunked_atoms(X, sensitive_features, int(bins), sample_weight)
        if atoms.n_atoms == 0:
            raise DataValidationError("the chunked input has no rows of positive weight.")
        self.groups_ = pd.Index(labels)
        self.sensitive_columns_ = None
        self.classes_ = np.arange(atoms.scores.shape[1])
        self.calibrator_ = None
        self.eps_ = float(self.eps)
        self._solve_atoms(atoms, self._cost(len(self.classes_)), constraint)

    def _solve_atoms(self, atoms: VectorAtoms, cost: np.ndarray, constraint: str) -> None:
        """Solve the LP over ``atoms`` and set the fitted attributes."""
        G, eps = len(self.groups_), self.eps_
        lp = MulticlassTransportLP(atoms, G, cost, constraint, eps)
        spec = default_spec("LP") if self.solver is None else SolverSpec.parse(self.solver)
        sol = solve_auto(lp, spec)
        self.solution_, self.events_, self.constraint_, self.cost_ = sol, lp.events, constraint, cost
        self.offsets_ = (sol.D, sol.b)
        atoms.row_atom = None
        self.atoms_ = atoms
        st = rule_stats(lp, sol)   # the deterministic rule differs from sol.q on tied atoms only
        if self.deterministic:
            q_det = sol.q.copy()
            q_det[st.tied] = np.eye(q_det.shape[1])[st.first_class]
        self.atom_proba_ = q_det if self.deterministic else sol.q
        self.randomized_cost_, self.randomized_gap_ = st.randomized
        self.train_cost_, self.train_gap_ = st.deterministic if self.deterministic else st.randomized
        self.tied_mass_, self.determinism_bound_ = st.tied_mass, st.bound
        self.determinism_cost_bound_ = st.cost_bound
        labels = [f"P(yhat={self.classes_[k]})" if j is None else f"P(yhat={self.classes_[k]}|Y={self.classes_[j]})"
                  for j, k in lp.events]
        self.price_of_fairness_ = pd.DataFrame(np.abs(sol.duals["gap"]), index=self.groups_, columns=labels)
        self.n_atoms_ = atoms.n_atoms

    def parametric_problem(self, X: Any, y: Any = None, *, sensitive_features: Any = None,
                           sample_weight: ArrayLike | None = None) -> ParametricProblem:
        """The exact-frontier LP of this debiaser on ``(X, sensitive_features)`` (see :doc:`/frontiers`).

        The LP of the fitted debiaser (its estimator, calibration, ``score_bins``, cost and
        criterion) on the given rows, with the tolerance as a parameter; its value at each ``eps``
        is ``train_cost_`` of a fit at that ``eps`` on these rows (the randomized optimum).
        ``y`` is not read: the cost is the expected cost under the calibrated scores.

        Examples
        --------
        >>> import numpy as np
        >>> from fairopt import frontier
        >>> rng = np.random.default_rng(0)
        >>> S, g = rng.dirichlet(np.ones(3), 300), rng.integers(0, 2, 300)
        >>> fr = frontier(MulticlassDebiaser(), S, np.argmax(S, axis=1), sensitive_features=g)
        >>> bool(np.all(np.diff(fr.value) <= 1e-12)), fr.method
        (True, 'exact LP')
        """
        n, codes, S = self._rows(X, sensitive_features)
        sw = np.ones(n) if sample_weight is None else check_weights(sample_weight, n)
        lp = MulticlassTransportLP(collapse_vectors(S, codes, sw), len(self.groups_), self.cost_, self.constraint_)
        return lp.parametric_problem()

    # ------------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "solution_"):
            raise NotFittedError("MulticlassDebiaser is not fitted; call fit(X, y, sensitive_features=...) first.")

    def _rows(self, X: Any, sensitive_features: Any) -> tuple[int, np.ndarray, np.ndarray]:
        """Row count, group codes and prepared (calibrated, binned) scores of new rows."""
        self._check_fitted()
        n = num_rows(X)
        if sensitive_features is None and self.sensitive_columns_:
            sensitive_features = self.sensitive_columns_
        if sensitive_features is None:
            raise DataValidationError("sensitive_features is required: pass the group of every row.")
        codes = Groups(np.zeros(0, np.intp), self.groups_).encode(sensitive_features, n, X=X).astype(np.int64)
        return n, codes, self._prepare(self._raw_scores(X), codes)

    def predict_proba(self, X: Any, sensitive_features: Any = None) -> np.ndarray:
        """Class probabilities of the fitted rule per row (columns in the order of ``classes_``;
        one-hot with ``deterministic=True``)."""
        n, codes, S = self._rows(X, sensitive_features)
        atom = self.atoms_.lookup(codes, S)
        hit = atom >= 0
        out = np.empty((n, S.shape[1]))
        out[hit] = self.atom_proba_[atom[hit]]
        if not hit.all():      # new score vectors: offset-adjusted argmin, first class on exact ties
            D, b = self.offsets_
            adj = adjusted_costs(S[~hit], codes[~hit], self.cost_, D, b)
            out[~hit] = np.eye(S.shape[1])[np.argmin(adj, axis=1)]
        return out

    def predict(self, X: Any, sensitive_features: Any = None,
                random_state: int | np.random.Generator | None = None) -> np.ndarray:
        """One draw per row from :meth:`predict_proba` (reproducible through ``random_state``, the
        argument or else the estimator's); with ``deterministic=True`` the rule's class."""
        P = self.predict_proba(X, sensitive_features)
        if self.deterministic:
            det: np.ndarray = self.classes_[np.argmax(P, axis=1)]
            return det
        rng = as_generator(self.random_state if random_state is None else random_state)
        u = np.asarray(rng.random(P.shape[0]), dtype=float)[:, None]
        idx = np.minimum((np.cumsum(P, axis=1) < u).sum(axis=1), P.shape[1] - 1)
        drawn: np.ndarray = self.classes_[idx]
        return drawn

    def score(self, X: Any, y: Any, sample_weight: ArrayLike | None = None, sensitive_features: Any = None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``."""
        pred = self.predict(X, sensitive_features=sensitive_features)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return float(np.average(np.asarray(pred) == np.asarray(y).reshape(-1), weights=w))


