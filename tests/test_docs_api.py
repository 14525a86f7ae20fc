"""The API reference lists every exported name, and the public docstrings pass numpydoc.

Fast: nothing is built. ``docs/api/index.rst`` is parsed (its ``currentmodule`` sections and
autosummary lists) and compared with the ``__all__`` of every fairopt package and of every
public top-level module that declares one; the docstrings are checked with ``numpydoc.validate``
against the checks the site build enforces (``docs/_numpydoc_checks.py``).
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import fairopt

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api" / "index.rst"
sys.path.insert(0, str(ROOT / "docs"))
from _numpydoc_checks import LAMBDA_PROPERTIES, VALIDATION_CHECKS, VALIDATION_EXCLUDE  # noqa: E402

# the entry points a user meets first: their docstrings must carry an Examples section (EX01)
EXAMPLES_REQUIRED = [
    "fairopt.modeling.Program",
    "fairopt.constraints.selection_rate_parity",
    "fairopt.constraints.equal_opportunity",
    "fairopt.constraints.equalized_odds",
    "fairopt.constraints.representation_bounds",
    "fairopt.constraints.group_cost_bounds",
    "fairopt.constraints.FairnessBlock",
    "fairopt.data.load_builtin",
    "fairopt.data.Domain",
    "fairopt.preprocessing.TVRepair",
    "fairopt.preprocessing.MaxEntResampler",
    "fairopt.preprocessing.Reweighing",
    "fairopt.inprocessing.FairClassifier",
    "fairopt.inprocessing.FairRegressor",
    "fairopt.inprocessing.FairLogLossClassifier",
    "fairopt.postprocessing.ThresholdDebiaser",
    "fairopt.filtering.BalancedFilter",
    "fairopt.formulations.tv_repair.TVRepair",
    "fairopt.formulations.tv_repair.OptimizedPreprocessing",
    "fairopt.formulations.maxent.MaxEnt",
    "fairopt.metrics.statistical_rate",
    "fairopt.metrics.demographic_parity_difference",
    "fairopt.metrics.equalized_odds_difference",
    "fairopt.reductions.ExponentiatedGradient",
    "fairopt.reductions.DemographicParity",
    "fairopt.metrics.representation_rate",
    "fairopt.metrics.demographic_parity_ratio",
    "fairopt.metrics.equal_opportunity_difference",
    "fairopt.metrics.group_rates",
    "fairopt.metrics.group_summary",
    "fairopt.metrics.ks_statistical_parity",
    "fairopt.metrics.statistical_parity_gamma",
    "fairopt.metrics.kl_divergence",
    "fairopt.metrics.covariance_difference_norm",
    "fairopt.postprocessing.scores_from_proba",
    "fairopt.postprocessing.scores_from_logits",
    "fairopt.inprocessing.SEORegressor",
    "fairopt.preprocessing.RepresentationReweighing",
    "fairopt.preprocessing.TVRepairResampler",
    "fairopt.modeling.SolverSpec",
    "fairopt.modeling.available_backends",
    "fairopt.modeling.installed_specs",
    "fairopt.constraints.encode_groups",
    "fairopt.data.load_adult",
    "fairopt.data.load_compas",
    "fairopt.data.load_law",
    "fairopt.data.load_crime",
    "fairopt.data.load_credit",
    "fairopt.data.load_bank",
    "fairopt.data.load_german",
    "fairopt.data.load_dataset",
    "fairopt.data.dataset_path",
    "fairopt.data.Attribute",
    "fairopt.data.BuiltinData",
    "fairopt.data.builtin_citation",
    "fairopt.data.counts_to_csv",
    "fairopt.modeling.Variable",
    "fairopt.modeling.Constraint",
    "fairopt.modeling.ProgramSummary",
    "fairopt.modeling.Solution",
    "fairopt.modeling.Status",
    "fairopt.modeling.Canonical",
    "fairopt.modeling.check_spec",
    "fairopt.validation.Groups",
    "fairopt.validation.as_groups",
    "fairopt.validation.check_groups",
    "fairopt.validation.as_1d",
    "fairopt.validation.as_float",
    "fairopt.validation.check_int",
    "fairopt.validation.check_target",
    "fairopt.validation.check_weights",
    "fairopt.validation.num_rows",
    "fairopt.validation.sensitive_columns",
    "fairopt.validation.check_is_fitted",
    "fairopt.validation.check_X",
    "fairopt.reductions.SquareLoss",
    "fairopt.reductions.AbsoluteLoss",
    "fairopt.reductions.ScaledLogisticLoss",
    "fairopt.reductions.get_loss",
    "fairopt.reductions.Grid",
    "fairopt.reductions.StatisticalParity",
    "fairopt.reductions.BoundedGroupLoss",
    "fairopt.reductions.EqualOpportunity",
    "fairopt.reductions.EqualizedOdds",
    "fairopt.formulations.proxy_weights.ProxyWeights",
    "fairopt.formulations.proxy_weights.imbalance",
    "fairopt.formulations.proxy_weights.project_simplex",
    "fairopt.formulations.proxy_weights.membership_matrix",
    "fairopt.formulations.proxy_weights.conditional_matrix",
    "fairopt.formulations.proxy_weights.disclosivity",
    "fairopt.formulations.proxy_weights.hull_distance_l1",
    "fairopt.formulations.proxy_weights.filtered_distribution",
    "fairopt.formulations.proxy_weights.sampling_probabilities",
    "fairopt.formulations.proxy_weights.solve_p1",
    "fairopt.formulations.proxy_weights.interpolate_proxy",
    "fairopt.formulations.tv_repair.AdultDistortion",
    "fairopt.formulations.tv_repair.AttributeRule",
    "fairopt.formulations.tv_repair.CallableDistortion",
    "fairopt.formulations.tv_repair.CompasDistortion",
    "fairopt.formulations.tv_repair.as_distortion",
    "fairopt.formulations.tv_repair.bank_distortion",
    "fairopt.runs.get_runner",
    "fairopt.formulations.constrained_classification.ramp",
    "fairopt.formulations.constrained_classification.smoothed_relu",
    "fairopt.formulations.constrained_classification.collapse_atoms",
    "fairopt.formulations.constrained_classification.RandomizedThresholdParity",
    "fairopt.formulations.constrained_classification.FairLogLoss",
    "fairopt.formulations.maxent.collapse",
    "fairopt.formulations.maxent.data_weights",
    "fairopt.formulations.maxent.enumerate_domain",
    "fairopt.formulations.maxent.Encoding",
    "fairopt.reductions.FiniteClassOracle",
    "fairopt.reductions.make_oracle",
    "fairopt.constraints.PriceOfFairness",
    "fairopt.data.BuiltinSpec",
    "fairopt.data.DatasetInfo",
    "fairopt.data.data_home",
    "fairopt.runs.Table",
    "fairopt.formulations.maxent.MaxEntDistribution",
    "fairopt.formulations.maxent.DualOracle",
    "fairopt.formulations.maxent.full_violation",
    "fairopt.formulations.maxent.target_from_weights",
    "fairopt.formulations.maxent.balanced_target",
    "fairopt.formulations.maxent.fair_reweighting",
    "fairopt.filtering.proxy_weights",
    "fairopt.filtering.evaluate_cells",
    "fairopt.postprocessing.ShiftInference",
    "fairopt.formulations.proxy_weights.p1_program",
    "fairopt.formulations.proxy_weights.hull_membership_program",
    "fairopt.formulations.proxy_weights.solve_native",
    "fairopt.formulations.proxy_weights.max_acceptance_weights",
    "fairopt.formulations.proxy_weights.acceptance_program",
    "fairopt.formulations.constrained_classification.sgd_thresholds",
    "fairopt.formulations.constrained_classification.IsotonicScoreMap",
    "fairopt.formulations.tv_repair.TVRepairResult",
    "fairopt.formulations.tv_repair.MappingResult",
    "fairopt.formulations.constrained_classification.ThresholdSolution",
    "fairopt.formulations.constrained_classification.FairLogLossSolution",
    "fairopt.formulations.maxent.MaxEntSolution",
    "fairopt.formulations.proxy_weights.ProxyWeightsResult",
    "fairopt.reductions.GameResult",
    "fairopt.formulations.maxent.build_cvxpy",
    "fairopt.formulations.maxent.build_pyomo",
    "fairopt.formulations.maxent.validate_target",
    "fairopt.reductions.label_cover",
    "fairopt.reductions.LeastSquaresOracle",
    "fairopt.reductions.PracticalEG",
    "fairopt.reductions.FaithfulEG",
    "fairopt.data.crime_majority_white",
    "fairopt.validation.record_features",
    "fairopt.validation.align_features",
    "fairopt.reductions.RiskMinimizationOracle",
    "fairopt.reductions.WeightedLossOracle",
    "fairopt.reductions.CostSensitiveOracle",
    "fairopt.reductions.Learner",
    "fairopt.reductions.MultiplierPlayer",
    "fairopt.reductions.Moment",
    "fairopt.formulations.tv_repair.Distortion",
    "fairopt.modeling.BackendInfo",
    "fairopt.formulations.constrained_classification.ScoreAtoms",
    "fairopt.formulations.constrained_classification.ThresholdSGD",
    "fairopt.formulations.constrained_classification.CellRamp",
    "fairopt.formulations.maxent.MixtureState",
    "fairopt.formulations.maxent.brute_force",
    "fairopt.reductions.HingeLPOracle",
    "fairopt.reductions.Game",
    "fairopt.reductions.HypothesisPool",
    "fairopt.runs.RunOutput",
    "fairopt.data.make_builtin_counts",
]


def exporting_modules() -> list[str]:
    """Every fairopt package, and every public top-level module, that declares ``__all__``."""
    names = ["fairopt"]
    for info in pkgutil.walk_packages(fairopt.__path__, "fairopt."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        top_level = info.name.count(".") == 1
        if info.ispkg or top_level:
            names.append(info.name)
    return [m for m in names if hasattr(importlib.import_module(m), "__all__")]


def exported() -> set[str]:
    out = set()
    for mod in exporting_modules():
        for name in importlib.import_module(mod).__all__:
            if not (name.startswith("__") and name.endswith("__")):
                out.add(f"{mod}.{name}")
    return out


def listed() -> set[str]:
    """Names in the autosummary lists of the API page, qualified by their ``currentmodule``."""
    current, in_summary, out = None, False, set()
    for line in API_PAGE.read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            current = m.group(1)
            in_summary = False
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and (m := re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)):
            out.add(f"{current}.{m.group(1)}")
        elif line and not line.startswith(" "):
            in_summary = False
    return out


def test_api_page_parses():
    names = listed()
    assert "fairopt.modeling.Program" in names and "fairopt.errors" in names
    assert not any(":" in n for n in names)  # option lines are not entries


def test_every_exported_name_has_an_api_page():
    missing = sorted(exported() - listed())
    assert not missing, f"add these to docs/api/index.rst under their package: {missing}"


def test_every_api_entry_is_exported():
    stale = sorted(listed() - exported())
    assert not stale, f"docs/api/index.rst lists names no package exports: {stale}"


def public_objects():
    """(qualified name, object) for every exported class and function and their own public
    methods and properties, each object once."""
    seen, out = set(), []
    for qual in sorted(exported()):
        mod, _, name = qual.rpartition(".")
        obj = getattr(importlib.import_module(mod), name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append((qual, obj))
        if inspect.isclass(obj):
            # own members and those inherited from fairopt's own bases (the API page shows both)
            members = {}
            for base in reversed(obj.__mro__):
                if base is obj or base.__module__.startswith("fairopt"):
                    members.update(vars(base))
            for attr, value in members.items():
                if attr.startswith("_") or (attr.startswith("set_") and attr.endswith("_request")):
                    continue
                if isinstance(value, property) or inspect.isfunction(value) or isinstance(
                        value, (classmethod, staticmethod)):
                    out.append((f"{qual}.{attr}", value))
    return out


def _excluded(name: str) -> bool:
    # lambda properties are excluded from numpydoc (it cannot locate their source) but still
    # need a docstring: the fallback in the test below checks it
    return any(re.search(p, name) for p in VALIDATION_EXCLUDE - {LAMBDA_PROPERTIES})


def test_public_docstrings_pass_the_enforced_numpydoc_checks():
    from numpydoc.validate import validate
    failures = []
    for qual, obj in public_objects():
        if _excluded(qual):
            continue
        try:
            report = validate(qual)["errors"]
        except StopIteration:
            # numpydoc cannot find a ``def`` line for a property built from a lambda; such a
            # property's docstring is its ``doc=`` argument, which must exist
            report = [] if inspect.getdoc(obj) else [("GL08", "The object does not have a docstring")]
        errors = [f"{code} {msg}" for code, msg in report if code in VALIDATION_CHECKS]
        if errors:
            failures.append(f"{qual}: {'; '.join(errors)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("qual", EXAMPLES_REQUIRED)
def test_entry_points_have_examples(qual):
    from numpydoc.validate import validate
    assert qual in exported()
    codes = {code for code, _ in validate(qual)["errors"]}
    assert "EX01" not in codes, f"{qual} needs an Examples section"
