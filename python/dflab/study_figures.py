"""The drawings of a campaign (`[[figures]]`, docs/studies.md), made with dflab.figures:

* `load-curves`: one column per pattern, one row per metric, one line per routing (and value of
  each other swept key that varies) against the offered load (the HPDC'21 Fig. 5 layout);
* `distribution`: latency percentiles as boxes, one panel per pattern, one box per routing;
* `series`: per-window series over simulated time, one line per selected point.

A figure reads the sweeps it names (all of the campaign's by default); a later sweep's point
replaces an earlier one's of the same coordinates (a longer run of the same point).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from dflab.checks import Results, select
from dflab.config_types import Number, choice

KINDS = ("load-curves", "distribution", "series")
DEFAULT_METRICS = {
    "load-curves": ["latency_mean_ns", "accepted_load", "hops_mean"],
    "series": ["latency_mean_ns", "accepted_load", "minimal_fraction"],
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SeriesLine(_Strict):
    """One line of a `series` figure: the point of `sweep` that `where` selects."""

    label: str
    sweep: str
    where: dict[str, Any] = {}


class FigureSpec(_Strict):
    """One `[[figures]]` table."""

    kind: Annotated[str, AfterValidator(choice(KINDS))]
    file: Annotated[str, Field(pattern=r"^[\w.+-]+\.(png|pdf|svg)$")]
    title: str = ""
    sweeps: list[str] | None = None
    where: dict[str, Any] | list[dict[str, Any]] | None = None
    metrics: list[str] | None = None
    lines: list[SeriesLine] = []
    marks_us: list[Number] = []
    columns: Annotated[int, Field(ge=1, le=10)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FigureSpec:
        if self.kind == "series" and not self.lines:
            raise PydanticCustomError("missing", "x", {"field": "lines"})
        if self.kind != "series" and self.lines:
            raise PydanticCustomError(
                "not_allowed",
                "x",
                {"field": "lines", "value": "lines", "allowed": "lines in a series figure only"},
            )
        return self


def _selected(frame: Any, where: dict[str, Any] | list[dict[str, Any]] | None) -> Any:
    """The rows any of the `where` tables selects (all rows without one)."""
    import polars as pl

    if where is None or frame.is_empty():
        return frame
    tables = where if isinstance(where, list) else [where]
    parts = [select(frame, table) for table in tables]
    return pl.concat(parts, how="diagonal_relaxed").unique(maintain_order=True)


def figure_frame(figure: FigureSpec, results: Results) -> Any:
    """The summary rows a load-curves or distribution figure draws."""
    return _selected(results.frame(figure.sweeps), figure.where)


def draw(figure: FigureSpec, results: Results, out: Path) -> tuple[Path | None, str]:
    """Draw `figure` into `out`/its file: (the path, "") or (None, why nothing was drawn)."""
    from dflab.figures import plot_latency_distribution, plot_load_curves, plot_series
    from dflab.plot_style import routing_key

    path = out / figure.file
    if figure.kind == "series":
        frames, missing = {}, []
        for line in figure.lines:
            rows = select(results.frame([line.sweep]), line.where)
            if rows.height != 1:
                missing.append(line.label)
                continue
            frames[line.label] = results.series(line.sweep, rows["hash"][0])
        if not frames:
            return None, f"no points for {', '.join(missing)}"
        metrics = figure.metrics or DEFAULT_METRICS["series"]
        plot_series(frames, metrics, path, marks_us=figure.marks_us, title=figure.title or None)
        return path, f"no points for {', '.join(missing)}" if missing else ""
    frame = figure_frame(figure, results)
    if frame.is_empty():
        return None, "no points"
    if figure.kind == "load-curves":
        shown = plot_load_curves(frame, None, figure.metrics or DEFAULT_METRICS["load-curves"])
        if figure.title:
            shown.suptitle(figure.title)
        path.parent.mkdir(parents=True, exist_ok=True)
        shown.savefig(path, dpi=110)
        return path, ""
    rows = sorted(frame.to_dicts(), key=lambda row: routing_key(row["routing"]))
    shown = plot_latency_distribution(rows, None, columns=figure.columns)
    if figure.title:
        shown.suptitle(figure.title)
    path.parent.mkdir(parents=True, exist_ok=True)
    shown.savefig(path, dpi=110)
    return path, ""
