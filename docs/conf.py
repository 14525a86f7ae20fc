"""Sphinx configuration for the fairopt documentation site.

Build with ``sphinx-build -W --keep-going -b html docs docs/_build/html`` after
``pip install ".[docs]"`` (see docs/README.md).
"""
from __future__ import annotations

import inspect
import os
import sys
from pathlib import Path

import matplotlib
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer

matplotlib.use("Agg")  # the gallery renders off-screen

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # docs/_numpydoc_checks.py

import fairopt  # noqa: E402
from _numpydoc_checks import SPHINX_CHECKS, VALIDATION_EXCLUDE  # noqa: E402

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

intersphinx_mapping = {}  # CI has no network beyond the package registries

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
nitpicky = False

os.environ.setdefault("FAIROPT_SHOW_PROGRESS", "0")


# --- pages added later -------------------------------------------------------------------------
# A Markdown page dropped into docs/ (e.g. by a new method) joins the user guide's "More pages"
# section by itself instead of failing the -W build with "document isn't included in any toctree".
_NOT_GUIDE = {"index", "README"}


def _append_new_pages(app, docname, source):
    if docname != "user_guide/index":
        return
    text = source[0]
    extra = sorted(p.stem for p in HERE.glob("*.md")
                   if p.stem not in _NOT_GUIDE and f"/{p.stem}\n" not in text)
    if extra:
        entries = "\n".join(f"/{name}" for name in extra)
        source[0] = text + f"\n```{{toctree}}\n:caption: More pages\n:maxdepth: 1\n\n{entries}\n```\n"


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


def setup(app):
    app.connect("source-read", _append_new_pages)
    app.connect("env-get-outdated", _reread_guide_index)
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _reexported_constant_doc, priority=100)  # before numpydoc
