"""Command line: ``fairopt run | solvers | inspect``.

Exit codes: 0 optimal; 1 the model is infeasible or the solver failed; 2 invalid input (card,
data, parameters, missing solver); 3 finished without proof of optimality (time or iteration
limit). ``run`` writes ``result.json`` in cases 0, 1 and 3.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from fairopt import __version__
from fairopt.errors import FairoptError, InfeasibleError, SolverError


def escape(text: str) -> str:
    """Show ``[...]`` in messages (constraint names such as ``rows[group]``) as text, not markup."""
    from rich.markup import escape as rich_escape
    return rich_escape(text)


def _console(stderr: bool = False):
    from rich.console import Console
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:  # files and pipes: do not squeeze tables into 80 columns
        console = Console(stderr=stderr, highlight=False, width=140)
    return console


def _fmt(value) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.4e}"
    return str(value)


def _print_table(console, title: str, columns, rows) -> None:
    from rich.table import Table as RichTable
    table = RichTable(title=title, title_justify="left")
    for i, col in enumerate(columns):
        table.add_column(str(col), justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*[_fmt(v) for v in row])
    console.print(table)


def _json_safe(obj):
    """Floats that JSON cannot hold (nan, inf) become null; numpy scalars become Python."""
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def cmd_run(args) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from fairopt.config import load_card
    console = _console()
    t0 = time.perf_counter()
    card = load_card(args.card, args.set, args.solver)
    out_dir = Path(args.out) if args.out else Path("fairopt-results") / card.name
    console.print(f"[bold]fairopt {__version__}[/bold] · card [cyan]{card.name}[/cyan] · "
                  f"formulation [cyan]{card.formulation}[/cyan]"
                  + (f" · solver [cyan]{card.solver}[/cyan]" if card.solver else ""))
    result = {"card": card.name, "card_path": str(card.path), "formulation": card.formulation,
              "fairopt_version": __version__, "parameters": card.parameters.model_dump(mode="json"),
              "data": card.data.model_dump(mode="json")}
    code = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True,
                  disable=args.quiet or not console.is_terminal) as bar:
        task = bar.add_task("starting", total=1)

        def progress(done: int, total: int, description: str = "") -> None:
            bar.update(task, completed=done, total=max(total, 1), description=description or "working")
        try:
            output = card.runner.run(card, card.parameters, card.data, card.solver, progress)
        except InfeasibleError as exc:
            output, code = None, 1
            result.update(status="infeasible", backend=str(card.solver.backend) if card.solver else None,
                          solver=card.solver.solver if card.solver else None, metrics={},
                          error=str(exc), infeasible_constraint=exc.constraint, tightest=exc.tightest)
        except SolverError as exc:
            output, code = None, 1
            result.update(status=str(exc.status or "error"),
                          backend=str(card.solver.backend) if card.solver else None,
                          solver=card.solver.solver if card.solver else None, metrics={},
                          error=str(exc))
    total = time.perf_counter() - t0
    if output is not None:
        metrics = {k: float(v) for k, v in output.metrics.items()}
        undefined = sorted(k for k, v in metrics.items() if not math.isfinite(v))
        if output.status != "optimal":
            code = 3
        result.update(backend=output.backend, solver=output.solver, status=output.status,
                      # metrics stay a flat dict of finite floats; undefined ones are listed by name
                      metrics={k: v for k, v in metrics.items() if k not in undefined},
                      undefined_metrics=undefined,
                      timings={"build_seconds": output.build_seconds, "solve_seconds": output.solve_seconds,
                               "total_seconds": total},
                      tables=[{"title": t.title, "columns": t.columns, "rows": t.rows} for t in output.tables],
                      extra=output.extra)
        for t in output.tables:
            _print_table(console, t.title, t.columns, t.rows)
        _print_table(console, "Metrics", ["metric", "value"], list(metrics.items()))
        console.print(f"status [bold]{output.status}[/bold] · backend {output.backend}:{output.solver} · "
                      f"build {output.build_seconds:.3f}s · solve {output.solve_seconds:.3f}s · "
                      f"total {total:.2f}s")
    else:
        result["timings"] = {"build_seconds": None, "solve_seconds": None, "total_seconds": total}
        _console(stderr=True).print(f"[red]{result['status']}[/red]: {escape(result['error'])}")
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "result.json").write_text(json.dumps(_json_safe(result), indent=2) + "\n")
    console.print(f"wrote {out_dir / 'result.json'}")
    return code


def cmd_solvers(args) -> int:
    from fairopt.modeling import available_backends
    rows = available_backends()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    _print_table(_console(), "Solver back ends", ["backend", "installed", "solvers", "problem classes", "description"],
                 [[r["backend"], "yes" if r["installed"] else "no", ", ".join(r["solvers"]) or "-",
                   ", ".join(r["problem_classes"]), r["description"]] for r in rows])
    return 0


def cmd_inspect(args) -> int:
    from fairopt.config import load_card
    from fairopt.errors import ConfigError
    console = _console()
    card = load_card(args.card, args.set, None)
    console.print(f"card [cyan]{card.name}[/cyan]: {card.description}")
    console.print(f"formulation [cyan]{card.formulation}[/cyan]; parameters "
                  f"{json.dumps(card.parameters.model_dump(mode='json'))}")
    build = getattr(card.runner, "build", None)
    if build is None:
        raise ConfigError(f"formulation {card.formulation!r} has no LP/QP program to inspect or export.")
    prog = build(card, card.parameters, card.data)
    print(prog.summary())
    if args.export:
        prog.write(args.export)
        console.print(f"wrote {args.export}")
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
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=cmd_run)
    sol = sub.add_parser("solvers", help="list solver back ends and what they take")
    sol.add_argument("--json", action="store_true", help="machine-readable output")
    sol.set_defaults(func=cmd_solvers)
    ins = sub.add_parser("inspect", help="print a card's program summary; export LP/MPS")
    ins.add_argument("card")
    ins.add_argument("--export", metavar="FILE.mps|FILE.lp", help="write the program to an MPS or LP file")
    ins.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ins.set_defaults(func=cmd_inspect)
    return parser


def main(argv=None) -> int:
    args = make_parser().parse_args(argv)
    try:
        return args.func(args)
    except FairoptError as exc:
        _console(stderr=True).print(f"[red]error[/red] ({type(exc).__name__}): {escape(str(exc))}", markup=True,
                                    highlight=False, soft_wrap=True)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
