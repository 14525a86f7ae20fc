"""Result of the optimized-preprocessing mapping and its vectorised, seeded application to records."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.data.domain import Domain
from fairopt.formulations.tv_repair._types import RandomState
from fairopt.modeling import Solution


def _csr(rows: ArrayLike, cols: ArrayLike, vals: ArrayLike, shape: tuple[int, int]) -> sp.csr_matrix:
    m = sp.csr_matrix((vals, (rows, cols)), shape=shape)
    m.eliminate_zeros()
    return m


@dataclass
class MappingResult:
    """Solution of an :class:`OptimizedPreprocessing` model.

    Attributes
    ----------
    objective : float
        Optimal utility loss (TV distance or KL divergence).
    mapping : csr_matrix (R, C)
        ``P(x̂, ŷ | d, x, y)``: one row per observed (d, x, y) (:attr:`rows`, codes of
        :attr:`dxy_domain`), one column per candidate (x̂, ŷ) (:attr:`columns`, codes of
        :attr:`xy_domain`).
    q : ndarray (R,)
        Empirical mass of each row.
    rates : DataFrame
        ``P(Ŷ=y | D=d)`` before and after, per group and label.
    distortion : dict
        Largest expected distortion and largest excess-distortion probability per level over rows.
    fairness_duals : DataFrame
        One row per discrimination constraint: groups, label, dual (``d objective / d bound``).
    price_of_fairness : DataFrame
        Per group pair: sum of ``|dual|`` and the contribution to ``d objective / d ε``.
    d_objective_d_epsilon : float
        ``d objective* / d ε`` (≤ 0) by the envelope theorem at the optimal basis.

    Examples
    --------
    >>> from fairopt.data import load_builtin
    >>> from fairopt.formulations.tv_repair import OptimizedPreprocessing
    >>> adult = load_builtin("adult")
    >>> cells, counts = adult.codes()
    >>> result = OptimizedPreprocessing(adult.domain, cells, counts, protected="sex", label="income",
    ...                                 features=["age_decade", "education_years"],
    ...                                 epsilon=0.1).solve()
    >>> type(result).__name__, list(result.rates.columns)
    ('MappingResult', ['sex', 'income', 'before', 'after'])
    """

    objective: float
    status: str
    mapping: sp.csr_matrix
    rows: np.ndarray
    columns: np.ndarray
    q: np.ndarray
    dxy_domain: Domain
    xy_domain: Domain
    rates: pd.DataFrame
    distortion: dict[str, Any]
    fairness_duals: pd.DataFrame
    price_of_fairness: pd.DataFrame
    d_objective_d_epsilon: float
    solution: Solution | None
    build_seconds: float
    solve_seconds: float
    approximations: list[Any] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """Non-zero entries: the row's attributes, the mapped ``<name>_hat`` attributes and ``probability``."""
        coo = self.mapping.tocoo()
        # one frame from the level arrays (what Domain.decode builds, without two frames and a concat)
        out = {}
        for domain, codes, suffix in ((self.dxy_domain, self.rows[coo.row], ""),
                                      (self.xy_domain, self.columns[coo.col], "_hat")):
            for j, a in enumerate(domain.attributes):
                levels = np.asarray(a.levels) if domain._homogeneous(a) else np.asarray(a.levels, dtype=object)
                out[a.name + suffix] = levels[codes[:, j]]
        out["probability"] = coo.data
        return pd.DataFrame(out)

    def apply(self, codes: np.ndarray, random_state: RandomState = None) -> np.ndarray:
        """Draw mapped (x̂, ŷ) codes for records with (d, x, y) ``codes`` (vectorised).

        One uniform draw per record selects its cell by a single ``searchsorted`` over the
        concatenated row CDFs. Records of rows not seen in training keep their values (a
        warning says how many).
        """
        codes = self.dxy_domain.check_codes(codes)
        out = codes[:, 1:].copy()
        pos, seen = _locate(self.dxy_domain.ravel(self.rows), self.dxy_domain.ravel(codes))
        out[seen] = self.columns[_draw(self.mapping, pos[seen], random_state)]
        result: np.ndarray = out
        return result

    def apply_features(self, codes: np.ndarray, random_state: RandomState = None) -> np.ndarray:
        """Draw mapped x̂ for unlabelled records with (d, x) ``codes`` from :meth:`test_mapping`."""
        n_y = self.xy_domain.cardinalities[-1]
        codes = np.asarray(codes, dtype=np.int64)
        full = self.dxy_domain.check_codes(np.column_stack([codes, np.zeros(len(codes), dtype=np.int64)]))
        M, dx_keys, xhat = self.test_mapping()
        out = codes[:, 1:].copy()
        pos, seen = _locate(dx_keys, self.dxy_domain.ravel(full) // n_y)
        out[seen] = xhat[_draw(M, pos[seen], random_state)]
        result: np.ndarray = out
        return result

    def test_mapping(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
        """``P(x̂ | d, x)`` for records without a label: Σ_{y,ŷ} q(d,x,y) P(x̂,ŷ|d,x,y), row-normalised.

        Returns the matrix, the flat keys of its (d, x) rows (``dxy_domain index // |Y|``) and
        the x̂ codes of its columns.
        """
        n_y = self.xy_domain.cardinalities[-1]   # the label is the last (least significant) digit
        dx_keys, dx_of_row = np.unique(self.dxy_domain.ravel(self.rows) // n_y, return_inverse=True)
        xhat_keys, xhat_of_col = np.unique(self.xy_domain.ravel(self.columns) // n_y, return_inverse=True)
        R = _csr(dx_of_row, np.arange(len(self.q)), self.q, (len(dx_keys), len(self.q)))
        Cm = _csr(np.arange(len(xhat_of_col)), xhat_of_col, np.ones(len(xhat_of_col)),
                  (len(xhat_of_col), len(xhat_keys)))
        M = (R @ self.mapping @ Cm).tocsr()
        M = (sp.diags(1.0 / np.asarray(M.sum(axis=1)).ravel()) @ M).tocsr()
        return M, dx_keys, self.xy_domain.unravel(xhat_keys * n_y)[:, :-1]


def _locate(keys: np.ndarray, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row of each flat key in sorted ``keys`` and whether it exists (warns about the others)."""
    pos = np.minimum(np.searchsorted(keys, flat), len(keys) - 1)
    seen = keys[pos] == flat
    if (~seen).any():
        warnings.warn(f"{int((~seen).sum())} record(s) fall in rows unseen at fit time; they are kept "
                      "unchanged.", stacklevel=3)
    return pos, seen


def _draw(P: sp.csr_matrix, rows: np.ndarray, random_state: RandomState) -> np.ndarray:
    """Column index drawn from row ``rows[i]`` of the row-stochastic ``P`` for every i: one
    ``searchsorted`` of ``row + u`` over the row CDFs offset by their row index."""
    P = P.tocsr()
    row_of = np.repeat(np.arange(P.shape[0]), np.diff(P.indptr))
    cdf = np.cumsum(P.data)
    start = np.concatenate([[0.0], cdf])[P.indptr[:-1]]
    total = cdf[P.indptr[1:] - 1] - start
    level = row_of + (cdf - start[row_of]) / total[row_of]
    level[P.indptr[1:] - 1] = row_of[P.indptr[1:] - 1] + 1.0   # exact row ends
    u = np.random.default_rng(random_state).random(rows.size)
    pick = np.minimum(np.searchsorted(level, rows + u, side="right"), len(level) - 1)
    out: np.ndarray = P.indices[pick]
    return out
