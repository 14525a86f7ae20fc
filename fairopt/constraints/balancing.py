"""Workload and outcome balance over per-entity linear expressions ("loads"), as constraints or
objectives on a :class:`~fairopt.modeling.Program`, a pyomo model or a cvxpy problem, LP or MIP.

For loads ``u_1 .. u_K`` (pinned definitions):

- ``minmax``: ``max_k u_k``;
- ``range``: ``max_k u_k - min_k u_k``;
- ``mad``: ``(1/K) sum_k |u_k - mean(u)|``;
- ``gini``: ``sum_{k,l} |u_k - u_l| / (2 K sum_k u_k)`` (population normalisation; loads
  nonnegative with a positive total).

``balance(loads, measure, max_value=g)`` is the constraint ``measure(u) <= g``; for the Gini
coefficient it is the linear row ``sum_{k,l} |u_k - u_l| <= 2 K g sum_k u_k`` (exact, since the
total is positive). ``balance(loads, measure).as_objective()`` minimises the measure; the Gini
coefficient is a ratio, and its objective minimises ``sum_{k,l} |u_k - u_l| / (2 K T)`` for a
total ``T`` (given, default 1): the Gini coefficient itself whenever the model fixes the total
load at ``T`` (every task assigned), the Gini mean difference otherwise. To minimise the ratio
itself on a model whose total moves, bisect over ``max_value`` (the constraint form is exact).
The rows of each measure are in ``fairopt.constraints.balance_forms``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from fairopt.constraints._scaling import power_of_two
from fairopt.constraints.balance_forms import Rows, auto_form, build
from fairopt.constraints.leximin_targets import ProgramTarget, _split_spec, utility_groups
from fairopt.errors import DataValidationError

MEASURES = ("minmax", "range", "mad", "gini")


def measure_value(values: Any, measure: str) -> float:
    """The balance measure of numeric loads (the pinned definitions of the module docstring).

    Examples
    --------
    >>> measure_value([1.0, 2.0, 3.0], "gini"), measure_value([1.0, 2.0, 3.0], "mad")
    (0.2222222222222222, 0.6666666666666666)
    """
    u = np.asarray(values, dtype=float).ravel()
    if measure == "minmax":
        return float(u.max())
    if measure == "range":
        return float(u.max() - u.min())
    if measure == "mad":
        return float(np.abs(u - u.mean()).mean())
    if measure == "gini":
        total = u.sum()
        if total <= 0:
            raise DataValidationError("the Gini coefficient needs a positive total load.")
        s = np.sort(u)
        K = u.size
        return float(2.0 * ((2.0 * np.arange(1, K + 1) - K - 1) @ s) / (2.0 * K * total))
    raise DataValidationError(f"measure must be one of {MEASURES}, got {measure!r}.")


@dataclass(eq=False)
class BalanceBlock:
    """A balance constraint (``max_value`` given) or, through :meth:`as_objective`, a balance
    objective over ``K`` loads; build with :func:`balance`.

    Examples
    --------
    >>> import cvxpy as cp
    >>> x = cp.Variable(3)
    >>> block = balance({"a": x[0], "b": x[1], "c": x[2]}, "range", max_value=0.5)
    >>> prob = cp.Problem(cp.Maximize(x[0]), [x >= 0, x <= 2, cp.sum(x) == 3, *block.to_cvxpy()])
    >>> round(float(prob.solve(solver="HIGHS")), 6)
    1.333333
    """

    measure: str
    loads: Any
    entities: list[Any]
    rows: Rows
    form: str
    max_value: float | None = None
    name: str = "balance"
    total: float = 1.0
    objective: bool = False
    aux_values: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def K(self) -> int:
        """Number of loads."""
        return len(self.entities)

    def as_objective(self, total: float = 1.0) -> BalanceBlock:
        """The same measure as an objective to minimise (see the module docstring for the Gini
        coefficient's ``total``); attach it with :meth:`add_to`, :meth:`to_pyomo` or
        :meth:`to_cvxpy` (which then returns ``(cp.Minimize(...), constraints)``)."""
        total = float(total)
        if not total > 0:
            raise DataValidationError(f"total must be positive, got {total}.")
        return BalanceBlock(self.measure, self.loads, self.entities, self.rows, self.form, None, self.name,
                            total, True)

    def value(self, values: Any) -> float:
        """The measure at numeric loads (one per entity, in entity order)."""
        return measure_value(values, self.measure)

    # ---------------------------------------------------------------- the bound / objective row
    def _value_row(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(c, {aux: e})`` of the linear expression bounded (constraint) or minimised."""
        r = self.rows
        c = np.zeros(self.K) if r.value_u is None else r.value_u.copy()
        aux = {k: v.copy() for k, v in r.value_aux.items()}
        if self.measure == "gini":
            if self.objective:
                scale = 1.0 / (2.0 * self.K * self.total)
                c *= scale
                aux = {k: v * scale for k, v in aux.items()}
            else:
                assert self.max_value is not None  # a constraint block has its bound
                c = c - 2.0 * self.K * self.max_value
        return c, aux

    def _bound(self) -> float:
        assert self.max_value is not None  # only constraints have a bound row
        return 0.0 if self.measure == "gini" else float(self.max_value)

    # ---------------------------------------------------------------- Program
    def add_to(self, program: Any) -> list[str]:
        """Add the auxiliary variables (``<name>_<aux>``) and rows (``<name>_<rows>``, and
        ``<name>_bound`` for a constraint) to a :class:`~fairopt.modeling.Program`; an objective
        block also sets the program's objective (minimise the measure). Returns the row names.

        Loads of extreme magnitude (outside ``[2^-10, 2^10]``) are written in units of the power of
        two ``q`` nearest to their largest coefficient (the rows are homogeneous, so only the bound
        and the objective carry ``q``): a solver's absolute feasibility tolerance would otherwise
        read loads of 1e-9 as zero. The auxiliary variables then hold their values divided by ``q``."""
        _, U = ProgramTarget._utilities(program, self.loads)
        q = power_of_two(max((float(abs(sp.csr_matrix(M)).max()) for M in U.values()), default=0.0))
        U = {v: sp.csr_matrix(M) / q for v, M in U.items()}
        names = []
        for key, (size, lo) in self.rows.aux.items():
            program.add_variables(f"{self.name}_{key}", size, lb=lo, ub=None)

        def coeffs(C: Any, aux: Mapping[str, Any]) -> dict[str, Any]:
            out: dict[str, Any] = {} if C is None else {v: sp.csr_matrix(C) @ M for v, M in U.items()}
            out.update({f"{self.name}_{k}": sp.csr_matrix(M) for k, M in aux.items()})
            return out
        for rname, C, parts, lb, ub in self.rows.rows:
            program.add_constraints(f"{self.name}_{rname}", coeffs(C, parts), lb=lb, ub=ub)
            names.append(f"{self.name}_{rname}")
        c, e = self._value_row()
        value = coeffs(c[None, :], {k: v[None, :] for k, v in e.items()})
        if self.objective:
            lin = {k: q * np.asarray(sp.csr_matrix(M).todense()).ravel() for k, M in value.items()}
            program.set_objective(linear=lin, sense="minimize")
        else:
            program.add_constraints(f"{self.name}_bound", value, ub=self._bound() / q)
            names.append(f"{self.name}_bound")
        return names

    # ---------------------------------------------------------------- cvxpy
    def to_cvxpy(self) -> Any:
        """cvxpy constraints on the loads' variables (a list; its ``aux`` dict holds the
        auxiliary variables), or for an objective block ``(cp.Minimize(measure), constraints)``."""
        import cvxpy as cp
        u = _cvxpy_loads(self.loads)
        if u.shape != (self.K,):
            raise DataValidationError(f"the loads give {u.shape} values; expected ({self.K},).")
        aux = {k: cp.Variable(size) for k, (size, _) in self.rows.aux.items()}
        cons = _ListWithAux([aux[k] >= lb for k, (_, lb) in self.rows.aux.items() if lb is not None])
        cons.aux = aux

        def expr(C: Any, parts: Mapping[str, Any]) -> Any:
            terms = ([] if C is None else [sp.csr_matrix(C) @ u])
            terms += [sp.csr_matrix(M) @ aux[k] for k, M in parts.items()]
            out = terms[0]
            for t in terms[1:]:
                out = out + t
            return out
        for _, C, parts, lb, ub in self.rows.rows:
            e = expr(C, parts)
            if np.array_equal(lb, ub):
                cons.append(e == lb)
                continue
            if np.isfinite(lb).any():
                cons.append(e >= lb)
            if np.isfinite(ub).any():
                cons.append(e <= ub)
        c, ev = self._value_row()
        value = cp.sum(expr(c[None, :], {k: v[None, :] for k, v in ev.items()}))
        if self.objective:
            return cp.Minimize(value), cons
        cons.append(value <= self._bound())
        return cons

    # ---------------------------------------------------------------- pyomo
    def to_pyomo(self, model: Any) -> Any:
        """Add a pyomo ``Block`` named ``name`` to ``model`` (variables ``aux_<k>``, constraints
        ``<rows>``, and ``bound`` or, for an objective block, ``objective``; deactivate the
        model's own objective before solving)."""
        import pyomo.environ as pyo
        exprs = _pyomo_loads(self.loads)
        if len(exprs) != self.K:
            raise DataValidationError(f"the loads give {len(exprs)} expressions; expected {self.K}.")
        blk = pyo.Block()
        model.add_component(self.name, blk)
        aux = {}
        for k, (size, lo) in self.rows.aux.items():
            aux[k] = pyo.Var(range(size), bounds=(lo, None))
            blk.add_component(f"aux_{k}", aux[k])

        def row_expr(C: Any, parts: Mapping[str, Any], r: int) -> Any:
            terms = []
            if C is not None:
                row = C[r]
                terms += [float(a) * exprs[j] for j, a in zip(row.indices, row.data, strict=True)]
            for k, M in parts.items():
                row = M[r]
                terms += [float(a) * aux[k][int(j)] for j, a in zip(row.indices, row.data, strict=True)]
            return sum(terms)
        for rname, C, parts, lb, ub in self.rows.rows:
            def rule(m: Any, r: int, C: Any = C, parts: Any = parts, lb: Any = lb, ub: Any = ub) -> Any:
                e = row_expr(C, parts, r)
                if lb[r] == ub[r]:
                    return e == float(lb[r])
                return (float(lb[r]) if np.isfinite(lb[r]) else None, e, float(ub[r]) if np.isfinite(ub[r]) else None)
            blk.add_component(rname, pyo.Constraint(range(lb.shape[0]), rule=rule))
        c, ev = self._value_row()
        value = row_expr(sp.csr_matrix(c[None, :]), {k: sp.csr_matrix(v[None, :]) for k, v in ev.items()}, 0)
        if self.objective:
            blk.objective = pyo.Objective(expr=value, sense=pyo.minimize)
        else:
            blk.bound = pyo.Constraint(expr=value <= self._bound())
        return blk


class _ListWithAux(list[Any]):
    aux: dict[str, Any]


def _cvxpy_loads(loads: Any) -> Any:
    import cvxpy as cp
    if isinstance(loads, tuple):
        var, groups, weights = _split_spec(loads)
        n = int(np.prod(var.shape)) if var.shape else 1
        _, G = utility_groups(groups, weights, n)
        return G @ (var if len(var.shape) == 1 else cp.reshape(var, (n,), order="C"))
    if isinstance(loads, Mapping):
        return cp.hstack([cp.reshape(e, ()) if getattr(e, "shape", ()) != () else e for e in loads.values()])
    return loads


def _pyomo_loads(loads: Any) -> list[Any]:
    if isinstance(loads, tuple):
        var, groups, weights = _split_spec(loads)
        keys = list(var.index_set())
        _, G = utility_groups(groups, weights, len(keys))
        return [sum(float(G.data[j]) * var[keys[G.indices[j]]] for j in range(G.indptr[a], G.indptr[a + 1]))
                for a in range(G.shape[0])]
    if isinstance(loads, Mapping):
        return list(loads.values())
    return list(loads)


def _entities(loads: Any) -> list[Any]:
    if isinstance(loads, tuple):
        from fairopt.constraints.builders import encode_groups
        return list(encode_groups(_split_spec(loads)[1])[1])
    if isinstance(loads, Mapping):
        return list(loads)
    shape = getattr(loads, "shape", None)
    if shape is not None and len(shape) == 1:   # a vector expression: one entity per entry
        return list(range(int(shape[0])))
    if isinstance(loads, list | np.ndarray):
        return list(range(len(loads)))
    raise DataValidationError("loads: give a mapping entity -> expression, a (variable, groups[, weights]) spec, "
                              "a cvxpy vector expression or a list of pyomo expressions.")


def balance(loads: Any, measure: str = "minmax", max_value: float | None = None, *, form: str = "auto",
            name: str = "balance") -> BalanceBlock:
    """Balance of per-entity loads: a constraint ``measure(loads) <= max_value``, or an
    objective through :meth:`BalanceBlock.as_objective` when ``max_value`` is ``None``.

    Parameters
    ----------
    loads : mapping, tuple, cvxpy expression or list
        Entity -> linear expression: ``{variable name: coefficients}`` for a
        :class:`~fairopt.modeling.Program`, a pyomo or cvxpy expression otherwise; or
        ``(variable, groups[, weights])`` (group ``a``'s load is ``sum_{i in a} w_i x_i``); or a
        cvxpy vector expression / list of pyomo expressions (entities ``0 .. K-1``).
    measure : {"minmax", "range", "mad", "gini"}
        See the module docstring for the pinned definitions.
    max_value : float, optional
        Bound on the measure (for ``gini`` in [0, 1)); ``None``: build an objective.
    form : {"auto", "pairwise", "sorted"}
        Rows of the Gini numerator: pairwise (``K(K-1)`` rows), sorted (a sorting network,
        ``O(K log^2 K)`` rows) or the one with fewer rows for this ``K`` (pairwise up to 13 loads).
    name : str
        Prefix of the auxiliary variables and rows (a Python identifier).

    Returns
    -------
    BalanceBlock

    Examples
    --------
    >>> import numpy as np
    >>> from fairopt.modeling import Program
    >>> prog = Program("shifts")
    >>> _ = prog.add_variables("x", shape=4, lb=0, ub=3)
    >>> _ = prog.add_constraints("cover", {"x": np.ones((1, 4))}, lb=6, ub=6)
    >>> _ = balance(("x", ["a", "b", "c", "d"]), "gini", max_value=0.1).add_to(prog)
    >>> prog.set_objective(linear={"x": [4.0, 3.0, 2.0, 1.0]}, sense="maximize")
    >>> x = prog.solve().primal["x"]
    >>> round(measure_value(x, "gini"), 6) <= 0.1, round(float(x @ [4, 3, 2, 1]), 6)
    (True, 16.2)
    """
    if measure not in MEASURES:
        raise DataValidationError(f"measure must be one of {MEASURES}, got {measure!r}.")
    if form not in ("auto", "pairwise", "sorted"):
        raise DataValidationError(f"form must be 'auto', 'pairwise' or 'sorted', got {form!r}.")
    if not isinstance(name, str) or not name.isidentifier():
        raise DataValidationError(f"name {name!r} must be a Python identifier.")
    entities = _entities(loads)
    K = len(entities)
    if K < 2:
        raise DataValidationError(f"balance needs at least two loads, got {K}.")
    if max_value is not None:
        max_value = float(max_value)
        if not np.isfinite(max_value) or (measure in ("range", "mad", "gini") and max_value < 0) or \
                (measure == "gini" and max_value >= 1):
            raise DataValidationError(f"max_value for {measure!r} must be finite"
                                      + (" and in [0, 1)" if measure == "gini" else
                                         " and >= 0" if measure != "minmax" else "") + f", got {max_value}.")
    chosen = (form if form != "auto" else auto_form(K)) if measure == "gini" else "direct"
    return BalanceBlock(measure, loads, entities, build(measure, K, form), chosen, max_value, name)


__all__ = ["BalanceBlock", "balance", "measure_value"]
