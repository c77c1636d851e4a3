"""Sweeps: the cross product routings x traffics x loads x seeds, run one process per point.

Each point is keyed by its experiment's content hash; points already in the store are skipped,
so an interrupted sweep resumes where it stopped. Only this (parent) process writes the store,
so workers never race on files. A failing point (deadlock, bad config caught by the engine) is
recorded with its message and the sweep goes on.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import product
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from dflab.api import Execution, Summary, series_frame
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, with_overrides
from dflab.store import Store
from dflab.worker import Runner, execute_point, run_engine

ExecutorFactory = Callable[[int], Executor]


@dataclass(frozen=True)
class Point:
    coords: dict[str, Any]
    experiment: Experiment

    @property
    def key(self) -> str:
        return self.experiment.content_hash()

    def label(self) -> str:
        c = self.coords
        return f"{c['routing']} {c['traffic']} load {c['load']:g} seed {c['seed']}"


@dataclass
class SweepOutcome:
    points: list[Point]
    skipped: int = 0
    ran: int = 0
    failures: list[tuple[Point, str]] = field(default_factory=list)


def expand(base: Experiment, spec: SweepSpec) -> list[Point]:
    """All points of the sweep, in routing, traffic, load, seed order, duplicates removed."""
    routings = spec.routings or [base.routing.algorithm]
    traffics = spec.traffics or [base.traffic.pattern]
    loads = spec.loads or [base.traffic.load]
    seeds = spec.seeds or [base.seed]
    points: dict[str, Point] = {}
    for routing, traffic, load, seed in product(routings, traffics, loads, seeds):
        experiment = with_overrides(
            base,
            {
                "routing.algorithm": routing,
                "traffic.pattern": traffic,
                "traffic.load": float(load),
                "seed": seed,
            },
        )
        coords = {
            "routing": experiment.routing.algorithm,
            "traffic": experiment.pattern_label(),
            "load": experiment.traffic.load,
            "seed": experiment.seed,
        }
        point = Point(coords, experiment)
        points.setdefault(point.key, point)
    return list(points.values())


def process_pool(jobs: int) -> Executor:
    # spawn: a fresh interpreter, no state inherited from the parent (threads, rich, polars);
    # max_tasks_per_child=1: every point in its own process, so memory is returned between
    # points and a crash takes down one point only.
    return ProcessPoolExecutor(
        max_workers=jobs,
        max_tasks_per_child=1,
        mp_context=multiprocessing.get_context("spawn"),
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _record(point: Point, outcome: dict[str, Any], store: Store) -> str | None:
    """Store one point's outcome; the failure message, or None on success."""
    base = {
        "hash": point.key,
        "name": point.experiment.name,
        "coords": point.coords,
        "config": point.experiment.canonical(),
        "engine_semantics": ENGINE_SEMANTICS,
        "finished_at": _now(),
    }
    if "error" in outcome:
        store.save_failure({**base, "status": "failed", "error": outcome["error"]})
        return str(outcome["error"])
    raw = outcome["result"]
    record = {
        **base,
        "status": "ok",
        "summary": Summary.from_dict(raw["summary"]).to_dict(),
        "hops_histogram": list(raw.get("hops_histogram", [])),
        # How the point ran, apart from its results (the summary tables leave it out).
        "execution": Execution.from_dict(raw["execution"]).to_dict(),
    }
    series = series_frame(raw["series"]) if raw.get("series") else None
    store.save_point(record, series)
    return None


def _progress(console: Console | None) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("points"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        disable=console is None,
    )


def run_sweep(
    points: Sequence[Point],
    store: Store,
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
) -> SweepOutcome:
    """Run every point not yet in `store`; `console=None` hides the progress bar.

    `runner` must be picklable (a module-level function) for the default process pool.
    """
    if jobs < 1:
        raise UserError(f"--jobs: {jobs} is out of range; allowed: >= 1")
    store.create()
    done = store.done_hashes()
    todo = deque(point for point in points if point.key not in done)
    outcome = SweepOutcome(points=list(points), skipped=len(points) - len(todo))

    with _progress(console) as progress:
        task = progress.add_task("sweep", total=len(points), completed=outcome.skipped)

        def finish(point: Point, result: dict[str, Any]) -> None:
            message = _record(point, result, store)
            outcome.ran += 1
            if message is not None:
                outcome.failures.append((point, message))
            failed = f" ({len(outcome.failures)} failed)" if outcome.failures else ""
            progress.update(task, advance=1, description=f"sweep{failed}: {point.label()}")

        _drive(todo, jobs, runner, executor_factory, finish)
    return outcome


def _drive(
    todo: deque[Point],
    jobs: int,
    runner: Runner,
    executor_factory: ExecutorFactory,
    finish: Callable[[Point, dict[str, Any]], None],
) -> None:
    """Keep at most `jobs` points in flight so a broken pool costs only the points running."""
    pending: dict[Future[dict[str, Any]], Point] = {}
    pool = executor_factory(jobs)
    try:
        while todo or pending:
            while todo and len(pending) < jobs:
                point = todo.popleft()
                future = pool.submit(execute_point, runner, point.experiment.to_engine_json())
                pending[future] = point
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            broken = False
            for future in finished:
                point = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    broken = True
                    result = {"error": "worker process died (crash or out of memory)"}
                finish(point, result)
            if broken:
                # Every point still in the dead pool failed with it; start a fresh pool.
                for result, point in _drain(pending):
                    finish(point, result)
                pool.shutdown(wait=False, cancel_futures=True)
                pool = executor_factory(jobs)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _drain(
    pending: dict[Future[dict[str, Any]], Point],
) -> Iterable[tuple[dict[str, Any], Point]]:
    wait(pending)
    for future, point in list(pending.items()):
        del pending[future]
        try:
            yield future.result(), point
        except BrokenProcessPool:
            yield {"error": "worker process died (crash or out of memory)"}, point
