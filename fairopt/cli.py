"""Command line: ``fairopt run | sweep | frontier | solvers | inspect``.

Exit codes (docs/cli.md): 0 optimal; 1 the model is infeasible or the solver failed; 2 invalid
input or an output that cannot be written (card, data, parameters, missing solver, --out,
--export, a failed write); 3 finished without proof of optimality (time or iteration limit); 130
interrupted. ``run`` writes ``result.json`` in cases 0, 1 and 3; ``sweep`` exits with the worst code
of its tasks (1 before 3 before 0). A closed standard output changes none of them.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fairopt._cli_output import (
    _PIPE,
    _console,
    _echo,
    _print_table,
    _silence,
    escape,
)
from fairopt._cli_output import format_column as format_column  # public here (see its example)
from fairopt._version import __version__
from fairopt.data._cli import add_data_parser
from fairopt.errors import DataNotFoundError, FairoptError
from fairopt.runs.export import _check_export_path, export_program

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from fairopt.modeling.program import ProgramSummary
    from fairopt.modeling.spec import SolverSpec
    from fairopt.runs.card import Card
    from fairopt.runs.sweep import SweepSummary


def default_out_dir(card: Card, solver: str | SolverSpec | None) -> Path:
    """``fairopt-results/<card>``; a ``--solver`` run gets its own folder so runs never overwrite
    each other silently."""
    from fairopt.errors import ConfigError
    from fairopt.modeling.spec import SolverSpec
    label = solver.label if isinstance(solver, SolverSpec) else solver
    name = card.name if not label else f"{card.name}@{label.replace(':', '-')}"
    root = Path("fairopt-results")
    out = root / name
    # the card's name is validated; this guards the one place a name becomes a path
    if Path(name).is_absolute() or len(out.parts) != 2 or name in (".", ".."):
        raise ConfigError(f"card.name = {card.name!r} would place results outside {root}/; use a plain name.")
    return out


def _progress_bar(console: Console, quiet: bool) -> Progress:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TimeElapsedColumn(), console=console, transient=True,
                    disable=quiet or not console.is_terminal)


def _callback(bar: Progress) -> Callable[[int, int, str], None]:
    task = bar.add_task("starting", total=1)

    def progress(done: int, total: int, description: str = "") -> None:
        bar.update(task, completed=done, total=max(total, 1), description=description or "working")
    return progress


def cmd_run(args: argparse.Namespace) -> int:
    from fairopt.runs.card import load_card
    from fairopt.runs.execute import execute, exit_code, solver_label
    from fairopt.runs.files import prepare_out_dir, remove_empty_dirs, write_json_atomic
    console, err = _console(), _console(stderr=True)
    from fairopt.modeling.spec import SolverSpec
    solver = SolverSpec.parse(args.solver) if args.solver else None   # parsed once, where it enters
    card = load_card(args.card, args.set, solver)
    out_dir = Path(args.out) if args.out else default_out_dir(card, solver)
    path = out_dir / "result.json"
    created = prepare_out_dir(out_dir)          # a bad --out fails now, not after the solve
    args.interrupt_note = "interrupted; nothing written"
    if not args.quiet:
        console.print(f"[bold]fairopt {__version__}[/bold] · card [cyan]{escape(card.name)}[/cyan] · "
                      f"formulation [cyan]{card.formulation}[/cyan]"
                      + (f" · solver [cyan]{escape(str(card.solver))}[/cyan]" if card.solver else ""))
    try:
        with _progress_bar(console, args.quiet) as bar:
            result = execute(card, _callback(bar))
        code = args.exit_code = exit_code(result["status"])
        previous = _previous_solver(path)
        # written before anything is printed, so a closed pipe (`| head`) never loses the result
        write_json_atomic(path, result)
    except BaseException:
        remove_empty_dirs(created)
        raise
    args.interrupt_note = f"interrupted; the result was written to {path}"
    label = solver_label(result.get("backend"), result.get("solver"))
    if previous and previous != label:      # a warning: printed with --quiet too
        err.print(f"note: replaced the {escape(previous)} result in {escape(str(out_dir))}; use --out to keep both.")
    tm = result["timings"]
    if result.get("error") is None:
        if not args.quiet:
            for t in result["tables"]:
                _print_table(console, t["title"], t["columns"], t["rows"])
            _print_table(console, "Metrics", ["metric", "value"], list(result["metrics"].items()))
            console.print(f"status [bold]{result['status']}[/bold] · solver {escape(label)} · "
                          f"build {tm['build_seconds']:.3f}s · solve {tm['solve_seconds']:.3f}s · "
                          f"total {tm['total_seconds']:.2f}s")
    else:
        err.print(f"[red]{result['status']}[/red]: {escape(result['error'])}")
    if not args.quiet:
        for note in result.get("notes", []):
            console.print(f"note: {escape(note)}")
    if result.get("hint"):
        err.print(f"{'[yellow]' if code == 3 else ''}{escape(result['hint'])}{'[/yellow]' if code == 3 else ''}")
    if args.quiet:      # the one result line
        console.print(f"status {result['status']} · solver {escape(label)} · total {tm['total_seconds']:.2f}s · "
                      f"wrote {escape(str(path))}")
    else:
        console.print(f"wrote {escape(str(path))}")
    return code


def _previous_solver(path: Path) -> str | None:
    from fairopt.runs.execute import solver_label
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return solver_label(old.get("backend"), old.get("solver"))


def cmd_solvers(args: argparse.Namespace) -> int:
    from fairopt.modeling import available_backends
    from fairopt.modeling.registry import solver_table
    rows = available_backends()
    if args.json:
        _echo(json.dumps(rows, indent=2))
        return 0
    # one row per registered algorithm (fairopt's own included) with the kinds it accepts;
    # descriptions are long: `--json` has them
    flags = (("duals", "duals"), ("warm_start", "warm"), ("exact", "exact"))
    _print_table(_console(), "Solvers and the problem kinds they accept (fairopt solvers --json adds descriptions)",
                 ["backend", "solver", "installed", "kinds", "capabilities"],
                 [[r["backend"], r["solver"], "yes" if r["installed"] else "no", ", ".join(r["kinds"]),
                   ", ".join(label for key, label in flags if r[key]) or "-"] for r in solver_table()])
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from fairopt.errors import ConfigError
    from fairopt.runs.card import load_card
    console = _console()
    card = load_card(args.card, args.set, None)
    if args.export:
        _check_export_path(Path(args.export))
    console.print(f"card [cyan]{escape(card.name)}[/cyan]: {escape(card.description)}")
    console.print(f"formulation [cyan]{card.formulation}[/cyan]; parameters "
                  f"{escape(json.dumps(card.parameters.model_dump(mode='json')))}")
    build = getattr(card.runner, "build", None)
    if build is None:
        raise ConfigError(f"formulation {card.formulation!r} has no LP/QP program to inspect or export.")
    prog = build(card, card.parameters, card.data)
    summary = prog.summary()
    _echo(str(summary))
    if args.export:
        note = getattr(card.runner, "EXPORT_NOTE", None)
        if note:
            console.print(f"exporting {escape(note)}")
        size = _export_bytes(summary)
        if size > EXPORT_LIMIT_BYTES and not args.force:
            raise ConfigError(f"{args.export} would be about {size / 1e6:.0f} MB ({summary.nnz:,} nonzeros); "
                              "export a smaller instance (e.g. --set data.subsample=2000) or pass --force.")
        path = export_program(prog, args.export, summary)
        console.print(f"wrote {escape(str(path))} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


#: exports larger than this are refused without --force
EXPORT_LIMIT_BYTES = 200e6


def _export_bytes(summary: ProgramSummary) -> float:
    """Rough MPS/LP size: about 40 bytes per nonzero and 60 per row or column."""
    nnz = getattr(summary, "nnz", 0) + getattr(summary, "quadratic_nnz", 0)
    return 40.0 * nnz + 60.0 * (getattr(summary, "n_variables", 0) + getattr(summary, "n_constraints", 0))


def _spawn_safe_main() -> None:
    """Spawned workers (a local Dask cluster) re-run the parent's main script unless it can be
    imported by name; a console-script wrapper without an ``if __name__ == "__main__"`` guard would
    then start another CLI in every worker. Let them import this module instead."""
    import importlib.util
    main = sys.modules.get("__main__")
    if main is not None and getattr(main, "__spec__", None) is None:
        main.__spec__ = importlib.util.find_spec("fairopt.cli")


def _solver_arg(value: str | None) -> str | None:
    """``--solver`` parsed once (typed errors here); a sweep's tasks carry it printed back with
    its options, the form :meth:`SolverSpec.parse` reads, across process boundaries."""
    from fairopt.modeling.spec import SolverSpec
    return str(SolverSpec.parse(value)) if value else None


def cmd_sweep(args: argparse.Namespace) -> int:
    from fairopt.runs.sweep import run_sweep
    console = _console()
    if not args.grid:
        raise FairoptError("fairopt sweep needs at least one --grid key=v1,v2,... "
                           "(e.g. --grid parameters.statistical_rate=0.8,0.9,1.0).")
    with _progress_bar(console, args.quiet) as bar:
        try:
            summary = run_sweep(args.card, args.grid, folds=args.folds, executor=args.executor, out=args.out,
                                overrides=args.set, solver=_solver_arg(args.solver), n_workers=args.workers,
                                progress=_callback(bar))
        except KeyboardInterrupt:
            bar.stop()
            _console(stderr=True).print("interrupted: finished tasks are stored; rerun the same command to "
                                        "run only the missing ones.")
            return 130
    args.exit_code = summary.exit_code
    err = _console(stderr=True)
    for problem in summary.invalid:     # reported even with --quiet: stored files were not usable
        err.print(f"note: recomputed {escape(problem)}", soft_wrap=True)
    if summary.note:
        console.print(f"note: {escape(summary.note)}")
    _print_sweep(console, summary)
    return summary.exit_code


def _print_sweep(console: Console, summary: SweepSummary) -> None:
    records = summary.records
    keys = list(dict.fromkeys(k for r in records for k in r["task"]["values"]))
    folds = any(r["task"].get("fold") is not None for r in records)
    spec = None
    try:
        from fairopt.runs.frontier import resolve_spec
        spec = resolve_spec(records)
    except FairoptError:
        pass
    metric_cols = [spec.objective, *list(spec.fairness)[:1]] if spec else []
    columns = [k.split(".")[-1] for k in keys] + (["fold"] if folds else []) + ["status"] + metric_cols
    rows = []
    for r in records:
        row = [r["task"]["values"][k] if k in r["task"]["values"] else "" for k in keys]
        row += [r["task"]["fold"]] if folds else []
        row += [r.get("status")] + [(r.get("metrics") or {}).get(m, "") for m in metric_cols]
        rows.append(row)
    _print_table(console, f"Sweep of {records[0].get('card') if records else ''}: {len(records)} tasks "
                 f"({len(summary.ran)} run now on {summary.executor}, {len(summary.skipped)} finished before)",
                 columns, rows)
    err = _console(stderr=True)
    for r in records:
        if r.get("error"):
            err.print(f"[red]{r['task']['id']}[/red] {r.get('status')}: {escape(r['error'])}")
        elif r.get("hint"):
            err.print(f"[yellow]{r['task']['id']}[/yellow] {r.get('status')}: {escape(r['hint'])}")
    console.print(f"wrote {summary.out}/tasks/*/result.json and {summary.out}/summary.json; "
                  f"next: fairopt frontier {summary.out}")


def _eps_list(text: str) -> list[float]:
    """``--eps E1,E2,...`` as numbers, or the error naming the entry that is not one."""
    from fairopt.errors import ConfigError
    out = []
    for v in (v.strip() for v in text.split(",")):
        try:
            out.append(float(v))
        except ValueError:
            raise ConfigError(f"--eps takes comma-separated numbers (e.g. --eps 0.01,0.05,0.1); {v!r} is not "
                              "a number.") from None
    return out


def cmd_card_frontier(args: argparse.Namespace) -> int:
    from fairopt.runs.card_frontier import card_frontier
    console = _console()
    eps = None if args.eps is None else _eps_list(args.eps)
    out = args.out or str(Path("fairopt-results") / f"{Path(args.dir).stem}-frontier")
    res = card_frontier(args.dir, out, eps=eps, confidence=args.confidence, overrides=args.set or [],
                        plot=not args.no_plot)
    front = res.frontier
    assert front is not None
    table = front.to_frame()
    step = max(1, len(table) // 15)     # a readable table; every point is in frontier.csv
    rows = [[f"{v:.6g}" for v in row] for row in table.to_numpy()[::step]]
    _print_table(console, f"{res.card}: {front.method} frontier of the training {front.objective} "
                 f"({front.breakpoints.size} breakpoints, {front.solves} solves)", list(table.columns), rows)
    console.print("wrote " + ", ".join(str(p) for p in res.files.values()))
    return 0


def cmd_frontier(args: argparse.Namespace) -> int:
    import numpy as np

    from fairopt.runs.frontier import frontier
    if str(args.dir).endswith(".toml"):
        return cmd_card_frontier(args)
    console = _console()
    args.interrupt_note = "interrupted; frontier files already written are complete, the others unchanged"
    res = frontier(args.dir, objective=args.objective, fairness=args.fairness, plot=not args.no_plot)
    spec = res.spec
    keys = [c for c in res.points.columns if not c.startswith(("metrics.", "pareto.")) and c != "n_folds"]
    first = next(iter(spec.fairness))
    cols = [*keys, f"metrics.{spec.objective}", *[f"metrics.{m}" for m in spec.fairness]]
    shown = res.points[cols].astype(object)
    shown["Pareto"] = np.where(res.points[f"pareto.{first}"].astype(bool), "yes", "")
    rows = shown.to_numpy().tolist()
    _print_table(console, f"Frontier: {spec.objective} ({spec.objective_sense}) against {', '.join(spec.fairness)}"
                 f" — Pareto on {first}", [c.split(".")[-1] for c in cols] + ["Pareto"], rows)
    for problem in res.invalid:
        _console(stderr=True).print(f"note: left out {escape(problem)}; rerun the sweep to recompute it.",
                                    soft_wrap=True)
    n_bad = int((res.tasks["status"] != "optimal").sum())
    if n_bad:
        console.print(f"{n_bad} task(s) not optimal are listed in frontier.csv and left out of the points.")
    console.print("wrote " + ", ".join(str(p) for p in res.files.values()))
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fairopt", description="Fairness interventions as solver-backed "
                                     "optimization models.")
    parser.add_argument("--version", action="version", version=f"fairopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a model card and write DIR/result.json")
    run.add_argument("card", help="model card (TOML)")
    run.add_argument("--solver", help="override the back end: BACKEND[:SOLVER], e.g. cvxpy:CLARABEL")
    run.add_argument("--out", help="output folder (default fairopt-results/<card name>)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a card key, e.g. parameters.statistical_rate=0.9 (repeatable)")
    run.add_argument("--quiet", action="store_true", help="print only the result line and errors")
    run.set_defaults(func=cmd_run)
    sol = sub.add_parser("solvers", help="list solver back ends and what they take")
    sol.add_argument("--json", action="store_true", help="machine-readable output")
    sol.set_defaults(func=cmd_solvers)
    ins = sub.add_parser("inspect", help="print a card's program summary; export LP/MPS")
    ins.add_argument("card")
    ins.add_argument("--export", metavar="FILE.mps|FILE.lp", help="write the program to an MPS or LP file")
    ins.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ins.add_argument("--force", action="store_true", help="export even when the file would exceed 200 MB")
    ins.set_defaults(func=cmd_inspect)
    swp = sub.add_parser("sweep", help="run a card over a grid of settings (resumable; serial, processes or Dask)")
    swp.add_argument("card", help="model card (TOML)")
    swp.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                     help="values of one card key, e.g. parameters.statistical_rate=0.8,0.9 or "
                          "statistical_rate=0.8,0.9 (repeatable: the sweep is the Cartesian product)")
    swp.add_argument("--folds", type=int, help="run each setting on K reseeded train/test splits (data.random_state)")
    swp.add_argument("--executor", default="local", metavar="local|processes|dask[://ADDRESS]",
                     help="where tasks run (default local = this process; dask alone starts a local cluster)")
    swp.add_argument("--workers", type=int, help="pool size for processes or a local Dask cluster")
    swp.add_argument("--out", help="sweep folder (default fairopt-results/<card name>-sweep)")
    swp.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a card key in every task")
    swp.add_argument("--solver", help="back end for every task: BACKEND[:SOLVER]")
    swp.add_argument("--quiet", action="store_true", help="no progress bar")
    swp.set_defaults(func=cmd_sweep)
    fro = sub.add_parser("frontier", help="a card's exact/certified frontier, or a sweep folder aggregated into "
                                          "frontier.csv/.json/.png")
    fro.add_argument("dir", help="a model card (CARD.toml: exact or certified frontier of its estimator) or a "
                                 "folder written by fairopt sweep")
    fro.add_argument("--eps", metavar="E1,E2,...", help="card: tolerances to report (default: every knot of "
                                                         "the exact curve)")
    fro.add_argument("--confidence", type=float, metavar="C", help="card: also the population gap certified "
                                                                  "at confidence C (e.g. 0.95)")
    fro.add_argument("--out", metavar="DIR", help="card: output folder (default fairopt-results/<card>-frontier)")
    fro.add_argument("--set", action="append", metavar="KEY=VALUE", help="card: override a card value")
    fro.add_argument("--objective", metavar="METRIC[:min|max]", help="accuracy or loss to plot (default: the card's)")
    fro.add_argument("--fairness", action="append", metavar="METRIC[:min|max]",
                     help="fairness metric and its fairer direction (repeatable; default: the card's)")
    fro.add_argument("--no-plot", action="store_true", help="write the CSV and JSON only")
    fro.set_defaults(func=cmd_frontier)
    add_data_parser(sub)
    return parser


def _report(text: str, markup: bool) -> None:
    """The one line of an error or an interrupt on standard error; a standard error that cannot be
    written (closed, a full device) must not turn exit 2 or 130 into a traceback."""
    try:
        _console(stderr=True).print(text, markup=markup, highlight=False, soft_wrap=True)
    except OSError:
        pass


def _refuse_empty(args: argparse.Namespace) -> None:
    """``--out ''``, ``--export ''`` or ``--solver ''`` would silently mean "here" or "the default"."""
    from fairopt.errors import ConfigError
    for name in ("card", "dir", "out", "export", "solver", "objective"):
        value = getattr(args, name, None)
        if value is not None and not str(value).strip():
            raise ConfigError(f"{'--' if name not in ('card', 'dir') else ''}{name} is empty; give a value or leave "
                              "the option out.")


def _error_message(exc: FairoptError) -> str:
    text = str(exc)
    if isinstance(exc, DataNotFoundError) and "data.path" not in text:
        text += " Or point the card at the file: --set data.path=/path/to/file.csv"
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see ``docs/cli.md``).

    0 optimal; 1 infeasible or the solver failed; 2 invalid input or an output that cannot be
    written; 3 stopped at a limit; 130 interrupted (Ctrl-C). A closed standard output does not
    change the code: the command finishes, writes its files, and its output is discarded.

    Examples
    --------
    >>> from fairopt.cli import main
    >>> main(["solvers", "--json"]) == 0  # doctest: +SKIP
    True
    """
    args = make_parser().parse_args(argv)
    _spawn_safe_main()      # `run` (a card's executor) and `sweep` may start local worker processes
    code: int               # every command returns its exit code (argparse's namespace is untyped)
    try:
        _refuse_empty(args)
        code = args.func(args)
    except FairoptError as exc:
        _report(f"[red]error[/red] ({type(exc).__name__}): {escape(_error_message(exc))}", markup=True)
        code = 2
    except KeyboardInterrupt:
        _report(getattr(args, "interrupt_note", None) or "interrupted; nothing written", markup=False)
        code = 130
    except BrokenPipeError:
        # the reader (`| head`) went away: files are written; end quietly with the command's own code
        _silence(sys.stdout)
        code = getattr(args, "exit_code", 0)
    if _PIPE["failed"]:         # not a closed pipe: the output was lost, say so (the files are written)
        _report(f"error: could not write to standard output ({_PIPE['failed']}); the output was discarded, "
                "the files were written.", markup=False)
        code = code if code else 2
    if _PIPE["closed"]:
        _silence(sys.stdout)    # nothing left to flush into the closed pipe at exit
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
