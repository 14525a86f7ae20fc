"""BalancedFilter estimator, its runner and the benchmark smoke test."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import load_benchmark, requires_data

from fairopt.errors import DataValidationError, NotFittedError, ParameterError
from fairopt.filtering import BalancedFilter
from fairopt.reductions.proxy_tree import DISCLOSURE_TOL


def frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.75, 0.17, 0.08])
    shift = pd.Series(g).map({"a": 0.0, "b": 1.0, "c": 2.0}).to_numpy()
    df = pd.DataFrame({"x1": rng.normal(size=n) + shift, "x2": rng.normal(size=n) - 0.5 * shift,
                       "color": np.where(rng.random(n) < 0.3 + 0.2 * shift, "red", "blue"), "group": g})
    return df


@pytest.mark.parametrize("proxy", ["tree", "relaxed_tree", "regression", "decision_tree"])
def test_filter_fits_and_balances(proxy):
    df = frame()
    alpha = 0.3
    est = BalancedFilter(alpha=alpha, proxy=proxy, random_state=0).fit(df, "group")
    K = 3
    assert est.conditional_matrix_.shape[1] == K and list(est.groups_) == ["a", "b", "c"]
    assert est.disclosivity_ <= alpha + DISCLOSURE_TOL
    assert est.imbalance_ < est.imbalance_before_ - 0.05      # filtering moves toward balance
    assert est.sampling_probabilities_.max() == pytest.approx(1.0)
    p = est.acceptance_probability(df)
    assert p.min() >= 0 and p.max() <= 1 + 1e-12
    assert p.mean() == pytest.approx(est.acceptance_rate_, rel=1e-9)
    keep = est.filter(df, random_state=1)
    np.testing.assert_array_equal(keep, est.filter(df, random_state=1))   # reproducible
    kept = df.loc[keep, "group"].value_counts(normalize=True).reindex(["a", "b", "c"]).to_numpy()
    n_kept = keep.sum()
    se = np.sqrt(est.filtered_distribution_ * (1 - est.filtered_distribution_) / n_kept)
    # independent coins around the expected kept distribution (not exact: finite sample)
    assert np.all(np.abs(kept - est.filtered_distribution_) <= 5 * se + 1e-9)
    ev = est.evaluate(df, df["group"])
    assert ev["disclosivity"] == pytest.approx(est.disclosivity_, abs=1e-9)
    assert ev["imbalance"] == pytest.approx(est.imbalance_, abs=1e-9)


def test_alpha_zero_is_uniform_sampling():
    df = frame()
    for proxy in ("tree", "regression"):
        est = BalancedFilter(alpha=0.0, proxy=proxy).fit(df, "group")
        assert est.disclosivity_ <= 1e-9
        np.testing.assert_allclose(est.acceptance_probability(df), 1.0)
        assert est.imbalance_ == pytest.approx(est.imbalance_before_)


def test_bad_input():
    df = frame(300)
    with pytest.raises(ParameterError, match="proxy"):   # a parameter mistake, not a data one
        BalancedFilter(proxy="forest").fit(df, "group")
    with pytest.raises(ParameterError, match="alpha"):
        BalancedFilter(alpha=1.5).fit(df, "group")
    with pytest.raises(DataValidationError):
        BalancedFilter().fit(df, np.zeros(len(df)))            # a single group
    bad = df.copy()
    bad.loc[3, "x1"] = np.nan
    with pytest.raises(DataValidationError, match="missing"):
        BalancedFilter().fit(bad, "group")
    with pytest.raises(NotFittedError):
        BalancedFilter().acceptance_probability(df)


def test_relaxed_tree_is_the_exact_tree_renormalised():
    """P1′ renormalised equals P1 (min over t ≥ 0 of ‖t p̃ − u‖ is decreasing in ‖p̃‖), so the
    relaxed proxy grows the same tree and keeps the same distribution."""
    df = frame()
    exact = BalancedFilter(alpha=0.3, proxy="tree").fit(df, "group")
    relaxed = BalancedFilter(alpha=0.3, proxy="relaxed_tree").fit(df, "group")
    np.testing.assert_allclose(relaxed.conditional_matrix_, exact.conditional_matrix_, atol=1e-9)
    np.testing.assert_allclose(relaxed.filtered_distribution_, exact.filtered_distribution_, atol=1e-6)
    np.testing.assert_allclose(relaxed.sampling_probabilities_, exact.sampling_probabilities_, atol=1e-5)
    assert relaxed.weights_.sum() < 1 - 1e-3            # but q itself is off the simplex


@requires_data
def test_runner_bare_alpha_override(tmp_path, capsys):
    import json
    from pathlib import Path

    from fairopt.cli import main
    card = Path(__file__).resolve().parents[1] / "models" / "balanced-filtering-bank.toml"
    assert main(["run", str(card), "--set", "alpha=0.05", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Group proportions of job" in out and "train filt." in out
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["parameters"]["alpha"] == 0.05
    m = res["metrics"]
    assert m["disclosivity_train"] <= 0.05 + DISCLOSURE_TOL
    assert m["imbalance_train"] < m["imbalance_before_train"]


@requires_data
def test_runner_split_bins_zero_is_the_plain_oracle(tmp_path, capsys):
    import json
    from pathlib import Path

    from fairopt.cli import main
    from fairopt.data import load_dataset
    from fairopt.runs.balanced_filtering import split
    card = Path(__file__).resolve().parents[1] / "models" / "balanced-filtering-bank.toml"
    assert main(["run", str(card), "--set", "alpha=0.1", "--set", "split_bins=0", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    m = json.loads((tmp_path / "result.json").read_text())["metrics"]
    train, _ = split(load_dataset("bank").drop(columns=["y"]), 1 / 3, 0)
    est = BalancedFilter(alpha=0.1, proxy="relaxed_tree", split_bins=None, random_state=0).fit(train, "job")
    assert m["imbalance_train"] == pytest.approx(est.imbalance_, abs=1e-9)
    assert m["n_cells"] == est.conditional_matrix_.shape[0]


def test_dominated_share_reads_the_interpolated_front():
    bench = load_benchmark("balanced_filtering")
    front = [{"disclosivity_train": d, "imbalance_train": i, "cone": c}
             for d, i, c in [(0.0, 0.7, 0.6), (0.5, 0.2, 0.1), (0.6, 0.3, 0.05)]]
    pts = [{"disclosivity_train": d, "imbalance_train": i} for d, i in
           [(0.25, 0.5), (0.25, 0.4), (0.8, 0.2), (0.55, 0.19)]]
    # front at 0.25 is 0.45; at 0.8 the running minimum 0.2; at 0.55 it is 0.2 > 0.19
    assert bench.dominated_share(front, pts, "imbalance_train") == pytest.approx(2 / 4)
    assert bench.dominated_share(front, pts, "cone") == pytest.approx(4 / 4)


@requires_data
def test_benchmark_smoke(tmp_path):
    bench = load_benchmark("balanced_filtering")
    res = bench.main(["--seeds", "1", "--alphas", "0,0.3", "--subsample", "3000", "--out", str(tmp_path)])
    for name in ("adult", "bank"):
        assert (tmp_path / f"balanced_filtering_{name}.png").is_file()
        curves = res["datasets"][name]["mean_curves"]
        assert set(curves) == set(bench.PROXIES)
        ab = curves["alpha_beta"]
        assert ab[0]["disclosivity_train"] <= 1e-9                      # α = 0: no split
        assert ab[1]["disclosivity_train"] <= 0.3 + DISCLOSURE_TOL
        assert ab[1]["imbalance_train"] <= ab[0]["imbalance_train"] + 1e-9
        # η = 1 makes every baseline's rows equal the prior: disclosivity 0
        for proxy in bench.PROXIES[2:]:
            assert curves[proxy][-1]["eta"] == 1.0 and curves[proxy][-1]["disclosivity_train"] <= 1e-9
    assert (tmp_path / "balanced_filtering_bank_proportions.png").is_file()
    assert json_ok(tmp_path / "balanced_filtering.json")


def json_ok(path) -> bool:
    import json
    return "summary" in json.loads(path.read_text())["datasets"]["adult"]


def range_frame(n=6000, seed=0):
    """Group c lives in the middle of x's range: no half-line of x isolates it."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    mid = np.abs(x - 0.5) < 0.1
    g = np.where(mid & (rng.random(n) < 0.6), "c", np.where(rng.random(n) < 0.8, "a", "b"))
    return pd.DataFrame({"x": x, "noise": rng.normal(size=n), "group": g})


def test_split_bins_let_the_linear_oracle_select_a_range():
    df = range_frame()
    plain = BalancedFilter(alpha=0.5, split_bins=None).fit(df, "group")
    binned = BalancedFilter(alpha=0.5, split_bins=5).fit(df, "group")
    assert plain.encoder_.transform(df[["x", "noise"]]).shape[1] == 2
    assert binned.encoder_.transform(df[["x", "noise"]]).shape[1] == 2 + 2 * 5
    for est in (plain, binned):
        assert est.disclosivity_ <= 0.5 + DISCLOSURE_TOL
    # with range indicators the tree reaches the middle-range group: strictly more balanced
    assert binned.imbalance_ < plain.imbalance_ - 0.05
    # bins are a tree-oracle basis only: the classifier proxies see the plain encoding
    reg = BalancedFilter(alpha=1.0, proxy="regression", split_bins=5).fit(df, "group")
    assert reg.encoder_.transform(df[["x", "noise"]]).shape[1] == 2


def test_ordinal_encoding_one_column_per_attribute():
    df = frame()
    est = BalancedFilter(alpha=1.0, proxy="regression", encoding="ordinal").fit(df, "group")
    Z = est.encoder_.transform(df[["x1", "x2", "color"]])
    assert Z.shape[1] == 3
    np.testing.assert_array_equal(Z[:, :2], df[["x1", "x2"]].to_numpy())     # numeric: unscaled
    assert set(np.unique(Z[:, 2])) == {0.0, 1.0}                              # category codes
    unseen = df.head(3).assign(color="green")
    assert (est.encoder_.transform(unseen[["x1", "x2", "color"]])[:, 2] == -1).all()
    assert est.acceptance_probability(unseen).shape == (3,)


@pytest.mark.parametrize("kw, match", [({"encoding": "dummy"}, "encoding"), ({"split_bins": 1}, "split_bins"),
                                       ({"split_bins": 2.5}, "split_bins")])
def test_bad_encoding_parameters(kw, match):
    with pytest.raises(ParameterError, match=match):
        BalancedFilter(**kw).fit(frame(300), "group")
