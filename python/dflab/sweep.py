"""Sweeps: the cross product routings x traffics x loads x seeds, run one process per point.

Each point is keyed by its experiment's content hash; points already in the store are skipped,
so an interrupted sweep resumes where it stopped. Only this (parent) process writes the store,
so workers never race on files. A failing point (deadlock, bad config caught by the engine) is
recorded with its message and the sweep goes on.

SIGINT and SIGTERM are only noted by their handlers; the loop that waits for points sees the
note within POLL_S, ends every running worker and raises `Interrupted`. A store write is thus
never cut in half, and every point that finished is saved.
"""

from __future__ import annotations

import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import product
from typing import Any

from rich.console import Console

from dflab.api import Diagnostics, Execution, Summary, series_frame
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec, with_overrides
from dflab.pool import PointPool, WorkerDied
from dflab.store import Store
from dflab.store_config import check_new_points
from dflab.sweep_progress import SweepProgress, sweep_progress
from dflab.version import dflab_version
from dflab.worker import Runner, execute_point, run_engine

ExecutorFactory = Callable[[int], Executor]

# A sweep is a list of processes to start: past this many points it is a typo, not a study.
MAX_POINTS = 100_000
# How often the loop looks for an interrupt while points run (the stop takes about this).
POLL_S = 0.2


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


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped a sweep; its workers are ended, finished points saved."""

    def __init__(self, signum: int, saved: int, total: int) -> None:
        self.signum, self.saved, self.total = signum, saved, total
        super().__init__(self.message())

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a death by this signal

    def message(self) -> str:
        name = signal.Signals(self.signum).name
        return (
            f"interrupted ({name}); {self.saved} of {self.total} points saved; "
            "rerun the same command to resume"
        )


def _sweep_lists(base: Experiment, spec: SweepSpec) -> dict[str, list[Any]]:
    """The sweep's lists (the experiment's own value where a list is not given), checked:
    no empty list, and each pattern valid on this network, named by its place in the list."""
    lists = {
        "routings": spec.routings if spec.routings is not None else [base.routing.algorithm],
        "traffics": spec.traffics if spec.traffics is not None else [base.traffic.pattern],
        "loads": spec.loads if spec.loads is not None else [base.traffic.load],
        "seeds": spec.seeds if spec.seeds is not None else [base.seed],
    }
    for name, values in lists.items():
        if not values:
            raise UserError(f"sweep.{name}: empty list; give at least one value")
    count = 1
    for values in lists.values():
        count *= len(values)
    if count > MAX_POINTS:
        sizes = " x ".join(str(len(values)) for values in lists.values())
        raise UserError(
            f"sweep: {count} points (routings x traffics x loads x seeds = {sizes}); "
            f"at most {MAX_POINTS}"
        )
    if spec.traffics is not None:
        for index, traffic in enumerate(spec.traffics):
            try:
                with_overrides(base, {"traffic.pattern": traffic})
            except UserError as exc:
                message = exc.message.removeprefix("traffic.pattern: ")
                raise UserError(f"sweep.traffics.{index}: {message}") from None
    return lists


def expand(base: Experiment, spec: SweepSpec) -> list[Point]:
    """All points of the sweep, in routing, traffic, load, seed order, duplicates removed."""
    lists = _sweep_lists(base, spec)
    points: dict[str, Point] = {}
    for routing, traffic, load, seed in product(*lists.values()):
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
    # One fresh spawned process per point: no state inherited from the parent (threads, rich,
    # polars), memory returned between points, a crash takes down one point only, and the
    # processes can be ended at once on an interrupt (dflab.pool).
    return PointPool()


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
        "dflab_version": dflab_version(),
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
        # Whether it reached a steady state, and the engine's warnings.
        "diagnostics": asdict(Diagnostics.from_dict(raw.get("diagnostics") or {})),
    }
    series = series_frame(raw["series"]) if raw.get("series") else None
    store.save_point(record, series)
    return None


class _Signals:
    """Notes SIGINT and SIGTERM while installed (main thread only); the handler never raises,
    so nothing it interrupts is left half done."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def _note(self, signum: int, _frame: object) -> None:
        self.signum = self.signum or signum

    @contextmanager
    def installed(self) -> Iterator[_Signals]:
        previous: dict[int, Any] = {}
        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                # An ignored signal stays ignored (`cmd &` in a script ignores SIGINT, and
                # `nohup`-like launchers mean it), as Python itself does for SIGINT.
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    previous[signum] = signal.signal(signum, self._note)
        except ValueError:  # not the main thread: signals stay as they are
            pass
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def prepare_store(points: Sequence[Point], store: Store, report: SweepProgress) -> set[str]:
    """Make the store, or check that it may take these points (engine semantics, one
    configuration) and set its unreadable points aside; the hashes of the points it holds."""
    store.create()
    for note in store.set_aside_unreadable():
        report.note(note)
    stored = [record["config"] for record in store.points()]
    check_new_points(store.root, stored, [point.experiment.canonical() for point in points])
    return store.done_hashes()


def run_sweep(
    points: Sequence[Point],
    store: Store,
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
) -> SweepOutcome:
    """Run every point not yet in `store`; `console=None` shows no progress (notes still go to
    stderr). Raises `Interrupted` on SIGINT or SIGTERM, after ending the running points.

    `runner` must be picklable (a module-level function) for the default process pool.
    """
    if jobs < 1:
        raise UserError(f"--jobs: {jobs} is out of range; allowed: >= 1")
    report = sweep_progress(console)
    done = prepare_store(points, store, report)
    todo = deque(point for point in points if point.key not in done)
    outcome = SweepOutcome(points=list(points), skipped=len(points) - len(todo))

    def finish(point: Point, result: dict[str, Any], seconds: float) -> None:
        message = _record(point, result, store)
        outcome.ran += 1
        if message is not None:
            outcome.failures.append((point, message))
        report.point(point.label(), seconds, message)

    with _Signals().installed() as signals:
        report.start(len(points), outcome.skipped)
        try:
            _drive(todo, jobs, runner, executor_factory, finish, signals)
        finally:
            report.close()
    if signals.signum is not None:
        saved = len(store.done_hashes() & {point.key for point in points})
        raise Interrupted(signals.signum, saved, len(points))
    return outcome


Pending = dict[Future[dict[str, Any]], tuple[Point, float]]


def _drive(
    todo: deque[Point],
    jobs: int,
    runner: Runner,
    executor_factory: ExecutorFactory,
    finish: Callable[[Point, dict[str, Any], float], None],
    signals: _Signals,
) -> None:
    """Keep at most `jobs` points in flight until all are done or a signal arrives."""
    pending: Pending = {}
    pool = executor_factory(jobs)
    try:
        while (todo or pending) and signals.signum is None:
            while todo and len(pending) < jobs:
                point = todo.popleft()
                future = pool.submit(execute_point, runner, point.experiment.to_engine_json())
                pending[future] = (point, time.monotonic())
            finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            if signals.signum is not None:
                break  # the workers that died with the signal are no failures of their points
            for future in finished:
                point, started = pending.pop(future)
                finish(point, _outcome(future), time.monotonic() - started)
    finally:
        _stop(pool, pending, finish, keep=signals.signum is not None)


def _outcome(future: Future[dict[str, Any]]) -> dict[str, Any]:
    try:
        return future.result()
    except WorkerDied as exc:
        return {"error": str(exc)}


def _stop(pool: Executor, pending: Pending, finish: Callable[..., None], *, keep: bool) -> None:
    """End the workers still running; with `keep`, save the points that finished meanwhile."""
    kill = getattr(pool, "kill", None)
    if pending and kill is not None:
        kill()
        # Every process has ended: the pool completes their futures at once, with the result
        # of a point that finished just before, which is saved below.
        wait(pending, timeout=POLL_S * 10)
    if keep:
        for future, (point, started) in pending.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                finish(point, future.result(), time.monotonic() - started)
    pool.shutdown(wait=True, cancel_futures=True)
