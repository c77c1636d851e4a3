"""Reading experiments: TOML file -> preset -> `--set` overrides -> validated Experiment.

A file may carry a `[sweep]` table (loads, routings, traffics, seeds, any other key as an axis,
zips, point lists); it describes a family of experiments rather than one, so it is split off
before the experiment is validated, and so is the `[cluster]` table (how the points run:
backend, retries, timeout, the Dask cluster). Neither enters a point's key.
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
CLUSTER_KEY = "cluster"
# The experiment's tables: `[sweep] routing = {q_thld1 = [...]}` means "routing.q_thld1".
_SECTIONS = ("topology", "network", "routing", "traffic", "run")
# Keys of [sweep] that are no config keys.
_RESERVED = ("loads", "routings", "traffics", "seeds", "zip", "points")
# Config keys that are one of the four lists; given as an axis, they become that list.
ALIASES = {
    "routing.algorithm": "routings",
    "traffic.pattern": "traffics",
    "traffic.load": "loads",
    "seed": "seeds",
}
# Keys that cannot be swept: they do not change the simulation, or replace every key.
_NOT_AXES = ("name", "preset")


Load = Annotated[Number, Field(gt=0, le=1)]
RoutingName = Annotated[str, AfterValidator(choice(ROUTING_ALGORITHMS, routing_aliases()))]
Seed = Annotated[int, Field(ge=0, le=2**64 - 1)]


class SweepSpec(BaseModel):
    """The `[sweep]` table: lists of values to cross; None means 'the experiment's own value'.

    `axes` maps any other config key (dotted) to its values; each of `zips` varies several keys
    together (lists of one length); `points` is an explicit list of override tables. All are
    crossed with each other and with the four lists; `seed_count` N means N seeds from the
    experiment's own (`seeds = 5` in a file)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    loads: list[Load] | None = None
    routings: list[RoutingName] | None = None
    traffics: list[Pattern] | None = None
    seeds: list[Seed] | None = None
    seed_count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    axes: dict[str, list[Any]] | None = None
    zips: list[dict[str, list[Any]]] | None = None
    points: list[dict[str, Any]] | None = None


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


def _flat_keys(table: dict[str, Any], where: str) -> dict[str, Any]:
    """`{routing = {q_thld1 = x}}` and `{"routing.q_thld1" = x}` alike: dotted keys (one level
    of the experiment's tables; a pattern table as a value stays whole)."""
    flat: dict[str, Any] = {}
    for key, value in table.items():
        if key in _SECTIONS and isinstance(value, dict):
            for sub, item in value.items():
                flat[f"{key}.{sub}"] = item
        else:
            flat[key] = value
    for key in flat:
        if key.split(".")[0] in _NOT_AXES:
            raise UserError(
                f"{where}.{key}: cannot be swept (it does not change the simulation or "
                "replaces every key); sweep the keys themselves"
            )
    return flat


def _values(key: str, value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise UserError(
            f'{where}.{key}: expected a list of values, e.g. "{key}" = [a, b]; '
            f"got {type(value).__name__}"
        )
    if not value:
        raise UserError(f"{where}.{key}: empty list; give at least one value")
    return value


def _seeds_value(value: Any, where: str) -> dict[str, Any]:
    """`seeds = 5` (five seeds from the experiment's), a list, or a range "1:5"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return {"seed_count": value}
    if isinstance(value, str):
        return {"seeds": parse_seeds(value, where)}
    return {"seeds": value}


def parse_seeds(text: str, field: str = "--seeds") -> list[int]:
    """'1,2,3' or 'FIRST:LAST' (both included)."""
    text = text.strip()
    try:
        if ":" in text:
            first, last = (int(part) for part in text.split(":"))
            if last < first:
                raise UserError(f"{field} {text!r}: LAST is smaller than FIRST")
            if last - first >= 100_000:
                raise UserError(f"{field} {text!r}: {last - first + 1} seeds; at most 100000")
            return list(range(first, last + 1))
        return [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise UserError(f"{field} {text!r}: expected integers, e.g. 1,2,3 or 1:5") from None


def sweep_spec(sweep: Any, where: str = SWEEP_KEY) -> SweepSpec:
    """A `[sweep]` table (as read from TOML) as a checked SweepSpec; errors name the key."""
    if not isinstance(sweep, dict):
        raise UserError(f"{where}: has the wrong type; expected a table")
    given: dict[str, Any] = {}
    axes: dict[str, list[Any]] = {}
    for key, value in _flat_keys(sweep, where).items():
        name = ALIASES.get(key, key)
        if name in given or (name == "seeds" and "seed_count" in given):
            raise UserError(f"{where}.{key}: the same axis as {name}; give it once")
        if name == "loads":
            given["loads"] = (
                parse_loads(value, f"{where}.{key}") if isinstance(value, str) else value
            )
        elif name == "seeds":
            given.update(_seeds_value(value, f"{where}.{key}"))
        elif name in ("routings", "traffics"):
            given[name] = value
        elif name == "zip":
            groups = value if isinstance(value, list) else [value]
            zips = []
            for index, group in enumerate(groups):
                if not isinstance(group, dict) or not group:
                    raise UserError(
                        f"{where}.zip.{index}: expected a table of lists of one length, e.g. "
                        'zip = [{"network.local_latency_ns" = [10, 20], '
                        '"network.global_latency_ns" = [100, 200]}]'
                    )
                zips.append(_zip_group(group, f"{where}.zip.{index}"))
            given["zips"] = zips
        elif name == "points":
            given["points"] = _point_list(value, f"{where}.points")
        else:
            axes[key] = _values(key, value, where)
    if axes:
        given["axes"] = axes
    try:
        return SweepSpec.model_validate(given)
    except ValidationError as exc:
        # Report sweep fields with their full dotted path, e.g. sweep.routings.1.
        message = from_validation_error(SweepSpec, exc).message
        raise UserError(f"{where}.{message}") from None


def _zip_group(group: dict[str, Any], where: str) -> dict[str, list[Any]]:
    flat = {key: _values(key, value, where) for key, value in _flat_keys(group, where).items()}
    lengths = {key: len(values) for key, values in flat.items()}
    if len(set(lengths.values())) > 1:
        sizes = ", ".join(f"{key}: {n}" for key, n in lengths.items())
        raise UserError(f"{where}: the lists of a zip need one length; got {sizes}")
    return flat


def _point_list(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise UserError(
            f"{where}: expected a non-empty list of tables, e.g. points = "
            '[{"routing.algorithm" = "MIN", "traffic.load" = 0.3}]'
        )
    points = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict) or not entry:
            raise UserError(f"{where}.{index}: expected a table of config keys and values")
        points.append(_flat_keys(entry, f"{where}.{index}"))
    return points


def _split_sweep(data: dict[str, Any]) -> tuple[dict[str, Any], SweepSpec]:
    data = dict(data)
    return data, sweep_spec(data.pop(SWEEP_KEY, {}))


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
    data.pop(CLUSTER_KEY, None)  # read by `load_cluster`
    return validate(Experiment, data), spec


def load_cluster(path: str | Path | None) -> dict[str, Any]:
    """The `[cluster]` table of an experiment file ({} without one); checked by the backend."""
    if path is None:
        return {}
    table = read_toml(path).get(CLUSTER_KEY, {})
    if not isinstance(table, dict):
        raise UserError(f"{CLUSTER_KEY}: has the wrong type; expected a table")
    return table


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
