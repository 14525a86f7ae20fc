"""Shared docstring pieces, written once and filled into many docstrings.

Parameter descriptions that several public names share (``solver``, ``random_state``,
``sensitive_features``, ...) live in :data:`PARAMS`. A docstring names a piece with
``{name}`` on a line of its own, indented as the piece should be, and the decorator
:func:`fill_doc` replaces it when the module is imported, so numpydoc, Sphinx, ``help()`` and the
doctests all see the finished text. Literal braces elsewhere in a decorated docstring are written
doubled (``{{`` and ``}}``), as in :meth:`str.format`.
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

#: Shared parameter descriptions: a numpydoc ``name : type`` line and its indented description,
#: written without leading indentation (``fill_doc`` indents them where they are used).
PARAMS: dict[str, str] = {}


def register(name: str, text: str) -> None:
    """Add the shared piece ``name`` (refused if it exists, so two modules cannot disagree).

    Parameters
    ----------
    name : str
        The placeholder name used as ``{name}`` in docstrings.
    text : str
        The piece, without leading indentation.

    Examples
    --------
    >>> from fairopt._docstrings import PARAMS, register
    >>> register("_example_piece", "x : int\\n    An example.")
    >>> PARAMS["_example_piece"].splitlines()[0]
    'x : int'
    >>> del PARAMS["_example_piece"]
    """
    if name in PARAMS:
        raise ValueError(f"docstring piece {name!r} is registered twice")
    PARAMS[name] = textwrap.dedent(text).strip("\n")


def fill_doc(obj: _T) -> _T:
    """Replace every ``{name}`` line of ``obj.__doc__`` by the shared piece ``name``.

    The placeholder must be alone on its line; the piece is indented like the placeholder. An
    unknown name raises :class:`KeyError` at import time, so a typo cannot reach the docs.

    Parameters
    ----------
    obj : class or function
        The object whose docstring is filled (returned unchanged otherwise).

    Returns
    -------
    class or function
        ``obj``, with its docstring filled.

    Examples
    --------
    >>> from fairopt._docstrings import PARAMS, fill_doc
    >>> PARAMS["_demo"] = "k : int\\n    How many."
    >>> @fill_doc
    ... def f(k):
    ...     '''Do it.
    ...
    ...     Parameters
    ...     ----------
    ...     {_demo}
    ...     '''
    >>> "How many." in f.__doc__
    True
    >>> del PARAMS["_demo"]
    """
    doc = obj.__doc__
    if doc:
        obj.__doc__ = _fill(doc)
    return obj


def _fill(doc: str) -> str:
    out = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}") and stripped[1:-1].isidentifier():
            indent = line[: len(line) - len(line.lstrip())]
            out.append(textwrap.indent(PARAMS[stripped[1:-1]], indent))
        else:
            out.append(line)
    return "\n".join(out)


def doc_with(**pieces: str) -> Callable[[_T], _T]:
    """Register ``pieces`` (name to text) if new, then return :func:`fill_doc`.

    A shortcut for a module whose own docstrings share pieces nobody else uses.

    Parameters
    ----------
    **pieces : str
        Pieces to register, by name.

    Returns
    -------
    callable
        :func:`fill_doc`.

    Examples
    --------
    >>> from fairopt._docstrings import PARAMS, doc_with
    >>> @doc_with(_tmp_piece="n : int\\n    Rows.")
    ... def g(n):
    ...     '''G.
    ...
    ...     Parameters
    ...     ----------
    ...     {_tmp_piece}
    ...     '''
    >>> g.__doc__.split("----------")[1].split()[:3]
    ['n', ':', 'int']
    >>> del PARAMS["_tmp_piece"]
    """
    for name, text in pieces.items():
        if PARAMS.get(name) != textwrap.dedent(text).strip("\n"):
            register(name, text)
    return fill_doc


# ---- appended (dedupgame): an overriding method without a docstring takes its base's --------
def inherit_docs(cls: type[_T]) -> type[_T]:
    """Give each public method of ``cls`` without a docstring the docstring of the method it overrides.

    ``help()`` and Sphinx already look docstrings up through the bases, but numpydoc's validation
    reads ``__doc__`` itself; a base class calls this from ``__init_subclass__`` so that an
    override documents exactly what the base method does without a copy of its text.

    Parameters
    ----------
    cls : type
        The class whose methods are completed (in place).

    Returns
    -------
    type
        ``cls``.

    Examples
    --------
    >>> from fairopt._docstrings import inherit_docs
    >>> class Base:
    ...     def run(self):
    ...         '''Run it.'''
    >>> @inherit_docs
    ... class Child(Base):
    ...     def run(self):
    ...         return 1
    >>> Child.run.__doc__
    'Run it.'
    """
    for name, value in vars(cls).items():
        if name.startswith("_") or not callable(value) or getattr(value, "__doc__", None):
            continue
        for base in cls.__mro__[1:]:
            doc = getattr(base.__dict__.get(name), "__doc__", None)
            if doc:
                value.__doc__ = doc
                break
    return cls


# ---- appended (dedupgame): pieces shared across packages -------------------------------------
register("confidence_uncertified", """confidence : float in (0, 1) or None, default None
    Refused (a typed error at fit) unless None: this estimator offers no population guarantee
    for its fairness tolerance (see :doc:`/guarantees`). Kept for a uniform interface with the
    estimators that certify their tolerance.""")
# the setting of the score-threshold examples: scores of two groups, the second shifted up
register("example_scores_groups", """>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> groups = rng.integers(0, 2, 400)
>>> scores = rng.uniform(-1, 1, 400) + 0.3 * groups""")
