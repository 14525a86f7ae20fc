"""The numpydoc validation checks applied to every public docstring (site build and tests).

The site build (``numpydoc_validation_checks`` in docs/conf.py) and tests/test_docs_api.py both
read this file, so a docstring that breaks a check fails CI either way.

Enforced (each one a reader of the API pages relies on):

* ``GL08`` every public object the reference renders has a docstring;
* ``GL03``, ``GL05``-``GL07``, ``GL09``, ``GL10`` layout numpydoc's renderer depends on (no
  tabs, sections in order, valid deprecation directive, no double blank lines);
* ``SS01``, ``SS04`` a summary line exists and does not start with whitespace;
* ``PR02``, ``PR03``, ``PR05``, ``PR06``, ``PR10`` the Parameters section names only real
  parameters, in signature order, with well-formed types (a wrong name is a wrong page);
* ``RT05``, ``YD01`` Returns descriptions end properly and generators document what they yield.

Not enforced, and why:

* ``SA01`` (See Also), ``ES01`` (extended summary): optional in the numpydoc standard;
* ``GL01``, ``GL02`` (where the opening and closing quotes sit): the house style closes a
  docstring on its last line of text; it does not change the rendered page;
* ``SS02``, ``SS03``, ``SS05``, ``SS06`` (summary capitalised, ends in a period, infinitive
  verb, one line): summaries may start with a code name (``fit``), a formula or a symbol;
* ``PR01``, ``PR07``-``PR09``, ``RT01``-``RT04``: per-method completeness of Parameters and
  Returns. Properties and one-line accessors say what they return in the summary; grouped
  parameters (``eps, ratio : float``) are numpydoc-legal but trip ``PR01``;
* ``EX01`` (Examples section): the house standard asks one of every public class and
  function, and tests/test_docs_api.py enforces exactly that (the doctests run in CI); here it
  would also demand one of every method and property.
"""

VALIDATION_CHECKS = {
    "GL03", "GL05", "GL06", "GL07", "GL08", "GL09", "GL10",
    "SS01", "SS04",
    "PR02", "PR03", "PR05", "PR06", "PR10",
    "RT05", "YD01",
}

# The site build checks the same set except GL08: autodoc hands numpydoc the *value* of an
# attribute documented by a ``#:`` comment (e.g. ``None``), which has no docstring of its own.
# tests/test_docs_api.py checks GL08 on every public class, function, method and property.
SPHINX_CHECKS = VALIDATION_CHECKS - {"GL08"}

# private helpers and dunder methods; module constants (their "docstring" is their type's);
# properties built from a lambda (``BuiltinData.name = property(lambda ..., doc=...)``), on which
# numpydoc's source-line lookup raises StopIteration -- tests/test_docs_api.py checks that they
# have a docstring instead
LAMBDA_PROPERTIES = r"\.BuiltinData\.(name|domain|label|favourable_label|protected|protected_attributes|privileged|citation)$"
VALIDATION_EXCLUDE = {r"\._[a-z]", r"\.__[a-z]+__$", r"\.[A-Z][A-Z0-9_]+$", LAMBDA_PROPERTIES}
