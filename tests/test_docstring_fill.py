"""Shared docstring pieces (fairopt._docstrings): every placeholder is filled, every piece is used.

A ``{name}`` line left in a rendered docstring means a decorator is missing (``fill_doc`` was not
applied); a registered piece no source line names is dead text. Both are checked over the whole
package, on the docstrings Python actually holds after import.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import fairopt
from fairopt._docstrings import PARAMS, fill_doc, inherit_docs

PKG = Path(fairopt.__file__).parent
PLACEHOLDER = re.compile(r"^\s*\{([A-Za-z_][A-Za-z0-9_]*)\}\s*$", re.M)


def _modules() -> list:
    names = ["fairopt"] + [info.name for info in pkgutil.walk_packages(fairopt.__path__, "fairopt.")]
    return [importlib.import_module(n) for n in names]


def _docstrings():
    """(qualified name, docstring) of every module, class, function and method defined in fairopt."""
    seen = set()
    for mod in _modules():
        if mod.__doc__:
            yield mod.__name__, mod.__doc__
        for name, obj in vars(mod).items():
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if getattr(obj, "__module__", None) != mod.__name__ or id(obj) in seen:
                continue
            seen.add(id(obj))
            if obj.__doc__:
                yield f"{mod.__name__}.{name}", obj.__doc__
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
                    if isinstance(value, property):
                        func = value.fget
                    doc = getattr(func, "__doc__", None) if callable(func) or func is not None else None
                    if isinstance(doc, str):
                        yield f"{mod.__name__}.{name}.{attr}", doc


def test_no_placeholder_is_left_unfilled():
    left = [f"{qual}: {{{m}}}" for qual, doc in _docstrings() for m in PLACEHOLDER.findall(doc)]
    assert not left, "docstrings with an unfilled piece (decorate them with fill_doc):\n" + "\n".join(left)


def test_every_piece_is_named_by_a_source_line_and_every_named_piece_exists():
    _modules()   # every module registers its pieces at import
    named: set[str] = set()
    for path in PKG.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "fairopt._docstrings import" in text or path.name == "_docstrings.py":   # str.format templates elsewhere
            named.update(PLACEHOLDER.findall(text))
    pieces = {k for k in PARAMS if not k.startswith("_")}   # "_" names belong to doctests
    assert pieces - named == set(), f"pieces no docstring uses: {sorted(pieces - named)}"
    assert named - set(PARAMS) == set(), f"placeholders without a piece: {sorted(named - set(PARAMS))}"


def test_fill_doc_indents_the_piece_like_its_placeholder_and_refuses_unknown_names():
    PARAMS["_t_piece"] = "k : int\n    How many."
    try:
        @fill_doc
        def f() -> None:
            """Do it.

            Parameters
            ----------
            {_t_piece}
            """
        lines = (f.__doc__ or "").splitlines()
        i = next(j for j, line in enumerate(lines) if line.strip() == "k : int")
        assert lines[i].startswith("            k") and lines[i + 1] == "                How many."

        def g() -> None:
            """G.

            {_t_no_such_piece}
            """
        with pytest.raises(KeyError):
            fill_doc(g)
    finally:
        del PARAMS["_t_piece"]


def test_inherit_docs_gives_undocumented_overrides_the_base_text_only():
    class Base:
        def run(self) -> int:
            """Run it."""
            return 0

        def stop(self) -> int:
            """Stop it."""
            return 0

    @inherit_docs
    class Child(Base):
        def run(self) -> int:
            return 1

        def stop(self) -> int:
            """Stop the child."""
            return 1

        def _private(self) -> int:
            return 2

    assert Child.run.__doc__ == "Run it."
    assert Child.stop.__doc__ == "Stop the child."
    assert Child._private.__doc__ is None
    assert Base.run.__doc__ == "Run it."      # the base keeps its own function


def test_overrides_in_the_games_carry_their_base_docstring_for_numpydoc():
    from fairopt.formulations.tv_repair.distortion import CompasDistortion, Distortion
    from fairopt.reductions import (
        BoundedGroupLoss,
        CostSensitiveOracle,
        EqualizedOdds,
        LeastSquaresOracle,
        Moment,
        PracticalEG,
        SquareLoss,
    )
    from fairopt.reductions.losses import Loss
    from fairopt.reductions.oracles import Oracle
    pairs = [(CostSensitiveOracle.prepare, Oracle.prepare), (LeastSquaresOracle.best_response, Oracle.best_response),
             (BoundedGroupLoss.learner_problem, Moment.learner_problem), (EqualizedOdds.row_names, Moment.row_names),
             (SquareLoss.value, Loss.value), (CompasDistortion.cost, Distortion.cost)]
    for override, base in pairs:
        assert override is not base and base.__doc__ and override.__doc__ == base.__doc__
    assert "Round number, from 1." in (PracticalEG.observe.__doc__ or "")
