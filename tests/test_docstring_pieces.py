"""Shared docstring pieces (``fairopt._docstrings``) are filled everywhere they are named.

A placeholder left in a docstring would reach the API pages and ``help()`` as ``{name}``; a loader
piece filled for the wrong data set would send a reader to another file.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import fairopt
from fairopt._docstrings import PARAMS

_PLACEHOLDER = re.compile(r"^\s*\{[A-Za-z_]\w*\}\s*$", re.M)


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(fairopt.__path__, "fairopt.")
                  if ".backends." not in m.name or m.name.endswith("_backend"))


def _docstrings(module: object) -> list[tuple[str, str]]:
    out = [(getattr(module, "__name__", "?"), inspect.getdoc(module) or "")]
    for name, obj in vars(module).items():
        if getattr(obj, "__module__", None) != getattr(module, "__name__", None):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            out.append((name, inspect.getdoc(obj) or ""))
            if inspect.isclass(obj):
                out += [(f"{name}.{k}", inspect.getdoc(v) or "") for k, v in vars(obj).items()
                        if inspect.isfunction(v) and v.__doc__]
    return out


@pytest.mark.parametrize("modname", _modules())
def test_no_placeholder_is_left_unfilled(modname):
    module = importlib.import_module(modname)
    left = [(name, m.group(0).strip()) for name, doc in _docstrings(module)
            for m in _PLACEHOLDER.finditer(doc) if "@DATASET@" not in doc]
    left += [(name, "@DATASET@") for name, doc in _docstrings(module) if "@DATASET@" in doc]
    assert not left, f"{modname}: unfilled docstring pieces {left}"


def test_every_loader_names_its_own_file_and_call():
    from fairopt.data import loaders
    for name in loaders.DATASETS:
        doc = getattr(loaders, f"load_{name}").__doc__
        assert f"``{name}.csv.gz``" in doc and f'load_{name}("/no/such/folder")' in doc
        assert f"Data set '{name}' not found" in doc
        others = [o for o in loaders.DATASETS if o != name and f"``{o}.csv.gz``" in doc]
        assert not others, (name, others)


def test_shared_examples_are_registered_once_and_used():
    from fairopt.constraints import FairnessBlock, selection_rate_parity
    from fairopt.modeling import Program, ProgramSummary, Solution
    for piece, users in {"example_toy_program": (Program, Solution),
                         "example_cvxpy_parity": (FairnessBlock, FairnessBlock.price_of_fairness),
                         "example_shortlist_program": (selection_rate_parity, fairopt.constraints)}.items():
        text = PARAMS[piece]
        for obj in users:
            assert text.splitlines()[2].strip() in (obj.__doc__ or ""), (piece, obj)
    # the summary's own example is not the shared toy program (it adds an upper bound)
    assert "ub=1.0" in ProgramSummary.__doc__
