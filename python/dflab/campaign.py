"""Campaign files: a whole paper figure (or table) as several sweeps, its drawings and the
numbers the paper states (docs/studies.md).

A campaign is a TOML file with
* `[study]`: title, paper, the doc that discusses the reproduction;
* `[base]`: experiment keys (an experiment file without `[sweep]`) laid under every sweep;
* `[[sweeps]]`: named sweeps, each an experiment file in one table: its own experiment keys
  over `[base]`, what it varies (`routings`, `traffics`, `loads`, `seeds`, `axes`, `zip`,
  `points`, as in `[sweep]`), or a saturation `search`; as written it is the **full size** (the
  paper's run lengths), and its `quick` table replaces keys for the **quick size**;
* `[[figures]]` (dflab.study_figures) and `[[checks]]` (dflab.checks);
* `[cluster]`: where the points run, as in an experiment file.

Loading checks everything that can be checked without running: every sweep's experiments and
sweep lists (through the experiment model and the engine), the references between tables, the
checks' expressions. Every problem is one UserError naming the file and the dotted field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from dflab.checks import CheckSpec
from dflab.config import Experiment
from dflab.config_types import Number
from dflab.errors import UserError
from dflab.loading import SweepSpec, read_toml, sweep_spec, validate
from dflab.overrides import apply_overrides, deep_merge
from dflab.saturation import Criterion, grid
from dflab.study_figures import FigureSpec

SIZES = ("quick", "full")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _name(value: str) -> str:
    """Names of sweeps become directory names of result stores."""
    if not _NAME.match(value):
        raise PydanticCustomError(
            "not_allowed",
            "x",
            {"allowed": "up to 64 letters, digits, _ . - (a directory name)"},
        )
    return value


Name = Annotated[str, AfterValidator(_name)]
# The keys of a sweep table that make its experiment (laid over [base]) ...
EXPERIMENT_KEYS = ("preset", "seed", "topology", "network", "routing", "traffic", "run")
# ... and those that say what varies (the keys of an experiment file's [sweep] table).
SWEEP_KEYS = ("routings", "traffics", "loads", "seeds", "axes", "zip", "points")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class StudyInfo(_Strict):
    """`[study]`: what the campaign reproduces (shown by `dflab reproduce --list`)."""

    title: str
    paper: str = ""
    doc: str = ""


class Search(_Strict):
    """A saturation search instead of a load list (`dflab saturation`, docs/config.md)."""

    range: Annotated[str, Field(pattern=r"^\s*[0-9.]+\s*:\s*[0-9.]+\s*$")] = "0.05:1.0"
    step: Annotated[Number, Field(gt=0)] = 0.01
    accept: Annotated[Number, Field(gt=0, le=1)] = 0.99
    max_latency_ns: Annotated[Number, Field(gt=0)] | None = None

    def loads(self) -> list[float]:
        lo, hi = (float(part) for part in self.range.split(":"))
        return grid(lo, hi, self.step)

    def criterion(self) -> Criterion:
        return Criterion(accept=self.accept, max_latency_ns=self.max_latency_ns)


class _SweepKeys(_Strict):
    """What a sweep table and its `quick` table may set."""

    preset: str | None = None
    seed: int | None = None
    topology: dict[str, Any] | None = None
    network: dict[str, Any] | None = None
    routing: dict[str, Any] | None = None
    traffic: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    routings: list[Any] | None = None
    traffics: list[Any] | None = None
    loads: list[Any] | str | None = None
    seeds: list[Any] | int | str | None = None
    axes: dict[str, list[Any]] | None = None
    zip: list[dict[str, Any]] | None = None
    points: list[dict[str, Any]] | None = None
    search: Search | None = None


class QuickSize(_SweepKeys):
    """A sweep's `quick` table: the keys it replaces at the quick size (tables are merged key
    by key, lists replaced); `skip = true` leaves the sweep out."""

    skip: bool = False


class SweepEntry(_SweepKeys):
    """One `[[sweeps]]` table."""

    name: Name
    about: str = ""
    quick: QuickSize | None = None


class CampaignFile(_Strict):
    study: StudyInfo
    base: dict[str, Any] = {}
    sweeps: Annotated[list[SweepEntry], Field(min_length=1)]
    figures: list[FigureSpec] = []
    checks: list[CheckSpec] = []
    cluster: dict[str, Any] = {}


@dataclass(frozen=True)
class PlannedSweep:
    """One sweep at one size: its base experiment and what it varies."""

    name: str
    about: str
    experiment: Experiment
    spec: SweepSpec
    search: Search | None


@dataclass(frozen=True)
class Campaign:
    name: str
    path: Path
    file: CampaignFile
    # `dflab reproduce --set KEY=VALUE` items, applied over every sweep's experiment (its own
    # keys and [base] alike): the campaign under a variant of the model, in its own store.
    overrides: tuple[str, ...] = ()

    @property
    def study(self) -> StudyInfo:
        return self.file.study

    def with_overrides(self, items: Sequence[str]) -> Campaign:
        """The campaign with `--set KEY=VALUE` items over every sweep's experiment."""
        return replace(self, overrides=tuple(items))

    def sweep_names(self) -> list[str]:
        return [entry.name for entry in self.file.sweeps]

    def plan(
        self, size: str, seeds: int | None = None, loads: Sequence[float] | None = None
    ) -> list[PlannedSweep]:
        """The sweeps of `size` ("quick" or "full"), each checked; quick skips are left out.
        `seeds` N runs every sweep with N seeds from its experiment's (its own seeds replaced);
        `loads` keeps only those loads of each load list (see `only_loads`)."""
        if size not in SIZES:
            raise UserError(f"size: {size!r} is not allowed; allowed: {', '.join(SIZES)}")
        planned = [
            planned
            for index, entry in enumerate(self.file.sweeps)
            if (planned := self._planned(index, entry, size)) is not None
        ]
        if loads is not None:
            planned = only_loads(planned, loads)
        if seeds is None:
            return planned
        if seeds < 1:
            raise UserError(f"--seeds: {seeds} is out of range; allowed: >= 1")
        update = {"seeds": None, "seed_count": seeds}
        return [replace(sweep, spec=sweep.spec.model_copy(update=update)) for sweep in planned]

    def _planned(self, index: int, entry: SweepEntry, size: str) -> PlannedSweep | None:
        where = f"sweeps.{index}"
        data = entry.model_dump(exclude_none=True, exclude={"quick"})
        if size == "quick" and entry.quick is not None:
            if entry.quick.skip:
                return None
            data = deep_merge(data, entry.quick.model_dump(exclude_none=True, exclude={"skip"}))
            where = f"{where}.quick"
        own = {key: data[key] for key in EXPERIMENT_KEYS if key in data}
        merged = apply_overrides(deep_merge(self.file.base, own), self.overrides)
        merged["name"] = f"{self.name}-{entry.name}"
        experiment = _experiment(merged, own, where, self.overrides)
        table = {key: data[key] for key in SWEEP_KEYS if key in data}
        if "axes" in table:
            table.update(table.pop("axes"))
        spec = sweep_spec(table, where)
        search = Search.model_validate(data["search"]) if "search" in data else None
        if search is not None and spec.loads is not None:
            raise UserError(f"{where}.loads: a sweep with a search has no load list")
        return PlannedSweep(entry.name, entry.about, experiment, spec, search)


def only_loads(planned: list[PlannedSweep], loads: Sequence[float]) -> list[PlannedSweep]:
    """A part of a campaign (`dflab reproduce --loads`, e.g. the loads its checks read): each
    sweep with a load list keeps the loads of it that are in `loads` and is left out if none
    is; searches and sweeps without a load list run whole. The result store keys points by
    configuration, so a later run of the whole campaign into the same directory reuses them."""
    wanted = [float(x) for x in loads]

    def kept(sweep_loads: Sequence[float]) -> list[float]:
        return [x for x in sweep_loads if any(math.isclose(x, w, abs_tol=1e-9) for w in wanted)]

    out = []
    for sweep in planned:
        if sweep.spec.loads is None:
            out.append(sweep)
        elif mine := kept(sweep.spec.loads):
            out.append(replace(sweep, spec=sweep.spec.model_copy(update={"loads": mine})))
    if not any(sweep.spec.loads for sweep in out):
        every = sorted({float(x) for sweep in planned for x in sweep.spec.loads or []})
        given = ", ".join(f"{w:g}" for w in wanted)
        allowed = ", ".join(f"{x:g}" for x in every) or "none (its sweeps have no load lists)"
        raise UserError(f"--loads: no sweep of this campaign has {given}; its loads: {allowed}")
    return out


def _experiment(
    data: dict[str, Any], own: dict[str, Any], where: str, overrides: Sequence[str] = ()
) -> Experiment:
    """The sweep's base experiment; an error names the key where it was given: `--set`, the
    sweep's own table, or [base]."""
    try:
        return validate(Experiment, data)
    except UserError as exc:
        key = exc.message.split(":", 1)[0]
        if any(item.partition("=")[0].strip() == key for item in overrides):
            raise UserError(f"--set {exc.message}") from None
        if " " not in key and _given(own, key):
            raise UserError(f"{where}.{exc.message}") from None
        if " " not in key and _given(data, key):
            raise UserError(f"base.{exc.message}") from None
        raise UserError(f"{where}: {exc.message}") from None


def _given(table: dict[str, Any], dotted: str) -> bool:
    node: Any = table
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def load_campaign(path: str | Path, name: str | None = None) -> Campaign:
    """Read and check a campaign file; every error is one UserError naming the file and field."""
    path = Path(path)
    data = read_toml(path)
    name = name or path.stem
    try:
        campaign = Campaign(name, path, validate(CampaignFile, data))
        _check_references(campaign)
        for size in ("full", "quick"):
            campaign.plan(size)  # every sweep's experiments checked now, not after hours of runs
        _check_cluster(campaign)
    except UserError as exc:
        raise UserError(f"{path}: {exc.message}") from None
    return campaign


def _check_references(campaign: Campaign) -> None:
    """Names of sweeps are unique; figures and checks name sweeps of the file."""
    names = campaign.sweep_names()
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in seen:
            raise UserError(
                f"sweeps.{index}.name: {name!r} is also the name of sweeps.{seen[name]}"
            )
        seen[name] = index
    allowed = ", ".join(names)
    for where, given in _sweep_references(campaign.file):
        if given not in seen:
            raise UserError(f"{where}: {given!r} is not allowed; allowed: {allowed}")
    searched = {e.name for e in campaign.file.sweeps if e.search is not None}
    for index, check in enumerate(campaign.file.checks):
        check.check_sweeps(f"checks.{index}", set(check.sweeps or names) & searched, names)


def _sweep_references(file: CampaignFile) -> list[tuple[str, str]]:
    found = []
    for index, figure in enumerate(file.figures):
        found += [(f"figures.{index}.sweeps.{i}", s) for i, s in enumerate(figure.sweeps or [])]
        found += [
            (f"figures.{index}.lines.{i}.sweep", ln.sweep) for i, ln in enumerate(figure.lines)
        ]
    for index, check in enumerate(file.checks):
        found += [(f"checks.{index}.sweeps.{i}", s) for i, s in enumerate(check.sweeps or [])]
    return found


def _check_cluster(campaign: Campaign) -> None:
    from dflab.backends import cluster_spec

    cluster_spec(campaign.file.cluster)
