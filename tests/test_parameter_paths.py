"""Issue 31, "parameters not validated on every path": one check per parameter, shared by every path
that sets it (the builder, ``set_tolerance``, a pyomo ``Param``, a solver spec), with one error type
(:class:`~fairopt.errors.ParameterError`, a ``ValueError``) naming the parameter. Issue 32 item 4:
one error type per kind of mistake, and no scikit-learn private import."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from fairopt.constraints import equalized_odds, representation_bounds, selection_rate_parity
from fairopt.constraints.ranking import doubly_stochastic, exposure_block, position_weights
from fairopt.constraints.relative import group_cost_parity
from fairopt.errors import ConfigError, DataValidationError, ParameterError

G = np.array(["a", "a", "b", "b"])
Y = np.array([1, 0, 1, 0])

#: (block factory, tolerance, values refused on every path)
TOLERANCES = [
    (lambda: selection_rate_parity(G, eps=0.1), "eps", [-0.1, 1.5, np.nan, np.inf, True, "x"]),
    (lambda: selection_rate_parity(G, ratio=0.8), "ratio", [0.0, 1.2, -0.5, np.nan, "x"]),
    (lambda: equalized_odds(G, Y, eps=0.1), "eps", [-1e-9, 2.0]),
    (lambda: representation_bounds(G, lower=0.3), "lower[a]", [-0.1, 1.1]),
    (lambda: exposure_block(G, 0.1), "eps", [-0.1, np.inf]),
    (lambda: group_cost_parity(G, np.arange(4.0), eps=1.0), "eps", [-1.0]),
]
IDS = ["parity-eps", "parity-ratio", "odds-eps", "share", "exposure-eps", "cost-eps"]


@pytest.mark.parametrize(("make", "key", "bad"), TOLERANCES, ids=IDS)
def test_a_tolerance_outside_its_domain_is_refused_on_every_path(make, key, bad):
    pyo = pytest.importorskip("pyomo.environ")
    block = make()
    before = (block.A.copy(), block.bound.copy(), dict(block.parameters))
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(block.n), bounds=(0, 1))
    blk = block.to_pyomo_parametric(model.x, name="fair")
    for value in bad:
        with pytest.raises(ParameterError, match=re.escape(f"'{key}' parameter of {block.name}")):
            block.set_tolerance(**{key: value})
        with pytest.raises(ParameterError, match=re.escape(f"'{key}' parameter of {block.name}")):
            blk.tolerance[key] = value     # the pyomo Param refuses it too, with the same check
    # nothing changed: the block, its parameters, and the Param
    assert (block.A != before[0]).nnz == 0 and np.array_equal(block.bound, before[1])
    assert block.parameters == before[2] and pyo.value(blk.tolerance[key]) == before[2][key]
    # a value inside the domain goes through both
    good = 0.5 if key != "lower[a]" else 0.4
    block.set_tolerance(**{key: good})
    assert pyo.value(blk.tolerance[key]) == good and block.parameters[key] == good


def test_a_builder_refuses_a_bad_tolerance_with_the_same_error():
    # before: selection_rate_parity(eps="x") raised a bare ValueError from float("x")
    for kwargs in ({"eps": "x"}, {"eps": -0.1}, {"ratio": 1.5}, {"eps": True}, {"eps": None, "ratio": None}):
        with pytest.raises(ParameterError, match="selection_rate_parity"):
            selection_rate_parity(G, **kwargs)
    with pytest.raises(ParameterError, match="'eps' parameter of exposure_block"):
        exposure_block(G, -0.1)
    with pytest.raises(ParameterError, match="'eps' parameter of group_cost_parity"):
        group_cost_parity(G, np.arange(4.0), eps="1")


@pytest.mark.parametrize(("call", "name"), [
    (lambda v: position_weights(4, k=v), "'k' parameter of position_weights"),
    (lambda v: position_weights(v), "'n_positions' parameter of position_weights"),
    (lambda v: doubly_stochastic(4, v), "'n_positions' parameter of doubly_stochastic"),
    (lambda v: doubly_stochastic(v), "'n_items' parameter of doubly_stochastic"),
    (lambda v: exposure_block(G, 0.1, n_positions=v), "'n_positions' parameter of exposure_block"),
])
def test_a_count_of_positions_is_an_integer(call, name):
    # before: int() truncated 2.5 to 2 and True counted as 1
    for bad in (2.5, True, "3", 0, -1):
        with pytest.raises(ParameterError, match=name):
            call(bad)
    call(np.int64(3))   # a numpy integer is an integer


def test_time_limit_true_is_not_one_second():
    from fairopt.modeling import SolverSpec
    for bad in (True, np.True_, 0, -1.0, "soon"):
        with pytest.raises(ConfigError, match="time_limit must be a positive number"):
            SolverSpec.parse("highs", time_limit=bad)
    assert SolverSpec.parse("highs", time_limit=2.5).time_limit == 2.5


def test_one_error_type_per_kind_of_mistake():
    # a parameter mistake is a ParameterError (a ConfigError and a ValueError, as scikit-learn
    # expects of a bad parameter), never a data error; a data mistake is a DataValidationError
    assert issubclass(ParameterError, ConfigError) and issubclass(ParameterError, ValueError)
    assert not issubclass(ParameterError, DataValidationError)
    assert ParameterError.__mro__[1] is ConfigError and len(ParameterError.__bases__) == 1
    with pytest.raises(DataValidationError) as err:
        selection_rate_parity(np.array(["a", None, "b"], dtype=object), eps=0.1)
    assert not isinstance(err.value, ParameterError)


def test_no_module_imports_scikit_learn_private_parameter_validation():
    root = Path(__file__).resolve().parents[1] / "fairopt"
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            mods = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            private = [m for m in mods if m.startswith("sklearn.utils._param_validation")]
            offenders += [f"{path.relative_to(root)}: {m}" for m in private]
    assert not offenders, offenders
