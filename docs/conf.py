"""Sphinx configuration for the fairopt documentation site.

Build with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` after
``pip install ".[docs]"`` (see docs/README.md).
"""
from __future__ import annotations

import importlib.metadata
import inspect
import os
import re
import shutil
import sys
import typing
from pathlib import Path

import matplotlib
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util.nodes import make_refnode

matplotlib.use("Agg")  # the gallery renders off-screen

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # docs/_numpydoc_checks.py

import _sitetools  # noqa: E402
from _numpydoc_checks import SPHINX_CHECKS, VALIDATION_EXCLUDE  # noqa: E402

import fairopt  # noqa: E402

project = "fairopt"
author = "the fairopt developers"
copyright = "the fairopt developers"
version = release = fairopt.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.json",
                    "auto_examples/*.md5", "sg_execution_times.rst"]
templates_path = ["_templates"]

# --- MyST: the Markdown pages written for GitHub become site pages -----------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links resolve
myst_dmath_double_inline = True

# --- API reference ---------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
# docs/api/index.rst lists each package's names, then the public modules whose ``__all__`` holds
# names of their own (one line each, template api_module.rst). The template reads which names
# get a page on the module's page and which link to the package entry re-exporting them; the
# data template prints a constant's value only when its repr is short (BACKENDS is not).
_API = _sitetools.api_entries()
_API_SPLIT = {}
for _mod in _API.modules:
    _members = _sitetools.module_members(_mod, _API.names)
    _API_SPLIT[_mod] = {**_members.own, "reexported": _members.reexported}
_CONSTANTS = [n for n in _API.names if _sitetools.kind(_sitetools.resolve(n)) == "data"]
_CONSTANTS += [f"{m}.{n}" for m, split in _API_SPLIT.items() for n in split["data"]]
autosummary_context = {
    "api_split": _API_SPLIT,
    "long_values": sorted(n for n in _CONSTANTS
                          if not _sitetools.short_repr(_sitetools.resolve(n))),
}
autodoc_member_order = "groupwise"
autodoc_typehints = "none"  # numpydoc's Parameters section carries the types
numpydoc_show_class_members = False  # each class page lists its own methods via the template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_attributes_as_param_list = True
# numpydoc validation of every public docstring the site renders; the set of checks and
# why each is (or is not) enforced lives in docs/_numpydoc_checks.py (shared with the test).
numpydoc_validation_checks = SPHINX_CHECKS
numpydoc_validation_exclude = VALIDATION_EXCLUDE

# --- cross-references --------------------------------------------------------------------------
# Every reference must resolve (nitpicky; -W makes a miss an error). CI has no network beyond the
# package registries, so there is no intersphinx: references to these third-party and
# standard-library types (base classes in "Bases:" lines, types named in docstrings) stay plain
# text on purpose. A fairopt reference never appears here: it must resolve.
nitpicky = True
nitpick_ignore_regex = [
    ("py:.*", r"(sklearn|numpy|scipy|pandas|polars|pyarrow|dask|cvxpy|pyomo|highspy|osqp|pooch)(\..+)?"),
    ("py:class", r"(abc\.ABC|enum\.Enum|enum\.IntEnum|typing\.\w+|collections\.abc\.\w+)"),
]

# --- math, offline ---------------------------------------------------------------------------
# MathJax 3 ships inside the ``sphinx-mathjax-offline`` package (docs extra); the build copies
# the parts a page needs (TeX-to-CHTML bundle, its TeX extensions, its fonts: about 2 MB) into
# _static/mathjax, so a page renders its math with no network.
mathjax_path = "mathjax/tex-chtml.js"
MATHJAX_DIST = "sphinx-mathjax-offline"
MATHJAX_PARTS = ("tex-chtml.js", "input/tex/extensions", "output/chtml/fonts/woff-v2")

# --- gallery ---------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "within_subsection_order": "_gallery_order.ExampleOrder",  # every plot_*.py runs during the build
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,  # report every failing example, then fail the build
    "only_warn_on_example_error": False,
    "reference_url": {"fairopt": None},
    "doc_module": ("fairopt",),
    "backreferences_dir": None,
    "min_reported_time": 1,
    "matplotlib_animations": False,
    "plot_gallery": "True",
    "write_computation_times": False,
}

# --- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "fairopt"
html_static_path = ["_static"]
html_css_files = ["fairopt.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}
html_show_sourcelink = False

# Warnings are errors in CI (-W); nothing below silences a class of warning that could hide a
# broken page. Markdown links to files outside docs/ (models/, benchmarks/) are not pages.
suppress_warnings: list[str] = []

os.environ.setdefault("FAIROPT_SHOW_PROGRESS", "0")


# --- pages added later -------------------------------------------------------------------------
def _append_new_pages(app, docname, source):
    # a Markdown page dropped into docs/ (a new method) joins the user guide by itself
    _sitetools.append_new_pages(HERE, docname, source)


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn generates set_<method>_request on every estimator (metadata routing); its
    # docstrings cross-reference scikit-learn's own glossary, which is not part of this site
    if name.startswith("set_") and name.endswith("_request"):
        return True
    # likewise scikit-learn's own mixin methods (set_output, fit_transform, get_params, ...): they
    # are documented by scikit-learn, and their docstrings point into its site
    if (getattr(obj, "__module__", "") or "").startswith("sklearn."):
        return True
    return None


def _reread_guide_index(app, env, added, changed, removed):
    # the guide index's toctree depends on which pages exist, so an incremental build that adds
    # a page must read it again
    return ["user_guide/index"]


def _reexported_constant_doc(app, what, name, obj, options, lines):
    # A constant re-exported by a package (``fairopt.validation.MAX_LEVELS``) keeps its ``#:``
    # comment in the module that defines it; autodoc looks only in the exporting module and
    # would show the docstring of ``int`` or ``list`` instead. Use the defining module's comment.
    if what not in ("data", "attribute") or inspect.isclass(obj) or inspect.isroutine(obj):
        return
    own = type(obj).__doc__
    if not lines or not isinstance(own, str) or "\n".join(lines).strip() != inspect.cleandoc(own).strip():
        return
    attr = name.rpartition(".")[2]
    for modname, module in sorted(sys.modules.items()):
        if not modname.startswith("fairopt") or module is None or getattr(module, attr, None) is not obj:
            continue
        try:
            doc = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", attr))
        except PycodeError:
            continue
        if doc:
            lines[:] = list(doc)
            return
    lines[:] = []  # no comment anywhere: show the value alone rather than the builtin's docstring


def _public_bases(app, name, obj, options, bases):
    # "Bases:" names public classes only: a private fairopt base (``_ScoreMixin``, a class in
    # ``fairopt.inprocessing._mixture``) is replaced by its own bases, and ``Generic[M]`` is dropped
    out: list = []

    def add(base):
        if base is object or base in out or typing.get_origin(base) is typing.Generic:
            return
        module = getattr(base, "__module__", "") or ""
        private = any(part.startswith("_") for part in module.split(".")) or \
            getattr(base, "__qualname__", "").startswith("_")
        if module.startswith("fairopt") and private:
            for parent in base.__bases__:
                add(parent)
            return
        out.append(base)

    for base in list(bases):
        add(base)
    bases[:] = out or [object]


class _FairoptTargets:
    """Documented fairopt objects, by identity and by last name component (built once per build)."""

    def __init__(self, objects):
        self.by_id: dict[int, list[str]] = {}
        self.by_last: dict[str, list[str]] = {}
        for name, entry in objects.items():
            if not name.startswith("fairopt") or entry.aliased:
                continue
            self.by_last.setdefault(name.rpartition(".")[2], []).append(name)
            if entry.objtype in ("class", "exception", "function", "module"):
                obj = _sitetools.resolve(name)
                if obj is not None:
                    self.by_id.setdefault(id(obj), []).append(name)


def _class_documents(owner: str, attr: str) -> bool:
    cls = _sitetools.resolve(owner)
    if not inspect.isclass(cls):
        return False
    doc = inspect.getdoc(cls) or ""
    return hasattr(cls, attr) or attr in getattr(cls, "__dataclass_fields__", {}) or bool(
        re.search(rf"^{re.escape(attr)}\s*:", doc, re.M))


def _resolve_fairopt(app, env, node, contnode):
    """Resolve a fairopt reference Sphinx's own lookup misses, when exactly one target fits.

    * ``fairopt.a.b.name`` written with the defining module's path resolves to the page of the
      same object (documented where a package exports it);
    * an unqualified attribute or method of the class being documented (``:attr:`domain_```, an
      entry of its Attributes section) resolves to that class's page;
    * an unqualified name (``DataValidationError``) resolves when one documented fairopt
      object has that name.
    Anything else stays unresolved, and the -W build fails on it.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    domain = env.get_domain("py")
    # built once per build, after reading (object ids are not kept in the pickled environment)
    if getattr(app, "_fairopt_targets", None) is None:
        app._fairopt_targets = _FairoptTargets(domain.objects)
    targets = app._fairopt_targets
    candidates: list[str] = []
    module, cls = node.get("py:module"), node.get("py:class")
    if target.startswith("fairopt."):
        obj = _sitetools.resolve(target)
        if obj is not None and (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
            candidates = targets.by_id.get(id(obj), [])
        else:   # ``fairopt.x.Class.member`` shown on its class's page
            owner_name, _, member = target.rpartition(".")
            owner_obj = _sitetools.resolve(owner_name)
            if inspect.isclass(owner_obj):
                candidates = [n for n in targets.by_id.get(id(owner_obj), [])
                              if _class_documents(n, member)]
    else:
        owner = f"{module}.{cls}" if module and cls else None
        head, _, last = target.rpartition(".")
        here = _sitetools.resolve(f"{module}.{target}") if module else None
        if not head and owner in domain.objects and _class_documents(owner, target):
            candidates = [owner]
        elif here is not None and id(here) in targets.by_id:   # the name as the current module sees it
            candidates = targets.by_id[id(here)]
        else:
            roles = domain.objtypes_for_role(node.get("reftype", "obj")) or []
            candidates = [n for n in targets.by_last.get(last, [])
                          if n.endswith("." + target) and domain.objects[n].objtype in roles]
            if not candidates and head:
                # ``Class.attr`` where the attribute is documented on the class page only
                owners = [n for n in targets.by_last.get(head.rpartition(".")[2], [])
                          if n.endswith("." + head) and domain.objects[n].objtype == "class"]
                candidates = [n for n in owners if _class_documents(n, last)]
    objects = [_sitetools.resolve(n) for n in candidates]
    if None not in objects and len({id(o) for o in objects}) == 1:   # one object, several names
        candidates = sorted(candidates, key=len)[:1]
    if len(candidates) != 1:
        return None
    entry = domain.objects[candidates[0]]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, candidates[0])


def _copy_mathjax(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    source = Path(str(importlib.metadata.distribution(MATHJAX_DIST).locate_file(
        f"{MATHJAX_DIST}/static/mathjax")))
    dest = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, dest / part, dirs_exist_ok=True)
        else:
            (dest / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, dest / part)


def _long_value_summary(app, what, name, obj, options, lines):
    # a constant too long to print (BACKENDS) says what it holds in one line instead
    if what != "data" or _sitetools.short_repr(obj):
        return
    kind = type(obj).__name__
    if isinstance(obj, dict):
        keys = ", ".join(f"``{k}``" for k in list(obj)[:12]) + (", ..." if len(obj) > 12 else "")
        lines += ["", f"A ``{kind}`` of {len(obj)} entries, keyed by {keys}."]
    elif hasattr(obj, "__len__"):
        lines += ["", f"A ``{kind}`` of {len(obj)} entries."]


_TAG = re.compile(r"(<[^>]*>)")


def _break_after_dots(html: str) -> str:
    # a break opportunity after each dot of the text (not inside tags): long dotted names wrap
    # at a dot instead of mid-word or off the page
    return "".join(part if part.startswith("<") else part.replace(".", ".<wbr>")
                   for part in _TAG.split(html))


def _wrap_dotted_titles(app, pagename, templatename, context, doctree):
    for key in ("prev", "next"):
        link = context.get(key)
        if link and link.get("title"):
            link["title"] = _break_after_dots(link["title"])
    body = context.get("body")
    if body and pagename.startswith("api/generated/"):
        context["body"] = re.sub(r"(<h1>)(.*?)(<a class=\"headerlink\")",
                                 lambda m: m[1] + _break_after_dots(m[2]) + m[3], body, count=1, flags=re.S)


def setup(app):
    app.connect("source-read", _append_new_pages)
    app.connect("env-get-outdated", _reread_guide_index)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _reexported_constant_doc, priority=100)  # before numpydoc
    app.connect("autodoc-process-docstring", _long_value_summary, priority=600)  # after numpydoc
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _resolve_fairopt)
    app.connect("build-finished", _copy_mathjax)
    app.connect("html-page-context", _wrap_dotted_titles)
