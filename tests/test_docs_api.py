"""The API reference lists every exported name, and the public docstrings pass numpydoc.

Fast: nothing is built. ``docs/api/index.rst`` is parsed (its package sections, its Modules list
and its autosummary lists, by ``docs/_sitetools.py`` as the site does) and compared with the
``__all__`` of every public fairopt module; the docstrings are checked with ``numpydoc.validate``
against the checks the site build enforces (``docs/_numpydoc_checks.py``). The numpydoc checks
skip, with the reason, where the ``docs`` extra is not installed.
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
import _sitetools  # noqa: E402
from _numpydoc_checks import LAMBDA_PROPERTIES, VALIDATION_CHECKS, VALIDATION_EXCLUDE  # noqa: E402


def exporting_modules() -> list[str]:
    """Every public fairopt module (package or not, at any depth) that declares ``__all__``."""
    names = ["fairopt"]
    for info in pkgutil.walk_packages(fairopt.__path__, "fairopt."):
        if not any(part.startswith("_") for part in info.name.split(".")):
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
    return _sitetools.api_entries().names


def pages() -> set[str]:
    """Every qualified name that gets a page: the listed names and the own names of each module
    in the Modules list (its other names link to a listed package entry)."""
    entries = _sitetools.api_entries()
    out = set(entries.names)
    for mod in entries.modules:
        for names in _sitetools.module_members(mod, entries.names).own.values():
            out.update(f"{mod}.{name}" for name in names)
    return out


def test_api_page_parses():
    entries = _sitetools.api_entries()
    assert "fairopt.modeling.Program" in entries.names and "fairopt.errors" in entries.names
    assert not any(":" in n for n in entries.names)  # option lines are not entries
    assert "fairopt.modeling.registry" in entries.modules and "fairopt.data.fetch" in entries.modules
    assert not set(entries.modules) & entries.names


def test_parser_reads_sections_and_module_lists():
    text = """
.. module:: fairopt.a

.. autosummary::
   :toctree: generated/

   Thing
   other

.. currentmodule:: fairopt

.. autosummary::
   :toctree: generated/
   :template: api_module.rst

   fairopt.a.sub
"""
    entries = _sitetools.api_entries(text)
    assert entries.names == {"fairopt.a.Thing", "fairopt.a.other"}
    assert entries.modules == ["fairopt.a.sub"]


def test_every_exported_name_has_an_api_page():
    """Each name of every public module's ``__all__``: a page of its own, or (on its module's
    page) a link to the package entry that documents the same object."""
    entries = _sitetools.api_entries()
    documented = pages()
    missing = []
    for qual in sorted(exported()):
        mod, _, name = qual.rpartition(".")
        if qual in documented:
            continue
        if mod in entries.modules:
            links = dict(_sitetools.module_members(mod, entries.names).reexported)
            if links.get(name) in entries.names:
                continue
        missing.append(qual)
    assert not missing, ("add these to docs/api/index.rst under their package, or add their module "
                         f"to the Modules list: {missing}")


def test_every_module_with_all_is_a_package_section_or_in_the_modules_list():
    entries = _sitetools.api_entries()
    sections = {name.rpartition(".")[0] for name in entries.names}
    missing = [m for m in exporting_modules()
               if m != "fairopt" and m not in entries.modules and m not in sections]
    assert not missing, f"add one line per module to the Modules list of docs/api/index.rst: {missing}"


def test_a_module_page_splits_own_and_reexported_names():
    from fairopt.data import fetch
    split = _sitetools.module_members("fairopt.data.fetch")
    own = [n for names in split.own.values() for n in names]
    assert sorted(own + [n for n, _ in split.reexported]) == sorted(fetch.__all__)
    # download_raw is fetch's own; fetch_adult is documented where fairopt.data exports it
    assert "download_raw" in split.own["function"]
    assert ("fetch_adult", "fairopt.data.fetch_adult") in split.reexported
    for _, target in split.reexported:
        assert target in listed()


def test_every_api_entry_exists_and_is_public():
    """A listed name that no longer exists would be an empty page (the build also fails)."""
    entries = _sitetools.api_entries()
    stale = sorted(n for n in entries.names | set(entries.modules)
                   if _sitetools.resolve(n) is None or any(p.startswith("_") for p in n.split(".")))
    assert not stale, f"docs/api/index.rst lists names that do not exist or are private: {stale}"


def test_long_constants_render_without_their_value():
    from fairopt.modeling import BACKENDS
    from fairopt.validation import MAX_LEVELS
    assert not _sitetools.short_repr(BACKENDS) and len(repr(BACKENDS)) > 1000
    assert _sitetools.short_repr(MAX_LEVELS)
    template = (ROOT / "docs" / "_templates" / "autosummary" / "data.rst").read_text()
    assert ":no-value:" in template and "long_values" in template


def public_objects():
    """(qualified name, object) for every exported class and function and their own public
    methods and properties, each object once."""
    seen, out = set(), []
    for qual in sorted(pages()):
        obj = _sitetools.resolve(qual)
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
    validate = pytest.importorskip("numpydoc.validate", reason="numpydoc comes with the docs extra").validate
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
    for qual in sorted(exported()):  # the house standard: every name of a public ``__all__``
        obj = _sitetools.resolve(qual)
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
            seen.add(id(obj))
            out.append(qual)
    return out


# Names of submodule ``__all__`` lists that got their API pages in issue 31's round without an
# Examples section yet. The list may only shrink: the test below fails for a name that gains an
# example (remove it here) and for any other public name without one.
MISSING_EXAMPLES = frozenset({
    "fairopt.modeling.registry.compile_program", "fairopt.modeling.registry.load_backend",
    "fairopt.modeling.registry.reject_unknown_options", "fairopt.modeling.registry.solve_own",
    "fairopt.modeling.smooth.CvxpyForm", "fairopt.modeling.smooth.PyomoForm",
    "fairopt.modeling.smooth.SmoothProblem", "fairopt.modeling.smooth.SmoothSolution",
    "fairopt.modeling.smooth.lbfgs", "fairopt.modeling.smooth.newton",
    "fairopt.modeling.smooth.solve_smooth",
    "fairopt.reductions.exponentiated_gradient.best_lambda",
    "fairopt.reductions.exponentiated_gradient.lambda_from_theta",
    "fairopt.reductions.exponentiated_gradient.oracle_certificate",
    "fairopt.reductions.split_game.DisclosureAuditor",
    "fairopt.modeling.backends.column_generation_backend.solve_own",
    "fairopt.modeling.backends.row_generation_backend.solve_own",
})


@pytest.mark.parametrize("qual", public_classes_and_functions())
def test_every_public_class_and_function_has_an_example(qual):
    """The house standard: an Examples section (run by ``pytest --doctest-modules fairopt``)."""
    validate = pytest.importorskip("numpydoc.validate", reason="numpydoc comes with the docs extra").validate
    codes = {code for code, _ in validate(qual)["errors"]}
    if qual in MISSING_EXAMPLES:
        assert "EX01" in codes, f"{qual} has an Examples section now: remove it from MISSING_EXAMPLES"
    else:
        assert "EX01" not in codes, f"{qual} needs an Examples section"


def test_missing_examples_names_exist():
    assert MISSING_EXAMPLES <= set(public_classes_and_functions())


def _site_conf():
    pytest.importorskip("sphinx", reason="the site's configuration needs the docs extra")
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
        "most levels a column of a product-domain estimator (TVRepair, MaxEntResampler) may have"]
    assert _data_checks.MAX_LEVELS is MAX_LEVELS
    # a constant's own documentation is left alone
    lines = ["the value's own comment"]
    hook(None, "data", "fairopt.validation.MAX_LEVELS", MAX_LEVELS, {}, lines)
    assert lines == ["the value's own comment"]


_ROLE = re.compile(r"(?::(?:class|func|meth|attr|mod|obj|data|exc):|\{py:\w+\})`(?:[^`<]*<)?~?(fairopt(?:\.\w+)+)>?`")


def _documented_ids() -> tuple[set[str], set[int]]:
    """Qualified names with a page (or a module target) and the ids of their objects."""
    entries = _sitetools.api_entries()
    names = pages() | set(entries.modules)
    names |= {n.rpartition(".")[0] for n in entries.names}        # package sections
    names |= {f"fairopt.errors.{n}" for n in dir(importlib.import_module("fairopt.errors"))
              if not n.startswith("_")}                            # the errors module page
    ids = {id(obj) for n in names if (obj := _sitetools.resolve(n)) is not None
           and (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj))}
    return names, ids


def _reference_resolves(target: str, names: set[str], ids: set[int]) -> bool:
    if target in names:
        return True
    obj = _sitetools.resolve(target)
    owner, _, member = target.rpartition(".")
    cls = _sitetools.resolve(owner)
    if inspect.isclass(cls) and id(cls) in ids and (
            hasattr(cls, member) or member in getattr(cls, "__dataclass_fields__", {})):
        return True   # a member shown on its class's page (its value may be None)
    if obj is None:
        return False
    if id(obj) in ids and (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
        return True
    owner, _, member = target.rpartition(".")
    cls = _sitetools.resolve(owner)
    return inspect.isclass(cls) and id(cls) in ids and (
        hasattr(cls, member) or member in getattr(cls, "__dataclass_fields__", {}))


def _rendered_texts():
    """(where, text) for what the site renders: the docstrings of every documented class, function,
    method and property, the docstrings of the modules with a page, and the Markdown pages."""
    for qual, obj in public_objects():
        yield qual, inspect.getdoc(obj) or ""
    for mod in _sitetools.api_entries().modules:
        yield mod, importlib.import_module(mod).__doc__ or ""
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "_build" not in page.parts and "auto_examples" not in page.parts and page.name != "README.md":
            yield str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")


def test_fully_qualified_references_point_at_documented_objects():
    """The cheap half of the nitpicky build: every ``:role:`fairopt....``` the site renders (from a
    docstring or a page) names an object that exists and has an API page (its own, the package
    entry of the same object, or its class's page). Unqualified names are left to the build."""
    names, ids = _documented_ids()
    broken = [f"{where}: {target}" for where, text in _rendered_texts()
              for target in _ROLE.findall(text) if not _reference_resolves(target, names, ids)]
    assert not broken, "unresolvable references (document the target or fix the name):\n" + "\n".join(broken)


def test_reference_check_catches_a_missing_target():
    names, ids = _documented_ids()
    assert _reference_resolves("fairopt.modeling.Program", names, ids)
    assert _reference_resolves("fairopt.modeling.program.Program", names, ids)   # same object
    assert _reference_resolves("fairopt.modeling.Program.solve", names, ids)     # a member
    assert _reference_resolves("fairopt.errors.DataValidationError", names, ids)
    assert not _reference_resolves("fairopt.modeling.NoSuchThing", names, ids)
    assert _ROLE.findall("see :func:`~fairopt.metrics.statistical_rate` and {py:class}`x <fairopt.a.B>`") == [
        "fairopt.metrics.statistical_rate", "fairopt.a.B"]
