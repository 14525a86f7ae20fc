"""Model cards: validated TOML files describing data, formulation, parameters and solver.

```toml
[card]
name = "quickstart"
description = "TV repair of the built-in COMPAS domain"

[data]            # validated by the formulation's runner (fairopt.runs.<name>.Data)
dataset = "builtin:compas"

[formulation]
name = "tv_repair"

[parameters]      # validated by the formulation's runner (fairopt.runs.<name>.Parameters)
statistical_rate = 1.0

[solver]          # optional; otherwise the formulation's default
backend = "highs"
options = {}
```

Unknown keys and bad values are errors that name the key (``parameters.statistical_rate``).
``--set parameters.statistical_rate=0.9`` overrides any key before validation; a bare key
(``--set alpha=0.2``) means ``parameters.alpha``.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fairopt.errors import ConfigError
from fairopt.modeling.registry import SolverSpec
from fairopt.runs import get_runner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CardMeta(_Strict):
    name: str = Field(min_length=1)
    description: str = ""


class FormulationTable(_Strict):
    name: str


class SolverTable(_Strict):
    backend: str
    solver: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    time_limit: float | None = Field(default=None, gt=0)
    verbose: bool = False


class CardSchema(_Strict):
    card: CardMeta
    data: dict[str, Any] = Field(default_factory=dict)
    formulation: FormulationTable
    parameters: dict[str, Any] = Field(default_factory=dict)
    solver: SolverTable | None = None


@dataclass
class Card:
    """A loaded and validated model card."""

    path: Path
    name: str
    description: str
    formulation: str
    runner: ModuleType
    data: BaseModel
    parameters: BaseModel
    solver: SolverSpec | None
    raw: dict

    def as_dict(self) -> dict:
        return {"path": str(self.path), "name": self.name, "formulation": self.formulation,
                "data": self.data.model_dump(mode="json"),
                "parameters": self.parameters.model_dump(mode="json"),
                "solver": None if self.solver is None else str(self.solver)}


def _fields_at(model, loc) -> list[str]:
    """Valid keys of the (nested) pydantic table at ``loc``; empty if unknown."""
    import typing
    for part in loc:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        candidates = [ann, *typing.get_args(ann)]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return []
    return list(getattr(model, "model_fields", {}))


def _format_errors(err: ValidationError, prefix: str, source: str, model=None,
                   overridden: set[str] | None = None) -> str:
    """One line per invalid key; unknown keys get the closest valid key and whether they came
    from the card file or from ``--set``."""
    import difflib
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        msg = e["msg"]
        origin = " (from --set)" if overridden and loc in overridden else ""
        if e["type"] == "extra_forbidden":
            valid = _fields_at(model, [str(p) for p in e["loc"][:-1]]) if model is not None else []
            close = difflib.get_close_matches(str(e["loc"][-1]), valid, n=1, cutoff=0.6)
            where = "--set" if origin else "the card"
            msg = f"unknown key in {where}" + (f"; did you mean {close[0]!r}?" if close else "") + \
                (f" Valid keys: {', '.join(valid)}." if valid else " See the formulation's docs for valid keys.")
            origin = ""
        elif e["type"] == "missing":
            msg = "required key is missing"
        lines.append(f"  {loc}{origin}: {msg}" + (f" (got {e['input']!r})" if e["type"] not in
                                                   ("extra_forbidden", "missing") else ""))
    return f"{source}: invalid model card\n" + "\n".join(lines)


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``a.b.c=value``; the value is read as a TOML value, else as a plain string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set expects key=value (e.g. parameters.statistical_rate=0.9), got {text!r}.")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return [p.strip() for p in key.split(".")], parsed


#: top-level tables of a card; a bare ``--set key=value`` means ``parameters.key``
CARD_TABLES = ("card", "data", "formulation", "parameters", "solver")


def override_path(text: str) -> list[str]:
    """The card path an override sets (a bare key means ``parameters.key``)."""
    path = parse_override(text)[0]
    return ["parameters", *path] if len(path) == 1 and path[0] not in CARD_TABLES else path


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    """Apply ``--set key=value`` texts; ``key=`` with nothing after it removes the key (back to its
    default, e.g. to use ``sr_difference`` on a card that sets ``statistical_rate``)."""
    for text in overrides or []:
        path, value = override_path(text), parse_override(text)[1]
        node = raw
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: {part!r} is not a table.")
        if value == "" and not text.rstrip().endswith(("''", '""')):
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    return raw


def read_card(path) -> dict:
    """The raw TOML tables of the card at ``path`` (not yet validated)."""
    path = Path(path)
    if path.is_dir():
        cards = sorted(p.name for p in path.glob("*.toml"))
        hint = f" Cards there: {', '.join(cards[:6])}{' ...' if len(cards) > 6 else ''}." if cards else ""
        example = "quickstart.toml" if "quickstart.toml" in cards or not cards else cards[0]
        raise ConfigError(f"{str(path)!r} is a folder; give one model card file, e.g. "
                          f"{str(path / example)!r}.{hint}")
    if not path.is_file():
        raise ConfigError(f"model card {str(path)!r} does not exist.")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}).") from exc


def load_card(path, overrides: list[str] | None = None, solver: str | None = None,
              raw: dict | None = None) -> Card:
    """Read, override and validate a model card.

    ``raw`` (the card's tables, e.g. sent to a sweep worker) replaces reading ``path``.

    Raises
    ------
    ConfigError
        Unreadable TOML, unknown keys or invalid values (the message names each key).
    """
    import copy
    path = Path(path)
    raw = read_card(path) if raw is None else copy.deepcopy(raw)
    raw = apply_overrides(raw, overrides or [])
    overridden = {".".join(override_path(t)) for t in overrides or []}
    try:
        schema = CardSchema.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "", str(path), CardSchema, overridden)) from None
    runner = get_runner(schema.formulation.name)
    try:
        data = runner.Data.model_validate(schema.data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "data", str(path), runner.Data, overridden)) from None
    try:
        params = runner.Parameters.model_validate(schema.parameters)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "parameters", str(path), runner.Parameters, overridden)) from None
    spec = None
    if schema.solver is not None:
        spec = SolverSpec.parse(schema.solver.model_dump())
    if solver:
        base = spec or SolverSpec.parse(solver)
        parsed = SolverSpec.parse(solver)
        # --solver replaces back end and inner solver; options of a different back end are dropped
        same = base.backend == parsed.backend
        spec = SolverSpec(parsed.backend, parsed.solver, base.options if same else {},
                          base.time_limit, base.verbose)
    return Card(path=path, name=schema.card.name, description=schema.card.description,
                formulation=schema.formulation.name, runner=runner, data=data, parameters=params,
                solver=spec, raw=raw)
