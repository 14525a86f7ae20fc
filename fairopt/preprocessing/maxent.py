"""Max-entropy fair resampler (Celis, Keswani & Vishnoi 2020): :class:`MaxEntResampler`."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fairopt._docstrings import fill_doc
from fairopt._param_validation import Interval, StrOptions
from fairopt._utils import as_generator
from fairopt.data import Domain
from fairopt.errors import DataValidationError, SolverError
from fairopt.formulations.maxent import Encoding, MaxEnt
from fairopt.formulations.maxent.model import PRIORS, TARGETS
from fairopt.guarantees import no_guarantee
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import parse_solver
from fairopt.preprocessing._frame import _decode, _FrameMixin, _n_samples, _pos_level, _share, check_sample_weight
from fairopt.validation import MAX_LEVELS, RANDOM_STATE, check_levels, validate_params

if TYPE_CHECKING:
    import polars as pl
    from numpy.typing import ArrayLike, NDArray

    from fairopt.formulations.maxent.model import MaxEntDistribution
    from fairopt.preprocessing._frame import Records, Seed

__all__ = ["MaxEntResampler"]


@fill_doc
class MaxEntResampler(_FrameMixin, BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Max-entropy fair resampler (Celis, Keswani & Vishnoi, ICML 2020).

    Learns ``p* = argmin_p KL(p || q)`` subject to ``E_p[α] = θ`` over the product domain of the
    columns (every level of every column is a one-hot feature), with prior
    ``q = C·uniform + (1 − C)·w``. Sampling ``p*`` gives synthetic records, also at points never
    observed.

    Parameters
    ----------
    C : float in [0, 1], default 0.5
        Weight of the uniform distribution in the prior. Fairness meaning: the uniform part has
        statistical and representation rate 1, so mixing it in never hurts fairness; larger ``C``
        spreads mass over unseen records (generalisation) at the cost of fidelity to the data.
    prior : {"reweighted", "data"}, default "reweighted"
        ``w`` from Algorithm 1 (labels independent of the protected attribute: the prior has
        statistical rate exactly 1 for ``tau = 1``, ``q_C^w``), or the raw frequencies (``q_C^d``).
    target : {"weighted", "balanced", "data", "prior"}, array or mapping, default "weighted"
        Expected value ``θ`` of every one-hot feature: ``θ^w`` (means under ``w``: protected shares
        ``∝ tau``), ``θ^b`` (raw means with equal protected shares: representation rate 1),
        ``θ^d`` (raw means: keeps the raw representation), ``"prior"`` (``p* = q``) or a user
        target ``{column: level probabilities}``.
    tau : float in (0, 1] or sequence, default 1.0
        Algorithm 1 factor: group shares under ``w`` are ``∝ tau_z`` (a float scales the first
        level of the protected column). Sets the representation rate of ``θ^w`` to ``tau``.
    solver : str, SolverSpec, dict or None, default None
        ``"native"``, ``"scipy[:trust-exact|trust-krylov|L-BFGS-B]"``, ``"cvxpy[:CLARABEL|SCS]"``
        or ``"pyomo[:ipopt]"``.
    tol : float, default 1e-8
        Max marginal violation ``‖E_p[α] − θ‖∞`` accepted as converged.
    max_iter : int, default 100
    random_state : int, Generator or None
        Default seed of :meth:`sample`.
    theta_smoothing : float, default 0
        Mix the one-hot targets with uniform (needed when a declared level has no rows).
    pos_label : optional
        Favourable label value for :meth:`statistical_rate` (default 1 if it is a level, else the
        last level).
    domain : fairopt.data.Domain, optional
        Fixes the level sets (e.g. from the full data or a schema) instead of reading them from
        the fitted frame.
    max_levels : int or None, default 5000 (``fairopt.validation.MAX_LEVELS``)
        Most levels summed over all columns (the label and the sensitive feature included). The
        counting oracle and the dual grow with this sum, never with the product of the levels
        (the domain size, which may be 10^10 or more): a fit with more levels is refused up
        front with the memory its Newton Hessian would need. ``None``: no limit.
    {confidence_uncertified}

    Attributes
    ----------
    lambda_ : Series
        Dual parameters ``λ*`` by one-hot feature ``"column=level"`` (reference levels are 0).
    theta_ : Series
        Target ``θ`` by one-hot feature ``"column=level"``.
    prior_weights_ : ndarray (n_samples,)
        Weight of each training row in ``w`` (sums to 1).
    n_iter_, solve_seconds_, max_violation_, kl_ : int, float, float, float
        Iterations, wall time of the dual solve, final ``‖E_p[α] − θ‖∞`` and ``KL(p* || q)``.
    model_, solution_, distribution_ : MaxEnt, MaxEntSolution, MaxEntDistribution
    domain_ : fairopt.data.Domain
        Product domain of the fitted columns (levels and code order of the samples).

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> records = load_builtin("compas").expand()
    >>> X, y = records.drop(columns="two_year_recid"), records["two_year_recid"]
    >>> resampler = MaxEntResampler(C=0.5, target="balanced", random_state=0)
    >>> resampler = resampler.fit(X, y, sensitive_features="sex")
    >>> round(resampler.representation_rate(), 6)
    1.0
    >>> resampler.sample(100).shape[0]
    100
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "C": [Interval(Real, 0, 1, closed="both")],
        "prior": [StrOptions(set(PRIORS))],
        "target": [StrOptions(set(TARGETS)), "array-like", dict],
        "tau": [Interval(Real, 0, 1, closed="right"), "array-like"],
        "solver": [None, str, SolverSpec, dict],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE,
        "theta_smoothing": [Interval(Real, 0, 1, closed="both")],
        "pos_label": "no_validation",
        "domain": [None, Domain],
        "max_levels": [None, Interval(Integral, 1, None, closed="left")],
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, C: float = 0.5, prior: str = "reweighted",
                 target: str | ArrayLike | Mapping[str, Any] = "weighted", tau: float | Sequence[float] = 1.0,
                 solver: str | SolverSpec | dict[str, Any] | None = None, tol: float = 1e-8, max_iter: int = 100,
                 random_state: Seed = None, theta_smoothing: float = 0.0, pos_label: object = None,
                 domain: Domain | None = None, max_levels: int | None = MAX_LEVELS,
                 confidence: float | None = None) -> None:
        self.C = C
        self.prior = prior
        self.target = target
        self.tau = tau
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.theta_smoothing = theta_smoothing
        self.pos_label = pos_label
        self.domain = domain
        self.max_levels = max_levels
        self.confidence = confidence

    def fit(self, X: Records, y: ArrayLike, sensitive_features: Any = None,
            sample_weight: ArrayLike | None = None) -> MaxEntResampler:
        """Learn the max-entropy distribution of the records ``(X, sensitive, y)``.

        ``X`` may also be a Dask DataFrame or a Parquet path (with ``y`` and ``sensitive_features``
        column names or aligned Dask Series): the records are then counted where they live
        (:func:`fairopt.stats.collapse_records`) and the fit runs on the distinct records with
        their counts as weights; ``prior_weights_`` is then one weight per distinct record.
        """
        X, y, sensitive_features, sample_weight = _collapse_if_lazy(X, y, sensitive_features, sample_weight)
        self.__dict__.pop("_prior_dist", None)   # the prior of an earlier fit must not survive a refit
        validate_params(self)
        no_guarantee(self, "MaxEntResampler.fit",
                     "tau sets the representation rate of the fitted distribution, not a rate of a "
                     "decision rule on the population",
                     "certify the downstream classifier with FairClassifier(confidence=...) or "
                     "ThresholdDebiaser(confidence=...)")
        _, codes, label, protected = self._prepare(X, y, sensitive_features, self.domain)
        dom = self.domain_
        check_levels(dict(zip(dom.names, dom.cardinalities, strict=True)), "MaxEntResampler.fit", self.max_levels)
        sample_weight = check_sample_weight(sample_weight, dom, codes, self.sensitive_name_, "MaxEntResampler.fit")
        enc = Encoding.make(dom.cardinalities, "onehot", names=dom.names)
        target = self.target
        if not isinstance(target, str) and hasattr(target, "keys"):
            target = {k: self._level_vector(k, v) for k, v in dict(cast("Mapping[str, Any]", target)).items()}
        self.model_ = MaxEnt(codes, enc, label=label, protected=protected, C=self.C, prior=self.prior,
                             target=target, tau=self.tau, sample_weight=sample_weight,
                             theta_smoothing=self.theta_smoothing,
                             level_names=[dom.levels[n] for n in dom.names])
        sol = self.model_.solve(parse_solver(self.solver), tol=self.tol, max_iter=self.max_iter)
        if not sol.is_optimal:
            raise SolverError(
                f"max-entropy dual did not converge with solver {self.solver!r}: status {sol.status}, "
                f"max marginal violation {sol.max_violation:.3e} > tol {self.tol:g}. Raise max_iter, "
                "loosen tol or use solver='native'.", status=sol.status, log=sol.log)
        self.solution_ = sol
        self.distribution_ = cast("MaxEntDistribution", sol.distribution)   # set on every optimal solution
        self.label_index_, self.protected_index_ = label, protected
        names = pd.Index(dom.one_hot_names)   # one index for both Series (its dtype inferred once)
        full = np.concatenate(self.model_.target)
        self.theta_ = pd.Series(full, index=names, name="theta")
        lam_full = np.concatenate(enc.level_scores(sol.primal["lambda"]))
        self.lambda_ = pd.Series(lam_full, index=names, name="lambda")
        inverse, cnt = self.model_.row_index, self.model_.counts   # the model's collapse of the rows
        w_pts = self.model_.prior_weights
        self.prior_weights_ = w_pts[inverse] / cnt[inverse] if sample_weight is None else \
            _share(w_pts[inverse] * np.asarray(sample_weight, dtype=float), cnt[inverse])
        self.n_iter_ = int(sol.iterations or 0)
        self.solve_seconds_ = float(sol.solve_seconds)
        self.max_violation_ = float(sol.max_violation)
        self.kl_ = float(sol.kl)
        self._pos = _pos_level(dom, self.label_name_, self.pos_label)
        return self

    def _level_vector(self, name: str, value: Any) -> Any:
        if isinstance(value, (dict, pd.Series)):
            lv = self.domain_.levels[name]
            value = dict(value)
            unknown = [k for k in value if k not in lv]
            if unknown:
                raise DataValidationError(f"target for {name!r} names unknown levels {unknown}.")
            return np.array([float(value.get(v, 0.0)) for v in lv])
        return value

    # -------------------------------------------------------------- fitted distribution
    def marginals(self, distribution: str = "fitted") -> pd.Series:
        """Exact level probabilities of every column under ``p*`` (or the prior), by ``"column=level"``."""
        dist = self._dist(distribution)
        return pd.Series(np.concatenate(dist.level_marginals()), index=self.domain_.one_hot_names,
                         name="marginal")

    def statistical_rate(self, distribution: str = "fitted") -> float:
        """Exact ``min_z p(Y=pos|Z=z) / max_z p(Y=pos|Z=z)`` of ``p*`` (or the prior)."""
        return self._dist(distribution).statistical_rate(self.label_index_, self.protected_index_, self._pos)

    def representation_rate(self, distribution: str = "fitted") -> float:
        """Exact ``min_z p(Z=z) / max_z p(Z=z)`` of ``p*`` (or the prior)."""
        return self._dist(distribution).representation_rate(self.protected_index_)

    def _dist(self, which: str) -> MaxEntDistribution:
        self._check_fitted()
        if which == "fitted":
            return self.distribution_
        if which == "prior":
            if not hasattr(self, "_prior_dist"):
                self._prior_dist = self.model_.prior_distribution()
            return self._prior_dist
        raise DataValidationError(f"distribution must be 'fitted' or 'prior', got {which!r}.")

    def sample_codes(self, n: int, random_state: Seed = None, distribution: str = "fitted") -> NDArray[np.int64]:
        """``n`` exact draws as integer codes of :attr:`domain_`."""
        rs = self.random_state if random_state is None else random_state
        return self._dist(distribution).sample(_n_samples(n), as_generator(rs))

    def sample(self, n: int, random_state: Seed = None,
               distribution: str = "fitted") -> pd.DataFrame | pl.DataFrame:
        """Draw ``n`` synthetic records from ``p*`` (or from the prior with ``distribution="prior"``).

        Returns a frame with the fitted columns (``X``'s, the sensitive feature, the label) and
        their original values.
        """
        codes = self.sample_codes(n, random_state, distribution)
        return self._output(_decode(self.domain_, codes, self.dtypes_))



def _collapse_if_lazy(X: Records, y: Any, sensitive_features: Any,
                      sample_weight: ArrayLike | None) -> tuple[Records, Any, Any, ArrayLike | None]:
    """Dask / Parquet records -> distinct records and counts (the fit's sufficient statistics)."""
    from fairopt.stats import collapse_records, is_lazy_frame
    if is_lazy_frame(X):
        return collapse_records(X, y, sensitive_features, sample_weight)
    return X, y, sensitive_features, sample_weight
