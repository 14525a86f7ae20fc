"""Batches whose queries hold different subsets of the shared group labels: each query's result
(exposure table, utility, price, decomposition) equals that query solved alone, and its table
lists only the groups present in it, in label order."""
from __future__ import annotations

import numpy as np
import pytest

from fairopt.ranking import fair_ranking


@pytest.mark.parametrize("criterion,eps", [("parity", 0.05), ("merit", 0.08)])
def test_batch_queries_with_other_groups_equal_single_queries(criterion: str, eps: float) -> None:
    rng = np.random.default_rng(11)
    U = rng.uniform(0.1, 1.0, size=(3, 6))
    G = np.array([["a", "a", "b", "b", "a", "b"],      # a, b
                  ["c", "a", "c", "a", "c", "a"],      # a, c (no b)
                  ["d", "b", "b", "d", "d", "b"]])     # b, d (no a, c)
    U[G == "a"] += 0.5                                  # fairness binds where a is present
    batch = fair_ranking(U, G, eps, criterion=criterion)
    assert any(r.utility < r.utility_unfair - 1e-6 for r in batch)   # eps binds somewhere
    for q in range(3):
        one = fair_ranking(U[q], G[q], eps, criterion=criterion)
        table, alone = batch[q].exposure, one.exposure
        assert list(table.index) == sorted(set(G[q])) == list(alone.index)
        np.testing.assert_allclose(table.to_numpy(float), alone.to_numpy(float), atol=1e-8)
        assert batch[q].utility == pytest.approx(one.utility, abs=1e-9)
        assert batch[q].price_of_fairness == pytest.approx(one.price_of_fairness, abs=1e-7)
        assert batch[q].disparity <= eps + 1e-8
        # the decomposition reproduces P: rows and columns sum to one
        P = batch[q].P
        np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-9)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-9)
        np.testing.assert_allclose(P @ (1 / np.log2(2 + np.arange(6))), batch[q].item_exposure, atol=1e-9)
