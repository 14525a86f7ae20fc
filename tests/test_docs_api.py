"""The API reference lists every exported name, and the public docstrings pass numpydoc.

Fast: nothing is built. ``docs/api/index.rst`` is parsed (its ``currentmodule`` sections and
autosummary lists) and compared with the ``__all__`` of every fairopt package and of every
public top-level module that declares one; the docstrings are checked with ``numpydoc.validate``
against the checks the site build enforces (``docs/_numpydoc_checks.py``).
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import fairopt

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = ROOT / "docs" / "api" / "index.rst"
sys.path.insert(0, str(ROOT / "docs"))
from _numpydoc_checks import LAMBDA_PROPERTIES, VALIDATION_CHECKS, VALIDATION_EXCLUDE  # noqa: E402



def exporting_modules() -> list[str]:
    """Every fairopt package, and every public top-level module, that declares ``__all__``."""
    names = ["fairopt"]
    for info in pkgutil.walk_packages(fairopt.__path__, "fairopt."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        top_level = info.name.count(".") == 1
        if info.ispkg or top_level:
            names.append(info.name)
    return [m for m in names if hasattr(importlib.import_module(m), "__all__")]


def exported() -> set[str]:
    out = set()
    for mod in exporting_modules():
        for name in importlib.import_module(mod).__all__:
            if not (name.startswith("__") and name.endswith("__")):
                out.add(f"{mod}.{name}")
    return out


def listed() -> set[str]:
    """Names in the autosummary lists of the API page, qualified by their ``currentmodule``."""
    current, in_summary, out = None, False, set()
    for line in API_PAGE.read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            current = m.group(1)
            in_summary = False
        elif line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and (m := re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)):
            out.add(f"{current}.{m.group(1)}")
        elif line and not line.startswith(" "):
            in_summary = False
    return out


def test_api_page_parses():
    names = listed()
    assert "fairopt.modeling.Program" in names and "fairopt.errors" in names
    assert not any(":" in n for n in names)  # option lines are not entries


def test_every_exported_name_has_an_api_page():
    missing = sorted(exported() - listed())
    assert not missing, f"add these to docs/api/index.rst under their package: {missing}"


def test_every_api_entry_is_exported():
    stale = sorted(listed() - exported())
    assert not stale, f"docs/api/index.rst lists names no package exports: {stale}"


def public_objects():
    """(qualified name, object) for every exported class and function and their own public
    methods and properties, each object once."""
    seen, out = set(), []
    for qual in sorted(exported()):
        mod, _, name = qual.rpartition(".")
        obj = getattr(importlib.import_module(mod), name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
            continue
        seen.add(id(obj))
        out.append((qual, obj))
        if inspect.isclass(obj):
            # own members and those inherited from fairopt's own bases (the API page shows both)
            members = {}
            for base in reversed(obj.__mro__):
                if base is obj or base.__module__.startswith("fairopt"):
                    members.update(vars(base))
            for attr, value in members.items():
                if attr.startswith("_") or (attr.startswith("set_") and attr.endswith("_request")):
                    continue
                if isinstance(value, property) or inspect.isfunction(value) or isinstance(
                        value, (classmethod, staticmethod)):
                    out.append((f"{qual}.{attr}", value))
    return out


def _excluded(name: str) -> bool:
    # lambda properties are excluded from numpydoc (it cannot locate their source) but still
    # need a docstring: the fallback in the test below checks it
    return any(re.search(p, name) for p in VALIDATION_EXCLUDE - {LAMBDA_PROPERTIES})


def test_public_docstrings_pass_the_enforced_numpydoc_checks():
    from numpydoc.validate import validate
    failures = []
    for qual, obj in public_objects():
        if _excluded(qual):
            continue
        try:
            report = validate(qual)["errors"]
        except StopIteration:
            # numpydoc cannot find a ``def`` line for a property built from a lambda; such a
            # property's docstring is its ``doc=`` argument, which must exist
            report = [] if inspect.getdoc(obj) else [("GL08", "The object does not have a docstring")]
        errors = [f"{code} {msg}" for code, msg in report if code in VALIDATION_CHECKS]
        if errors:
            failures.append(f"{qual}: {'; '.join(errors)}")
    assert not failures, "\n".join(failures)


def public_classes_and_functions() -> list[str]:
    seen, out = set(), []
    for qual in sorted(exported()):
        mod, _, name = qual.rpartition(".")
        obj = getattr(importlib.import_module(mod), name)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
            seen.add(id(obj))
            out.append(qual)
    return out


@pytest.mark.parametrize("qual", public_classes_and_functions())
def test_every_public_class_and_function_has_an_example(qual):
    """The house standard: an Examples section (run by ``pytest --doctest-modules fairopt``)."""
    from numpydoc.validate import validate
    codes = {code for code, _ in validate(qual)["errors"]}
    assert "EX01" not in codes, f"{qual} needs an Examples section"


def _site_conf():
    spec = importlib.util.spec_from_file_location("fairopt_docs_conf", ROOT / "docs" / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_reexported_constant_shows_its_defining_modules_comment():
    """autodoc looks for ``#:`` only in the exporting module; the site's hook finds the defining one."""
    from fairopt import _data_checks
    from fairopt.validation import MAX_LEVELS, RANDOM_STATE
    hook = _site_conf()._reexported_constant_doc
    for name, value in (("fairopt.validation.MAX_LEVELS", MAX_LEVELS),
                        ("fairopt.validation.RANDOM_STATE", RANDOM_STATE)):
        lines = inspect.cleandoc(type(value).__doc__).splitlines()   # what autodoc would show
        hook(None, "data", name, value, {}, lines)
        assert lines and "Built-in" not in lines[0] and "int([x])" not in lines[0], (name, lines)
    lines = inspect.cleandoc(int.__doc__).splitlines()
    hook(None, "data", "fairopt.validation.MAX_LEVELS", MAX_LEVELS, {}, lines)
    assert [line for line in lines if line] == [
        "most levels, summed over the columns, of a max-entropy fit (``MaxEntResampler(max_levels=...)``): its",
        "counting oracle and Newton Hessian grow with the sum of the levels, never with their product"]
    assert _data_checks.MAX_LEVELS is MAX_LEVELS
    # a constant's own documentation is left alone
    lines = ["the value's own comment"]
    hook(None, "data", "fairopt.validation.MAX_LEVELS", MAX_LEVELS, {}, lines)
    assert lines == ["the value's own comment"]
