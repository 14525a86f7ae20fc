"""The documentation site's own pages: their code runs and the numbers they state are the code's.

Fast (no Sphinx build, no ``docs`` extra): the Python blocks of the site-only pages
(``docs/index.md``, ``docs/user_guide/*.md``) run as written, the gallery has the examples the
site promises, the numbers the pages state are recomputed from the code and the data, and the
site's rules are checked on the sources (unresolved references fail the build, MathJax is
bundled, no page cites an issue or a path outside the repository, every extra is documented).
"""
from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import sklearn
from conftest import requires_data

ROOT_DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(ROOT_DOCS))
import _sitetools  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
SITE_PAGES = [DOCS / "index.md", DOCS / "install.md", *sorted((DOCS / "user_guide").glob("*.md"))]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))


@pytest.mark.parametrize("page", [p for p in SITE_PAGES if FENCE.search(p.read_text())],
                         ids=lambda p: p.name)
def test_site_page_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(FENCE.findall(page.read_text())):
        # a page may switch on a global scikit-learn setting (metadata routing): keep it to the page
        with contextlib.redirect_stdout(io.StringIO()), sklearn.config_context():
            exec(compile(block, f"{page.name}[python block {i + 1}]", "exec"), namespace)


def test_gallery_has_one_example_per_method_and_topic():
    names = {p.stem for p in EXAMPLES}
    required = {"plot_quickstart", "plot_optimized_preprocessing", "plot_maxent", "plot_fair_regression",
                "plot_fair_classifier", "plot_threshold_debiasing", "plot_fair_logloss",
                "plot_balanced_filtering", "plot_fair_selection", "plot_solvers",
                "plot_price_of_fairness", "plot_embedding", "plot_sweep_frontier", "plot_infeasible"}
    assert required <= names and len(names) >= 12


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_gallery_example_has_a_labelled_figure(example):
    """Static check (the build runs them): a title docstring, labelled axes and a legend."""
    text = example.read_text()
    doc = ast.get_docstring(ast.parse(text))
    assert doc and doc.splitlines()[1].startswith("===")
    assert "set_xlabel(" in text and "set_ylabel(" in text and ".legend(" in text
    assert "plt.show()" in text


def test_landing_page_shows_a_figure_and_the_two_setup_commands():
    text = (DOCS / "index.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "{figure} auto_examples/images/sphx_glr_plot_quickstart_001.png" in text
    for command in ('pip install . && fairopt run models/quickstart.toml',
                    'pip install ".[test]" && pytest -q'):
        assert command in text and command in readme


def test_quickstart_dual_and_price_as_the_readme_states():
    """README: the one pair's dual is 0.3405; the price d TV*/d tau is 0.1742 = |dual| x rate."""
    from fairopt.data import load_builtin
    from fairopt.formulations.tv_repair import TVRepair
    compas = load_builtin("compas")
    cells, counts = compas.codes()
    result = TVRepair(compas.domain, cells, counts, protected="race", label="two_year_recid",
                      favourable_label=0, statistical_rate=1.0).solve("highs")
    dual = np.abs(result.solution.dual["statistical_rate"])
    assert dual.shape == (1,) and round(float(dual[0]), 4) == 0.3405
    assert round(result.price_of_fairness, 4) == 0.1742
    race, fav = compas.domain.names.index("race"), compas.domain.names.index("two_year_recid")
    ref = compas.domain.levels["race"].index("Caucasian")
    in_ref = cells[:, race] == ref
    rate = result.p[in_ref & (cells[:, fav] == 0)].sum() / result.p[in_ref].sum()
    assert round(float(rate), 4) == 0.5114
    assert result.price_of_fairness == pytest.approx(float(dual[0]) * rate, rel=1e-9)
    readme = (ROOT / "README.md").read_text()
    assert "dual is 0.3405" in readme and "0.5114" in readme and "`price_of_fairness` 0.1742" in readme


def test_maxent_page_counts_the_records_the_code_loads():
    from fairopt.data import load_builtin
    n = len(load_builtin("compas").expand())
    assert n == 6167
    text = (DOCS / "maxent.md").read_text()
    assert "6,167 records of the built-in COMPAS domain" in text and "6,172" not in text


def test_favourable_label_page_rates():
    """The three COMPAS statistical rates the pages show, from the label each page favours."""
    from fairopt.data import load_builtin
    from fairopt.metrics import statistical_rate
    records = load_builtin("compas").expand()
    sr0 = statistical_rate(records["two_year_recid"], records["race"], pos_label=0)
    sr1 = statistical_rate(records["two_year_recid"], records["race"], pos_label=1)
    page = (DOCS / "user_guide" / "favourable_labels.md").read_text()
    assert f"**{sr0:.4f}**" in page and f"**{sr1:.4f}**" in page and f"**{sr1:.3f}**" in page
    data_page = (DOCS / "data.md").read_text()
    assert f"COMPAS by race, label value 1: SR {sr1:.3f}" in data_page and f"SR {sr0:.4f}" in data_page


@requires_data
def test_law_ugpa_range_and_the_clipped_target_are_as_documented():
    from fairopt.data import load_law
    from fairopt.runs.fair_regression import prepare_data
    ugpa = load_law()["ugpa"].to_numpy(float)
    above = int((ugpa > 4).sum())
    assert above == 18 and ugpa.max() == pytest.approx(4.2)
    page = (DOCS / "data.md").read_text()
    assert "18\n  rows exceed 4" in page or "18 rows exceed 4" in page.replace("\n  ", " ")
    assert "clip(ugpa / 4, 0, 1)" in page
    data = prepare_data("law")
    y = np.r_[data["y_train"], data["y_test"]]
    assert y.min() >= 0 and y.max() == 1.0
    # every row at or above 4.0 gets the target 1.0; nothing else does
    assert int((y == 1.0).sum()) == int((ugpa >= 4).sum())


@pytest.mark.parametrize("page", ["tv_repair", "maxent", "fair_regression", "threshold_debiasing",
                                  "fair_logloss", "balanced_filtering", "fair_selection"])
def test_every_method_page_says_which_label_is_favourable(page):
    assert "favourable" in (DOCS / f"{page}.md").read_text().lower()


def test_a_page_added_later_joins_the_guide(tmp_path):
    """A Markdown page the guide index does not list is appended (so -W keeps passing).

    The helper lives in docs/_sitetools.py, which imports no Sphinx: this test runs with the
    ``test`` extra alone (it used to execute docs/conf.py, which needs the ``docs`` extra).
    """
    for name in ("index", "README", "install", "tv_repair", "ranking"):
        (tmp_path / f"{name}.md").write_text(f"# {name}\n")
    source = ["```{toctree}\n/tv_repair\n```\n"]
    _sitetools.append_new_pages(tmp_path, "user_guide/index", source)
    assert source[0].count("/ranking\n") == 1 and "/tv_repair\n" in source[0]
    assert "/index\n" not in source[0] and "/README\n" not in source[0] and "/install\n" not in source[0]
    untouched = ["x"]
    _sitetools.append_new_pages(tmp_path, "tv_repair", untouched)
    assert untouched == ["x"]


def _conf_assignments() -> dict:
    """The literal assignments of docs/conf.py, read without executing it (no Sphinx needed)."""
    out = {}
    for node in ast.parse((DOCS / "conf.py").read_text()).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    try:
                        out[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
    return out


def test_unresolved_references_fail_the_build_and_only_third_party_targets_are_ignored():
    conf = _conf_assignments()
    assert conf["nitpicky"] is True
    assert "nitpick_ignore" not in conf or not conf["nitpick_ignore"]
    for _, pattern in conf["nitpick_ignore_regex"]:
        for fairopt_target in ("fairopt.errors.DataValidationError", "DataValidationError",
                               "fairopt.modeling.smooth.solve_smooth", "ConfigError"):
            assert not re.fullmatch(pattern, fairopt_target), (pattern, fairopt_target)
    assert re.fullmatch(conf["nitpick_ignore_regex"][0][1], "sklearn.base.BaseEstimator")
    assert not conf["suppress_warnings"]


def test_math_is_rendered_from_a_bundled_mathjax():
    """No CDN: the page loads _static/mathjax/tex-chtml.js, copied from an installed package."""
    conf = _conf_assignments()
    assert conf["mathjax_path"] == "mathjax/tex-chtml.js" and "//" not in conf["mathjax_path"]
    assert "sphinx-mathjax-offline" in (ROOT / "pyproject.toml").read_text()
    import importlib.metadata
    try:
        dist = importlib.metadata.distribution(conf["MATHJAX_DIST"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the MathJax package comes with the docs extra")
    root = Path(str(dist.locate_file(f"{conf['MATHJAX_DIST']}/static/mathjax")))
    for part in conf["MATHJAX_PARTS"]:
        assert (root / part).exists(), part
    assert "loader" in (root / "tex-chtml.js").read_text()[:200_000]


@pytest.mark.parametrize("page", [p for p in DOCS.rglob("*.md") if "_build" not in p.parts
                                  and "auto_examples" not in p.parts], ids=lambda p: p.name)
def test_pages_cite_no_issue_numbers_nor_paths_outside_the_repository(page):
    text = page.read_text()
    assert not re.search(r"\bissues? \d+|\bissue #\d+", text, re.I), "cite the behaviour, not the issue"
    assert "shared/" not in text, "shared/ is not part of the repository: cite papers by reference"
    # every repository path a page names in backticks exists
    for path in re.findall(r"`((?:benchmarks|models|examples|scripts|tests)/[\w./-]+\.\w+)`", text):
        assert (ROOT / path).exists(), path


def test_a_dollar_in_prose_does_not_open_a_math_span():
    """dollarmath reads ``$`` as math: currency signs outside code are escaped (``NT\\$``)."""
    for page in DOCS.glob("*.md"):
        prose = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        prose = re.sub(r"`[^`]*`", "", prose)
        assert not re.search(r"[A-Z]{2}\$", prose), page.name
    assert "NT\\$ thousand" in (DOCS / "fair_selection.md").read_text()


def test_install_page_lists_every_extra_with_what_it_enables():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    text = (DOCS / "install.md").read_text()
    for name in extras:
        assert re.search(rf"^\| `{name}` \|", text, re.M), f"docs/install.md: add the `{name}` extra"
    for command in ('pip install . && fairopt run models/quickstart.toml', 'pip install ".[test]" && pytest -q'):
        assert command in text
    assert "install\n" in (DOCS / "index.md").read_text()


def test_readme_tour_names_the_extras_its_commands_need():
    readme = (ROOT / "README.md").read_text()
    tour = readme[readme.index("**Sweep a frontier**"):readme.index("**Data larger than memory.**")]
    assert "--executor dask" in tour and '".[distributed' in tour
    assert "fairopt frontier" in tour and "plot]" in tour


def test_coming_from_page_shows_the_metric_signatures_that_run():
    from fairopt.metrics import MetricSignatureError, demographic_parity_difference
    text = (DOCS / "user_guide" / "coming_from.md").read_text()
    assert "demographic_parity_difference(y_pred, s)" not in text
    assert "take no `y_true`" not in text
    with pytest.raises(MetricSignatureError):
        demographic_parity_difference([1, 0, 1, 0], [0, 0, 1, 1])   # the old (y_pred, s) form
    assert demographic_parity_difference(None, [1, 0, 1, 0], sensitive_features=[0, 0, 1, 1]) == 0.0


def test_user_guide_pages_link_to_the_api_reference():
    for page in [DOCS / "index.md", *sorted((DOCS / "user_guide").glob("*.md"))]:
        if page.name == "index.md":
            continue
        assert re.search(r"\{py:(class|func|mod|obj|meth)\}`", page.read_text()), page.name
