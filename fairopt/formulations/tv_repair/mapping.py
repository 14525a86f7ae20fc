"""Calmon et al. (2017) optimized pre-processing: a randomised mapping P(x̂, ŷ | d, x, y).

With rows r = (d, x, y) of empirical mass q_r and columns c = (x̂, ŷ), the mapping P ≥ 0 with
Σ_c P(c|r) = 1 produces P_out(k) = Σ_r q_r P(c|r) over keys k = c (``utility="xy"``, the paper's
and AIF360's utility; D is not in it) or k = (d, c) (``utility="dxy"``). The program is

    min  D(t, P_out)                        t = the empirical law of the keys
    s.t. Σ_c P(c|r) = 1                                         [validity]
         discrimination on π_{d,y} = P(Ŷ=y | D=d) = Σ_{r∈d} q_r/q_D(d) Σ_{ŷ(c)=y} P(c|r)
            "ratio"    π_{d,y} ≤ (1+ε) π_{d',y}  ordered pairs, all y      (the authors' code)
            "target"   |π_{d,y} / p_Y(y) − 1| ≤ ε   every group and y       (the paper, p_T = p_Y)
            "additive" |π_{d,y} − π_{d',y}| ≤ ε   unordered pairs, all y     (AIF360)
         expected distortion   Σ_c δ(r,c) P(c|r) ≤ κ                       [expected_distortion]
         excess distortion     Σ_{c: δ(r,c) ≥ c_i} P(c|r) ≤ b_i           [excess_distortion]
         (conditioned on (d,x,y), or pooled over groups on (x,y) with weights q(d|x,y))

With D = TV the objective is written Σ_k t_k σ_k, σ_k ≥ 1 − P_out(k)/t_k, 0 ≤ σ ≤ 1 (one relative
``shortfall`` variable per key with t_k > 0): since Σ_k P_out = Σ_k t = 1, Σ_k (t_k − P_out(k))_+
equals the TV distance, and keys without data mass need no variable. With D = KL (Σ t log(t/P_out)) the same
constraints go to cvxpy's exponential cone.

**Sparse build.** Only observed rows get variables, and a cell (r, c) is never created when δ is
infinite or a level with b_i = 0 forbids it (nonnegative entries bounded by 0 are 0); both
restrictions are exact. Everything is assembled from index arrays, with no loop over rows or cells.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from itertools import combinations, permutations
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from fairopt.data.domain import Domain
from fairopt.errors import DataValidationError, InfeasibleError
from fairopt.formulations.tv_repair._identity_start import IdentityStart
from fairopt.formulations.tv_repair._types import RowMeta, SolverArg
from fairopt.formulations.tv_repair.distortion import Distortion, DistortionLike, as_distortion
from fairopt.formulations.tv_repair.feasibility import EpsilonAnalysis
from fairopt.formulations.tv_repair.report import MappingReport
from fairopt.formulations.tv_repair.result import MappingResult, _csr
from fairopt.formulations.tv_repair.simple import check_roles
from fairopt.modeling import Program
from fairopt.modeling.parametric import ParametricProblem
from fairopt.modeling.registry import accepts, resolve_solver

#: largest number of (observed (x,y), candidate column) pairs whose distortion is evaluated
MAX_PAIRS = 60_000_000
DISCRIMINATION_FORMS = ("ratio", "target", "additive")


def _gather(indptr: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate CSR rows ``sel``: (position in ``sel``, index into the CSR data) per entry."""
    starts = indptr[sel]
    lens = indptr[sel + 1] - starts
    owner = np.repeat(np.arange(len(sel)), lens)
    within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    return owner, starts[owner] + within


class OptimizedPreprocessing(EpsilonAnalysis, MappingReport, IdentityStart):
    """Calmon-style optimized pre-processing as a sparse LP (TV) or exponential-cone program (KL).

    Parameters
    ----------
    domain : Domain
        Product domain with the protected attribute ``D``, the features and the label ``Y``.
    cells, counts : arrays
        Observed cells (codes of ``domain``) and their counts or weights.
    protected, label : str
        ``D`` and ``Y``; D is copied through, never mapped.
    features : list of str, optional
        ``X`` (default: all other attributes). Attributes outside D, X, Y are marginalised out.
    favourable_label : optional
        ``y+``; for binary ``Y`` the additive rows are built for ``y+`` only (the other label's
        rows coincide).
    discrimination : {"ratio", "target", "additive"}
        Form of the discrimination control (see the module docstring).
    epsilon : float >= 0
        Its bound ε (a ratio margin for "ratio" and "target", probability points for "additive").
    distortion : str, mapping, callable or Distortion, optional
        δ((x,y), (x̂,ŷ)) (see :mod:`fairopt.formulations.tv_repair.distortion`). Without one,
        every move costs 0 and no distortion limit may be given.
    clist, dlist : sequences
        Excess-distortion levels ``c_i`` and probability bounds ``b_i`` (non-increasing).
    max_expected_distortion : float or mapping of group level to float, optional
        κ of the expected-distortion rows (per group only with ``conditioning="dxy"``).
    conditioning : {"dxy", "xy"}
        Distortion rows per (d, x, y) (the paper) or pooled per (x, y) (the reference codes).
    utility : {"xy", "dxy"}, default "xy"
        Keys of the utility loss: (X̂, Ŷ) against (X, Y) (the paper's and AIF360's form, the
        default), or the joint (D, X̂, Ŷ) against (D, X, Y) (also charges mass moved between
        groups' cells, so its optimum is larger: 0.0484 against 0.0117 on Adult).
    divergence : {"tv", "kl"}
        Total variation (an LP, every LP back end) or KL (cvxpy, exponential cone).
    columns : {"all", "observed"}
        Candidate (x̂, ŷ): the whole X×Y product (exact) or the observed (x, y) only (an
        approximation for huge unbinned domains; flagged in results).

    Examples
    --------
    The Adult experiment's mapping on the built-in counts (favourable label ``income = 1``):

    >>> from fairopt.data import load_builtin
    >>> adult = load_builtin("adult")
    >>> cells, counts = adult.codes()
    >>> model = OptimizedPreprocessing(adult.domain, cells, counts, protected="sex", label="income",
    ...                                features=["age_decade", "education_years"], epsilon=0.05,
    ...                                distortion="adult", clist=[0.99, 1.99, 2.99],
    ...                                dlist=[0.1, 0.05, 0.0], utility="xy")
    >>> result = model.solve()
    >>> after = result.rates.set_index(["sex", "income"])["after"]
    >>> bool(after[("Female", 1)] <= 1.05 * after[("Male", 1)] + 1e-9)
    True
    """

    def __init__(self, domain: Domain, cells: ArrayLike, counts: ArrayLike, *, protected: str, label: str,
                 features: Sequence[str] | None = None, favourable_label: object = None,
                 discrimination: str = "ratio", epsilon: float = 0.05, distortion: DistortionLike | None = None,
                 clist: Sequence[float] = (), dlist: Sequence[float] = (),
                 max_expected_distortion: float | Mapping[Any, float] | None = None,
                 conditioning: str = "dxy", utility: str = "xy", divergence: str = "tv",
                 columns: str = "all", name: str = "optimized_preprocessing") -> None:
        self.domain, self.protected, self.label, self.name = domain, protected, label, name
        self.discrimination, self.conditioning, self.utility = discrimination, conditioning, utility
        self.divergence, self.columns_mode = divergence, columns
        self.epsilon = float(epsilon)
        self.clist, self.dlist = [float(c) for c in clist], [float(b) for b in dlist]
        self.max_expected_distortion = max_expected_distortion
        self._check_options(features, favourable_label, distortion)
        self._collapse(cells, counts)
        self._structure()

    # ------------------------------------------------------------------ validation
    def _check_options(self, features: Sequence[str] | None, favourable_label: object,
                       distortion: DistortionLike | None) -> None:
        dom = self.domain
        check_roles(dom, self.protected, self.label)
        feats = [n for n in dom.names if n not in (self.protected, self.label)] if features is None \
            else list(features)
        bad = [f for f in feats if f not in dom.names or f in (self.protected, self.label)]
        if bad or len(set(feats)) != len(feats):
            raise DataValidationError(f"features {bad or feats} must be distinct domain attributes other "
                                      "than the protected attribute and the label.")
        self.features = feats
        levels = dom.levels[self.label]
        if favourable_label is None:
            favourable_label = 1 if 1 in levels else levels[-1]
        if favourable_label not in levels:
            raise DataValidationError(f"favourable_label {favourable_label!r} is not a level of "
                                      f"{self.label!r} ({list(levels)}).")
        self.favourable_label, self._ypos = favourable_label, levels.index(favourable_label)
        choices = {"discrimination": (self.discrimination, DISCRIMINATION_FORMS),
                   "conditioning": (self.conditioning, ("dxy", "xy")),
                   "utility": (self.utility, ("dxy", "xy")), "divergence": (self.divergence, ("tv", "kl")),
                   "columns": (self.columns_mode, ("all", "observed"))}
        for key, (value, allowed) in choices.items():
            if value not in allowed:
                raise DataValidationError(f"{key} must be one of {allowed}, got {value!r}.")
        if not (np.isfinite(self.epsilon) and self.epsilon >= 0):
            raise DataValidationError(f"epsilon must be a finite number >= 0, got {self.epsilon}.")
        if len(self.clist) != len(self.dlist):
            raise DataValidationError(f"clist ({len(self.clist)} levels) and dlist ({len(self.dlist)} "
                                      "bounds) must have the same length.")
        if any(b < 0 or b > 1 for b in self.dlist) or any(np.diff(self.dlist) > 0):
            raise DataValidationError(f"dlist must be probabilities in [0, 1] that do not increase, got "
                                      f"{self.dlist}.")
        if any(np.diff(self.clist) <= 0) or any(c <= 0 for c in self.clist):
            raise DataValidationError(f"clist must be positive, strictly increasing levels, got {self.clist}.")
        limits = bool(self.clist) or self.max_expected_distortion is not None
        if distortion is None and limits:
            raise DataValidationError("clist/dlist or max_expected_distortion need a distortion function "
                                      "(a built-in name, a table of attribute rules or a callable).")
        self.distortion: Distortion | None = None if distortion is None else as_distortion(distortion)
        kappa = self.max_expected_distortion
        if isinstance(kappa, Mapping) and self.conditioning == "xy":
            raise DataValidationError("per-group max_expected_distortion needs conditioning='dxy'.")

    def _collapse(self, cells: ArrayLike, counts: ArrayLike) -> None:
        dom = self.domain
        cells = dom.check_codes(cells)
        counts = np.asarray(counts, dtype=float).reshape(-1)
        if counts.shape[0] != cells.shape[0]:
            raise DataValidationError(f"counts has {counts.shape[0]} entries for {cells.shape[0]} cells.")
        if not np.isfinite(counts).all() or (counts < 0).any() or counts.sum() <= 0:
            raise DataValidationError("counts must be finite, non-negative and not all zero.")
        names = [self.protected, *self.features, self.label]
        self.dxy_domain, self.xy_domain = dom.subdomain(names), dom.subdomain(names[1:])
        proj = cells[:, [dom.index(n) for n in names]]
        rows, mass = self.dxy_domain.unique_codes(proj, sample_weight=counts)
        keep = mass > 0
        self.rows, self.q = rows[keep], mass[keep] / mass[keep].sum()
        self.n_records = float(counts.sum())

    # ------------------------------------------------------------------ sparse structure
    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """Candidate columns (codes of X×Y) and each row's own column index."""
        xy = self.xy_domain
        own_flat = xy.ravel(self.rows[:, 1:])
        if self.columns_mode == "all":
            if xy.size > MAX_PAIRS:
                raise DataValidationError(f"columns='all' enumerates {xy.size} (x̂, ŷ) cells; bin the "
                                          "features or use columns='observed'.")
            return xy.unravel(np.arange(xy.size, dtype=np.int64)), own_flat
        uniq, own = np.unique(own_flat, return_inverse=True)
        return xy.unravel(uniq), own

    def _structure(self) -> None:
        cand, own = self._candidates()
        uxy, u_of_r = np.unique(own, return_inverse=True)
        U, C = len(uxy), len(cand)
        if U * C > MAX_PAIRS:
            raise DataValidationError(f"{U} observed (x, y) × {C} candidate cells = {U * C} distortion "
                                      f"evaluations exceed {MAX_PAIRS}; bin features or use columns='observed'.")
        if self.distortion is None:
            delta = np.zeros((U, C))
        else:
            old = np.repeat(cand[uxy], C, axis=0)
            new = np.tile(cand, (U, 1))
            delta = self.distortion(self.xy_domain, old, new).reshape(U, C)
        forbidden = ~np.isfinite(delta)
        for c, b in zip(self.clist, self.dlist, strict=False):
            if b == 0:
                forbidden |= delta >= c
        if forbidden[np.arange(U), uxy].any():
            raise DataValidationError("the distortion forbids leaving some records unchanged (δ(v, v) must "
                                      "be 0 and below every level with bound 0).")
        ui, ci = np.nonzero(~forbidden)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(ui, minlength=U))])
        var_row, pos = _gather(indptr, u_of_r)
        self.candidates, self.own_column = cand, own
        self.var_row, self.var_col = var_row, ci[pos]
        self.var_delta = delta[ui[pos], ci[pos]]
        self.row_ptr = np.concatenate([[0], np.cumsum(np.bincount(var_row, minlength=len(self.q)))])
        self.group = self.rows[:, 0]
        self.groups = np.unique(self.group)
        self.q_group = np.bincount(self.group, weights=self.q, minlength=self.dxy_domain.cardinalities[0])
        self.u_of_r, self.q_xy = u_of_r, np.bincount(u_of_r, weights=self.q)
        self.n_dense = int(self.dxy_domain.size) * C
        self._pi: sp.csr_matrix | None = None

    @property
    def n_variables(self) -> int:
        """Number of mapping variables (nonzero candidate cells of the mapping)."""
        return int(self.var_row.size)

    # ------------------------------------------------------------------ constraint blocks
    def _rate_matrix(self) -> sp.csr_matrix:
        """Π: row (g, y) for g in :attr:`groups`, ``Π @ P = π_{g,y}`` (built once: it depends on the
        structure only, not on ε)."""
        if self._pi is None:
            self._pi = self._build_rate_matrix()
        return self._pi

    def _build_rate_matrix(self) -> sp.csr_matrix:
        n_y = self.xy_domain.cardinalities[-1]
        gi = np.searchsorted(self.groups, self.group)[self.var_row]
        yhat = self.candidates[self.var_col, -1]
        w = self.q[self.var_row] / self.q_group[self.group[self.var_row]]
        return _csr(gi * n_y + yhat, np.arange(self.n_variables), w, (len(self.groups) * n_y, self.n_variables))

    def _labels(self) -> list[int]:
        n_y = self.xy_domain.cardinalities[-1]
        if self.discrimination == "additive" and n_y == 2:
            return [self._ypos]   # the other label's rows coincide
        return list(range(n_y))

    def _discrimination_rows(self) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray | None,
                                            list[RowMeta]]:
        """Selection ``S`` (rows × Π rows), lower/upper bounds, per-row ε-slope, and row metadata."""
        n_y, ys, G = self.xy_domain.cardinalities[-1], self._labels(), len(self.groups)
        eps, form = self.epsilon, self.discrimination
        if form == "target":
            p_y = np.bincount(self.rows[:, -1], weights=self.q, minlength=n_y)
            meta = [(g, -1, y) for g in range(G) for y in ys if p_y[y] > 0]
            a = np.array([g * n_y + y for g, _, y in meta], dtype=np.int64)
            S = _csr(np.arange(len(a)), a, np.ones(len(a)), (len(a), G * n_y))
            pt = np.array([p_y[y] for _, _, y in meta])
            return S, (1 - eps) * pt, (1 + eps) * pt, pt, meta
        pairs = list(permutations(range(G), 2) if form == "ratio" else combinations(range(G), 2))
        meta = [(i, j, y) for i, j in pairs for y in ys]
        n = len(meta)
        if not n:
            return sp.csr_matrix((0, G * n_y)), np.zeros(0), np.zeros(0), np.zeros(0), meta
        i = np.array([m[0] for m in meta]) * n_y + np.array([m[2] for m in meta])
        j = np.array([m[1] for m in meta]) * n_y + np.array([m[2] for m in meta])
        scale = 1 + eps if form == "ratio" else 1.0
        S = _csr(np.r_[np.arange(n), np.arange(n)], np.r_[i, j], np.r_[np.ones(n), -scale * np.ones(n)],
                 (n, G * n_y))
        if form == "ratio":
            return S, np.full(n, -np.inf), np.zeros(n), None, meta
        return S, np.full(n, -eps), np.full(n, eps), np.ones(n), meta

    def _pooled(self, coeff: np.ndarray, mask: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Rows of ``Σ coeff·P`` per conditioning cell over the variables in ``mask``; returns the
        matrix (empty rows dropped) and the conditioning cell of each kept row."""
        v = np.flatnonzero(mask)
        r = self.var_row[v]
        if self.conditioning == "dxy":
            cell, w = r, coeff[v]
        else:
            cell, w = self.u_of_r[r], coeff[v] * self.q[r] / self.q_xy[self.u_of_r[r]]
        used = np.unique(cell)
        M = _csr(np.searchsorted(used, cell), v, w, (len(used), self.n_variables))
        return M, used

    def _kappa(self, cells: np.ndarray) -> np.ndarray:
        kappa = self.max_expected_distortion
        assert kappa is not None  # called only when a cap is set
        if not isinstance(kappa, Mapping):
            return np.full(len(cells), float(kappa))
        levels = self.dxy_domain.levels[self.protected]
        unknown = set(kappa) - set(levels)
        if unknown:
            raise DataValidationError(f"max_expected_distortion names groups {sorted(map(str, unknown))} "
                                      f"not among {list(levels)}.")
        per_group = np.array([float(kappa.get(g, np.inf)) for g in levels])
        out: np.ndarray = per_group[self.group[cells]]
        return out

    def _distortion_blocks(self, prog: Program) -> None:
        self._excess_meta = []
        if self.max_expected_distortion is not None:
            M, cells = self._pooled(self.var_delta, self.var_delta > 0)
            if M.shape[0]:
                prog.add_constraints("expected_distortion", {"mapping": M}, ub=self._kappa(cells))
        blocks, ubs = [], []
        for i, (c, b) in enumerate(zip(self.clist, self.dlist, strict=False)):
            if b == 0:
                continue   # those cells were never created
            M, cells = self._pooled(np.ones(self.n_variables), self.var_delta >= c)
            blocks.append(M)
            ubs.append(np.full(M.shape[0], b))
            self._excess_meta += [(i, k) for k in cells]
        if blocks and sum(m.shape[0] for m in blocks):
            prog.add_constraints("excess_distortion", {"mapping": sp.vstack(blocks, format="csr")},
                                 ub=np.concatenate(ubs))

    def _utility_keys(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Keys with data mass, their empirical masses t, and the key of each variable."""
        C = len(self.candidates)
        if self.utility == "xy":
            key_v, key_r = self.var_col, self.own_column
        else:
            key_v = self.group[self.var_row].astype(np.int64) * C + self.var_col
            key_r = self.group.astype(np.int64) * C + self.own_column
        keys = np.unique(key_r)
        t = np.bincount(np.searchsorted(keys, key_r), weights=self.q, minlength=len(keys))
        return keys, t, key_v

    def _outflow(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """``K`` with ``K @ P = P_out(k)`` for keys with data mass, and those masses ``t``."""
        keys, t, key_v = self._utility_keys()
        pos = np.minimum(np.searchsorted(keys, key_v), len(keys) - 1)
        hit = keys[pos] == key_v
        v = np.flatnonzero(hit)
        K = _csr(pos[v], v, self.q[self.var_row[v]], (len(keys), self.n_variables))
        return K, t

    # ------------------------------------------------------------------ program
    def build(self, objective: str | None = None) -> Program:
        """The program: variables ``mapping`` (and ``shortfall`` for TV); rows ``validity``,
        ``utility``, ``discrimination``, ``expected_distortion``, ``excess_distortion``.

        ``objective="min_epsilon"`` builds the LP of the smallest feasible ε instead (additive
        and target forms): variable ``epsilon``, rows ``discrimination_upper/lower``.
        """
        V = self.n_variables
        prog = Program(self.name if objective is None else f"{self.name}_min_epsilon")
        prog.add_variables("mapping", shape=(V,), lb=0.0)
        # variables are grouped by row (see _structure): the CSR arrays are the row pointers
        valid = sp.csr_matrix((np.ones(V), np.arange(V), self.row_ptr), shape=(len(self.q), V))
        prog.add_constraints("validity", {"mapping": valid}, lb=1.0, ub=1.0)
        Pi = self._rate_matrix()
        S, lo, hi, slope, meta = self._discrimination_rows()
        self._disc_meta, self._disc_slope = meta, slope
        if objective == "min_epsilon":
            if self.discrimination == "ratio":
                raise DataValidationError("the ratio form's minimal ε is found by bisection "
                                          "(minimal_epsilon), not by one LP.")
            prog.add_variables("epsilon", shape=(1,), lb=0.0)
            assert slope is not None  # the additive and target forms have a slope
            centre = 0.5 * (lo + hi)
            D = (S @ Pi).tocsr()
            prog.add_constraints("discrimination_upper", {"mapping": D, "epsilon": -slope[:, None]},
                                 ub=centre)
            prog.add_constraints("discrimination_lower", {"mapping": D, "epsilon": slope[:, None]},
                                 lb=centre)
            self._distortion_blocks(prog)
            prog.set_objective(linear={"epsilon": [1.0]})
            return prog
        if S.shape[0] and objective == "elastic":
            # slack on the discrimination rows only: always feasible; positive slack marks a row
            # that cannot hold together with the distortion limits
            n = S.shape[0]
            eye = sp.identity(n, format="csr")
            prog.add_variables("slack_up", shape=(n,), lb=0.0)
            prog.add_variables("slack_down", shape=(n,), lb=0.0)
            prog.add_constraints("discrimination", {"mapping": (S @ Pi).tocsr(), "slack_up": -eye,
                                                    "slack_down": eye}, lb=lo, ub=hi)
            prog.set_objective(linear={"slack_up": np.ones(n), "slack_down": np.ones(n)})
        elif S.shape[0]:
            prog.add_constraints("discrimination", {"mapping": (S @ Pi).tocsr()}, lb=lo, ub=hi)
        self._distortion_blocks(prog)
        if self.divergence == "tv" and objective is None:
            # relative shortfall sigma_k = (t_k - P_out(k))_+ / t_k in [0, 1], rows divided by t_k:
            # the same LP, but unit-scaled rows (OSQP converged in 0.35 s instead of failing at
            # 200,000 iterations on Adult, whose key masses span 2e-5..0.08)
            K, t = self._outflow()
            prog.add_variables("shortfall", shape=(len(t),), lb=0.0, ub=1.0)
            prog.add_constraints("utility", {"mapping": (sp.diags(1.0 / t) @ K).tocsr(),
                                             "shortfall": sp.identity(len(t), format="csr")}, lb=1.0)
            prog.set_objective(linear={"shortfall": t})
        return prog

    def summary(self) -> str:
        """Describe the model: attributes, sizes, discrimination form, utility and divergence.

        Returns
        -------
        str
            One paragraph.
        """
        prog = self.build()
        dense = self.n_dense
        return (f"optimized pre-processing: D={self.protected!r}, X={self.features}, Y={self.label!r}; "
                f"{len(self.q)} observed rows, {len(self.candidates)} candidate columns, "
                f"{self.n_variables} mapping cells (dense build: {dense}); discrimination="
                f"{self.discrimination} eps={self.epsilon}, utility={self.utility}, "
                f"divergence={self.divergence}, conditioning={self.conditioning}"
                + ("; APPROXIMATION: columns restricted to observed (x, y)" if self.columns_mode == "observed"
                   else "") + f"\n{prog.summary()}")

    # ------------------------------------------------------------------ solve
    def solve(self, solver: SolverArg = None, **kwargs: Any) -> MappingResult:
        """Build, solve and return a :class:`MappingResult`.

        ``solver`` defaults to the registry's LP back end (TV) or to cvxpy, the only back end
        of the KL mapping's exponential-cone form (KL).
        A solver that accepts column-generation masters (``solver="column_generation"``, see
        ``fairopt solvers``) solves a TV mapping by column generation over the mapping cells
        (:mod:`fairopt.modeling.backends.column_generation_backend`): seconds instead of
        minutes at 10^6 cells, with the optimality certificate checked on the full program.

        Raises
        ------
        InfeasibleError
            ``constraint="discrimination"``, with the minimal feasible ε in ``tightest``.
        SolverError
            The solver stopped without an optimal mapping.
        """
        t0 = time.perf_counter()
        # one parse, for the kind the mapping is solved as: its column-generation master, the
        # whole LP, or (KL) the smooth problem of its exponential-cone form
        colgen = solver is not None and accepts(solver, "colgen")
        spec = None
        if colgen or self.divergence == "tv":
            spec = resolve_solver(solver, "colgen" if colgen else "LP", **kwargs)
        prog = self.build()
        if colgen:
            assert spec is not None
            return self._solve_column_generation(prog, spec, t0)
        if self.divergence == "kl":
            from fairopt.formulations.tv_repair.kl import solve_kl
            sol, build_s = solve_kl(self, prog, solver, t0, **kwargs)
        else:
            assert spec is not None
            comp = prog.compile(spec)
            # a simplex back end starts from the identity mapping's basis (see _identity_basis):
            # 4x faster than a cold dual simplex on Adult, 6x at 10^5 cells; others start cold
            comp.set_basis(*self._identity_basis(prog))
            build_s = time.perf_counter() - t0
            try:
                sol = comp.solve(require_optimal=True)
            except InfeasibleError as exc:
                raise self._infeasible(solver, exc) from exc
        return self._result(sol, build_s)

    def parametric_problem(self) -> ParametricProblem:
        """The TV mapping LP with its discrimination rows as functions of ε (exact frontiers).

        The ``"additive"`` and ``"target"`` forms bound ``|S Π x - c| <= ε s`` row by row, so the
        optimal shortfall is a convex piecewise-linear function of ε: from the smallest feasible
        ε (the ``"min_epsilon"`` LP) up to the identity mapping's own discrimination, where the
        rows stop binding and the shortfall is 0.

        Examples
        --------
        >>> from fairopt.data import load_builtin
        >>> compas = load_builtin("compas")
        >>> cells, counts = compas.codes()
        >>> features = [c for c in compas.domain.names if c not in ("race", "two_year_recid")]
        >>> model = OptimizedPreprocessing(compas.domain, cells, counts, protected="race",
        ...     label="two_year_recid", features=features, favourable_label=0,
        ...     discrimination="additive", epsilon=0.05)
        >>> problem = model.parametric_problem()
        >>> problem.eps_min <= 0.05 < problem.eps_max
        True
        """
        from fairopt.formulations.tv_repair.parametric import mapping_problem
        return mapping_problem(self)
