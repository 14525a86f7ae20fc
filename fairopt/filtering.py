r"""Balanced filtering through non-disclosive proxies (Deng, Diana, Kearns & Roth).

A small labelled sample ``(x, z)`` trains a *proxy* that maps a point to ℓ cells; the cells' group
distributions (the conditional matrix A) and the proxy-weights QP give per-cell acceptance
probabilities ρ. Filtering a stream of unlabelled points with ρ keeps a sample whose group
distribution is as close to uniform as the hull of A's rows allows, while learning a point's cell
moves no group's probability by more than the disclosure budget α.

Proxies (``proxy=``):

``"tree"``
    the (α, β)-proxy tree (:class:`fairopt.reductions.proxy_tree.ProxyTree`, P1 weights);
``"relaxed_tree"``
    the same with the relaxed weights P1′ (no ``Σq = 1``);
``"regression"`` / ``"decision_tree"``
    a multinomial logistic regression / decision tree predicting the group; its prediction is the
    proxy. α is met by the η-randomisation of the paper's A.1.1: the smallest η (grid step
    0.01) whose randomised proxy is α-disclosive in-sample. ``weights="naive"`` samples the same
    number of points per predicted group instead of solving P1.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

from fairopt._docstrings import fill_doc
from fairopt._param_validation import Interval, StrOptions
from fairopt._utils import as_generator
from fairopt.errors import DataValidationError
from fairopt.formulations.proxy_weights import (
    ProxyWeights,
    conditional_matrix,
    disclosivity,
    filtered_distribution,
    imbalance,
)
from fairopt.guarantees import no_guarantee
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import parse_solver
from fairopt.reductions.proxy_tree import ProxyTree
from fairopt.validation import (
    RANDOM_STATE,
    check_dense,
    check_groups,
    check_is_fitted,
    check_numeric_columns,
    check_X,
    num_rows,
    to_native,
    validate_params,
)

if TYPE_CHECKING:
    from fairopt._progress import Progress

__all__ = ["ETA_GRID", "BalancedFilter", "evaluate_cells", "proxy_weights"]

PROXIES = ("tree", "relaxed_tree", "regression", "decision_tree")
ENCODINGS = ("onehot", "ordinal")
#: η grid of the paper's interpolation (A.1.1)
ETA_GRID = np.round(np.arange(0.0, 1.0001, 0.1), 10)


def proxy_weights(A: ArrayLike, cell_mass: ArrayLike, weights: str,
                  solver: str | SolverSpec | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """``(q, ρ, acceptance)`` for ``weights`` in ``"qp"`` (P1), ``"relaxed"`` (P1′), ``"naive"``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.9, 0.1], [0.2, 0.8]])     # P(group k | cell j)
    >>> q, rho, acceptance = proxy_weights(A, np.array([0.7, 0.3]), "qp")
    >>> rho.round(4).tolist(), round(acceptance, 4)
    ([0.3214, 1.0], 0.525)
    """
    if weights == "naive":
        live = np.asarray(cell_mass) > 0
        q = live / live.sum()
        rho = np.where(live, q / np.where(live, cell_mass, 1.0), 0.0)
        C = rho.max()
        return q, rho / C, 1.0 / C
    res = ProxyWeights(A, cell_mass, relaxed=weights == "relaxed").solve(solver)
    return res.q, res.rho, res.acceptance_rate


def evaluate_cells(membership: ArrayLike, groups: NDArray[np.integer[Any]], n_groups: int,
                   rho: ArrayLike) -> dict[str, Any]:
    """Disclosivity, filtered distribution, imbalance and acceptance of a proxy on a sample.

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.formulations.proxy_weights import membership_matrix
    >>> cells = np.array([0, 0, 0, 1])                 # proxy cell of each point
    >>> groups = np.array([0, 0, 1, 1])
    >>> report = evaluate_cells(membership_matrix(cells), groups, 2, rho=np.array([0.5, 1.0]))
    >>> report["distribution"].round(4).tolist(), round(report["acceptance_rate"], 4)
    ([0.4, 0.6], 0.625)
    """
    A, r_hat, _ = conditional_matrix(membership, groups, n_groups)
    prior = np.bincount(groups, minlength=n_groups) / len(groups)
    dist, rate = filtered_distribution(A, r_hat, rho)
    return {"disclosivity": disclosivity(A, r_hat, prior), "imbalance": imbalance(dist),
            "acceptance_rate": rate, "distribution": dist, "prior": prior,
            "conditional_matrix": A, "cell_mass": r_hat}


def _one_of(sensitive: ArrayLike | None, sensitive_features: ArrayLike | None) -> ArrayLike | None:
    """The groups passed positionally (``sensitive``) or as ``sensitive_features=`` (the name every
    other estimator takes); both or neither is an error."""
    if sensitive is not None and sensitive_features is not None:
        raise DataValidationError("pass the groups once: either positionally or as sensitive_features=, not both.")
    if sensitive is None and sensitive_features is None:
        raise DataValidationError("sensitive is required (positionally, or as sensitive_features=): pass the group "
                                  "of every row (array, Series, DataFrame) or the name(s) of columns of X.")
    return sensitive if sensitive is not None else sensitive_features


class _ClassifierProxy:
    """A group classifier as a proxy: cell = predicted group, randomised with probability η."""

    def __init__(self, model: BaseEstimator, n_cells: int, eta: float = 0.0) -> None:
        self.model, self.n_cells, self.eta = model, n_cells, eta

    def membership(self, X: ArrayLike) -> np.ndarray:
        pred = self.model.predict(X)
        M = np.eye(self.n_cells)[pred]
        out: np.ndarray = (1.0 - self.eta) * M + self.eta / self.n_cells
        return out


@fill_doc
class BalancedFilter(BaseEstimator):  # type: ignore[misc, unused-ignore]  # scikit-learn ships no type stubs
    """Learn a non-disclosive proxy and the acceptance probabilities that balance its filter.

    Parameters
    ----------
    alpha : float in [0, 1], default 0.1
        Disclosure budget: for every cell j and group k, ``|Pr[z = k | cell j] − Pr[z = k]| ≤ α``
        in-sample, so the cell a point falls in reveals at most α about its group beyond the base
        rates. α = 0 means no filtering beyond uniform sampling.
    proxy : {"tree", "relaxed_tree", "regression", "decision_tree"}, default "tree"
        Proxy family (see the module docstring).
    weights : {"qp", "naive"}, default "qp"
        For the classifier proxies: proxy-weights QP or equal numbers per predicted group.
    solver : str, SolverSpec, dict or None, default None
        QP back end of the proxy-weights program (and LP back end of the split game).
    encoding : {"onehot", "ordinal"}, default "onehot"
        Features of a DataFrame: ``"onehot"`` standardises numeric columns and one-hot encodes
        the others; ``"ordinal"`` keeps numeric columns unscaled and replaces each category by an
        integer code (one column per attribute; unseen categories get −1).
    split_bins : int or None, default 5
        Tree proxies only. The split oracle is linear in the features, so on a numeric column it
        can only cut a half-line; with ``split_bins`` each numeric column also enters as
        indicators of its ``split_bins`` quantile bins, so a split can select a range (ages
        25–32, say). ``None`` gives the paper's oracle, linear in the encoded columns alone.
    gamma, max_height, stop_distance : float, int, float
        Tree rules: required distance shrink factor 1 − γ per split, largest depth, target
        distance (the paper's 0.1, 20, 0.1).
    random_state : int, Generator or None
        Seeds the decision-tree proxy and :meth:`filter`.
    {confidence_uncertified}

    Attributes
    ----------
    conditional_matrix_ : ndarray (ℓ, K)
        In-sample ``Pr[z = k | cell j]``.
    cell_mass_ : ndarray (ℓ,)
        In-sample ``Pr[cell j]``.
    weights_ : ndarray (ℓ,)
        Proxy weights q (P1/P1′ solution or naive).
    sampling_probabilities_ : ndarray (ℓ,)
        ρ, with ``max ρ = 1``.
    disclosivity_ : float
        In-sample ``max_{j,k} |A_jk − r_k|``.
    imbalance_, imbalance_before_ : float
        ``‖π − U‖₂`` of the filtered and of the unfiltered in-sample group distribution.
    acceptance_rate_ : float
        Expected fraction of points kept.
    groups_ : Index
        Group labels (columns of ``conditional_matrix_``).
    proxy_ : object
        The fitted proxy (a :class:`ProxyTree`, or the classifier with its η).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> group = rng.choice(["a", "b"], size=1000, p=[0.8, 0.2])
    >>> X = pd.DataFrame({"x": rng.normal(np.where(group == "a", 0.0, 1.5)), "z": rng.normal(size=1000)})
    >>> filt = BalancedFilter(alpha=0.2, random_state=0).fit(X, group)
    >>> bool(filt.imbalance_ < filt.imbalance_before_), bool(filt.disclosivity_ <= 0.2 + 1e-9)
    (True, True)
    """

    # fitted attributes read before fit has run in the same method (declared for the type checker)
    encoder_: Any
    n_features_in_: int
    proxy_: ProxyTree | _ClassifierProxy


    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "proxy": [StrOptions(set(PROXIES))],
        "weights": [StrOptions({"qp", "naive"})],
        "solver": [None, str, SolverSpec, dict],
        "encoding": [StrOptions(set(ENCODINGS))],
        "split_bins": [None, Interval(Integral, 2, None, closed="left")],
        "gamma": [Interval(Real, 0, 1, closed="left")],
        "max_height": [Interval(Integral, 0, None, closed="left")],
        "stop_distance": [Interval(Real, 0, None, closed="left")],
        "random_state": RANDOM_STATE,
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, alpha: float = 0.1, proxy: str = "tree", weights: str = "qp",
                 solver: str | SolverSpec | None = None,
                 encoding: str = "onehot", split_bins: int | None = 5,
                 gamma: float = 0.1, max_height: int = 20, stop_distance: float = 0.1,
                 random_state: int | np.random.RandomState | np.random.Generator | None = None,
                 confidence: float | None = None) -> None:
        self.alpha = alpha
        self.proxy = proxy
        self.weights = weights
        self.solver = solver
        self.encoding = encoding
        self.split_bins = split_bins
        self.gamma = gamma
        self.max_height = max_height
        self.stop_distance = stop_distance
        self.random_state = random_state
        self.confidence = confidence

    # ---- features ---------------------------------------------------------------------------
    def _encode(self, X: Any, fit: bool) -> np.ndarray:
        X = to_native(X)
        check_dense(X, "BalancedFilter: X")
        if isinstance(X, pd.DataFrame):
            if X.isna().to_numpy().any():
                col = X.columns[X.isna().any().to_numpy()][0]
                raise DataValidationError(f"X column {col!r} has missing values; impute or drop them first.")
            if not fit:
                out: np.ndarray = self.encoder_.transform(X[self._fitted_columns(X)])
                return out
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
            num = X.select_dtypes("number").columns.tolist()
            cat = [c for c in X.columns if c not in num]
        else:
            if not fit and hasattr(self, "feature_names_in_"):
                raise DataValidationError(f"BalancedFilter was fitted on a DataFrame with columns "
                                          f"{list(self.feature_names_in_)[:10]}; pass a DataFrame with those columns.")
            X = check_X(X, "BalancedFilter X")
            check_numeric_columns(X, "BalancedFilter X", hint=", or pass a DataFrame (its string columns are "
                                  "encoded as the encoding parameter says)")
            X = np.asarray(X, dtype=float)
            if not fit:
                if X.shape[1] != self.n_features_in_:
                    raise DataValidationError(
                        f"X has {X.shape[1]} columns; the filter was fitted on {self.n_features_in_}.")
                out = self.encoder_.transform(X)
                return out
            self.n_features_in_ = X.shape[1]
            num, cat = list(range(X.shape[1])), []
        self.encoder_ = ColumnTransformer(self._feature_steps(num, cat, self._binnable(X, num)), sparse_threshold=0.0)
        with warnings.catch_warnings():   # constant or heavily tied columns get fewer quantile bins
            warnings.filterwarnings("ignore", message="Bins whose width are too small")
            out = self.encoder_.fit_transform(X)
            return out

    def _fitted_columns(self, X: pd.DataFrame) -> list[Any]:
        """The fitted feature columns of ``X``; a missing (e.g. renamed) column is a typed error."""
        names = list(self.feature_names_in_)
        missing = [c for c in names if c not in X.columns]
        if missing:
            raise DataValidationError(f"X lacks column(s) {missing[:10]} that BalancedFilter was fitted on (it has "
                                      f"{list(X.columns)[:10]}); pass the same columns as at fit, under the same "
                                      "names.")
        return names

    def _binnable(self, X: pd.DataFrame | NDArray[np.float64], num: Sequence[Any]) -> list[Any]:
        """Numeric columns whose quantile bins have a usable width: KBinsDiscretizer drops bins
        narrower than 1e-8 and fails on a (near-)constant column left with none."""
        if not (self.proxy in ("tree", "relaxed_tree") and self.split_bins and num):
            return []
        vals = X[num].to_numpy(dtype=float) if isinstance(X, pd.DataFrame) else X[:, num]
        q = np.quantile(vals, np.linspace(0.0, 1.0, int(self.split_bins) + 1), axis=0)
        spread = q.max(axis=0) - q.min(axis=0)
        return [c for c, s in zip(num, spread, strict=True) if s > 1e-8 * int(self.split_bins)]

    def _feature_steps(self, num: list[Any], cat: list[Any],
                       binned: list[Any] | None = None) -> list[tuple[str, Any, list[Any]]]:
        """ColumnTransformer steps for ``encoding`` (plus the tree oracle's quantile bins of the
        ``binned`` numeric columns; default all of ``num``)."""
        binned = num if binned is None else binned
        if self.encoding == "onehot":
            steps = [("num", StandardScaler(), num),
                     ("cat", OneHotEncoder(drop="first", handle_unknown="ignore", sparse_output=False), cat)]
        else:
            steps = [("num", "passthrough", num),
                     ("cat", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), cat)]
        if self.proxy in ("tree", "relaxed_tree") and self.split_bins and binned:
            steps.append(("bins", KBinsDiscretizer(n_bins=int(self.split_bins), encode="onehot-dense",
                                                   strategy="quantile", subsample=None), binned))
        return steps

    def _check_params(self) -> None:
        validate_params(self)
        if self.proxy not in PROXIES:
            raise DataValidationError(f"proxy must be one of {PROXIES}, got {self.proxy!r}.")
        if self.encoding not in ENCODINGS:
            raise DataValidationError(f"encoding must be one of {ENCODINGS}, got {self.encoding!r}.")
        if self.split_bins is not None and (not isinstance(self.split_bins, (int, np.integer))
                                            or isinstance(self.split_bins, bool) or self.split_bins < 2):
            raise DataValidationError(f"split_bins must be an integer >= 2 or None, got {self.split_bins!r}.")
        if self.weights not in ("qp", "naive"):
            raise DataValidationError(f"weights must be 'qp' or 'naive', got {self.weights!r}.")
        if not 0.0 <= float(self.alpha) <= 1.0:
            raise DataValidationError(f"alpha must lie in [0, 1], got {self.alpha}.")

    # ---- fit --------------------------------------------------------------------------------
    def fit(self, X: ArrayLike, sensitive: ArrayLike | None = None, *, sensitive_features: ArrayLike | None = None,
            progress: Progress | None = None) -> BalancedFilter:
        """Fit the proxy and its acceptance probabilities on a sample with known groups.

        ``sensitive_features`` (or, positionally, ``sensitive``) holds each row's group (array,
        Series, DataFrame for intersectional groups) or names column(s) of ``X``, which are then
        excluded from the proxy's features. BLAS runs on one thread during the fit (thin
        matrix products; two threads slowed them several-fold on a loaded 2-core machine).
        """
        from threadpoolctl import threadpool_limits
        with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Found unknown categories")
            return self._fit(X, _one_of(sensitive, sensitive_features), progress)

    def _fit(self, X: Any, sensitive: ArrayLike | None, progress: Progress | None) -> BalancedFilter:
        self._check_params()
        no_guarantee(self, "BalancedFilter.fit",
                     "alpha bounds the disclosure of the fitted proxy's cells in-sample only; no bound "
                     "over its proxy class is implemented",
                     "hold out rows and measure the disclosure there")
        if X is None:
            raise DataValidationError("BalancedFilter.fit: X is required but was None; pass the features of the "
                                      "labelled sample.")
        X = to_native(X)
        n = num_rows(X)
        grp = check_groups(sensitive, n, X=X, min_groups=2, name="sensitive")
        if grp.columns is not None:
            X = X.drop(columns=list(grp.columns))
        Z = self._encode(X, fit=True)
        z, K = grp.codes, grp.n_groups
        self.groups_ = grp.labels
        prior = np.bincount(z, minlength=K) / n
        solver = parse_solver(self.solver)   # parsed once; checked for each problem's kind
        if self.proxy in ("tree", "relaxed_tree"):
            self.proxy_ = ProxyTree(float(self.alpha), relaxed=self.proxy == "relaxed_tree", gamma=self.gamma,
                                    max_height=self.max_height, stop_distance=self.stop_distance,
                                    solver=solver).fit(Z, z, K, progress=progress)
            weights = "relaxed" if self.proxy == "relaxed_tree" else "qp"
        else:
            model = (LogisticRegression(max_iter=1000) if self.proxy == "regression" else
                     DecisionTreeClassifier(min_samples_leaf=20, random_state=self.random_state))
            model.fit(Z, z)
            self.proxy_ = _ClassifierProxy(model, K, self._smallest_eta(model, Z, z, K, prior))
            weights = self.weights
        M = self.proxy_.membership(Z)
        self.conditional_matrix_, self.cell_mass_, _ = conditional_matrix(M, z, K)
        self.weights_, self.sampling_probabilities_, self.acceptance_rate_ = proxy_weights(
            self.conditional_matrix_, self.cell_mass_, weights, solver)
        dist, _ = filtered_distribution(self.conditional_matrix_, self.cell_mass_, self.sampling_probabilities_)
        self.filtered_distribution_ = dist
        self.disclosivity_ = disclosivity(self.conditional_matrix_, self.cell_mass_, prior)
        self.imbalance_, self.imbalance_before_ = imbalance(dist), imbalance(prior)
        self.prior_ = prior
        return self

    def _smallest_eta(self, model: BaseEstimator, Z: NDArray[np.float64], z: NDArray[np.intp], K: int,
                      prior: NDArray[np.float64]) -> float:
        """Smallest η on a 0.01 grid whose randomised proxy is α-disclosive in-sample."""
        A, r_hat, _ = conditional_matrix(np.eye(K)[model.predict(Z)], z, K)
        etas = np.linspace(0.0, 1.0, 101)
        mass = (1.0 - etas)[:, None] * r_hat[None, :] + etas[:, None] / K         # (η, ℓ)
        shrink = np.where(mass > 0, (1.0 - etas)[:, None] * r_hat[None, :] / np.where(mass > 0, mass, 1), 0)
        dev = np.abs(A - prior[None, :]).max(axis=1)                              # (ℓ,)
        disc = (shrink * dev[None, :]).max(axis=1)
        return float(etas[np.argmax(disc <= float(self.alpha) + 1e-12)])

    # ---- use --------------------------------------------------------------------------------
    def membership(self, X: ArrayLike) -> np.ndarray:
        """Cell probabilities (n, ℓ) of each row under the proxy's randomisation.

        Categories unseen at fit are encoded as the reference level (all-zero indicators).
        """
        check_is_fitted(self, "sampling_probabilities_", "fit(X, sensitive)")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Found unknown categories")
            return self.proxy_.membership(self._encode(self._drop_sensitive(X), fit=False))

    def _drop_sensitive(self, X: ArrayLike) -> Any:
        X = to_native(X)
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            return X[self._fitted_columns(X)]
        return X

    def acceptance_probability(self, X: ArrayLike) -> np.ndarray:
        """Probability that :meth:`filter` keeps each row (Algorithm 2)."""
        return self.membership(X) @ self.sampling_probabilities_

    def filter(self, X: ArrayLike,
               random_state: int | np.random.RandomState | np.random.Generator | None = None) -> np.ndarray:
        """Boolean mask of the rows kept by Algorithm 2 (independent coin per row)."""
        p = self.acceptance_probability(X)
        seed = self.random_state if random_state is None else random_state
        return as_generator(seed).random(p.shape[0]) < p

    def evaluate(self, X: ArrayLike, sensitive: ArrayLike | None = None, *,
                 sensitive_features: ArrayLike | None = None) -> dict[str, Any]:
        """Disclosivity, imbalance and acceptance of the fitted filter on labelled data (e.g. test);
        the groups are given as in :meth:`fit`."""
        sensitive = _one_of(sensitive, sensitive_features)
        X = to_native(X)
        M = self.membership(X)
        codes = check_groups(sensitive, M.shape[0], X=X if isinstance(X, pd.DataFrame) else None,
                             name="sensitive")
        pos = self.groups_.get_indexer(codes.labels)
        if (pos < 0).any():
            raise DataValidationError("sensitive holds groups not seen at fit.")
        return evaluate_cells(M, pos[codes.codes], len(self.groups_), self.sampling_probabilities_)
