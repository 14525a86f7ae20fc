"""The Calmon mapping LP as a parametric problem in its discrimination bound ε (exact frontiers)."""
from __future__ import annotations

from typing import Any

import numpy as np

from fairopt.errors import DataValidationError
from fairopt.modeling import default_spec
from fairopt.modeling.parametric import MovingRows, ParametricProblem


def mapping_problem(model: Any) -> ParametricProblem:
    """See :meth:`~fairopt.formulations.tv_repair.OptimizedPreprocessing.parametric_problem` (``model``
    is that mapping, typed loosely: this module sits below it)."""
    if model.divergence != "tv" or model.discrimination == "ratio":
        raise DataValidationError("an exact frontier needs the TV mapping with the 'additive' or 'target' "
                                  f"discrimination (linear in ε); this one is {model.divergence!r}/"
                                  f"{model.discrimination!r}.")
    prog = model.build()
    S, lo, hi, slope, _ = model._discrimination_rows()
    assert slope is not None
    centre = 0.5 * (lo + hi)
    rows = [MovingRows("discrimination", lb0=centre, ub0=centre, dlb=-slope, dub=slope)]
    identity = (model.var_col == model.own_column[model.var_row]).astype(float)
    gap = np.abs((S @ model._rate_matrix()) @ identity - centre) / np.where(slope > 0, slope, 1.0)
    eps_max = float(gap.max()) if gap.size else 0.0
    eps_min = float(model.build("min_epsilon").solve(default_spec("LP"), require_optimal=True).objective)
    return ParametricProblem(prog, rows, max(0.0, eps_min), max(eps_max, eps_min),
                             "utility shortfall (TV)")

