"""``import fairopt`` and ``fairopt --help`` load no solver, dataframe or learning library."""
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "cvxpy", "pyomo", "highspy", "pandas", "scipy", "dask", "rich", "osqp")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\n"
                          "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("code", ["import fairopt", "import fairopt.errors", "import fairopt.cli"])
def test_import_loads_no_heavy_library(code):
    assert _loaded(code).isdisjoint(HEAVY), sorted(_loaded(code) & set(HEAVY))


def test_help_loads_no_heavy_library():
    code = ("import sys, contextlib, io\nfrom fairopt.cli import main\nsys.argv = ['fairopt', '--help']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main()\n    except SystemExit:\n        pass")
    assert _loaded(code).isdisjoint(HEAVY), sorted(_loaded(code) & set(HEAVY))


def test_not_fitted_error_is_sklearns_and_one_class():
    from sklearn.exceptions import NotFittedError as SkNotFitted

    from fairopt import errors
    from fairopt.errors import FairoptError, NotFittedError
    assert issubclass(NotFittedError, SkNotFitted) and issubclass(NotFittedError, FairoptError)
    assert errors.NotFittedError is NotFittedError
    import pickle
    assert type(pickle.loads(pickle.dumps(NotFittedError("x")))) is NotFittedError
    with pytest.raises(AttributeError):
        _ = errors.NoSuchError
