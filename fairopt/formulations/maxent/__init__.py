"""Max-entropy fair preprocessing (Celis, Keswani & Vishnoi, ICML 2020).

The fitted distribution is the KL projection ``p* = argmin KL(p || q)`` of the prior
``q = C·u + (1 − C)·w`` onto ``{p : E_p[α] = θ}`` over a product of categorical attributes,
computed through the dual ``h(λ) = log Z(λ) − <θ, λ>`` with an exact counting oracle and sampled
exactly without enumerating the domain.

Modules
-------
encoding   reference-level one-hot / scalar feature encodings of a product domain
priors     Algorithm 1 reweighting, targets θ^d / θ^w / θ^b, validation (the baselines'
           Kamiran–Calders and representation weights live in fairopt.preprocessing.reweighting)
oracle     value / gradient / Hessian of the dual and exact derived quantities
solvers    native Newton, scipy, cvxpy (exponential cone) and pyomo back ends
sampler    exact vectorised mixture sampler and the paper's sequential sampler
model      the ``MaxEnt`` formulation, its solution and the fitted distribution
"""
from fairopt.formulations.maxent.encoding import Encoding
from fairopt.formulations.maxent.model import PRIORS, TARGETS, MaxEnt, MaxEntDistribution, MaxEntSolution
from fairopt.formulations.maxent.oracle import DualOracle, MixtureState, brute_force, enumerate_domain
from fairopt.formulations.maxent.priors import (
                                               balanced_target,
                                               collapse,
                                               data_weights,
                                               fair_reweighting,
                                               target_from_weights,
                                               validate_target,
)
from fairopt.formulations.maxent.solvers import BACKENDS, build_cvxpy, build_pyomo, full_violation

__all__ = [
                                               "BACKENDS",
                                               "PRIORS",
                                               "TARGETS",
                                               "DualOracle",
                                               "Encoding",
                                               "MaxEnt",
                                               "MaxEntDistribution",
                                               "MaxEntSolution",
                                               "MixtureState",
                                               "balanced_target",
                                               "brute_force",
                                               "build_cvxpy",
                                               "build_pyomo",
                                               "collapse",
                                               "data_weights",
                                               "enumerate_domain",
                                               "fair_reweighting",
                                               "full_violation",
                                               "target_from_weights",
                                               "validate_target",
]
