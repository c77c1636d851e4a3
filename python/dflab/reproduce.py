"""`dflab reproduce STUDY`: run a campaign (dflab.campaign) at one size, draw its figures, check
its numbers against the paper's, and write all of it to one directory (docs/studies.md).

Layout of the output directory (`results/reproduce/<study>/<size>/` by default):
    <sweep>/          one result store per sweep (resumable: a rerun runs only what is missing)
    <figure files>    the campaign's figures
    checks.md         the check table with its sources and notes, the counts, the wall time
    checks.csv        the same rows, for scripts
    curves.md         the numbers of each load-curves figure, one table per pattern
                      (dflab.curve_tables)
    timing.csv        every point's own wall time (longest first): where the time went

All sweeps of plain points run through one pool (`dflab.sweep.run_sweeps`), most expensive
first, so that two cores are busy to the end; the saturation searches run after them, side by
side (`dflab.saturation.search_many`).
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import polars as pl
from rich.console import Console
from rich.table import Table

from dflab.campaign import Campaign, PlannedSweep
from dflab.checks import PASS, CheckRow, Results, counts, evaluate, failed
from dflab.curve_tables import curve_tables
from dflab.saturation import Search, search_many
from dflab.store import Store, atomic_write
from dflab.study_figures import draw, figure_frame
from dflab.sweep import ExecutorFactory, Point, Policy, expand, process_pool, run_sweeps
from dflab.version import version_line
from dflab.worker import Runner, run_engine


@dataclass
class Reproduction:
    """What one `dflab reproduce` did."""

    campaign: Campaign
    size: str
    out: Path
    points: int = 0
    ran: int = 0
    elapsed_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    rows: list[CheckRow] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)
    timing: pl.DataFrame = field(default_factory=pl.DataFrame)
    curves: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures and not failed(self.rows)


def default_out(name: str, size: str) -> Path:
    return Path("results") / "reproduce" / name / size


def point_cost(point: Point) -> float:
    """A point's expected cost, for running the expensive ones first: simulated time x nodes x
    load (a saturated point costs more per µs, a heavier load more packets)."""
    experiment = point.experiment
    simulated = experiment.run.warmup_us + experiment.run.measure_us
    return simulated * experiment.nodes() * max(experiment.traffic.load, 0.1)


def reproduce(
    campaign: Campaign,
    size: str,
    out: Path,
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
    policy: Policy | None = None,
    seeds: int | None = None,
    loads: Sequence[float] | None = None,
) -> Reproduction:
    """Run the campaign's sweeps at `size` into `out` (with `seeds` seeds per point, the
    campaign's own by default; with `loads`, only those loads of each load list), then draw
    and check (see the module)."""
    started = time.monotonic()
    result = Reproduction(campaign, size, out)
    planned = campaign.plan(size, seeds, loads)
    stores = {sweep.name: Store(out / sweep.name) for sweep in planned}
    plain = [sweep for sweep in planned if sweep.search is None]
    batches = [(expand(sweep.experiment, sweep.spec), stores[sweep.name]) for sweep in plain]
    result.points = sum(len(points) for points, _ in batches)
    outcomes = run_sweeps(
        batches,
        jobs=jobs,
        runner=runner,
        executor_factory=executor_factory,
        console=console,
        policy=policy,
        cost=point_cost,
    )
    for sweep, outcome in zip(plain, outcomes, strict=True):
        result.ran += outcome.ran
        result.failures += [f"{sweep.name}: {p.label()}: {m}" for p, m in outcome.failures]
    searched = [sweep for sweep in planned if sweep.search is not None]
    before = sum(len(stores[s.name].done_hashes()) for s in searched)
    found = search_many(
        [
            Search(s.experiment, s.spec, stores[s.name], s.search.loads(), s.search.criterion())
            for s in searched
            if s.search is not None
        ],
        jobs=jobs,
        runner=runner,
        executor_factory=executor_factory,
        console=console,
        policy=policy,
    )
    saturation = {s.name: _saturation_frame(f) for s, f in zip(searched, found, strict=True)}
    # A search's points are its probes: known once it has run.
    probes = sum(len(stores[s.name].done_hashes()) for s in searched)
    result.points += probes
    result.ran += probes - before
    results = _results(planned, stores, saturation)
    for figure in campaign.file.figures:
        path, why = draw(figure, results, out)
        result.figures.append((str(path) if path else figure.file, why))
    result.curves = _curves_markdown(result, results)
    result.rows = evaluate(campaign.file.checks, results, size, partial=loads is not None)
    result.timing = _timing(planned, stores)
    result.elapsed_s = time.monotonic() - started
    write_outputs(result)
    return result


def _saturation_frame(found: Sequence[Any]) -> pl.DataFrame:
    """One row per routing, pattern and seed: the saturation load of the search."""
    rows = [
        {"routing": r.routing, "traffic": r.traffic, "seed": r.seed, "saturation_load": r.load}
        for r in found
    ]
    schema = {"routing": pl.String, "traffic": pl.String, "seed": pl.UInt64}
    return pl.DataFrame(rows, schema={**schema, "saturation_load": pl.Float64})


def _results(
    planned: list[PlannedSweep], stores: dict[str, Store], saturation: dict[str, pl.DataFrame]
) -> Results:
    summaries = {
        sweep.name: stores[sweep.name].summary_frame()
        for sweep in planned
        if sweep.search is None and stores[sweep.name].points_dir.is_dir()
    }

    def series(sweep: str, key: str) -> pl.DataFrame:
        return stores[sweep].series(key)

    return Results([s.name for s in planned], summaries, saturation, series)


def _timing(planned: list[PlannedSweep], stores: dict[str, Store]) -> pl.DataFrame:
    """Every stored point's own wall time, longest first."""
    frames = []
    for sweep in planned:
        store = stores[sweep.name]
        if not store.points_dir.is_dir():
            continue
        summary = store.summary_frame().select("hash", "routing", "traffic", "load", "seed")
        frame = summary.join(store.execution_frame(), on="hash", how="left")
        frame = frame.with_columns(
            pl.lit(sweep.name).alias("sweep"),
            pl.lit(sweep.experiment.run.warmup_us + sweep.experiment.run.measure_us).alias(
                "simulated_us"
            ),
        )
        frames.append(frame)
    if not frames:
        return pl.DataFrame()
    columns = ["sweep", "routing", "traffic", "load", "seed", "simulated_us", "wall_s"]
    columns += ["ns_per_router_traversal", "sim_us_per_wall_s"]
    frame = pl.concat(frames, how="diagonal_relaxed")
    return frame.select([c for c in columns if c in frame.columns]).sort("wall_s", descending=True)


def sweep_walls(timing: pl.DataFrame) -> pl.DataFrame:
    """Points and wall time per sweep (sum and the longest point)."""
    if timing.is_empty():
        return timing
    return (
        timing.group_by("sweep", maintain_order=True)
        .agg(
            pl.len().alias("points"),
            pl.col("wall_s").sum().round(1).alias("wall_s"),
            pl.col("wall_s").max().round(1).alias("longest_s"),
        )
        .sort("wall_s", descending=True)
    )


def check_table(result: Reproduction) -> Table:
    study = result.campaign
    table = Table(title=f"{study.name} ({result.size} size): {study.study.title}")
    for column in ("#", "check", "paper", "dflab", "deviation", "tolerance", "result"):
        table.add_column(column, justify="right" if column in ("#", "paper", "dflab") else "left")
    styles = {"pass": "green", "FAIL": "bold red", "known": "yellow", "missing": "red"}
    for index, row in enumerate(result.rows, 1):
        status = "FAIL (known)" if row.status == "known" else row.status
        style = styles.get(row.status, "dim")
        table.add_row(
            str(index),
            row.name,
            row.paper,
            row.value,
            row.deviation,
            row.tolerance,
            f"[{style}]{status}[/{style}]",
        )
    return table


def notes(result: Reproduction) -> list[str]:
    """The notes of the rows that did not simply pass, by row number."""
    return [
        f"{index}. {row.name}: {row.note}"
        for index, row in enumerate(result.rows, 1)
        if row.note and (row.status != PASS or row.note.startswith("listed as known"))
    ]


def print_result(result: Reproduction, console: Console, err: TextIO) -> None:
    """The sweeps' wall times and the check table on `console`; notes on the rows that did not
    simply pass; figures, counts and failed points on `err`."""
    from dflab.report import rows_table

    walls = sweep_walls(result.timing)
    if not walls.is_empty():
        title = "wall time of the points per sweep, summed (s)"
        console.print(rows_table(walls.to_dicts(), walls.columns, title))
    console.print(check_table(result))
    for line in notes(result):
        console.print(line, markup=False, highlight=False)
    for path, why in result.figures:
        print(f"figure: {path}" + (f" (not drawn: {why})" if why else ""), file=err)
    name, size = result.campaign.name, result.size
    print(
        f"{name} ({size}): {counts(result.rows)}; {result.points} points, {result.ran} run now "
        f"in {result.elapsed_s:.0f} s; table: {result.out / 'checks.md'}",
        file=err,
    )
    for failure in result.failures:
        print(f"failed: {failure}", file=err)


def _markdown(result: Reproduction) -> str:
    study = result.campaign.study
    lines = [
        f"# {result.campaign.name} ({result.size} size)",
        "",
        f"{study.title}. Paper: {study.paper}. Discussion: {study.doc}.",
        "",
        f"Checks: {counts(result.rows)}. Points: {result.points} ({result.ran} run now). "
        f"Wall time of this run: {result.elapsed_s:.0f} s. {version_line()}.",
        "",
        "| # | check | paper | dflab | deviation | tolerance | result | source | note |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for index, row in enumerate(result.rows, 1):
        cells = [str(index), row.name, row.paper, row.value, row.deviation, row.tolerance]
        cells += ["FAIL (known)" if row.status == "known" else row.status, row.source, row.note]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    walls = sweep_walls(result.timing)
    if not walls.is_empty():
        lines += [
            "",
            "| sweep | points | wall time of its points, summed (s) | longest point (s) |",
        ]
        lines += ["|---|---|---|---|"]
        lines += [f"| {s} | {n} | {w} | {m} |" for s, n, w, m in walls.iter_rows()]
    for failure in result.failures:
        lines.append(f"\nfailed point: {failure}")
    return "\n".join(lines) + "\n"


def _curves_markdown(result: Reproduction, results: Results) -> str:
    """curves.md: each load-curves figure's numbers (dflab.curve_tables), "" without one."""
    sections = []
    for figure in result.campaign.file.figures:
        if figure.kind != "load-curves":
            continue
        tables = curve_tables(figure_frame(figure, results))
        if tables:
            sections.append(f"## {figure.title or figure.file} ({figure.file})\n\n{tables}")
    if not sections:
        return ""
    head = (
        f"# {result.campaign.name} ({result.size} size): the numbers of the figures\n\n"
        "Mean packet latency in ns, averaged over the seeds; in parentheses the accepted "
        "load where it is below 95 % of the offered (saturated: the figures draw these "
        f"points hollow). {version_line()}.\n"
    )
    return "\n".join([head, *sections])


def write_outputs(result: Reproduction) -> None:
    result.out.mkdir(parents=True, exist_ok=True)
    atomic_write(result.out / "checks.md", _markdown(result).encode())
    buffer = io.StringIO()
    names = list(CheckRow.__dataclass_fields__)
    writer = csv.DictWriter(buffer, fieldnames=names)
    writer.writeheader()
    writer.writerows(asdict(row) for row in result.rows)
    atomic_write(result.out / "checks.csv", buffer.getvalue().encode())
    if result.curves:
        atomic_write(result.out / "curves.md", result.curves.encode())
    if not result.timing.is_empty():
        text = io.BytesIO()
        result.timing.write_csv(text)
        atomic_write(result.out / "timing.csv", text.getvalue())


def study_list(names: Sequence[str]) -> Table:
    """`dflab reproduce --list`: every packaged study with its title and sizes."""
    from dflab.campaign import load_campaign
    from dflab.studies import find

    table = Table(title="studies (dflab reproduce STUDY; --full for the paper's run lengths)")
    for column in ("study", "reproduces", "sweeps", "points quick / full", "checks"):
        table.add_column(column)
    for name in names:
        campaign = load_campaign(find(name)[1], name)
        sizes = [
            sum(len(expand(s.experiment, s.spec)) if s.search is None else 0 for s in plan)
            for plan in (campaign.plan("quick"), campaign.plan("full"))
        ]
        searched = any(e.search is not None for e in campaign.file.sweeps)
        shown = f"{sizes[0]} / {sizes[1]}" + (" + searches" if searched else "")
        table.add_row(
            name,
            campaign.study.title,
            str(len(campaign.file.sweeps)),
            shown,
            str(len(campaign.file.checks)),
        )
    return table


__all__ = ["Reproduction", "default_out", "reproduce", "study_list"]
