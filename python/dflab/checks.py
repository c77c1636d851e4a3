"""Checks of a campaign: the numbers a paper states, against what the campaign's runs gave.

A check (`[[checks]]` of a campaign file, docs/studies.md) reads one metric of the points its
`where` selects (seeds averaged), reduced over the rest (`reduce`: one point, the max or the
min over loads), optionally divided by another selection's (`relative_to`: a ratio the paper
states; with `paired_by`, the ratio is taken per value of those keys, e.g. per traffic pattern,
and `reduce` picks among the ratios: the paper's "up to 28 % lower" is the smallest ratio over
its patterns), and compares it with the paper's value (`paper`, a number or arithmetic of the
paper's numbers, e.g. "0.8825 / 1.066" for a value the paper gives as a ratio) within
`tolerance` ("3%" relative, or a number: absolute, in the metric's unit). A `rank` check asks
instead that the selection be the lowest (highest) of the routings `among` selects.

A check that fails where the reproduction is known to differ from the paper carries `known`
(the reason, from the study's doc): it is reported as a known deviation, never hidden, and does
not make the run fail; an unexpected failure does.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any

import polars as pl
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from dflab.api import Summary
from dflab.config_types import Number, choice
from dflab.errors import UserError

# What a check may read: the summary fields, their latencies in µs, a search's saturation load.
_NS = [name for name in Summary.field_names() if name.endswith("_ns")]
METRICS = (
    *Summary.field_names(),
    *(name.removesuffix("_ns") + "_us" for name in _NS),
    "saturation_load",
)
# Series columns a check over `window_us` may read (those weighted by delivered packets).
WEIGHTED = ("latency", "network_latency", "hops_mean", "minimal_fraction")
COORDINATES = ("routing", "traffic", "load", "seed")
# Statuses of a row, and which of them make `dflab reproduce` fail.
PASS, FAIL, KNOWN, MISSING, SKIPPED = "pass", "FAIL", "known", "missing", "not at this size"
# A check whose points a partial run (`dflab reproduce --loads`) left out: not a failure.
NOT_RUN = "not in --loads"
FAILING = (FAIL, MISSING)

_TOLERANCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
}


def arithmetic(text: str) -> float:
    """The value of `text`, numbers joined by + - * / and parentheses; ValueError otherwise."""

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](value(node.operand))
        raise ValueError(text)

    try:
        result = value(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ZeroDivisionError):
        raise ValueError(text) from None
    if not math.isfinite(result):
        raise ValueError(text)
    return result


def _metric(name: str) -> str:
    if name not in METRICS:
        raise PydanticCustomError(
            "not_allowed",
            "not allowed; allowed: {allowed}",
            {"allowed": "a summary field (docs/config.md), its _us form, saturation_load"},
        )
    return name


def _invalid(field: str, value: Any, allowed: str) -> PydanticCustomError:
    """An error of one field of a check, found by a check of the whole table."""
    return PydanticCustomError(
        "not_allowed", "x", {"field": field, "value": value, "allowed": allowed}
    )


class CheckSpec(BaseModel):
    """One `[[checks]]` table."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    metric: Annotated[str, AfterValidator(_metric)]
    where: dict[str, Any] = {}
    sweeps: list[str] | None = None
    reduce: Annotated[str, AfterValidator(choice(("one", "max", "min")))] = "one"
    relative_to: dict[str, Any] | None = None
    paired_by: list[str] | None = None
    rank: Annotated[str, AfterValidator(choice(("lowest", "highest")))] | None = None
    among: dict[str, Any] | None = None
    window_us: Annotated[list[Number], Field(min_length=2, max_length=2)] | None = None
    paper: Number | str | None = None
    tolerance: Number | str | None = None
    source: str = ""
    note: str = ""
    known: str | None = None
    # The size at which `known` explains the failure ("both", "quick" or "full"); at the
    # other size the check fails as unexplained, its note still telling the other size's reason.
    known_at: Annotated[str, AfterValidator(choice(("both", "quick", "full")))] = "both"
    quick: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> CheckSpec:
        if self.rank is not None:
            if self.among is None:
                raise PydanticCustomError("missing", "x", {"field": "among"})
            for key in ("paper", "tolerance", "relative_to"):
                if getattr(self, key) is not None:
                    raise _invalid(key, getattr(self, key), "nothing (a rank check has no value)")
        else:
            for key in ("paper", "tolerance"):
                if getattr(self, key) is None:
                    raise PydanticCustomError("missing", "x", {"field": key})
            if isinstance(self.paper, str):
                try:
                    arithmetic(self.paper)
                except ValueError:
                    raise _invalid(
                        "paper", self.paper, "a number or arithmetic of numbers (+ - * / ( ))"
                    ) from None
            if isinstance(self.tolerance, str) and not _TOLERANCE.match(self.tolerance):
                raise _invalid("tolerance", self.tolerance, 'a relative "3%" or a number')
            if isinstance(self.tolerance, float) and self.tolerance < 0:
                raise _invalid("tolerance", self.tolerance, ">= 0")
        window = self.window_us
        if window is not None and not 0 <= window[0] < window[1]:
            raise _invalid("window_us", window, "[start, end] with 0 <= start < end")
        if window is not None and self.metric == "saturation_load":
            raise _invalid("window_us", window, "nothing for saturation_load")
        if self.paired_by is not None and (self.relative_to is None or not self.paired_by):
            raise _invalid("paired_by", self.paired_by, "keys, with relative_to")
        for field in ("where", "relative_to", "among", "paired_by"):
            for key in getattr(self, field) or {}:
                if key not in COORDINATES and "." not in key:
                    raise _invalid(field, key, "keys routing, traffic, load, seed, swept keys")
        return self

    def expected(self) -> float | None:
        if self.paper is None:
            return None
        return float(self.paper) if not isinstance(self.paper, str) else arithmetic(self.paper)

    def limit(self) -> tuple[float, bool]:
        """(tolerance, relative)."""
        if isinstance(self.tolerance, str):
            match = _TOLERANCE.match(self.tolerance)
            assert match is not None  # checked when read
            return float(match.group(1)) / 100, True
        return float(self.tolerance or 0.0), False

    def check_sweeps(self, where: str, searched: set[str], names: list[str]) -> None:
        """A saturation check reads a searched sweep; other checks read sweeps of points."""
        if self.metric == "saturation_load" and not searched:
            raise UserError(f"{where}.metric: saturation_load needs a sweep with a search")
        if self.metric != "saturation_load" and set(self.sweeps or names) <= searched:
            raise UserError(f"{where}.sweeps: only searches; {self.metric} needs swept points")


@dataclass(frozen=True)
class CheckRow:
    """One row of the check table."""

    name: str
    paper: str
    value: str
    deviation: str
    tolerance: str
    status: str
    source: str
    note: str


@dataclass
class Results:
    """What a campaign's runs gave, by sweep: summary rows (each with its store's `hash`),
    saturation rows of searched sweeps, and a reader of a point's series."""

    order: list[str]
    summaries: Mapping[str, pl.DataFrame]
    saturation: Mapping[str, pl.DataFrame]
    series: Callable[[str, str], pl.DataFrame]

    def frame(self, sweeps: list[str] | None, *, searched: bool = False) -> pl.DataFrame:
        """Rows of `sweeps` (all, in file order) with a `sweep` column; a later sweep's point
        replaces an earlier one's of the same coordinates (a longer run of the same point)."""
        tables = self.saturation if searched else self.summaries
        frames = []
        for name in [n for n in self.order if sweeps is None or n in sweeps]:
            frame = tables.get(name)
            if frame is not None and not frame.is_empty():
                frames.append(frame.with_columns(pl.lit(name).alias("sweep")))
        if not frames:
            return pl.DataFrame()
        merged = frames[0]
        for frame in frames[1:]:
            # Every coordinate of either side: a swept key one sweep lacks is null there, so a
            # point replaces only the points equal to it in every key (sweeps over different
            # keys, e.g. one over `routing.policy` and one over `routing.sequence`, keep all
            # their points).
            keys = [
                c
                for c in dict.fromkeys([*merged.columns, *frame.columns])
                if c in COORDINATES or "." in c
            ]
            left, right = _with_keys(merged, frame, keys), _with_keys(frame, merged, keys)
            kept = left.join(right.select(keys), on=keys, how="anti", nulls_equal=True)
            merged = pl.concat([kept, right], how="diagonal_relaxed")
        return merged


def _with_keys(frame: pl.DataFrame, other: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """`frame` with a null column, typed as in `other`, for each of `keys` it lacks."""
    missing = [k for k in keys if k not in frame.columns]
    return frame.with_columns([pl.lit(None, dtype=other.schema[k]).alias(k) for k in missing])


def select(frame: pl.DataFrame, where: Mapping[str, Any]) -> pl.DataFrame:
    """The rows whose coordinates match `where` (a value or a list of values per key; names
    case-insensitively, a pattern also by its name alone, loads within 1e-9)."""
    for key, wanted in where.items():
        if frame.is_empty():
            return frame
        if key not in frame.columns:
            return frame.clear()
        values = wanted if isinstance(wanted, list) else [wanted]
        column = pl.col(key)
        if all(isinstance(v, str) for v in values):
            # A pattern matches by its name too: "stencil" is "stencil:5x10x51".
            text = column.cast(pl.String).str.to_lowercase()
            wanted_text = [v.lower() for v in values]
            test = text.is_in(wanted_text) | text.str.split(":").list.first().is_in(wanted_text)
        else:
            test = pl.any_horizontal([(column - float(v)).abs() < 1e-9 for v in values])
        frame = frame.filter(test)
    return frame


def _series_value(
    results: Results, row: Mapping[str, Any], metric: str, window: list[float]
) -> float | None:
    """The metric over the windows of a point's series inside `window` (µs): weighted by the
    packets delivered for latencies, hops and the minimal share, a plain mean otherwise."""
    column = metric.removesuffix("_us") + "_ns" if metric.endswith("_us") else metric
    scale = 1e-3 if metric.endswith("_us") else 1.0
    series = results.series(row["sweep"], row["hash"])
    inside = series.filter(
        (pl.col("window_start_us") >= window[0] - 1e-9)
        & (pl.col("window_end_us") <= window[1] + 1e-9)
    ).drop_nulls(column)
    if inside.is_empty() or column not in inside.columns:
        return None
    if column.startswith(WEIGHTED):
        weight = inside["packets_delivered"]
        if weight.sum() == 0:
            return None
        return float((inside[column] * weight).sum() / weight.sum()) * scale
    return float(inside[column].mean()) * scale  # type: ignore[arg-type]


def _values(results: Results, check: CheckSpec, where: Mapping[str, Any]) -> pl.DataFrame:
    """The selected points' metric, seeds averaged: one row per point (column `value`)."""
    searched = check.metric == "saturation_load"
    frame = select(results.frame(check.sweeps, searched=searched), where)
    if frame.is_empty():
        return pl.DataFrame(
            {"routing": [], "value": []}, schema={"routing": pl.String, "value": pl.Float64}
        )
    if check.window_us is not None:
        values = [
            _series_value(results, row, check.metric, check.window_us) for row in frame.to_dicts()
        ]
        frame = frame.with_columns(pl.Series("value", values, dtype=pl.Float64))
    elif check.metric.endswith("_us") and check.metric not in frame.columns:
        frame = frame.with_columns(
            (pl.col(check.metric.removesuffix("_us") + "_ns") / 1000).alias("value")
        )
    else:
        frame = frame.with_columns(pl.col(check.metric).cast(pl.Float64).alias("value"))
    keys = [c for c in frame.columns if (c in COORDINATES or "." in c) and c != "seed"]
    return frame.group_by(keys, maintain_order=True).agg(pl.col("value").mean())


# The points exist but have no value: nothing delivered, or a saturation below the range searched.
_NO_VALUE = "no value (nothing delivered, or not sustained at the lowest load searched)"


def _reduced(frame: pl.DataFrame, reduce: str) -> float | str | None:
    """One value, or a message saying why there is none."""
    if frame.is_empty():
        return None
    values = [v for v in frame["value"].to_list() if v is not None]
    if not values:
        return _NO_VALUE
    if reduce == "max":
        return max(values)
    if reduce == "min":
        return min(values)
    if len(values) > 1:
        return f"selects {len(values)} points; narrow `where` or give reduce"
    return values[0]


def show(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.4g}"


def evaluate(
    checks: list[CheckSpec], results: Results, size: str, partial: bool = False
) -> list[CheckRow]:
    """The check table; `partial` (a run of some loads only) marks a check whose points are
    missing as not run rather than failed."""
    rows = [_evaluate(check, results, size) for check in checks]
    rows = [
        replace(row, status=FAIL)
        if row.status == KNOWN and check.known_at not in ("both", size)
        else row
        for check, row in zip(checks, rows, strict=True)
    ]
    if partial:
        rows = [_partial(check, row) for check, row in zip(checks, rows, strict=True)]
    return rows


def _partial(check: CheckSpec, row: CheckRow) -> CheckRow:
    if row.status == MISSING:
        return replace(row, status=NOT_RUN)
    if check.reduce != "one" and row.status != SKIPPED:
        which = "maximum" if check.reduce == "max" else "minimum"
        note = f"the {which} over the loads run (--loads) only"
        return replace(row, note=f"{row.note}; {note}" if row.note else note)
    return row


def _row(check: CheckSpec, status: str, **fields: str) -> CheckRow:
    note = fields.pop("note", "")
    if status == KNOWN or (check.known and status == PASS):
        known = check.known if status == KNOWN else f"listed as known ({check.known}) but passes"
        note = f"{note}; {known}" if note else known
    base = {"paper": "", "value": "—", "deviation": "", "tolerance": ""}
    return CheckRow(
        check.name,
        status=status,
        source=check.source,
        note=note or check.note,
        **{**base, **fields},
    )


def _evaluate(check: CheckSpec, results: Results, size: str) -> CheckRow:
    if size == "quick" and not check.quick:
        return _row(check, SKIPPED, note="full size only (--full)")
    if check.rank is not None:
        return _rank(check, results)
    if check.paired_by is not None:
        value, pair = _paired_ratio(check, results)
    else:
        value, pair = _reduced(_values(results, check, check.where), check.reduce), ""
        if check.relative_to is not None and isinstance(value, float):
            other = _reduced(_values(results, check, check.relative_to), check.reduce)
            value = value / other if isinstance(other, float) and other else other
    expected = check.expected()
    assert expected is not None  # checked when read
    tolerance, relative = check.limit()
    shown = {
        "paper": show(expected),
        "tolerance": f"±{tolerance:.0%}" if relative else f"±{tolerance:g}",
    }
    if relative and tolerance * 100 != round(tolerance * 100):
        shown["tolerance"] = f"±{100 * tolerance:g}%"
    if value == _NO_VALUE and check.metric == "saturation_load":
        # Not even the lowest load searched was sustained: a result, below the paper's.
        status = KNOWN if check.known else FAIL
        return _row(check, status, value="below range", note=_NO_VALUE, **shown)
    if not isinstance(value, float):
        return _row(check, MISSING, note=value or "no such point in the results", **shown)
    if relative:
        deviation = value / expected - 1 if expected else math.inf
        text = f"{100 * deviation:+.1f}%"
    else:
        deviation = value - expected
        # One digit more than the tolerance has: ±0.02 shows +0.003.
        digits = max(0, 1 - math.floor(math.log10(tolerance))) if tolerance > 0 else 3
        text = f"{deviation:+.{digits}f}"
    ok = abs(deviation) <= tolerance + 1e-12
    status = PASS if ok else KNOWN if check.known else FAIL
    note = f"{pair}; {check.note}" if pair and check.note else pair
    return _row(check, status, value=show(value), deviation=text, note=note, **shown)


def _paired_ratio(check: CheckSpec, results: Results) -> tuple[float | str | None, str]:
    """`where` over `relative_to` for each value of the `paired_by` keys that both select, the
    ratios reduced by `reduce`: (the value, which pair gave it), or a message saying why none."""
    assert check.paired_by is not None and check.relative_to is not None
    keys = check.paired_by
    mine = _values(results, check, check.where)
    other = _values(results, check, check.relative_to)
    if any(k not in frame.columns for k in keys for frame in (mine, other)):
        return None, ""
    ratios: dict[str, float] = {}
    for pair, rows in mine.group_by(keys, maintain_order=True):
        match = other.filter(
            pl.all_horizontal(pl.col(k) == v for k, v in zip(keys, pair, strict=True))
        )
        a, b = _reduced(rows, "one"), _reduced(match, "one")
        if isinstance(a, str) or isinstance(b, str):
            return a if isinstance(a, str) else b, ""
        if isinstance(a, float) and isinstance(b, float) and b:
            label = " ".join(f"{k}={v}" for k, v in zip(keys, pair, strict=True))
            ratios[label] = a / b
    if not ratios:
        return None, ""
    if check.reduce == "one" and len(ratios) > 1:
        return f"selects {len(ratios)} pairs; narrow `where` or give reduce", ""
    pick = max if check.reduce == "max" else min
    label = pick(ratios, key=lambda k: ratios[k])
    shown = ", ".join(f"{k}: {show(v)}" for k, v in ratios.items())
    return ratios[label], f"at {label} (of {shown})"


def _rank(check: CheckSpec, results: Results) -> CheckRow:
    mine = _reduced(_values(results, check, check.where), check.reduce)
    assert check.among is not None
    others = _values(results, check, check.among)
    paper = f"{check.rank} of the routings"
    if not isinstance(mine, float) or others.is_empty():
        return _row(check, MISSING, paper=paper, note=mine if isinstance(mine, str) else "")
    # A competitor is a routing with the values of the swept keys its points have (the
    # sequences of ACOR compete with each other and with VAL's policies).
    keys = ["routing", *(c for c in others.columns if "." in c)]
    per_routing = {}
    for group, rows in others.group_by(keys, maintain_order=True):
        value = _reduced(rows, check.reduce)
        if isinstance(value, float):
            named = [
                f"{k.rsplit('.', 1)[-1]}={v}"
                for k, v in zip(keys[1:], group[1:], strict=True)
                if v is not None
            ]
            per_routing[" ".join([str(group[0]), *named])] = value
    ordered = sorted(per_routing.values(), reverse=check.rank == "highest")
    better = [v for v in ordered if (v < mine if check.rank == "lowest" else v > mine)]
    position = f"{len(better) + 1} of {max(len(ordered), len(better) + 1)}"
    status = PASS if not better else KNOWN if check.known else FAIL
    best = {k: v for k, v in per_routing.items() if v in better[:1]}
    note = f"{', '.join(best)} {show(better[0])}" if better else ""
    return _row(
        check, status, paper=paper, value=show(mine), deviation=f"rank {position}", note=note
    )


def failed(rows: list[CheckRow]) -> list[CheckRow]:
    """The rows that make the reproduction fail: unexpected failures and missing points."""
    return [row for row in rows if row.status in FAILING]


def counts(rows: list[CheckRow]) -> str:
    found: dict[str, int] = {}
    for row in rows:
        found[row.status] = found.get(row.status, 0) + 1
    order = (PASS, FAIL, KNOWN, MISSING, NOT_RUN, SKIPPED)
    words = {KNOWN: "known deviations", SKIPPED: "not at this size", NOT_RUN: "not in --loads"}
    return ", ".join(f"{found[s]} {words.get(s, s)}" for s in order if s in found)
