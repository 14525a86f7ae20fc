"""Fairness constraints as building blocks for a user's own optimization model.

Each builder returns a :class:`FairnessBlock`: linear rows over a decision vector ``x`` (one entry
per candidate: a selection probability or a 0/1 decision) and group labels, assembled once as
sparse matrices. The same block attaches to

- a fairopt :class:`~fairopt.modeling.Program` (:meth:`FairnessBlock.add_to`),
- a user's pyomo model, as a ``Block`` on the user's indexed ``Var`` (:meth:`FairnessBlock.to_pyomo`),
- a user's cvxpy problem, as a list of constraints on the user's ``Variable``
  (:meth:`FairnessBlock.to_cvxpy`),

and :meth:`FairnessBlock.price_of_fairness` reads the row duals back from any of them, in the
objective's units, together with the derivative of the optimum with respect to each tolerance.

{example_shortlist_program}
>>> from fairopt.constraints import selection_rate_parity
>>> parity = selection_rate_parity(groups, eps=0.0)
>>> _ = parity.add_to(prog, "x")
>>> sol = prog.solve()
>>> round(sol.objective, 6), (sol.primal["x"] > 0.5).tolist()
(6.0, [True, False, True, False])
>>> round(parity.price_of_fairness(sol).parameters["eps"], 6)
1.0
"""
import sys

from fairopt._docstrings import fill_doc
from fairopt.constraints.allocation import AlphaFairObjective, alpha_fairness
from fairopt.constraints.balancing import BalanceBlock, balance, measure_value
from fairopt.constraints.block import FairnessBlock, PriceOfFairness
from fairopt.constraints.builders import (
                                          encode_groups,
                                          equal_opportunity,
                                          equalized_odds,
                                          group_cost_bounds,
                                          rate_parity,
                                          representation_bounds,
                                          selection_rate_parity,
)
from fairopt.constraints.intersectional import LazySolution, intersectional_parity, solve_lazy, solve_parity
from fairopt.constraints.leximin import LeximinResult, solve_leximin
from fairopt.constraints.mip import incumbent_lp
from fairopt.constraints.ranking import (
                                          doubly_stochastic,
                                          exposure_block,
                                          exposure_impact,
                                          exposure_merit,
                                          exposure_parity,
                                          position_weights,
)
from fairopt.constraints.relative import group_cost_parity

__all__ = ["FairnessBlock", "PriceOfFairness", "encode_groups", "equal_opportunity", "equalized_odds",
           "group_cost_bounds", "rate_parity", "representation_bounds", "selection_rate_parity"]
__all__ += ["AlphaFairObjective", "LazySolution", "alpha_fairness", "doubly_stochastic", "exposure_block",
            "exposure_impact", "exposure_merit", "exposure_parity", "group_cost_parity", "incumbent_lp",
            "intersectional_parity", "position_weights", "solve_lazy"]
__all__ += ["LeximinResult", "solve_leximin"]
__all__ += ["BalanceBlock", "balance", "measure_value"]
__all__ += ["solve_parity"]

fill_doc(sys.modules[__name__])   # the walk-through above shares its program with selection_rate_parity
