"""Balanced filtering's proxy-weights programs (Deng, Diana, Kearns & Roth).

``ProxyWeights`` solves P1 (nearest point of the hull of the conditional matrix's rows to the
uniform distribution) or its relaxed NNLS form P1′, and turns the weights into the sampling
probabilities ρ of Algorithm 1; ``sampling`` holds the conditional-matrix estimate, disclosivity
and imbalance metrics and the η-interpolation of the baselines.
"""
from fairopt.formulations.proxy_weights.model import ProxyWeights, ProxyWeightsResult
from fairopt.formulations.proxy_weights.programs import (
    acceptance_program,
    hull_distance_l1,
    hull_membership_program,
    max_acceptance_weights,
    p1_program,
    project_simplex,
    solve_native,
    solve_p1,
)
from fairopt.formulations.proxy_weights.sampling import (
    conditional_matrix,
    disclosivity,
    filtered_distribution,
    imbalance,
    interpolate_proxy,
    membership_matrix,
    sampling_probabilities,
)

__all__ = ["ProxyWeights", "ProxyWeightsResult", "acceptance_program", "conditional_matrix",
           "disclosivity", "filtered_distribution", "hull_distance_l1", "hull_membership_program",
           "imbalance", "interpolate_proxy", "max_acceptance_weights", "membership_matrix",
           "p1_program", "project_simplex", "sampling_probabilities", "solve_native", "solve_p1"]
