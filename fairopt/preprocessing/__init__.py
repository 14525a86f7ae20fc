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
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

from fairopt._docstrings import fill_doc
from fairopt._param_validation import Interval, StrOptions
from fairopt._utils import as_generator  # noqa: F401  (the one random-state helper)
from fairopt.data import Domain
from fairopt.guarantees import no_guarantee
from fairopt.modeling import SolverSpec
from fairopt.modeling.registry import resolve_solver
from fairopt.preprocessing._frame import _assemble, _FrameMixin, _pos_level, check_sample_weight  # noqa: F401  (kept names)
from fairopt.preprocessing.maxent import MaxEntResampler
from fairopt.preprocessing.reweighting import RepresentationReweighing, Reweighing, _WeightedResampler
from fairopt.validation import RANDOM_STATE, validate_params

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from fairopt.preprocessing._frame import Records, Seed

__all__ = ["MaxEntResampler", "RepresentationReweighing", "Reweighing", "TVRepairResampler"]


@fill_doc
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
    solver : str, SolverSpec, dict or None, default None
        LP back end of the TV program.
    pos_label : optional
        Favourable label value (default 1 if it is a level, else the last level).
    random_state : int, Generator or None
    domain : fairopt.data.Domain, optional
        Fixes the level sets and code order (default: read from the fitted frame).
    {confidence_uncertified}

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> records = load_builtin("compas").expand()
    >>> X, y = records.drop(columns="two_year_recid"), records["two_year_recid"]
    >>> resampler = TVRepairResampler(random_state=0).fit(X, y, sensitive_features="race")
    >>> round(resampler.tv_, 5)
    0.03308
    >>> resampler.sample(10).shape[0]
    10
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "statistical_rate": [Interval(Real, 0, 1, closed="right")],
        "representation": [StrOptions({"data", "balanced"}), "array-like"],
        "solver": [None, str, SolverSpec, dict],
        "pos_label": "no_validation",
        "random_state": RANDOM_STATE,
        "domain": [None, Domain],
        "confidence": [None, Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, statistical_rate: float = 1.0, representation: str | ArrayLike = "data",
                 solver: str | SolverSpec | dict[str, Any] | None = None, pos_label: object = None,
                 random_state: Seed = None, domain: Domain | None = None,
                 confidence: float | None = None) -> None:
        self.statistical_rate = statistical_rate
        self.representation = representation
        self.solver = solver
        self.pos_label = pos_label
        self.random_state = random_state
        self.domain = domain
        self.confidence = confidence

    def fit(self, X: Records, y: ArrayLike, sensitive_features: Any = None,
            sample_weight: ArrayLike | None = None) -> TVRepairResampler:
        """Solve the TV program on the training cells."""
        from fairopt.formulations.tv_repair import TVRepair

        t0 = time.perf_counter()
        validate_params(self)
        no_guarantee(self, "TVRepairResampler.fit",
                     "it repairs the empirical distribution: statistical_rate holds for the repaired "
                     "sample, and a model trained on it carries no population bound",
                     "certify the model trained on the repaired data with FairClassifier(confidence=...) "
                     "or ThresholdDebiaser(confidence=...)")
        _, codes, _, _ = self._prepare(X, y, sensitive_features, self.domain)
        sw = check_sample_weight(sample_weight, self.domain_, codes, self.sensitive_name_, "TVRepairResampler.fit")
        cells, counts = self.domain_.unique_codes(codes, sample_weight=sw)
        pos = self.domain_.levels[self.label_name_][_pos_level(self.domain_, self.label_name_,
                                                               self.pos_label)]
        model = TVRepair(self.domain_, cells, counts, protected=self.sensitive_name_,
                         label=self.label_name_, favourable_label=pos,
                         statistical_rate=self.statistical_rate, representation=self.representation)
        res = model.solve(resolve_solver(self.solver, "LP"))
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
