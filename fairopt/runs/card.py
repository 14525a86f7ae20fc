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

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fairopt.errors import ConfigError
from fairopt.modeling.registry import SolverSpec
from fairopt.runs import Runner, get_runner

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CardMeta(_Strict):
    name: str = Field(min_length=1, max_length=120)
    description: str = ""

    @field_validator("name")
    @classmethod
    def _plain_name(cls, v: str) -> str:
        # the name becomes fairopt-results/<name>: it must stay one folder inside the output root
        if v.strip() in (".", "..") or any(c in v for c in "/\\\0") or v != v.strip():
            raise ValueError("must be a plain folder name (no '/', '\\', '..', leading or trailing spaces), "
                             "since results go to fairopt-results/<name>")
        return v


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
    runner: Runner
    data: BaseModel
    parameters: BaseModel
    solver: SolverSpec | None
    raw: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The card as a plain ``dict``: path, name, formulation, data, parameters and solver."""
        return {"path": str(self.path), "name": self.name, "formulation": self.formulation,
                "data": self.data.model_dump(mode="json"),
                "parameters": self.parameters.model_dump(mode="json"),
                "solver": None if self.solver is None else str(self.solver)}


def _fields_at(model: type[BaseModel] | None, loc: Iterable[str]) -> list[str]:
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


def _format_errors(err: ValidationError, prefix: str, source: str, model: type[BaseModel] | None = None,
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


def _union_args(ann: Any) -> list[Any]:
    """``int | None`` -> ``[int, NoneType]``; ``Annotated[float, ...]`` -> ``[float]``; other types as is."""
    import types
    import typing
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _union_args(typing.get_args(ann)[0])
    if origin in (typing.Union, types.UnionType):
        return [a for arg in typing.get_args(ann) for a in _union_args(arg)]
    return [ann]


def _bool_errors(value: object, ann: Any, loc: str) -> list[str]:
    """Keys under ``loc`` where ``value`` holds a boolean that ``ann`` does not take as one.

    pydantic reads ``true`` as 1 for a number; a card that writes ``statistical_rate = true``
    meant something else, so it is refused rather than run at 1.0.
    """
    import typing
    options = _union_args(ann)
    if any(o is Any or o is bool for o in options):
        return []
    if isinstance(value, bool):
        if any(typing.get_origin(o) is typing.Literal and value in typing.get_args(o) for o in options):
            return []
        return [loc]
    if isinstance(value, list):
        inner = [typing.get_args(o)[0] for o in options if typing.get_origin(o) in (list, tuple, set)
                 and typing.get_args(o)]
        if inner:
            elem = typing.Union[tuple(inner)] if len(inner) > 1 else inner[0]  # noqa: UP007 -- a Union built at run time
            return [e for i, v in enumerate(value) for e in _bool_errors(v, elem, f"{loc}[{i}]")]
    if isinstance(value, dict):
        models = [o for o in options if isinstance(o, type) and issubclass(o, BaseModel)]
        if models:
            fields = models[0].model_fields
            return [e for k, v in value.items() if k in fields for e in _bool_errors(v, fields[k].annotation,
                                                                                      f"{loc}.{k}")]
        inner = [typing.get_args(o)[1] for o in options if typing.get_origin(o) is dict and typing.get_args(o)]
        if inner:
            elem = typing.Union[tuple(inner)] if len(inner) > 1 else inner[0]  # noqa: UP007 -- a Union built at run time
            return [e for k, v in value.items() for e in _bool_errors(v, elem, f"{loc}.{k}")]
    return []


def _refuse_bools(table: dict[str, Any] | None, model: type[BaseModel], prefix: str, source: str) -> None:
    fields = model.model_fields
    bad = [e for k, v in (table or {}).items() if k in fields
           for e in _bool_errors(v, fields[k].annotation, f"{prefix}.{k}")]
    if bad:
        raise ConfigError(f"{source}: invalid model card\n" + "\n".join(
            f"  {loc}: expected a number or text, got a boolean (true/false); write the value itself, "
            "e.g. 1.0" for loc in bad))


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


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
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


def read_card(path: str | os.PathLike[str]) -> dict[str, Any]:
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
        tables: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))  # tomli (Python 3.10): untyped
        return tables
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file (byte {exc.start}: {exc.reason}); save the card as "
                          "UTF-8.") from None
    except OSError as exc:
        raise ConfigError(f"model card {str(path)!r} cannot be read ({exc.strerror}).") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}).") from exc


def load_card(path: str | os.PathLike[str], overrides: list[str] | None = None,
              solver: str | SolverSpec | None = None,
              raw: dict[str, Any] | None = None) -> Card:
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
    _refuse_bools(schema.data, runner.Data, "data", str(path))
    _refuse_bools(schema.parameters, runner.Parameters, "parameters", str(path))
    _refuse_bools(raw.get("solver") if isinstance(raw.get("solver"), dict) else {}, SolverTable, "solver", str(path))
    try:
        data = runner.Data.model_validate(schema.data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "data", str(path), runner.Data, overridden)) from None
    try:
        params = runner.Parameters.model_validate(schema.parameters)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "parameters", str(path), runner.Parameters, overridden)) from None
    dataset = str(getattr(data, "dataset", "") or "")
    if dataset.startswith("builtin:") and getattr(data, "path", None):
        origin = " (from --set)" if "data.path" in overridden else ""
        raise ConfigError(f"{path}: invalid model card\n  data.path{origin}: data.dataset = {dataset!r} is built "
                          "into the package and reads no file; drop data.path, or name a file-based data set "
                          f"(e.g. --set data.dataset={dataset.split(':', 1)[1]!r}) to read it.")
    # the card's [solver] table and --solver are each parsed once, here, and travel typed
    spec = SolverSpec.parse(schema.solver.model_dump()) if schema.solver is not None else None
    if solver:
        parsed = SolverSpec.parse(solver)   # a SolverSpec (the CLI parsed it) comes back as it is
        base = spec or parsed
        # --solver replaces back end and inner solver; options of a different back end are dropped
        same = base.backend == parsed.backend
        dropped = sorted(k for k in overridden if k.startswith("solver.options.")) if not same else []
        if dropped and spec is not None:
            raise ConfigError(f"{path}: {dropped[0]} (from --set) is an option of the card's {base.backend!r} "
                              f"back end, which --solver {solver} replaces, so it would be dropped. To give "
                              f"{parsed.backend!r} options, choose it with --set solver.backend={parsed.backend} "
                              "instead of --solver.")
        spec = SolverSpec(parsed.backend, parsed.solver, {**(base.options if same else {}), **parsed.options},
                          parsed.time_limit if parsed.time_limit is not None else base.time_limit,
                          base.verbose or parsed.verbose)
    return Card(path=path, name=schema.card.name, description=schema.card.description,
                formulation=schema.formulation.name, runner=runner, data=data, parameters=params,
                solver=spec, raw=raw)
