"""The equal-opportunity / equalized-odds LP restricted to ROC-hull vertices (the speed fix of
issue 33) has the optimum of the LP over every score atom."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.formulations.constrained_classification.odds import ThresholdMixtureOdds, hull_chain
from fairopt.modeling.registry import default_spec


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("constraint", ["equal_opportunity", "equalized_odds", "demographic_parity"])
@pytest.mark.parametrize("eps", [0.0, 0.03])
def test_hull_lp_equals_full_lp(seed, constraint, eps):
    rng = np.random.default_rng(seed)
    n, G = int(rng.integers(200, 2000)), int(rng.integers(2, 5))
    g = rng.integers(0, G, n)
    f = rng.normal(size=n) + 0.4 * g
    if seed % 2:
        f = np.round(f, 1)        # many ties: atoms carry both labels
    y = (rng.random(n) < 1 / (1 + np.exp(-f))).astype(int)
    w = rng.uniform(0.5, 2.0, n) if seed % 3 == 0 else None
    form = ThresholdMixtureOdds(f, g, y, constraint, eps, sample_weight=w)
    cols = form.support()
    assert cols.size < form.atoms.n_atoms or form.atoms.n_atoms < 20
    full = form.build().solve(default_spec("LP"), require_optimal=True)
    sol = form.solve(default_spec("LP"))
    assert sol.objective == pytest.approx(full.objective, abs=1e-9)
    # the fitted rule meets the band on the fitting sample
    if constraint != "demographic_parity":
        assert np.ptp(sol.tpr) <= eps + 1e-9
    if constraint == "equalized_odds":
        assert np.ptp(sol.fpr) <= eps + 1e-9


def test_hull_chain_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        steps = rng.integers(0, 3, size=(300, 2)).astype(float)
        steps[steps.sum(1) == 0, 0] = 1.0
        pts = np.vstack([[0.0, 0.0], np.cumsum(steps, axis=0)])
        up = hull_chain(pts[:, 0], pts[:, 1], upper=True)
        lo = hull_chain(pts[:, 0], pts[:, 1], upper=False)
        from scipy.spatial import ConvexHull
        assert set(ConvexHull(pts).vertices) == set(up) | set(lo)
