"""Aggregate a sweep folder into one table and a fairness–accuracy frontier.

``fairopt frontier DIR`` (or :func:`frontier` from Python) reads every
``DIR/tasks/*/result.json``, writes ``frontier.csv`` (one row per task: its grid values, fold,
status, the card's parameters and its metrics), ``frontier.json`` (the same rows plus the points
averaged over folds with their Pareto flags) and ``frontier.png`` (the objective — an accuracy or
a loss — against each fairness metric, Pareto points marked).

Which metrics are the objective and the fairness metrics is declared by each formulation's runner
(``FRONTIER``, a :class:`~fairopt.runs.base.FrontierSpec`) and can be overridden.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fairopt.errors import ConfigError
from fairopt.runs.base import FrontierSpec

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike


def load_records(directory: str | os.PathLike[str], invalid: list[str] | None = None) -> list[dict[str, Any]]:
    """Task records of a sweep folder, in the sweep's task order (extra tasks from earlier grids last).

    A file that is not a task record (not JSON, ``{}``, ``[]``, ``null``, a metric that is not a
    number) is left out and reported in ``invalid`` (``"path: why"``); rerunning the sweep
    recomputes it.
    """
    from fairopt.runs.files import read_json
    from fairopt.runs.sweep import record_problem
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"{directory}: not a folder; give the folder written by `fairopt sweep ... --out DIR`.")
    paths = sorted((directory / "tasks").glob("*/result.json"))
    if not paths:
        raise ConfigError(f"{directory}: no task results (tasks/*/result.json); run `fairopt sweep CARD --out "
                          f"{directory}` first.")
    order = {}
    manifest = directory / "sweep.json"
    digest = None
    if manifest.exists():
        man = read_json(manifest)
        if not isinstance(man, dict) or not isinstance(man.get("tasks", []), list):
            raise ConfigError(f"{manifest} is not a valid sweep manifest (unreadable, cut short or edited); rerun "
                              f"the sweep into {directory} after deleting it, or aggregate another folder.")
        order = {tid: i for i, tid in enumerate(man.get("tasks", [])) if isinstance(tid, str)}
        digest = man.get("card_digest") if isinstance(man.get("card_digest"), str) else None
    records = []
    for path in paths:
        rec = read_json(path)
        problem = "not valid JSON" if rec is None else record_problem(rec, path.parent.name, digest)
        if problem:
            if invalid is not None:
                invalid.append(f"{path}: {problem}")
            continue
        records.append(rec)
    if not records:
        raise ConfigError(f"{directory}: no usable task record ({len(paths)} file(s) are not task records); rerun "
                          "the sweep to recompute them.")
    return sorted(records, key=lambda r: (order.get(r["task"]["id"], len(order)), r["task"]["id"]))


def _cell(value: object) -> object:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def task_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per task: ``task``, ``fold``, grid keys, ``status``, ``error``, ``parameters.*``, ``metrics.*``."""
    rows = []
    for rec in records:
        task = rec.get("task", {})
        row = {"task": task.get("id"), "fold": task.get("fold")}
        row.update({k: _cell(v) for k, v in task.get("values", {}).items()})
        row.update(status=rec.get("status"), backend=rec.get("backend"), solver=rec.get("solver"),
                   error=rec.get("error"))
        row.update({f"parameters.{k}": _cell(v) for k, v in (rec.get("parameters") or {}).items()
                    if f"parameters.{k}" not in row})
        row.update({f"metrics.{k}": v for k, v in (rec.get("metrics") or {}).items()})
        row["total_seconds"] = (rec.get("timings") or {}).get("total_seconds")
        rows.append(row)
    return pd.DataFrame(rows)


def pareto_mask(cost: ArrayLike, unfairness: ArrayLike) -> np.ndarray:
    """Points not dominated in (cost, unfairness), both minimised; NaN points never qualify.

    Sorted by cost (ties: by unfairness), a point is Pareto when its unfairness is strictly below
    that of every cheaper point.
    """
    cost, unfairness = np.asarray(cost, float), np.asarray(unfairness, float)
    mask = np.zeros(cost.shape, bool)
    ok = np.flatnonzero(np.isfinite(cost) & np.isfinite(unfairness))
    if ok.size == 0:
        return mask
    order = ok[np.lexsort((unfairness[ok], cost[ok]))]
    u = unfairness[order]
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(u)[:-1]])
    mask[order[u < best_before]] = True
    return mask


def resolve_spec(records: list[dict[str, Any]], objective: str | None = None,
                 fairness: list[str] | None = None) -> FrontierSpec:
    """The runner's :class:`FrontierSpec`, with ``objective`` / ``fairness`` (``NAME[:min|max]``) overriding it."""
    from fairopt.runs import get_runner
    formulations = {name for r in records if (name := r.get("formulation"))}
    spec: FrontierSpec | None = None
    if len(formulations) == 1:
        declared = getattr(get_runner(formulations.pop()), "FRONTIER", None)   # optional in a runner
        spec = declared if isinstance(declared, FrontierSpec) else None
    if objective:
        name, _, sense = objective.partition(":")
        spec = FrontierSpec(name, sense or ("max" if "accuracy" in name else "min"),
                            spec.fairness if spec else {})
    if fairness:
        parsed = dict((f.partition(":")[0], f.partition(":")[2] or "min") for f in fairness)
        spec = FrontierSpec(spec.objective if spec else "", spec.objective_sense if spec else "min", parsed)
    if spec is None or not spec.objective or not spec.fairness:
        raise ConfigError("no frontier metrics known for these results; name them: "
                          "--objective METRIC[:min|max] --fairness METRIC[:min|max].")
    for sense in (spec.objective_sense, *spec.fairness.values()):
        if sense not in ("min", "max"):
            raise ConfigError(f"metric direction {sense!r}: use min or max (e.g. --fairness tv_distance:min).")
    return spec


@dataclass
class Frontier:
    """An aggregated sweep: per-task rows, per-setting points with Pareto flags, files written."""

    spec: FrontierSpec
    tasks: pd.DataFrame
    points: pd.DataFrame
    files: dict[str, Path] = field(default_factory=dict)
    #: task files left out because they are not task records (``"path: why"``)
    invalid: list[str] = field(default_factory=list)


def frontier_points(tasks: pd.DataFrame, spec: FrontierSpec, grid_keys: list[str]) -> pd.DataFrame:
    """Mean metrics over folds per grid setting (optimal tasks only), with ``pareto.<metric>`` flags."""
    cols = [f"metrics.{m}" for m in (spec.objective, *spec.fairness)]
    missing = [c for c in cols if c not in tasks]
    if missing:
        raise ConfigError(f"metric(s) {[c.split('.', 1)[1] for c in missing]} are in no task result; "
                          f"available: {sorted(c.split('.', 1)[1] for c in tasks if c.startswith('metrics.'))}.")
    ok = tasks[tasks["status"] == "optimal"]
    keys = grid_keys or ["task"]
    points = (ok.groupby(keys, dropna=False, sort=False)[cols].mean().reset_index() if len(ok)
              else pd.DataFrame(columns=keys + cols))
    points["n_folds"] = ok.groupby(keys, dropna=False, sort=False).size().to_numpy() if len(ok) else []
    sign = 1.0 if spec.objective_sense == "min" else -1.0
    cost = sign * points[f"metrics.{spec.objective}"].to_numpy(float)
    for metric, fairer in spec.fairness.items():
        unfair = (1.0 if fairer == "min" else -1.0) * points[f"metrics.{metric}"].to_numpy(float)
        points[f"pareto.{metric}"] = pareto_mask(cost, unfair)
    return points


def frontier_figure(points: pd.DataFrame, tasks: pd.DataFrame, spec: FrontierSpec, title: str = "") -> Figure:
    """The matplotlib figure of :func:`plot_frontier` (one panel per fairness metric).

    A metric with the same value at every point has no trade-off to draw: its panel says so in
    words instead of showing a vertical line. The legend says "mean over folds" only when some
    point averages several folds.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairopt.runs.base import FrontierSpec
    >>> from fairopt.runs.frontier import frontier_figure
    >>> points = pd.DataFrame({"metrics.loss": [0.2, 0.1], "metrics.gap": [0.1, 0.2], "n_folds": [1, 1],
    ...                        "pareto.gap": [True, True]})
    >>> fig = frontier_figure(points, points.assign(status="optimal"), FrontierSpec("loss", "min", {"gap": "min"}))
    >>> len(fig.axes)
    1
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    metrics = list(spec.fairness)
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 4), squeeze=False)
    y = f"metrics.{spec.objective}"
    other = tasks[tasks["status"] != "optimal"]
    folds = "n_folds" in points and len(points) and int(np.nanmax(points["n_folds"].to_numpy(float))) > 1
    for ax, metric in zip(axes[0], metrics, strict=False):
        x = f"metrics.{metric}"
        xs = points[x].to_numpy(float)
        finite = xs[np.isfinite(xs)]
        ax.set_title(metric, fontsize="medium")
        if finite.size == 0 or np.ptp(finite) <= 1e-12 * max(1.0, float(np.max(np.abs(finite)))):
            shown = "no optimal point" if finite.size == 0 else f"{metric} = {finite[0]:.6g} at every point"
            ax.text(0.5, 0.5, f"{shown}:\nno trade-off to plot", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        ax.scatter(points[x], points[y], color="0.6", label="sweep point (mean over folds)" if folds else "sweep point")
        if len(other) and x in other and other[x].notna().any():
            ax.scatter(other[x], other[y], facecolors="none", edgecolors="tab:orange", label="not optimal")
        front = points[points[f"pareto.{metric}"]].sort_values(x)
        ax.plot(front[x], front[y], "o-", color="tab:red", label="Pareto point")
        ax.set_xlabel(f"{metric} ({'higher' if spec.fairness[metric] == 'max' else 'lower'} is fairer)")
        ax.set_ylabel(f"{spec.objective} ({'lower' if spec.objective_sense == 'min' else 'higher'} is better)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_frontier(points: pd.DataFrame, tasks: pd.DataFrame, spec: FrontierSpec, path: str | os.PathLike[str],
                  title: str = "") -> Path:
    """The objective against each fairness metric; Pareto points joined and marked (written atomically)."""
    import matplotlib.pyplot as plt

    from fairopt.runs.files import atomic_path
    fig = frontier_figure(points, tasks, spec, title)
    path = Path(path)
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120)
    finally:
        plt.close(fig)
    return path


def frontier(directory: str | os.PathLike[str], objective: str | None = None, fairness: list[str] | None = None,
             plot: bool = True) -> Frontier:
    """Aggregate the sweep in ``directory``: write ``frontier.csv``, ``frontier.json`` and ``frontier.png``.

    Parameters
    ----------
    directory : str or Path
        A folder written by ``fairopt sweep`` (or :func:`fairopt.runs.sweep.run_sweep`).
    objective, fairness : str, optional
        ``NAME[:min|max]`` to override the formulation's choice of metrics.
    plot : bool
        Also draw the PNG (needs matplotlib: ``pip install "fairopt[plot]"``).
    """
    from fairopt.runs.files import write_bytes_atomic, write_json_atomic
    directory = Path(directory)
    invalid: list[str] = []
    records = load_records(directory, invalid)
    spec = resolve_spec(records, objective, fairness)
    tasks = task_table(records)
    grid_keys = list(dict.fromkeys(k for r in records for k in r.get("task", {}).get("values", {})))
    points = frontier_points(tasks, spec, grid_keys)
    result = Frontier(spec, tasks, points, invalid=invalid)
    result.files["csv"] = directory / "frontier.csv"
    write_bytes_atomic(result.files["csv"], tasks.to_csv(index=False))
    result.files["json"] = directory / "frontier.json"
    payload = {"card": records[0].get("card"), "objective": [spec.objective, spec.objective_sense],
               "fairness": spec.fairness, "grid": grid_keys,
               "tasks": tasks.astype(object).where(tasks.notna(), None).to_dict(orient="records"),
               "points": points.astype(object).where(points.notna(), None).to_dict(orient="records")}
    write_json_atomic(result.files["json"], payload)
    if plot:
        try:
            import matplotlib  # noqa: F401 -- only probes that the plot extra is installed
        except ImportError as exc:
            raise ConfigError("the frontier PNG needs matplotlib: pip install \"fairopt[plot]\" "
                              "(frontier.csv and frontier.json are written).") from exc
        result.files["png"] = plot_frontier(points, tasks, spec, directory / "frontier.png",
                                            title=f"{records[0].get('card')}: {len(tasks)} tasks")
    return result
