"""Plain-Python helpers of the documentation site, shared by docs/conf.py and the tests.

Nothing here imports Sphinx, so tests/test_docs_pages.py and tests/test_docs_api.py can check
the site's rules with only the ``test`` extra installed.

* :func:`api_entries` reads ``docs/api/index.rst``: the names listed under each
  ``currentmodule`` and the modules listed with the ``api_module.rst`` template.
* :func:`module_members` splits a module's ``__all__`` into the names that get a page of their
  own on the module's page and the names that link to the package entry re-exporting them.
* :func:`short_repr` decides whether a constant's value is short enough to print.
* :func:`append_new_pages` adds Markdown pages the user-guide index does not list.
"""
from __future__ import annotations

import importlib
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
API_PAGE = HERE / "api" / "index.rst"
MODULE_TEMPLATE = "api_module.rst"
#: longest ``repr`` of a constant the API pages print; longer values show the docstring only
MAX_VALUE_CHARS = 120


@dataclass
class ApiEntries:
    """What ``docs/api/index.rst`` lists."""

    names: set[str] = field(default_factory=set)  #: qualified names with a page of their own
    modules: list[str] = field(default_factory=list)  #: modules documented by the module template


def api_entries(text: str | None = None) -> ApiEntries:
    """Parse the API page: autosummary entries qualified by their ``currentmodule``."""
    text = API_PAGE.read_text() if text is None else text
    out = ApiEntries()
    current, in_summary, module_template = None, False, False
    for line in text.splitlines():
        if m := re.match(r"\.\. (?:current)?module:: (\S+)", line):
            current, in_summary = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_summary, module_template = True, False
        elif in_summary and (m := re.match(r"   :template: (\S+)", line)):
            module_template = m.group(1) == MODULE_TEMPLATE
        elif in_summary and (m := re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)):
            name = m.group(1)
            if module_template:
                out.modules.append(name if name.startswith("fairopt") else f"{current}.{name}")
            else:
                out.names.add(f"{current}.{name}")
        elif line and not line.startswith(" "):
            in_summary = False
    return out


def resolve(qualname: str):
    """Import ``a.b.c.name`` (a module or an attribute of one); ``None`` if it does not exist."""
    parts = qualname.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def kind(obj) -> str:
    """``"class"``, ``"function"`` or ``"data"``: the rubric an exported name is listed under."""
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj):
        return "function"
    return "data"


@dataclass
class ModuleMembers:
    """A module's ``__all__``, split for its API page."""

    own: dict[str, list[str]]  #: ``{"class": [...], "function": [...], "data": [...]}``: own pages
    reexported: list[tuple[str, str]]  #: ``(name, qualified entry it links to)``


def module_members(modname: str, listed: set[str] | None = None) -> ModuleMembers:
    """Split ``modname.__all__``: names a listed package entry already documents link there.

    A name counts as re-exported when an entry of the API page has the same name and is the
    same object, in this module's package or any package above it.
    """
    listed = api_entries().names if listed is None else listed
    module = importlib.import_module(modname)
    own: dict[str, list[str]] = {"class": [], "function": [], "data": []}
    reexported = []
    parents = modname.split(".")
    for name in getattr(module, "__all__", ()):  # a module without one shows its docstring only
        if name.startswith("__") and name.endswith("__"):
            continue
        obj = getattr(module, name)
        target = None
        for cut in range(len(parents) - 1, 0, -1):
            candidate = ".".join(parents[:cut]) + "." + name
            if candidate in listed and resolve(candidate) is obj:
                target = candidate
                break
        if target is None:
            own[kind(obj)].append(name)
        else:
            reexported.append((name, target))
    return ModuleMembers(own, reexported)


def short_repr(obj) -> bool:
    """Whether ``repr(obj)`` fits :data:`MAX_VALUE_CHARS` (else the page shows no value)."""
    try:
        return len(repr(obj)) <= MAX_VALUE_CHARS
    except Exception:  # a repr that fails is not worth printing either
        return False


_NOT_GUIDE = {"index", "README", "install"}


def append_new_pages(folder: Path, docname: str, source: list[str]) -> None:
    """Append the Markdown pages of ``folder`` that the user-guide index does not list.

    A method page dropped into docs/ joins the guide's "More pages" section by itself instead
    of failing the ``-W`` build with "document isn't included in any toctree".
    """
    if docname != "user_guide/index":
        return
    text = source[0]
    extra = sorted(p.stem for p in folder.glob("*.md")
                   if p.stem not in _NOT_GUIDE and f"/{p.stem}\n" not in text)
    if extra:
        entries = "\n".join(f"/{name}" for name in extra)
        source[0] = text + f"\n```{{toctree}}\n:caption: More pages\n:maxdepth: 1\n\n{entries}\n```\n"
