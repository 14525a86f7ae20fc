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


def _format_errors(err: ValidationError, prefix: str, source: str) -> str:
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key (check the spelling; see the formulation's docs for valid keys)"
        elif e["type"] == "missing":
            msg = "required key is missing"
        lines.append(f"  {loc}: {msg}" + (f" (got {e['input']!r})" if e["type"] not in
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


def apply_overrides(raw: dict, overrides: list[str]) -> dict:
    for text in overrides or []:
        path, value = parse_override(text)
        if len(path) == 1 and path[0] not in CardSchema.model_fields:
            path = ["parameters", path[0]]    # a bare key is a parameter: --set alpha=0.2
        node = raw
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: {part!r} is not a table.")
        node[path[-1]] = value
    return raw


def load_card(path, overrides: list[str] | None = None, solver: str | None = None) -> Card:
    """Read, override and validate a model card.

    Raises
    ------
    ConfigError
        Unreadable TOML, unknown keys or invalid values (the message names each key).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"model card {str(path)!r} does not exist.")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}).") from exc
    raw = apply_overrides(raw, overrides or [])
    try:
        schema = CardSchema.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "", str(path))) from None
    runner = get_runner(schema.formulation.name)
    try:
        data = runner.Data.model_validate(schema.data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "data", str(path))) from None
    try:
        params = runner.Parameters.model_validate(schema.parameters)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "parameters", str(path))) from None
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
