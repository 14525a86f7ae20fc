"""``fairopt frontier CARD.toml``: the exact (or certified) frontier of a model card's estimator.

A runner that offers ``frontier_inputs(card, params, data) -> (estimator, X, y, sensitive_features)``
(see :class:`~fairopt.runs.base.Runner`) hands its unfitted estimator and fitting rows to
:func:`fairopt.frontier`; the points, breakpoints and certified band are written to
``frontier.json`` / ``frontier.csv`` and drawn in ``frontier.png``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairopt.errors import ConfigError
from fairopt.frontiers import Frontier, frontier

__all__ = ["CardFrontier", "card_frontier"]


@dataclass
class CardFrontier:
    """A card's frontier and the files written for it.

    Examples
    --------
    >>> CardFrontier("card", None).files
    {}
    """

    card: str
    frontier: Frontier | None
    files: dict[str, Path] = field(default_factory=dict)


def card_frontier(path: str | os.PathLike[str], out: str | os.PathLike[str], *, eps: list[float] | None = None,
                  confidence: float | None = None, overrides: list[str] | None = None,
                  plot: bool = True) -> CardFrontier:
    """Compute and write the frontier of the card at ``path`` into folder ``out``.

    Raises
    ------
    ConfigError
        The card's formulation offers no frontier (its runner has no ``frontier_inputs``), or
        the plot is asked for without matplotlib.

    Examples
    --------
    >>> import tempfile
    >>> card_frontier("models/quickstart.toml", tempfile.mkdtemp())   # doctest: +SKIP
    """
    from fairopt.runs.card import load_card
    from fairopt.runs.files import prepare_out_dir, write_bytes_atomic, write_json_atomic
    card = load_card(path, overrides)
    hook = getattr(card.runner, "frontier_inputs", None)
    if hook is None:
        raise ConfigError(f"{path}: formulation {card.formulation!r} offers no exact or certified frontier; "
                          "sweep its tolerance instead (fairopt sweep CARD --grid ..., then fairopt frontier DIR).")
    if plot:
        try:
            import matplotlib  # noqa: F401 -- only probes that the plot extra is installed
        except ImportError as exc:
            raise ConfigError("the frontier PNG needs matplotlib: pip install \"fairopt[plot]\" "
                              "(or --no-plot).") from exc
    estimator, X, y, groups = hook(card, card.parameters, card.data)
    front = frontier(estimator, X, y, sensitive_features=groups, eps=eps, confidence=confidence)
    directory = Path(out)
    prepare_out_dir(directory)
    result = CardFrontier(card.name, front)
    table = front.to_frame()
    result.files["csv"] = write_bytes_atomic(directory / "frontier.csv", table.to_csv(index=False))
    payload: dict[str, Any] = {
        "card": card.name, "method": front.method, "objective": front.objective, "confidence": front.confidence,
        "solves": front.solves, "breakpoints": front.breakpoints.tolist(),
        "points": table.astype(object).where(table.notna(), None).to_dict(orient="records")}
    result.files["json"] = write_json_atomic(directory / "frontier.json", payload)
    if plot:
        import matplotlib.pyplot as plt

        from fairopt.runs.files import atomic_path
        fig, ax = plt.subplots(figsize=(7, 4.5))
        front.plot(ax)
        ax.set_title(f"{card.name}: {front.method} frontier ({front.breakpoints.size} breakpoints)")
        try:
            with atomic_path(directory / "frontier.png") as tmp:
                fig.savefig(tmp, dpi=120, bbox_inches="tight")
        finally:
            plt.close(fig)
        result.files["png"] = directory / "frontier.png"
    return result

