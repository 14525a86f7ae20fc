"""Relative group-cost fairness: every group's average cost per entity within ``eps`` of the
others, in cost units.

Decision entries often outnumber the entities they concern (``x[client, facility]``,
``x[worker, period]``); fairness is about the cost *per client*, so group ``a``'s average is

    C_a(x) = sum_{i in a} c_i x_i / N_a,       N_a = number of distinct entities of group a,

not a mean over variable entries. The rows are the band ``C_a - t >= 0``, ``C_a - t <= eps``, as
for the rate blocks; ``parameters["eps"]`` of the price is ``d f*/d eps`` in the objective's
units per cost unit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import scipy.sparse as sp

from fairopt._param_validation import NONNEGATIVE, check_value
from fairopt.constraints._scaling import power_of_two
from fairopt.constraints.block import FairnessBlock, Sensitivity
from fairopt.constraints.builders import _group_matrix, _vector, encode_groups
from fairopt.errors import DataValidationError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def group_cost_parity(groups: ArrayLike, cost: ArrayLike, eps: float, *, entity: ArrayLike | None = None,
                      name: str = "group_cost_parity") -> FairnessBlock:
    """Each group's average cost per entity within ``eps`` of every other group's.

    Parameters
    ----------
    groups : array-like of shape (n,)
        Group of the entity each decision entry belongs to.
    cost : array-like of shape (n,)
        Cost (or benefit) per unit of each entry.
    eps : float
        Largest allowed difference of average costs, in cost units (>= 0).
    entity : array-like of shape (n,), optional
        Entity of each entry (a client, a worker); averages divide by the number of distinct
        entities of the group. Default: each entry is its own entity.
    name : str

    Returns
    -------
    FairnessBlock
        Rows ``cost[a] - level >= 0`` and ``cost[a] - level <= eps``; tolerance ``eps``.

    Examples
    --------
    >>> import numpy as np
    >>> # two clients per group, two facilities per client: x[client, facility] row-major
    >>> groups = np.repeat(["a", "a", "b", "b"], 2)
    >>> clients = np.repeat([0, 1, 2, 3], 2)
    >>> block = group_cost_parity(groups, np.arange(8.0), eps=1.0, entity=clients)
    >>> block.A.toarray()[0].tolist()       # divided by 2 clients, not 4 entries
    [0.0, 0.5, 1.0, 1.5, 0.0, 0.0, 0.0, 0.0]
    """
    codes, labels = encode_groups(groups)
    n, K = codes.shape[0], len(labels)
    c = _vector(cost, n, "cost")
    check_value("eps", eps, [NONNEGATIVE], "group_cost_parity")   # a difference of average costs
    eps = float(eps)
    if entity is None:
        count = np.bincount(codes, minlength=K).astype(float)
    else:
        ent = pd.Series(np.asarray(entity).reshape(-1))
        if ent.shape[0] != n:
            raise DataValidationError(f"entity has {ent.shape[0]} entries; expected one per decision entry ({n}).")
        if ent.isna().any():
            raise DataValidationError(f"entity has a missing label at entry {int(ent.isna().to_numpy().argmax())}.")
        per = pd.DataFrame({"e": ent, "g": codes}).drop_duplicates()
        clash = per["e"].duplicated(keep=False)
        if clash.any():
            e = per.loc[clash, "e"].iloc[0]
            raise DataValidationError(f"entity {e!r} appears in more than one group; each entity (client, worker) "
                                      "must belong to exactly one group.")
        count = np.bincount(per["g"].to_numpy(), minlength=K).astype(float)
    f = 1.0 / power_of_two(float(np.abs(c / count[codes]).max()))   # rows of magnitude ~1
    C = _group_matrix(codes, K, c / count[codes] * f)
    A = sp.vstack([C, C], format="csr")
    return FairnessBlock(
        name=name, kind="group_cost_parity", groups=labels, A=A, T=-f * np.ones((2 * K, 1)),
        sense=np.r_[np.ones(K), -np.ones(K)].astype(np.int8), bound=np.r_[np.zeros(K), np.full(K, eps * f)],
        row_labels=[f"cost[{g}] - level >= 0" for g in labels] + [f"cost[{g}] - level <= eps" for g in labels],
        aux_names=["level"], parameters={"eps": eps},
        sensitivity={"eps": Sensitivity(dbound=np.r_[np.zeros(K), np.full(K, f)], domain=NONNEGATIVE)})
