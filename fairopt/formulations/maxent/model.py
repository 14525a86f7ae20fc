"""The ``maxent`` formulation: data, prior and target in; fitted distribution ``p*`` out.

``MaxEnt`` holds encoded data (integer codes of a product domain), the prior
``q = C·u + (1 − C)·w`` and the target ``θ``. ``MaxEnt.solve`` minimises the dual
``h(λ) = log Σ_Ω q e^{<λ,α>} − <θ, λ>`` on a chosen back end and returns a
:class:`MaxEntSolution` whose ``distribution`` is the exact fitted ``p*`` (marginals, rates, sampler).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fairopt._docstrings import fill_doc
from fairopt._utils import as_generator
from fairopt.errors import ConfigError, DataValidationError
from fairopt.formulations.maxent import priors as P
from fairopt.formulations.maxent.encoding import Encoding
from fairopt.formulations.maxent.oracle import DualOracle, MixtureState
from fairopt.formulations.maxent.sampler import sample_mixture, sample_sequential
from fairopt.formulations.maxent.solvers import MaxEntDual
from fairopt.metrics._validation import check_weights
from fairopt.modeling.smooth import build_form, solve_smooth
from fairopt.modeling.solution import Solution

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.modeling import SolverSpec

PRIORS = ("reweighted", "data")
TARGETS = ("weighted", "balanced", "data", "prior")


def _ratio(values: np.ndarray) -> float:
    values = np.asarray(values, dtype=float)
    hi = float(values.max())
    return float(values.min() / hi) if hi > 0 else float("nan")


@fill_doc
class MaxEntDistribution:
    """The exact distribution ``p_λ ∝ q e^{<λ, φ(x)>}`` (``λ = 0`` gives the prior ``q``).

    Never enumerates the domain: marginals, pair marginals, rates and samples all come from the
    mixture decomposition of :mod:`fairopt.formulations.maxent.oracle`.

    Examples
    --------
    >>> import numpy as np
    {example_compas_model}
    >>> p = solution.distribution                      # a MaxEntDistribution
    >>> round(p.representation_rate(race), 6)          # the weighted target: equal group shares
    1.0
    >>> p.sample(5, random_state=0).shape
    (5, 6)
    """

    def __init__(self, oracle: DualOracle, lam: np.ndarray, state: MixtureState | None = None):
        self.oracle = oracle
        self.lam = np.asarray(lam, dtype=float)
        if state is None or not np.array_equal(state.lam, self.lam):
            state = oracle.state(self.lam)
        self.state: MixtureState = state

    @property
    def encoding(self) -> Encoding:
        """The feature encoding of the domain."""
        return self.oracle.enc

    @property
    def log_partition(self) -> float:
        """Log partition function ``log Z`` at the fitted dual."""
        return self.state.log_z

    @property
    def uniform_weight(self) -> float:
        """``π``, the probability that a draw comes from the product (uniform-tilted) branch."""
        return self.state.pi

    def mean(self) -> np.ndarray:
        """``E_p[α]`` in reference coding."""
        out: np.ndarray = self.state.mean.copy()
        return out

    def level_marginals(self) -> list[np.ndarray]:
        """Exact level distribution of each attribute."""
        return self.oracle.level_marginals(self.state)

    def pair_marginal(self, f: int, g: int) -> np.ndarray:
        """Exact joint distribution of attributes ``f`` and ``g``."""
        return self.oracle.pair_marginal(self.state, f, g)

    def statistical_rate(self, label: int, protected: int, pos_level: int) -> float:
        """``min_z p(Y=y|Z=z) / max_z p(Y=y|Z=z)`` for ``y = pos_level`` (exact)."""
        J = self.pair_marginal(label, protected)
        cond = J[pos_level] / J.sum(axis=0)
        return _ratio(cond)

    def representation_rate(self, protected: int) -> float:
        """``min_z p(Z=z) / max_z p(Z=z)`` (exact)."""
        return _ratio(self.level_marginals()[protected])

    def kl_to_prior(self) -> float:
        """``KL(p || q) = <λ, E_p[α]> − log Z`` (equals ``−h(λ*)`` at the optimum)."""
        return float(self.lam @ self.state.mean - self.state.log_z)

    def log_prob(self, codes: ArrayLike) -> np.ndarray:
        """``log p(x)`` for code rows (exact; support looked up in a hash)."""
        return self.oracle.log_prob(self.state, codes)

    def sample(self, n: int, random_state: int | np.random.Generator | None = None,
               method: str = "mixture") -> np.ndarray:
        """Draw ``n`` code rows exactly; ``method`` is ``"mixture"`` or ``"sequential"``."""
        rng = as_generator(random_state)
        if method == "mixture":
            return sample_mixture(self.oracle, self.state, n, rng)
        if method == "sequential":
            return sample_sequential(self.oracle, self.state, n, rng)
        raise ConfigError(f"unknown sampling method {method!r}; use 'mixture' or 'sequential'.")


@dataclass
class MaxEntSolution(Solution):
    """A :class:`~fairopt.modeling.Solution` of the dual plus the fitted distribution.

    ``primal["lambda"]`` holds ``λ*`` (reference coding); ``dual["marginals"]`` the same vector
    read as the price of each marginal constraint of the primal ``min KL(p||q)`` (its derivative
    with respect to ``θ``); ``objective`` is ``h(λ*)`` and ``kl = −h(λ*)``.

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> from fairopt.formulations.maxent import Encoding, MaxEnt
    >>> compas = load_builtin("compas")
    >>> cells, counts = compas.codes()
    >>> names = list(compas.domain.names)
    >>> model = MaxEnt(cells.repeat(counts, axis=0),
    ...                Encoding.make(compas.domain.cardinalities, "onehot", names=names),
    ...                label=names.index("two_year_recid"), protected=names.index("race"))
    >>> solution = model.solve()
    >>> type(solution).__name__, solution.is_optimal, bool(solution.max_violation < 1e-8)
    ('MaxEntSolution', True, True)
    """

    max_violation: float = float("nan")
    kl: float = float("nan")
    distribution: MaxEntDistribution | None = field(default=None, repr=False)


@fill_doc
class MaxEnt:
    """Max-entropy fair preprocessing model (Celis, Keswani & Vishnoi 2020).

    Parameters
    ----------
    codes : ndarray (n, F) of int
        Encoded records (level codes of a product domain).
    encoding : Encoding
        Feature encoding (one-hot reference coding or scalar per attribute).
    label, protected : int
        Positions of the class label ``Y`` and the protected attribute ``Z``.
    C : float, default 0.5
        Weight of the uniform distribution in the prior ``q = C·u + (1 − C)·w``. ``C > 0`` gives
        every domain point mass (generalisation beyond the data); larger ``C`` pulls towards uniform.
    prior : {"reweighted", "data"} or array
        ``w`` from Algorithm 1 (``q_C^w``, statistical rate of ``q`` is 1 for ``tau = 1``), the
        empirical weights (``q_C^d``), or explicit weights per distinct point.
    target : {"weighted", "balanced", "data", "prior"}, array or mapping
        ``θ^w`` (mean under the Algorithm 1 weights), ``θ^b`` (raw mean, protected attribute split
        equally), ``θ^d`` (raw mean), ``E_q[α]`` (``p* = q``), or a user target (see
        :func:`~fairopt.formulations.maxent.priors.target_from_user`).
    tau : float or sequence, default 1.0
        Algorithm 1 factor(s): group shares under ``w`` are ``∝ tau_z``; ``tau`` sets the
        representation rate of ``θ^w`` while the statistical rate of ``w`` stays 1.
    sample_weight : ndarray (n,), optional
        Row weights of the data (finite, ``>= 0``, positive total).
    theta_smoothing : float, default 0
        Mix one-hot target blocks with uniform by this amount (handles levels absent from a fold).
    level_names : list of sequences, optional
        Level labels for messages.

    Attributes
    ----------
    points, counts : ndarray
        Distinct records (lexicographic order) and their total weights.
    row_index : ndarray (n,) of int
        Position in ``points`` of every input record.

    Examples
    --------
    {example_compas_model}
    >>> solution.is_optimal
    True
    """

    name = "maxent"

    def __init__(self, codes: ArrayLike, encoding: Encoding, *, label: int, protected: int, C: float = 0.5,
                 prior: str | ArrayLike = "reweighted", target: str | ArrayLike | Mapping[str, Any] = "weighted",
                 tau: float | Sequence[float] = 1.0, sample_weight: ArrayLike | None = None,
                 theta_smoothing: float = 0.0, level_names: Sequence[Sequence[Any]] | None = None) -> None:
        enc = encoding
        codes = enc.check_codes(codes)
        if codes.shape[0] == 0:
            raise DataValidationError("no records to fit.")
        F = enc.n_attributes
        for nm, idx in (("label", label), ("protected", protected)):
            if not 0 <= int(idx) < F:
                raise DataValidationError(f"{nm} index {idx} is not an attribute position (0..{F - 1}).")
        if int(label) == int(protected):
            raise DataValidationError("label and protected attribute must differ.")
        if not 0.0 <= float(C) <= 1.0:
            raise DataValidationError(f"C must lie in [0, 1], got {C}.")
        if not 0.0 <= float(theta_smoothing) < 1.0:
            raise DataValidationError("theta_smoothing must lie in [0, 1).")
        self.encoding, self.label, self.protected = enc, int(label), int(protected)
        self.C, self.tau, self.theta_smoothing = float(C), tau, float(theta_smoothing)
        self.level_names = level_names
        if sample_weight is not None:
            sample_weight = check_weights(sample_weight, codes.shape[0])
        # row_index: the distinct point of every input record (the estimator spreads the prior's
        # point weights back to the rows with it, without collapsing the records a second time)
        self.points, self.counts, self.row_index = P.collapse(codes, sample_weight)
        self.data_weights = P.data_weights(self.counts)
        self.fair_weights = P.fair_reweighting(self.points, self.counts, self.label, self.protected,
                                               tau, enc.n_levels, enc.names)
        if isinstance(prior, str):
            if prior not in PRIORS:
                raise ConfigError(f"prior must be one of {PRIORS} or an array, got {prior!r}.")
            self.prior_kind = prior
            self.prior_weights = self.fair_weights if prior == "reweighted" else self.data_weights
        else:
            w = np.asarray(prior, dtype=float).reshape(-1)
            if w.shape != self.counts.shape or np.any(w < 0) or w.sum() <= 0:
                raise DataValidationError(
                    f"explicit prior weights need {self.counts.shape[0]} non-negative entries "
                    "(one per distinct point) with positive sum.")
            self.prior_kind, self.prior_weights = "custom", w / w.sum()
        self.target_kind, blocks = self._target_blocks(target)
        self.target = P.smooth_target(blocks, enc, self.theta_smoothing)
        self.theta = P.validate_target(self.target, enc, level_names)
        self._oracle: DualOracle | None = None

    # ----------------------------------------------------------------- targets
    def _target_blocks(self, target: str | ArrayLike | Mapping[str, Any]) -> tuple[str, list[np.ndarray]]:
        enc = self.encoding
        if isinstance(target, str):
            if target not in TARGETS:
                raise ConfigError(f"target must be one of {TARGETS}, an array or a mapping; got {target!r}.")
            if target == "weighted":
                return target, P.target_from_weights(self.points, self.fair_weights, enc)
            if target == "data":
                return target, P.target_from_weights(self.points, self.data_weights, enc)
            if target == "balanced":
                return target, P.balanced_target(
                    P.target_from_weights(self.points, self.data_weights, enc), enc, self.protected)
            # "prior": θ = E_q[α], so λ* = 0 and p* = q
            probs = []
            for f, k in enumerate(enc.n_levels):
                m = np.bincount(self.points[:, f], weights=self.prior_weights, minlength=k)
                probs.append(self.C / k + (1 - self.C) * m)
            return target, [p if enc.kinds[f] == "onehot" else np.array([float(enc.values[f] @ p)])
                            for f, p in enumerate(probs)]
        return "user", P.target_from_user(target, enc)

    # ----------------------------------------------------------------- model
    def oracle(self) -> DualOracle:
        """The counting oracle of this model's dual."""
        if self._oracle is None:
            self._oracle = DualOracle(self.encoding, self.points, self.prior_weights, self.C, self.theta)
        return self._oracle

    def prior_distribution(self) -> MaxEntDistribution:
        """The prior ``q`` as a distribution (``λ = 0``)."""
        return MaxEntDistribution(self.oracle(), np.zeros(self.encoding.dim))

    def build(self, backend: str | None = None) -> Any:
        """The dual as a ``cvxpy.Problem`` (``backend="cvxpy"``, the default) or a pyomo
        ``ConcreteModel`` (``backend="pyomo"``): the declarative form of that back end
        (:func:`fairopt.modeling.smooth.build_form`)."""
        return build_form(MaxEntDual(self.oracle()), backend)

    def summary(self) -> dict[str, Any]:
        """Sizes of the model (never enumerates the domain)."""
        enc = self.encoding
        return {
            "formulation": self.name, "problem_class": "smooth convex (log-sum-exp dual)",
            "attributes": list(enc.names), "levels": list(enc.n_levels),
            "domain_size": enc.domain_size, "dual_dimension": enc.dim,
            "support_points": int(self.points.shape[0]), "records": float(self.counts.sum()),
            "C": self.C, "prior": self.prior_kind, "target": self.target_kind,
            "blocks": {"lambda": enc.dim, "marginals": enc.dim},
        }

    def solve(self, solver: str | SolverSpec | None = None, tol: float = 1e-8, max_iter: int = 100,
              options: dict[str, Any] | None = None) -> MaxEntSolution:
        """Minimise the dual and return the fitted distribution.

        Parameters
        ----------
        solver : str or SolverSpec, optional
            Default: the registry's smooth solver, ``"native"`` (damped Newton);
            ``"scipy[:trust-exact|trust-krylov|L-BFGS-B]"``,
            ``"cvxpy[:CLARABEL|SCS]"`` or ``"pyomo[:ipopt]"``. A ``SolverSpec``'s ``time_limit``
            is honoured by native and scipy (status TIME_LIMIT when reached before ``tol``) and
            refused with :class:`~fairopt.errors.ConfigError` by cvxpy and pyomo; native takes
            no ``options``.
        tol : float
            Target max marginal violation ``‖E_p[α] − θ‖∞`` (over every level).
        max_iter : int
            Iteration limit of the back end.

        Returns
        -------
        MaxEntSolution
            ``status`` is OPTIMAL exactly when the re-checked max marginal violation (the gradient
            of the unconstrained convex dual, an optimality certificate) is at most ``tol``;
            otherwise TIME_LIMIT, ITERATION_LIMIT or NUMERICAL, with ``max_violation`` reporting
            how far off.
        """
        eta, who = P.boundary_distance(self.target, self.encoding)
        problem = MaxEntDual(self.oracle(), eta=eta, boundary_hint=who)
        sol = solve_smooth(problem, solver, tol=tol, max_iter=max_iter, options=options)
        lam = sol.primal["lambda"]
        dist = MaxEntDistribution(problem.oracle, lam, problem.state(lam))
        return MaxEntSolution(
            status=sol.status, objective=sol.objective, primal={"lambda": lam.copy()},
            dual={"marginals": lam.copy()}, backend=sol.backend, solver=sol.solver,
            solve_seconds=sol.solve_seconds, iterations=sol.iterations, log=sol.log,
            program=problem.name, max_violation=sol.optimality, kl=-sol.objective,
            distribution=dist)

    # ------------------------------------------------------------ conveniences
    def rates(self, dist: MaxEntDistribution, pos_level: int) -> dict[str, Any]:
        """Exact statistical and representation rate of a distribution of this model."""
        return {"statistical_rate": dist.statistical_rate(self.label, self.protected, pos_level),
                "representation_rate": dist.representation_rate(self.protected)}

    def sequential_reference(self, dist: MaxEntDistribution, n: int,
                             random_state: int | np.random.Generator | None = None) -> np.ndarray:
        """Samples from the paper's sequential sampler (reference implementation)."""
        return dist.sample(n, random_state, method="sequential")
