"""Feature encodings of a product of categorical attributes for the max-entropy dual.

A point of the domain ``Omega = V_1 x ... x V_F`` is stored as a row of integer level codes
``x = (x_1, ..., x_F)`` with ``0 <= x_f < k_f``. Its feature vector is
``alpha = phi(x) = (phi_1(x_1), ..., phi_F(x_F))`` where each attribute is encoded either

* ``"onehot"`` in *reference-level coding*: level 0 is the reference, ``phi_f(v) = e_v`` for
  ``v >= 1`` and ``phi_f(0) = 0`` (``k_f - 1`` columns). This removes the redundant direction
  ``sum_v alpha_{f,v} = 1`` of full one-hot parameters, so the dual Hessian is positive definite
  for interior targets; or
* ``"scalar"``: ``phi_f(v) = values_f[v]`` (one column), the paper's ``{0,1}^d`` coding when the
  values are 0 and 1.

The level-feature matrix ``Phi_f`` (``k_f x m_f``) turns dual parameters into level scores
``a_f = Phi_f @ lambda_f``; everything else in the oracles is expressed through these scores.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt._docstrings import register
from fairopt.errors import DataValidationError

# ---- docstring pieces: the setting of the package's examples (COMPAS, one-hot encoded) -------
_EXAMPLE_COMPAS = """>>> from fairopt.data import load_builtin
>>> from fairopt.formulations.maxent import Encoding, MaxEnt
>>> compas = load_builtin("compas")
>>> cells, counts = compas.codes()
>>> names = list(compas.domain.names)
>>> encoding = Encoding.make(compas.domain.cardinalities, "onehot", names=names)"""
register("example_compas", _EXAMPLE_COMPAS)
register("example_compas_codes", _EXAMPLE_COMPAS + "\n>>> codes = cells.repeat(counts, axis=0)")
register("example_compas_model", _EXAMPLE_COMPAS + """
>>> codes = cells.repeat(counts, axis=0)
>>> label, race = names.index("two_year_recid"), names.index("race")
>>> model = MaxEnt(codes, encoding, label=label, protected=race, C=0.5)
>>> solution = model.solve()""")

KINDS = ("onehot", "scalar")


@dataclass(frozen=True)
class Encoding:
    """Reference-level feature encoding of a product domain.

    Parameters
    ----------
    n_levels : tuple of int
        ``k_f``, the number of levels of each attribute (each ``>= 2``... or 1 for a constant).
    kinds : tuple of str
        ``"onehot"`` or ``"scalar"`` per attribute.
    values : tuple of (ndarray or None)
        Numeric value of every level for scalar attributes (``None`` for one-hot ones).
    names : tuple of str
        Attribute names, used in messages and reports.

    Examples
    --------
    >>> encoding = Encoding.make((2, 3), "onehot", names=("sex", "age"))
    >>> encoding.n_attributes, encoding.dim          # reference coding: (2 - 1) + (3 - 1) features
    (2, 3)
    """

    n_levels: tuple[int, ...]
    kinds: tuple[str, ...]
    values: tuple[Any, ...] = ()
    names: tuple[str, ...] = ()
    _phis: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    @classmethod
    def make(cls, n_levels: Iterable[int], kinds: str | Iterable[str] = "onehot",
             values: Sequence[ArrayLike | None] | None = None, names: Iterable[str] | None = None) -> Encoding:
        """Validate and build an encoding (``kinds`` may be one string for all attributes)."""
        n_levels = tuple(int(k) for k in n_levels)
        F = len(n_levels)
        if F == 0:
            raise DataValidationError("the domain needs at least one attribute.")
        if any(k < 1 for k in n_levels):
            raise DataValidationError(f"every attribute needs at least one level, got {n_levels}.")
        if isinstance(kinds, str):
            kinds = (kinds,) * F
        kinds = tuple(kinds)
        if len(kinds) != F or any(k not in KINDS for k in kinds):
            raise DataValidationError(f"kinds must be {KINDS} per attribute, got {kinds}.")
        names = tuple(names) if names is not None else tuple(f"x{f}" for f in range(F))
        if len(names) != F:
            raise DataValidationError("names must have one entry per attribute.")
        vals: list[np.ndarray | None] = []
        for f in range(F):
            if kinds[f] == "scalar":
                v = (np.arange(n_levels[f], dtype=float) if values is None or values[f] is None
                     else np.asarray(values[f], dtype=float))
                if v.shape != (n_levels[f],) or not np.all(np.isfinite(v)):
                    raise DataValidationError(
                        f"scalar attribute {names[f]!r} needs {n_levels[f]} finite level values.")
                vals.append(v)
            else:
                vals.append(None)
        phis = []
        for f in range(F):
            if kinds[f] == "onehot":
                phi = np.zeros((n_levels[f], n_levels[f] - 1))
                phi[np.arange(1, n_levels[f]), np.arange(n_levels[f] - 1)] = 1.0
            else:
                level_values = vals[f]
                assert level_values is not None  # every scalar attribute got its values above
                phi = level_values[:, None].copy()
            phi.setflags(write=False)
            phis.append(phi)
        return cls(n_levels, kinds, tuple(vals), names, tuple(phis))

    # ------------------------------------------------------------------ sizes
    @property
    def n_attributes(self) -> int:
        """Number of attributes encoded."""
        return len(self.n_levels)

    # sizes are read inside the dual's inner loops: computed once per (immutable) encoding, and
    # returned read-only
    @cached_property
    def widths(self) -> np.ndarray:
        """``m_f``, the number of dual coordinates of each attribute."""
        return _frozen(np.array([p.shape[1] for p in self._phis], dtype=int))

    @cached_property
    def dim(self) -> int:
        """``d = sum_f m_f``, the number of dual parameters."""
        return int(self.widths.sum())

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start of each attribute's block of dual coordinates (length ``F + 1``)."""
        return _frozen(np.concatenate([[0], np.cumsum(self.widths)]))

    @cached_property
    def level_offsets(self) -> np.ndarray:
        """Start of each attribute's levels in a concatenated level vector (length ``F + 1``)."""
        return _frozen(np.concatenate([[0], np.cumsum(self.n_levels)]))

    @property
    def domain_size(self) -> int:
        """``|Omega|`` as an exact Python integer."""
        out = 1
        for k in self.n_levels:
            out *= int(k)
        return out

    @property
    def log_domain_size(self) -> float:
        """Natural logarithm of the domain size (the product of the level counts)."""
        return float(np.sum(np.log(np.asarray(self.n_levels, dtype=float))))

    def phi(self, f: int) -> np.ndarray:
        """Level-feature matrix ``Phi_f`` (``k_f x m_f``)."""
        out: np.ndarray = self._phis[f]
        return out

    def block(self, f: int) -> slice:
        """Feature positions of attribute ``f`` (its reference-coded levels).

        Parameters
        ----------
        f : int
            Attribute index.

        Returns
        -------
        slice
            ``offsets[f]:offsets[f + 1]``.
        """
        return self._blocks[f]

    @cached_property
    def _blocks(self) -> tuple[slice, ...]:
        o = self.offsets
        return tuple(slice(int(o[f]), int(o[f + 1])) for f in range(self.n_attributes))

    # ------------------------------------------------------------ conversions
    def level_scores(self, lam: np.ndarray) -> list[np.ndarray]:
        """Level scores ``a_f = Phi_f lambda_f`` for every attribute."""
        o = self.offsets
        return [self._phis[f] @ lam[o[f]:o[f + 1]] for f in range(self.n_attributes)]

    def features(self, codes: np.ndarray) -> np.ndarray:
        """Dense feature matrix ``phi(x)`` of integer code rows (``n x d``)."""
        codes = np.asarray(codes)
        return np.hstack([self._phis[f][codes[:, f]] for f in range(self.n_attributes)]) \
            if self.dim else np.zeros((codes.shape[0], 0))

    def sparse_features(self, codes: np.ndarray) -> sp.csr_matrix:
        """``phi(x)`` of integer code rows as a CSR matrix, built without the dense ``n x d``.

        One-hot attributes contribute one entry per row (none at the reference level), scalar
        attributes one entry holding the level value (explicit zeros dropped).
        """
        codes = np.asarray(codes)
        n, o = codes.shape[0], self.offsets
        rows, cols, vals = [], [], []
        for f in range(self.n_attributes):
            c = codes[:, f]
            if self.kinds[f] == "onehot":
                hit = np.flatnonzero(c > 0)
                rows.append(hit)
                cols.append(o[f] + c[hit] - 1)
                vals.append(np.ones(hit.shape[0]))
            else:
                v = self.values[f][c]
                hit = np.flatnonzero(v != 0)
                rows.append(hit)
                cols.append(np.full(hit.shape[0], o[f]))
                vals.append(v[hit])
        r, c, v = (np.concatenate(x) if x else np.zeros(0) for x in (rows, cols, vals))
        # rows are already grouped per attribute (column blocks ascending): a stable sort by row
        # gives CSR order with sorted column indices
        order = np.argsort(r, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))])
        return sp.csr_matrix((v[order], c[order].astype(np.int32 if self.dim < 2**31 else np.int64),
                              indptr), shape=(n, self.dim))

    def check_codes(self, codes: ArrayLike) -> np.ndarray:
        """Return ``codes`` as a C-contiguous int64 array after integrality and range checks.

        Float codes are accepted only when every entry is a whole number (never truncated).
        """
        arr = np.asarray(codes)
        if arr.size and not np.issubdtype(arr.dtype, np.integer) and arr.dtype != bool:
            try:
                flt = arr.astype(float)
            except (TypeError, ValueError) as exc:
                raise DataValidationError(f"codes must be integers, got dtype {arr.dtype}.") from exc
            bad = ~np.isfinite(flt) | (flt != np.round(flt))
            if bad.any():
                pos = tuple(int(i) for i in np.argwhere(bad)[0])
                raise DataValidationError(
                    f"codes must be integers (no NaN, no fractions); entry {pos} is {float(flt[pos])}. "
                    "Encode the records with Domain.encode instead of passing raw values.")
        codes = np.ascontiguousarray(arr, dtype=np.int64)
        if codes.ndim != 2 or codes.shape[1] != self.n_attributes:
            raise DataValidationError(
                f"codes must be an (n, {self.n_attributes}) integer array, got shape {codes.shape}.")
        k = np.asarray(self.n_levels)
        if codes.shape[0]:   # range of each column (no (n, F) boolean temporaries)
            for f in range(self.n_attributes):
                col = codes[:, f]
                if col.min() < 0 or col.max() >= k[f]:
                    raise DataValidationError(
                        f"attribute {self.names[f]!r} has codes outside 0..{k[f] - 1}.")
        return codes

    def moments_from_level_probs(self, probs: list[np.ndarray]) -> np.ndarray:
        """Feature means ``(Phi_f^T P_f)_f`` of per-attribute level distributions."""
        if not probs:
            return np.zeros(0)
        return np.concatenate([self._phis[f].T @ probs[f] for f in range(self.n_attributes)])

    def level_vector(self, probs: list[np.ndarray]) -> np.ndarray:
        """Concatenate per-attribute level probabilities into one vector.

        Parameters
        ----------
        probs : list of ndarray
            One probability vector per attribute, in attribute order.

        Returns
        -------
        ndarray
            The vectors, one after the other.
        """
        return np.concatenate(probs)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
