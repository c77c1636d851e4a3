"""Reading experiments: TOML file -> preset -> `--set` overrides -> validated Experiment.

A file may carry a `[sweep]` table (loads, routings, traffics, seeds); it describes a family of
experiments rather than one, so it is split off before the experiment is validated.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from dflab.config import ROUTING_ALGORITHMS, Experiment
from dflab.config_types import Number, Pattern, choice
from dflab.errors import UserError, from_validation_error
from dflab.loads import parse_loads
from dflab.overrides import apply_overrides, deep_merge, nest
from dflab.schema_gen import routing_aliases

SWEEP_KEY = "sweep"


Load = Annotated[Number, Field(gt=0, le=1)]
RoutingName = Annotated[str, AfterValidator(choice(ROUTING_ALGORITHMS, routing_aliases()))]
Seed = Annotated[int, Field(ge=0, le=2**64 - 1)]


class SweepSpec(BaseModel):
    """The `[sweep]` table: lists of values to cross; None means 'the experiment's own value'."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    loads: list[Load] | None = None
    routings: list[RoutingName] | None = None
    traffics: list[Pattern] | None = None
    seeds: list[Seed] | None = None


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parse a TOML file; every failure is a UserError naming the file (and line for syntax)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"experiment file '{path}' not found") from None
    except OSError as exc:
        raise UserError(f"experiment file '{path}': {exc.strerror}") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        # The message carries "(at line N, column M)".
        raise UserError(f"{path}: invalid TOML: {exc}") from None


def validate(model: type[BaseModel], data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(model, exc) from None


def _split_sweep(data: dict[str, Any]) -> tuple[dict[str, Any], SweepSpec]:
    data = dict(data)
    sweep = data.pop(SWEEP_KEY, {})
    if not isinstance(sweep, dict):
        raise UserError(f"{SWEEP_KEY}: has the wrong type; expected a table")
    if isinstance(sweep.get("loads"), str):
        # A range string in the file reads like the CLI option: loads = "0.1:0.9:0.1".
        sweep = {**sweep, "loads": parse_loads(sweep["loads"], f"{SWEEP_KEY}.loads")}
    try:
        spec = SweepSpec.model_validate(sweep)
    except ValidationError as exc:
        # Report sweep fields with their full dotted path, e.g. sweep.routings.1.
        message = from_validation_error(SweepSpec, exc).message
        raise UserError(f"{SWEEP_KEY}.{message}") from None
    return data, spec


def load_experiment_file(
    path: str | Path | None = None,
    overrides: Iterable[str] = (),
    preset: str | None = None,
    fields: Mapping[str, Any] | None = None,
    *,
    defaults: bool = False,
) -> tuple[Experiment, SweepSpec]:
    """Build an experiment and its sweep spec.

    Precedence, lowest first: preset, file, `--set` overrides (`key=value` strings), `fields`
    (already-typed values from CLI shortcuts such as --load). `preset` replaces the file's own
    `preset` key. With neither a file nor a preset, `defaults` starts from the documented
    defaults (what an empty file gives); without it, that is an error.
    """
    if path is None and preset is None and not defaults:
        raise UserError("give an experiment file or --preset NAME")
    data = read_toml(path) if path is not None else {}
    if preset is not None:
        data["preset"] = preset
    data = apply_overrides(data, overrides)
    if fields:
        data = deep_merge(data, nest(fields))
    data, spec = _split_sweep(data)
    return validate(Experiment, data), spec


def load_experiment(path: str | Path, overrides: Iterable[str] = ()) -> Experiment:
    """Experiment from a TOML file with `key=value` overrides applied (a `[sweep]` is ignored)."""
    experiment, _ = load_experiment_file(path, overrides)
    return experiment


def with_overrides(experiment: Experiment, fields: Mapping[str, Any]) -> Experiment:
    """A new Experiment with dotted or nested field overrides, re-validated."""
    if not fields:
        return experiment
    return validate(Experiment, deep_merge(experiment.model_dump(exclude_unset=True), nest(fields)))


def preset(name: str, **overrides: Any) -> Experiment:
    """The named preset as an Experiment, e.g. preset("qadaptive-1056", **{"traffic.load": 0.3})
    or preset("qadaptive-1056", routing={"algorithm": "VALn"})."""
    return validate(Experiment, deep_merge({"preset": name}, nest(overrides)))
