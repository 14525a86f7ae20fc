"""Pre-processing mitigators: learn a debiased distribution over records, then resample it.

All estimators take ``fit(X, y, sensitive_features)`` on frames of categorical or pre-binned
columns and return synthetic data with the original column names and values from
``sample(n, random_state)``.

``MaxEntResampler``
    Max-entropy distribution over the whole product domain (Celis, Keswani & Vishnoi 2020).
``Reweighing``
    Kamiran & Calders reweighing of the observed rows (statistical parity, group sizes kept).
``RepresentationReweighing``
    Reweights rows so every protected group has the same share (representation parity).
``TVRepairResampler``
    Calmon-style total-variation repair of the empirical distribution (``fairopt.formulations.tv_repair``).
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from fairopt._utils import as_generator
from fairopt.data import Domain
from fairopt.errors import DataValidationError, NotFittedError
from fairopt.formulations.maxent import Encoding, MaxEnt
from fairopt.formulations.maxent import priors as P
from fairopt.metrics._validation import check_weights

__all__ = ["MaxEntResampler", "Reweighing", "RepresentationReweighing", "TVRepairResampler"]


# ----------------------------------------------------------------------------------- helpers
def _share(mass: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``mass / total`` with 0 where ``total`` is 0 (rows of a cell whose weights are all 0)."""
    return np.divide(mass, total, out=np.zeros_like(mass, dtype=float), where=total > 0)


def _assemble(X, y, sensitive_features):
    """Frame of all columns, plus the names of the label and protected columns."""
    if not isinstance(X, pd.DataFrame):
        raise DataValidationError(
            f"X must be a pandas DataFrame of categorical or pre-binned columns, got {type(X).__name__}.")
    frame = X.copy()
    n = len(frame)
    y_name = getattr(y, "name", None) or "y"
    y_arr = np.asarray(y)
    if y_arr.shape != (n,):
        raise DataValidationError(f"y must have one entry per row of X ({n}), got shape {y_arr.shape}.")
    if y_name in frame.columns:
        raise DataValidationError(f"the label name {y_name!r} is also a column of X; rename one of them.")
    if sensitive_features is None:
        raise DataValidationError("sensitive_features is required (a column name of X or an array).")
    if isinstance(sensitive_features, str):
        if sensitive_features not in frame.columns:
            raise DataValidationError(
                f"sensitive feature {sensitive_features!r} is not a column of X ({list(frame.columns)}).")
        z_name = sensitive_features
    else:
        z = np.asarray(sensitive_features)
        if z.ndim != 1 or z.shape[0] != n:
            raise DataValidationError(
                "sensitive_features must be one column: a name in X or an array with one entry per row.")
        z_name = getattr(sensitive_features, "name", None) or "sensitive_feature"
        if z_name in frame.columns:
            if not np.array_equal(frame[z_name].to_numpy(), z):
                raise DataValidationError(
                    f"sensitive_features is named {z_name!r} like a column of X but differs from it.")
        else:
            frame[z_name] = z
    frame[y_name] = y_arr if not isinstance(y, pd.Series) else y.to_numpy()
    if isinstance(y, pd.Series) and isinstance(y.dtype, pd.CategoricalDtype):
        frame[y_name] = y.values
    if frame.isna().any().any():
        col = frame.columns[frame.isna().any()].tolist()
        raise DataValidationError(f"columns {col} have missing values; drop or impute them first.")
    return frame, y_name, z_name


def _pos_level(domain: Domain, y_name: str, pos_label) -> int:
    levels = domain.levels[y_name]
    if pos_label is None:
        pos_label = 1 if 1 in levels else levels[-1]
    if pos_label not in levels:
        raise DataValidationError(f"pos_label {pos_label!r} is not a level of {y_name!r}: {list(levels)}.")
    return levels.index(pos_label)


def _decode(domain: Domain, codes: np.ndarray, dtypes: pd.Series) -> pd.DataFrame:
    out = domain.decode(codes)
    for c in out.columns:
        dt = dtypes[c]
        if isinstance(dt, pd.CategoricalDtype):
            out[c] = pd.Categorical(out[c], dtype=dt)
        else:
            try:
                out[c] = out[c].astype(dt)
            except (TypeError, ValueError):
                pass
    return out


class _FrameMixin:
    """Common fit-time bookkeeping of the resamplers."""

    def _prepare(self, X, y, sensitive_features, domain=None):
        frame, y_name, z_name = _assemble(X, y, sensitive_features)
        dom = domain if domain is not None else Domain.from_frame(frame)
        if isinstance(dom, Domain):
            missing = [c for c in frame.columns if c not in dom.names]
            if missing:
                raise DataValidationError(f"domain lacks columns {missing} of the data.")
            dom = dom.subdomain(list(frame.columns))
        codes = dom.encode(frame)
        self.domain_ = dom
        self.label_name_, self.sensitive_name_ = y_name, z_name
        self.columns_ = list(frame.columns)
        self.dtypes_ = frame.dtypes
        self.n_features_in_ = X.shape[1]
        return frame, codes, dom.index(y_name), dom.index(z_name)

    def _check_fitted(self):
        if not hasattr(self, "domain_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet; call fit(X, y, sensitive_features).")


# ------------------------------------------------------------------------------ max entropy
class MaxEntResampler(_FrameMixin, BaseEstimator):
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
    solver : str, default "native"
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
    """

    def __init__(self, C=0.5, prior="reweighted", target="weighted", tau=1.0, solver="native",
                 tol=1e-8, max_iter=100, random_state=None, theta_smoothing=0.0, pos_label=None,
                 domain=None):
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

    def fit(self, X, y, sensitive_features=None, sample_weight=None):
        """Learn the max-entropy distribution of the records ``(X, sensitive, y)``."""
        self.__dict__.pop("_prior_dist", None)   # the prior of an earlier fit must not survive a refit
        _, codes, label, protected = self._prepare(X, y, sensitive_features, self.domain)
        if sample_weight is not None:
            sample_weight = check_weights(sample_weight, len(codes))
        dom = self.domain_
        enc = Encoding.make(dom.cardinalities, "onehot", names=dom.names)
        target = self.target
        if not isinstance(target, str) and hasattr(target, "keys"):
            target = {k: self._level_vector(k, v) for k, v in dict(target).items()}
        self.model_ = MaxEnt(codes, enc, label=label, protected=protected, C=self.C, prior=self.prior,
                             target=target, tau=self.tau, sample_weight=sample_weight,
                             theta_smoothing=self.theta_smoothing,
                             level_names=[dom.levels[n] for n in dom.names])
        sol = self.model_.solve(self.solver, tol=self.tol, max_iter=self.max_iter)
        if not sol.is_optimal:
            from fairopt.errors import SolverError
            raise SolverError(
                f"max-entropy dual did not converge with solver {self.solver!r}: status {sol.status}, "
                f"max marginal violation {sol.max_violation:.3e} > tol {self.tol:g}. Raise max_iter, "
                "loosen tol or use solver='native'.", status=sol.status, log=sol.log)
        self.solution_ = sol
        self.distribution_ = sol.distribution
        self.label_index_, self.protected_index_ = label, protected
        names = dom.one_hot_names
        full = np.concatenate(self.model_.target)
        self.theta_ = pd.Series(full, index=names, name="theta")
        lam_full = np.concatenate(enc.level_scores(sol.primal["lambda"]))
        self.lambda_ = pd.Series(lam_full, index=names, name="lambda")
        pts, _, inverse = P.collapse(codes)
        cnt = np.bincount(inverse, minlength=len(pts)).astype(float)
        w_pts = self.model_.prior_weights
        # model points and these points are both np.unique-sorted, hence aligned
        self.prior_weights_ = w_pts[inverse] / cnt[inverse] if sample_weight is None else \
            self._row_weights(codes, sample_weight)
        self.n_iter_ = int(sol.iterations or 0)
        self.solve_seconds_ = float(sol.solve_seconds)
        self.max_violation_ = float(sol.max_violation)
        self.kl_ = float(sol.kl)
        self._pos = _pos_level(dom, self.label_name_, self.pos_label)
        return self

    def _row_weights(self, codes, sample_weight):
        sw = np.asarray(sample_weight, dtype=float)
        _, wsum, inverse = P.collapse(codes, sw)
        return _share(self.model_.prior_weights[inverse] * sw, wsum[inverse])

    def _level_vector(self, name, value):
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

    def _dist(self, which: str):
        self._check_fitted()
        if which == "fitted":
            return self.distribution_
        if which == "prior":
            if not hasattr(self, "_prior_dist"):
                self._prior_dist = self.model_.prior_distribution()
            return self._prior_dist
        raise DataValidationError(f"distribution must be 'fitted' or 'prior', got {which!r}.")

    def sample_codes(self, n: int, random_state=None, distribution: str = "fitted") -> np.ndarray:
        """``n`` exact draws as integer codes of :attr:`domain_`."""
        rs = self.random_state if random_state is None else random_state
        return self._dist(distribution).sample(int(n), as_generator(rs))

    def sample(self, n: int, random_state=None, distribution: str = "fitted") -> pd.DataFrame:
        """Draw ``n`` synthetic records from ``p*`` (or from the prior with ``distribution="prior"``).

        Returns a frame with the fitted columns (``X``'s, the sensitive feature, the label) and
        their original values.
        """
        codes = self.sample_codes(n, random_state, distribution)
        return _decode(self.domain_, codes, self.dtypes_)


# --------------------------------------------------------------------------- reweighting
class _WeightedResampler(_FrameMixin, BaseEstimator):
    """Reweights the observed rows; sampling draws rows with probability ∝ weight."""

    def __init__(self, random_state=None, domain=None):
        self.random_state = random_state
        self.domain = domain

    #: weighting scheme of the subclass: "kamiran_calders" or "representation"
    _scheme = "kamiran_calders"

    def _weights(self, points, counts, label, protected, k):
        if self._scheme == "representation":
            return P.representation_weights(points, counts, protected, k)
        return P.kamiran_calders_weights(points, counts, label, protected, k)

    def fit(self, X, y, sensitive_features=None, sample_weight=None):
        """Compute one weight per row (``sample_weight_``, mean 1 over rows)."""
        t0 = time.perf_counter()
        _, codes, label, protected = self._prepare(X, y, sensitive_features, self.domain)
        sw = check_weights(sample_weight, len(codes))
        points, counts, inverse = P.collapse(codes, sw)
        k = self.domain_.cardinalities
        w_pts = self._weights(points, counts, label, protected, k)
        row = _share(w_pts[inverse] * sw, counts[inverse])
        self.sample_weight_ = row * (len(row) / row.sum())
        self.points_, self.point_weights_ = points, w_pts
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def sample_codes(self, n: int, random_state=None) -> np.ndarray:
        self._check_fitted()
        rs = self.random_state if random_state is None else random_state
        rng = as_generator(rs)
        cdf = np.cumsum(self.point_weights_)
        idx = np.minimum(np.searchsorted(cdf, rng.random(int(n)) * cdf[-1], side="right"),
                         len(cdf) - 1)
        return self.points_[idx]

    def sample(self, n: int, random_state=None) -> pd.DataFrame:
        """Draw ``n`` rows of the reweighted empirical distribution."""
        codes = self.sample_codes(n, random_state)
        return _decode(self.domain_, codes, self.dtypes_)


class Reweighing(_WeightedResampler):
    """Kamiran & Calders reweighing: ``w ∝ c(y) c(z) / (N c(y, z))`` per row.

    Makes the label independent of the protected attribute (statistical rate 1 of the weighted
    data) while keeping group sizes (the representation rate is unchanged).

    Parameters
    ----------
    random_state : int, Generator or None
        Default seed of :meth:`sample`.
    domain : fairopt.data.Domain, optional
        Fixes the level sets and code order (default: read from the fitted frame).

    Attributes
    ----------
    sample_weight_ : ndarray (n_samples,)
        Weight of each training row (mean 1).
    points_, point_weights_ : ndarray
        Distinct training cells (codes of :attr:`domain_`) and their probabilities.
    """

    _scheme = "kamiran_calders"


class RepresentationReweighing(_WeightedResampler):
    """Representation reweighting: ``w ∝ 1 / c(z)`` per row, so every group has equal share.

    Reaches representation rate 1; within-group label rates (statistical rate) are unchanged.
    Parameters and attributes as :class:`Reweighing`.
    """

    _scheme = "representation"


class TVRepairResampler(_WeightedResampler):
    """Total-variation repair of the empirical distribution (Calmon et al. 2017, simple form).

    Thin wrapper over :class:`fairopt.formulations.tv_repair.TVRepair`: the closest distribution
    to the training data in total variation whose favourable-label rates satisfy a statistical
    rate of at least ``statistical_rate`` between protected groups, with group masses fixed.
    The repaired distribution lives on the observed cells (plus canonical cells of empty
    blocks); :meth:`sample` draws from it.

    Parameters
    ----------
    statistical_rate : float in (0, 1], default 1.0
        Required ratio of favourable-label rates between every pair of groups (1 = parity).
    representation : {"data", "balanced"} or array, default "data"
        Group masses of the repaired distribution (``"data"`` keeps the raw representation rate).
    solver : str, default "highs"
        LP back end of the TV program.
    pos_label : optional
        Favourable label value (default 1 if it is a level, else the last level).
    random_state : int, Generator or None
    domain : fairopt.data.Domain, optional
        Fixes the level sets and code order (default: read from the fitted frame).
    """

    def __init__(self, statistical_rate=1.0, representation="data", solver="highs", pos_label=None,
                 random_state=None, domain=None):
        self.statistical_rate = statistical_rate
        self.representation = representation
        self.solver = solver
        self.pos_label = pos_label
        self.random_state = random_state
        self.domain = domain

    def fit(self, X, y, sensitive_features=None, sample_weight=None):
        """Solve the TV program on the training cells."""
        from fairopt.formulations.tv_repair import TVRepair

        t0 = time.perf_counter()
        _, codes, label, protected = self._prepare(X, y, sensitive_features, self.domain)
        sw = None if sample_weight is None else check_weights(sample_weight, len(codes))
        cells, counts = self.domain_.unique_codes(codes, sample_weight=sw)
        pos = self.domain_.levels[self.label_name_][_pos_level(self.domain_, self.label_name_,
                                                               self.pos_label)]
        model = TVRepair(self.domain_, cells, counts, protected=self.sensitive_name_,
                         label=self.label_name_, favourable_label=pos,
                         statistical_rate=self.statistical_rate, representation=self.representation)
        res = model.solve(self.solver)
        if res.status != "optimal":
            from fairopt.errors import SolverError
            raise SolverError(f"TV repair did not solve to optimality (status {res.status}).",
                              status=res.status)
        self.result_ = res
        self.points_, self.point_weights_ = res.cells, res.p / res.p.sum()
        self.tv_ = float(res.tv)
        self.fit_seconds_ = time.perf_counter() - t0
        return self

from fairopt.preprocessing.tv_repair import TVRepair  # noqa: E402  (its own module; re-exported here)
__all__ += ["TVRepair"]
