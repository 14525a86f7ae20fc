"""Randomized-threshold post-processing (Alabdulmohsin & Lucic 2021): :class:`ThresholdDebiaser`."""
from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from fairopt._param_validation import HasMethods, Interval, StrOptions
from fairopt._utils import as_generator
from fairopt.criteria import accepted_names, criterion, resolve
from fairopt.errors import DataValidationError
from fairopt.formulations.constrained_classification.solution import ThresholdSolution as ThresholdSolutionType
from fairopt.guarantees import Certificate, tightened_eps
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import accepts, capabilities, default_spec, parse_solver, resolve_solver
from fairopt.postprocessing import _statistics
from fairopt.postprocessing._certify import cell_counts, certificate, threshold_margin
from fairopt.postprocessing._scores import SCORE_MAPS, ScoreMap, Source
from fairopt.postprocessing._threshold_frontier import _ThresholdFrontierMixin
from fairopt.stats import is_dask
from fairopt.validation import (
    RANDOM_STATE,
    Groups,
    check_group_weights,
    check_groups,
    check_options,
    check_weights,
    decode_labels,
    proba_columns,
    validate_params,
)

if TYPE_CHECKING:
    from fairopt.formulations.constrained_classification import IsotonicScoreMap, RandomizedThresholdParity
    from fairopt.formulations.constrained_classification.covariance import RandomizedThresholdCovariance
    from fairopt.formulations.constrained_classification.odds import OddsSolution, ThresholdMixtureOdds
    from fairopt.formulations.constrained_classification.solution import ThresholdSolution

    _Form = RandomizedThresholdParity | RandomizedThresholdCovariance | ThresholdMixtureOdds

__all__ = ["ThresholdDebiaser"]

CONSTRAINTS = ("demographic_parity", "covariance", "equal_opportunity", "equalized_odds")
CALIBRATIONS = (None, "auto", "isotonic", "isotonic_per_group")
#: keys ``solver_options`` may hold, by back end (``native`` takes none)
SGD_OPTIONS = ("n_steps", "batch_size", "step_size", "sampling", "random_state")
PROGRAM_OPTIONS = ("time_limit", "verbose", "options")
#: criteria on the labels: linear programs, not threshold problems


class ThresholdDebiaser(_ThresholdFrontierMixin, ClassifierMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Randomized-threshold post-processing of a trained score (Alabdulmohsin & Lucic 2021).

    For a row with score ``f`` in group ``k`` the debiased rule predicts 1 with probability
    ``h = clip((f - t_k)/gamma, 0, 1)``: deterministic far from the group's threshold ``t_k`` and
    randomized on the ramp ``(t_k, t_k + gamma)``. The thresholds solve the strongly convex QP
    ``min (gamma/2) E[h^2] - E[h f]`` subject to the fairness constraint on the post-processing
    sample, so the rule changes as few confident predictions as possible.

    Parameters
    ----------
    estimator : estimator or None, default None
        Model whose scores are debiased. ``None``: ``X`` is itself a 1-D array of scores (from
        any model, including non-Python ones).
    prefit : bool, default False
        ``estimator`` is already fitted; ``fit`` only learns the thresholds. Keep the
        post-processing sample disjoint from the estimator's training data.
    constraint : {"demographic_parity", "covariance", "equal_opportunity", "equalized_odds"}
        Fairness criterion. ``demographic_parity``: every group's positive rate within
        ``eps/2`` of ``rho`` (or, with ``rho=None``, all rates within ``eps`` of each other).
        ``covariance``: ``|Cov(h, 1_S | subgroup)| <= eps`` for a binary sensitive attribute
        (Appendix E.1). ``equal_opportunity`` / ``equalized_odds``: true (and false) positive
        rates within ``eps`` of each other, with a monotone mixture of thresholds fitted by LP
        (needs ``y``; ``gamma`` is unused).
    gamma : float, default 0.01
        Width of the randomization ramp in score units. Larger values randomize more rows
        (smoother, more stable on new data, slightly less accurate); ``0`` is the pure
        threshold rule with one fractional level (LP). The small default keeps the rule close to
        the accuracy-optimal threshold rule (see ``calibration``); raise it for rates that move
        less on new data.
    eps : float, default 0.0
        Tolerated unfairness (see ``constraint``). ``0`` is exact parity on the fitting sample.
    rho : float in [0, 1] or None, default None
        Common target positive rate for ``demographic_parity``; ``None`` lets the optimisation
        choose it (Definition 1 exactly). The paper tunes it near the base rate ``E[y]``.
    solver : str, SolverSpec, dict or None, default None
        A solver of threshold problems (``fairopt solvers``): ``None`` or ``"native"`` (exact,
        ``O(n log n)``), ``"sgd"`` (projected SGD, fixed ``rho``), or a :mod:`fairopt.modeling`
        Program solver (``"osqp"``, ``"highs"``, ``"cvxpy[:SOLVER]"``, ``"pyomo[:SOLVER]"``).
        Equal opportunity / odds are LPs: ``None`` and the default threshold solver mean the
        registry's LP solver there.
    random_state : int, Generator or None
        Seed of ``predict``'s sampling (and of the SGD).
    score_map : {"auto", "proba", "logit", "identity"}, default "auto"
        How raw scores are mapped to ``[-1, 1]`` (see the module docstring).
    solver_options : dict or None
        Extra options for the solver (e.g. ``{"n_steps": 8000}`` for SGD, ``{"time_limit": 10}``).
    calibration : {"auto", None, "isotonic", "isotonic_per_group"}, default "auto"
        Recalibration of the mapped scores on the labelled fitting sample (needs ``y``
        at fit). The rule maximises ``E[h f]``, which is accuracy only when ``f = 2 eta - 1``.
        ``"isotonic"`` fits one non-decreasing regression ``eta_hat`` of ``y`` on the score and
        uses ``f = 2 eta_hat - 1``; it keeps the score order and merges blocks of scores into ties.
        ``"isotonic_per_group"`` fits one per group. On the fitting sample ``E[h f]`` is then the
        accuracy of every rule constant on the isotonic blocks, so with ``gamma -> 0`` and free
        ``rho`` the fitted rule is the most accurate such parity rule there. The same map is
        applied at predict time (linear between breakpoints, clipped outside the fitted range).
        ``None`` uses the scores as mapped by ``score_map``. ``"auto"`` (default) is
        ``"isotonic_per_group"`` for ``demographic_parity`` when ``y`` is given at fit and ``None``
        otherwise: most classifiers' scores are not calibrated per group (random forests, kNN),
        and on Adult with a random forest the uncalibrated defaults lost 0.16 accuracy points
        (± 0.04, 10 re-splits) to fairlearn's ``ThresholdOptimizer`` while ``"auto"`` with
        ``gamma=0.01`` matches it (−0.000 ± 0.002 points).
    solver_options : dict or None
        Extra options for the solver (e.g. ``{"n_steps": 8000}`` for SGD, ``{"time_limit": 10}``).
    score_bins : int >= 2 or None, default None
        Quantised mode for huge score sets: every (mapped) score is rounded to the centre of one
        of ``score_bins`` equal bins over its group's observed score range, at fit and at predict
        time, so the fit reads ``O(score_bins * n_groups)`` statistics whatever the number of rows
        (every constraint and calibration supported). Rounding moves a score by at most half a bin
        width, so the fitted rule's objective ``E[h f] - (gamma/2) E[h^2]`` on the sample is
        within ``max_k (hi_k - lo_k) / score_bins`` (``<= 2 / score_bins``) of the exact optimum,
        and the fitted rates meet the constraint exactly (see ``docs/scaling.md``). ``None``:
        exact scores. Inputs may also be chunked (``numpy.memmap``, ``.npy`` path) or Dask
        collections; see ``docs/scaling.md``.
    pos_label : str, int, bool or None, default None
        The favourable label of ``y`` (the label whose rate the rule sets). ``None`` means 1 when
        the labels are 0/1, otherwise the greater of the two sorted labels (``classes_[1]``,
        scikit-learn's positive class); without ``y``, the labels are a prefit estimator's two
        ``classes_`` (else 0/1). Demographic parity, covariance and equalized odds are symmetric
        in the two labels, so the choice only relabels the rule; equal opportunity bounds the
        true-positive rates of ``pos_label``, so it changes with it. ``y`` is encoded once to 0/1
        (1 = ``pos_label``; a wrapped estimator that is not prefit is fitted on that encoding)
        and predictions are decoded back to the labels of ``y``. Chunked and Dask inputs need
        0/1 labels (``pos_label`` None or 1).

    confidence : float in (0, 1) or None, default None
        Certify the constraint on the population, not only on the fitting sample: the fit uses
        the tolerance ``eps`` minus the DKW margin of the group score CDFs (union-bounded over
        the groups and, for the error-rate criteria, the label values), so that with probability
        at least ``confidence`` the population's gap is at most ``certified_eps_ <= eps``. The
        bound holds uniformly over threshold rules, so it covers the rule fitted on the same
        rows (see :doc:`/guarantees`). An ``eps`` below the margin raises
        :class:`~fairopt.errors.InfeasibleError` with the smallest certifiable ``eps`` in
        ``tightest``. Needs unweighted in-memory rows and a rate criterion (not ``covariance``).

    Attributes
    ----------
    guarantee_ : Certificate or None
        With ``confidence``: the sample gap, the margin and the method
        (:class:`fairopt.guarantees.Certificate`); ``None`` otherwise.
    certified_eps_ : float
        With ``confidence``: population gap bound holding with that probability.
    cell_counts_ : ndarray of shape (n_groups, n_conditions)
        Fitting rows per group (and per label value for the error-rate criteria): what the DKW
        margin of ``confidence`` and :meth:`certify_gap` read (in-memory fits of rate criteria).
    thresholds_ : ndarray of shape (n_groups,)
        Thresholds ``t_k`` aligned with ``groups_`` (for ``covariance``: shape
        ``(n_subgroups, 2)``, columns for outside / inside the sensitive class; for the label
        criteria: list of per-group arrays of cut points of the step rule).
    gamma_, rho_, eps_ : float
        Fitted ramp width, target rate (the optimal one when ``rho=None``) and the tolerance the
        rule was fitted to (``eps``, minus the margin with ``confidence``).
    groups_ : pandas.Index
        Group labels seen at fit (tuples for several sensitive columns).
    fitted_rates_ : ndarray
        Constraint values on the fitting sample (group positive rates; covariances; TPRs).
    solution_ : object
        Full solver result (duals, objective, timings).
    calibration_ : str or None
        The calibration applied (``"auto"`` resolved).
    calibrator_ : IsotonicScoreMap or None
        The fitted score calibration (``None`` without ``calibration``); its ``breakpoints_``
        hold the isotonic steps (per group for ``"isotonic_per_group"``).
    score_grid_ : tuple (lo, hi, bins) or None
        With ``score_bins``: each group's score range and the number of bins of the grid.
    classes_ : ndarray of shape (2,)
        The two labels (sorted); ``predict`` returns them and ``predict_proba``'s columns follow
        their order.
    pos_label_ : object
        The favourable label (``pos_label`` resolved).

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([-1, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, -1.0])
    >>> g = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    >>> deb = ThresholdDebiaser(gamma=0.5, rho=0.4).fit(f, sensitive_features=g)
    >>> deb.predict_proba(np.array([-1.0, 0.0, 1.0]), sensitive_features=[1, 1, 0])[:, 1].round(3)
    array([0. , 0.7, 1. ])
    """

    #: fitted cut points: per group (parity), per cell pair (covariance) or per rule (odds), set by ``fit``
    thresholds_: np.ndarray | list[np.ndarray]

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        # a prefit model only needs a scoring method; fit is checked when it is called
        "estimator": [None, HasMethods(["predict_proba"]), HasMethods(["decision_function"]),
                      HasMethods(["predict"])],
        "prefit": ["boolean"],
        "constraint": [StrOptions(accepted_names(CONSTRAINTS))],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "eps": [Interval(Real, 0, 1, closed="both")],
        "rho": [None, Interval(Real, 0, 1, closed="both")],
        "solver": [None, str, SolverSpec, dict],
        "random_state": RANDOM_STATE,
        "score_map": [StrOptions(set(SCORE_MAPS))],
        "solver_options": [None, dict],
        "calibration": [None, StrOptions({c for c in CALIBRATIONS if c is not None})],
        "score_bins": [None, Interval(Integral, 2, None, closed="left")],
        "pos_label": [None, str, Real, "boolean"],   # checked against the labels of y at fit
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, estimator: BaseEstimator | None = None, prefit: bool = False,
                 constraint: str = "demographic_parity", gamma: float = 0.01, eps: float = 0.0,
                 rho: float | None = None, solver: str | SolverSpec | Mapping[str, Any] | None = None,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 score_map: ScoreMap = "auto", solver_options: dict[str, Any] | None = None,
                 calibration: Literal["auto", "isotonic", "isotonic_per_group"] | None = "auto",
                 score_bins: int | None = None, pos_label: str | int | bool | None = None,
                 confidence: float | None = None) -> None:
        self.estimator = estimator
        self.prefit = prefit
        self.constraint = constraint
        self.gamma = gamma
        self.eps = eps
        self.rho = rho
        self.solver = solver
        self.random_state = random_state
        self.score_map = score_map
        self.solver_options = solver_options
        self.calibration = calibration
        self.score_bins = score_bins
        self.pos_label = pos_label
        self.confidence = confidence

    def __sklearn_clone__(self) -> ThresholdDebiaser:
        """Clone without refitting: a prefit estimator is shared, not cloned into an unfitted copy
        (so ``cross_val_score`` over the post-processing sample works with ``prefit=True``)."""
        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items()
                  if k != "estimator"}
        est = self.estimator if (self.prefit or self.estimator is None) else clone(self.estimator)
        return type(self)(estimator=est, **params)

    def _constraint(self) -> str:
        c = resolve(self.constraint, CONSTRAINTS)   # aliases resolve in fairopt.criteria
        return c

    def _solver_spec(self, constraint: str) -> SolverSpec | None:
        """The ``solver`` parameter parsed once (typed errors for an unknown solver); ``None``
        means the registry's default for the constraint's kind."""
        spec = parse_solver(self.solver)
        if criterion(constraint).needs_labels and spec is not None and not accepts(spec, "LP") \
                and spec.backend == default_spec("threshold").backend:
            spec = None   # the label criteria are LPs: the default threshold solver means the LP default
        kind = "LP" if criterion(constraint).needs_labels else "threshold"
        if spec is not None and not (kind == "threshold" and accepts(spec, "threshold")):
            # a Program solver: checked for the Program's kind when the form is solved, but an
            # unknown name is refused here, before any statistics are computed
            resolve_solver(spec, "LP" if kind == "LP" or (self.gamma == 0) else "QP")
        return spec

    def _solver_options(self, constraint: str) -> dict[str, Any]:
        """``solver_options`` checked against what the chosen solver reads (unknown keys raise)."""
        spec = self._solver_spec(constraint)
        kind = "LP" if criterion(constraint).needs_labels else "threshold"
        used = resolve_solver(spec, kind if accepts(spec, kind) else ("QP" if self.gamma > 0 else "LP"))
        shown = used.backend if used.solver in (None, used.backend) else used.label   # what runs
        if accepts(spec, kind) and kind == "threshold":
            # the problem's own algorithms: the exact one takes no options, the streaming one its own
            allowed: tuple[str, ...] = () if capabilities(resolve_solver(spec, kind))["exact"] else SGD_OPTIONS
        else:
            allowed = PROGRAM_OPTIONS
        return check_options(self, "solver_options", self.solver_options, allowed,
                             f"solver={shown!r} with constraint={constraint!r}")

    def fit(self, X: Source, y: Source | None = None, sensitive_features: Source | None = None,
            subgroups: ArrayLike | None = None, sample_weight: Source | None = None) -> ThresholdDebiaser:
        """Learn the group thresholds on the post-processing sample.

        Parameters
        ----------
        X : array-like
            Features for ``estimator``, or a 1-D array of scores when ``estimator=None``.
        y : array-like of two labels, optional
            Labels (``pos_label`` the favourable one); needed for the label-based constraints, for
            ``calibration`` and to fit a non-prefit estimator.
        sensitive_features : array-like, DataFrame, or column name(s) of X
            Group of every row; several columns define intersectional groups (the paper's
            gender x ethnicity). For ``covariance``, the binary sensitive attribute.
        subgroups : array-like, optional
            Covariance only: subgroups ``k`` within which the covariance is bounded.
        sample_weight : array-like, optional
            Row weights.
        """
        from fairopt.formulations.constrained_classification import RandomizedThresholdParity
        from fairopt.formulations.constrained_classification.atoms import collapse_atoms
        from fairopt.formulations.constrained_classification.covariance import (
            RandomizedThresholdCovariance,
        )
        from fairopt.formulations.constrained_classification.odds import (
            ThresholdMixtureOdds,
        )
        validate_params(self)
        constraint = self._constraint()
        opts = self._solver_options(constraint)
        self.eps_ = float(self.eps)
        self.guarantee_: Certificate | None = None
        if self._by_statistics(X, y, sensitive_features, sample_weight):
            if self.confidence is not None:
                raise DataValidationError("confidence is computed from in-memory rows; chunked and Dask inputs are "
                                          "fitted without it (use confidence=None, or pass NumPy/pandas inputs).")
            out: ThresholdDebiaser = _statistics.fit_lazy(self, X, y, sensitive_features, subgroups, sample_weight,
                                                          constraint)
            return out
        n = self._n_rows(X)
        if n == 0:
            raise DataValidationError("X has no rows.")
        sw = None if sample_weight is None else check_weights(sample_weight, n)
        yv = self._fit_labels(y, n, "ThresholdDebiaser.fit")     # 0/1, 1 = pos_label
        codes = self._fit_groups(sensitive_features, X, n, min_groups=2)   # a constraint compares groups
        if sw is not None:
            check_group_weights(Groups(codes, self.groups_), sw, "ThresholdDebiaser.fit")
        self.__dict__.pop("cell_counts_", None)
        if criterion(constraint).conditions is not None and (yv is not None or not criterion(constraint).needs_labels):
            self.cell_counts_ = cell_counts(codes, len(self.groups_), yv, constraint)
        if self.confidence is not None:
            self._margin = threshold_margin(getattr(self, "cell_counts_", None), constraint, self.confidence, sw,
                                            "ThresholdDebiaser.fit")
            self.eps_ = tightened_eps(float(self.eps), self._margin[0], float(self.confidence), "ThresholdDebiaser")
        self._fit_estimator(X, yv, sw)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        if self.score_bins is not None:
            if subgroups is not None:
                raise DataValidationError("score_bins with covariance subgroups is not supported; fit the "
                                          "subgroups separately or set score_bins=None.")
            out = _statistics.fit_statistics(self, f, codes, np.arange(len(self.groups_)), yv, sw,
                                                                constraint)
            return out
        self.score_grid_ = None
        self.calibrator_ = None
        calibration = self.calibration
        if calibration == "auto":
            calibration = "isotonic_per_group" if yv is not None and constraint == "demographic_parity" else None
        self.calibration_ = calibration
        if calibration is not None:
            if yv is None:
                raise DataValidationError(f"calibration={self.calibration!r} fits P(y=1 | score) on the "
                                          "fitting sample, so fit needs its labels y; pass y or set "
                                          "calibration=None.")
            # fitted on the labelled score atoms (one sort of the rows), which the parity form reads too
            at = collapse_atoms(f, codes, len(self.groups_), sw, labels=yv)
            self.calibrator_, at = _statistics.calibrate_atoms(at, calibration == "isotonic_per_group")
            if constraint == "demographic_parity":
                parity = RandomizedThresholdParity(gamma=self.gamma, eps=self.eps_, rho=self.rho, atoms=at)
                return self._solve_form(parity, constraint, opts)
            f = self.calibrator_.transform(f, codes)
        form: _Form
        if constraint == "demographic_parity":
            form = RandomizedThresholdParity(f, codes, self.gamma, self.eps_, self.rho, sw, len(self.groups_))
        elif constraint == "covariance":
            if len(self.groups_) != 2:
                raise DataValidationError(f"constraint='covariance' needs a binary sensitive attribute; got "
                                          f"{len(self.groups_)} groups {list(self.groups_)[:5]}.")
            if subgroups is None:
                sub_codes, self.subgroups_ = np.zeros(n, np.int64), pd.Index([None])
            else:
                sub = check_groups(subgroups, n, X=X, name="subgroups")
                sub_codes, self.subgroups_ = sub.codes, sub.labels
            form = RandomizedThresholdCovariance(f, codes, sub_codes, self.gamma, self.eps_, sw, len(self.subgroups_))
        else:
            if yv is None:
                raise DataValidationError(f"constraint={constraint!r} needs the labels y of the fitting sample.")
            form = ThresholdMixtureOdds(f, codes, yv, constraint, self.eps_, sample_weight=sw,
                                        n_groups=len(self.groups_))
        return self._solve_form(form, constraint, opts)

    def _by_statistics(self, *inputs: object) -> bool:
        """Inputs go the chunked / Dask way: any is a Dask collection, a memmap or a path, except
        that a wrapped estimator reads arrays (a memmap too) in memory."""
        if self.estimator is not None and all(a is None or isinstance(a, np.ndarray) for a in inputs):
            return False
        return _statistics.lazy_input(*inputs)

    def _solve_form(self, form: _Form, constraint: str, opts: Mapping[str, Any]) -> ThresholdDebiaser:
        """Solve a built threshold form with the estimator's solver and store the fitted rule (the
        one tail of the in-memory and the statistics fits)."""
        spec = self._solver_spec(constraint)
        opts = dict(opts)
        sol: ThresholdSolution | OddsSolution
        if constraint in ("demographic_parity", "covariance"):
            if accepts(spec, "threshold") and not capabilities(resolve_solver(spec, "threshold"))["exact"]:
                opts.setdefault("random_state", self.random_state)   # a stochastic algorithm (sgd)
            # parity and covariance forms return a ThresholdSolution
            sol = cast("ThresholdSolution", form.solve(spec, **opts))
            if constraint == "demographic_parity":
                self.thresholds_, self.tie_probs_ = sol.thresholds, sol.tie_probs
                self.gamma_, self.rho_, self.fitted_rates_ = sol.gamma, sol.rho, sol.rates
            else:
                self.thresholds_ = sol.thresholds.reshape(-1, 2)
                self.gamma_, self.rho_, self.fitted_rates_ = sol.gamma, float("nan"), sol.rates
        else:   # the label criteria are LPs (see _solver_spec); the odds form returns an OddsSolution
            sol = cast("OddsSolution", form.solve(spec, **opts))
            self.rules_ = sol.rules
            self.thresholds_ = [r.cuts for r in sol.rules]
            self.gamma_, self.rho_, self.fitted_rates_ = 0.0, float(np.mean(sol.tpr)), sol.tpr
        self.solution_ = sol
        self.constraint_ = constraint
        if self.confidence is not None:
            if isinstance(sol, ThresholdSolutionType):
                rates = [sol.rates]
            else:
                rates = [sol.tpr] if constraint == "equal_opportunity" else [sol.tpr, sol.fpr]
            margin, per_rate, n_rows = self._margin
            cert = certificate(rates, margin, per_rate, float(self.confidence), n_rows)
            self.guarantee_, self.certified_eps_ = cert, cert.certified_eps
        return self

    def decision_probability(self, X: Source, sensitive_features: Source | None = None,
                             subgroups: ArrayLike | None = None) -> np.ndarray:
        """``P(y_hat = 1)`` of every row under the randomized rule (fully vectorised)."""
        self._check_fitted()
        if self._by_statistics(X, sensitive_features):
            return _statistics.decision_probability_lazy(self, X, sensitive_features)
        n = self._n_rows(X)
        f = self._scores(X, drop=self.sensitive_columns_ if self.estimator is None else None)
        k = self._groups_at_predict(X, sensitive_features, n)
        f = _statistics.quantise_fitted(self, f, k)
        calibrator: IsotonicScoreMap | None = getattr(self, "calibrator_", None)
        if calibrator is not None:
            f = calibrator.transform(f, k)
        if self.constraint_ == "covariance":      # cells of the covariance solution: 2 * subgroup + s
            if subgroups is None and len(self.subgroups_) == 1:
                sub = np.zeros(n, dtype=np.int64)
            else:
                sub = Groups(np.zeros(0, np.intp), self.subgroups_).encode(subgroups, n, X=X, name="subgroups")
            k = 2 * sub + k
        return self.solution_.decision_probability(f, k)

    def predict_proba(self, X: Source, sensitive_features: Source | None = None,
                      subgroups: ArrayLike | None = None) -> np.ndarray:
        """Probabilities of the randomized rule's labels, columns in the order of ``classes_``
        (``[P(y_hat=0), P(y_hat=1)]`` for 0/1 labels)."""
        h = self.decision_probability(X, sensitive_features, subgroups)
        out: np.ndarray = proba_columns(h, self._pos_index)
        return out

    def predict(self, X: Source, sensitive_features: Source | None = None, subgroups: ArrayLike | None = None,
                random_state: int | np.random.RandomState | np.random.Generator | None = None) -> np.ndarray:
        """Sampled labels: ``pos_label_`` with probability ``h`` (``y_hat ~ Bernoulli(h)``), the
        other label of ``classes_`` otherwise; reproducible through ``random_state`` (the
        argument, else the estimator's)."""
        h = self.decision_probability(X, sensitive_features, subgroups)
        if is_dask(h):      # chunked fits have 0/1 labels: the draws are the labels
            out: np.ndarray = _statistics.sample_lazy(h, self.random_state if random_state is None else random_state)
            return out
        rng = as_generator(self.random_state if random_state is None else random_state)
        return decode_labels(rng.random(h.shape[0]) < h, self.classes_, self._pos_index)
