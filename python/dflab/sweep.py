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
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, Future, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import product
from typing import Any

from rich.console import Console

from dflab.api import Diagnostics, Execution, Summary, series_frame
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.loading import ALIASES, SweepSpec, with_overrides
from dflab.pool import PointPool, WorkerDied
from dflab.store import COORDINATES, Store, axes_of
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
        extra = "".join(f" {k}={_show(v)}" for k, v in c.items() if k not in COORDINATES)
        return f"{c['routing']} {c['traffic']} load {c['load']:g} seed {c['seed']}{extra}"


def _show(value: Any) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


@dataclass
class SweepOutcome:
    points: list[Point]
    skipped: int = 0
    ran: int = 0
    failures: list[tuple[Point, str]] = field(default_factory=list)
    retried: int = 0


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


# One axis of a sweep: its name (for messages) and its values, each a set of config overrides.
Axis = tuple[str, list[dict[str, Any]]]


def _checked(base: Experiment, name: str, values: list[dict[str, Any]]) -> None:
    """Each value of an axis applied alone to the experiment; the first that is refused names
    its place, e.g. `sweep.routing.q_thld1.2: -1 is out of range; allowed: ...`."""
    for index, overrides in enumerate(values):
        try:
            with_overrides(base, overrides)
        except UserError as exc:
            message = exc.message
            if len(overrides) == 1:
                (key,) = overrides
                message = message.removeprefix(f"{key}: ")
            raise UserError(f"sweep.{name}.{index}: {message}") from None


def _list_axis(key: str, values: list[Any] | None) -> list[dict[str, Any]]:
    """One of the four lists as an axis; not given, one value that changes nothing, so that the
    experiment's own value, or what a point of `points` set, stays."""
    return [{key: v} for v in values] if values is not None else [{}]


def _axes(base: Experiment, spec: SweepSpec) -> tuple[list[Axis], list[str]]:
    """The sweep's axes in crossing order (routings, traffics, the keys, zips, points, loads,
    seeds; the experiment's own value where a list is not given), each checked on the
    experiment; and the swept config keys that become coordinates."""
    seeds = spec.seeds
    if spec.seed_count is not None:
        seeds = [base.seed + i for i in range(spec.seed_count)]
    lists = {
        "routings": ("routing.algorithm", spec.routings),
        "traffics": ("traffic.pattern", spec.traffics),
    }
    axes: list[Axis] = []
    for name, (key, values) in lists.items():
        if values is not None and not values:
            raise UserError(f"sweep.{name}: empty list; give at least one value")
        axes.append((name, _list_axis(key, values)))
    keys: list[str] = []
    for key, values in (spec.axes or {}).items():
        axes.append((key, [{key: v} for v in values]))
        keys.append(key)
    for index, group in enumerate(spec.zips or []):
        length = len(next(iter(group.values())))
        axes.append((f"zip.{index}", [{k: v[i] for k, v in group.items()} for i in range(length)]))
        keys += list(group)
    if spec.points:
        axes.append(("points", [dict(p) for p in spec.points]))
        keys += [key for p in spec.points for key in p]
    for name, key, values in (("loads", "traffic.load", spec.loads), ("seeds", "seed", seeds)):
        if values is not None and not values:
            raise UserError(f"sweep.{name}: empty list; give at least one value")
        axes.append((name, _list_axis(key, values)))
    count = 1
    for _, values in axes:
        count *= len(values)
    if count > MAX_POINTS:
        sizes = " x ".join(f"{len(values)} {name}" for name, values in axes)
        raise UserError(f"sweep: {count} points ({sizes}); at most {MAX_POINTS}")
    for name, values in axes:
        # The four lists' values are checked by SweepSpec (patterns only on the network).
        if name in ("routings", "loads", "seeds") or (name, spec.traffics) == ("traffics", None):
            continue
        _checked(base, name, values)
    coordinates = [k for k in dict.fromkeys(keys) if ALIASES.get(k) is None]
    return axes, coordinates


def _canonical_value(experiment: Experiment, key: str) -> Any:
    """`key`'s value in the experiment's canonical form (None where it has none: a parameter
    of another routing)."""
    value: Any = experiment.canonical()
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def expand(base: Experiment, spec: SweepSpec) -> list[Point]:
    """All points of the sweep, in routing, traffic, swept keys, load, seed order, duplicates
    (equal canonical forms) removed. A point's coordinates are routing, traffic, load, seed
    and each swept key's canonical value."""
    axes, keys = _axes(base, spec)
    points: dict[str, Point] = {}
    for combination in product(*(values for _, values in axes)):
        overrides: dict[str, Any] = {}
        for part in combination:
            overrides.update(part)
        if "traffic.load" in overrides:
            overrides["traffic.load"] = float(overrides["traffic.load"])
        try:
            experiment = with_overrides(base, overrides)
        except UserError as exc:
            shown = ", ".join(f"{k}={_show(v)}" for k, v in overrides.items())
            raise UserError(f"sweep point ({shown}): {exc.message}") from None
        coords = {
            "routing": experiment.routing.algorithm,
            "traffic": experiment.pattern_label(),
            "load": experiment.traffic.load,
            "seed": experiment.seed,
        }
        coords.update({key: _canonical_value(experiment, key) for key in keys})
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
    workload = raw.get("workload") or {}
    if workload.get("jobs"):
        # A workload point's per-job rows (a few per point): the store's jobs table.
        record["jobs"] = workload["jobs"]
    probes = raw.get("probes") or {}
    if probes.get("totals") or probes.get("per_router"):
        record["probes"] = {k: probes[k] for k in ("totals", "per_router") if probes.get(k)}
    columns = dict(raw.get("series") or {})
    rows = len(columns.get("window_start_us", []))
    # Per-window probes (e.g. `run.decision_probes`) are series columns, `probe_<name>`.
    columns.update({f"probe_{k}": v for k, v in probes.get("series", {}).items() if len(v) == rows})
    series = series_frame(columns) if columns else None
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
    store.remove_stale_temp_files()
    for note in store.set_aside_unreadable():
        report.note(note)
    records = store.points()
    axes = set(axes_of(records)) | {k for p in points for k in p.coords if k not in COORDINATES}
    stored = [record["config"] for record in records]
    new = [point.experiment.canonical() for point in points]
    check_new_points(store.root, stored, new, axes)
    return store.done_hashes()


@dataclass(frozen=True)
class Policy:
    """What becomes of a point whose worker failed (died, raised outside the engine, was lost
    by the cluster) or ran past `timeout_s`: it is run again up to `retries` times, then
    recorded as failed. A point the engine refuses (a deadlock, a bad configuration) fails at
    once: it would fail again."""

    retries: int = 0
    timeout_s: float | None = None

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise UserError(f"cluster.retries: {self.retries} is out of range; allowed: >= 0")
        if self.timeout_s is not None and not self.timeout_s > 0:
            raise UserError(f"cluster.timeout_s: {self.timeout_s} is out of range; allowed: > 0")


def run_sweep(
    points: Sequence[Point],
    store: Store,
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
    policy: Policy | None = None,
) -> SweepOutcome:
    """Run every point not yet in `store`; `console=None` shows no progress (notes still go to
    stderr). Raises `Interrupted` on SIGINT or SIGTERM, after ending the running points. The
    store's summary tables are written when the sweep ends (interrupted or not).

    `runner` must be picklable (a module-level function) for the default process pool.
    """
    (outcome,) = run_sweeps(
        [(points, store)],
        jobs=jobs,
        runner=runner,
        executor_factory=executor_factory,
        console=console,
        policy=policy,
    )
    return outcome


def run_sweeps(
    sweeps: Sequence[tuple[Sequence[Point], Store]],
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
    policy: Policy | None = None,
    cost: Callable[[Point], float] | None = None,
) -> list[SweepOutcome]:
    """Several sweeps, each into its own store, through one pool: their points run side by side,
    so that the long points of one sweep do not leave workers idle at the end of another. With
    `cost`, the most expensive points start first (the sweep then ends with short points, not
    with one long point on one worker). One outcome per sweep; as `run_sweep` otherwise."""
    if jobs < 1:
        raise UserError(f"--jobs: {jobs} is out of range; allowed: >= 1")
    policy = policy or Policy()
    report = sweep_progress(console)
    todo: list[tuple[int, Point, int]] = []
    outcomes: list[SweepOutcome] = []
    for index, (points, store) in enumerate(sweeps):
        done = prepare_store(points, store, report)
        todo += [(index, point, 0) for point in points if point.key not in done]
        outcomes.append(
            SweepOutcome(points=list(points), skipped=sum(point.key in done for point in points))
        )
    if cost is not None:
        todo.sort(key=lambda item: -cost(item[1]))
    queue = deque(todo)
    finished: set[tuple[int, str]] = set()
    named = len(sweeps) > 1

    def finish(index: int, point: Point, result: dict[str, Any], seconds: float) -> None:
        if (index, point.key) in finished:
            return  # a late duplicate (a cancelled attempt that completed after all)
        finished.add((index, point.key))
        store, outcome = sweeps[index][1], outcomes[index]
        message = _record(point, result, store)
        outcome.ran += 1
        if message is not None:
            outcome.failures.append((point, message))
        label = f"{store.root.name}: {point.label()}" if named else point.label()
        report.point(label, seconds, message)

    def retry(index: int, point: Point, attempt: int, message: str) -> bool:
        if attempt >= policy.retries:
            return False
        outcomes[index].retried += 1
        report.note(
            f"note: {point.label()}: {message}; retrying (attempt {attempt + 2} of "
            f"{policy.retries + 1})"
        )
        queue.append((index, point, attempt + 1))
        return True

    total = sum(len(points) for points, _ in sweeps)
    with _Signals().installed() as signals:
        report.start(total, sum(o.skipped for o in outcomes))
        try:
            _drive(queue, jobs, runner, executor_factory, finish, retry, signals, policy)
        finally:
            report.close()
            for _, store in sweeps:
                store.write_summary()
    if signals.signum is not None:
        saved = sum(
            len(store.done_hashes() & {point.key for point in points}) for points, store in sweeps
        )
        raise Interrupted(signals.signum, saved, total)
    return outcomes


@dataclass
class _Attempt:
    index: int  # of the sweep (and store) the point belongs to
    point: Point
    attempt: int
    started: float


Pending = dict[Future[dict[str, Any]], _Attempt]


def _drive(
    todo: deque[tuple[int, Point, int]],
    jobs: int,
    runner: Runner,
    executor_factory: ExecutorFactory,
    finish: Callable[[int, Point, dict[str, Any], float], None],
    retry: Callable[[int, Point, int, str], bool],
    signals: _Signals,
    policy: Policy,
) -> None:
    """Keep at most `jobs` points in flight (more if the executor's `capacity()` has grown
    past it: workers that joined a Dask cluster) until all are done or a signal arrives."""
    pending: Pending = {}
    pool = executor_factory(jobs)
    capacity = getattr(pool, "capacity", lambda: jobs)

    def settle(attempt: _Attempt, result: dict[str, Any], retryable: bool) -> None:
        seconds = time.monotonic() - attempt.started
        if retryable and retry(attempt.index, attempt.point, attempt.attempt, str(result["error"])):
            return
        finish(attempt.index, attempt.point, result, seconds)

    try:
        while (todo or pending) and signals.signum is None:
            limit = max(jobs, capacity()) if todo else jobs
            while todo and len(pending) < limit:
                index, point, attempt = todo.popleft()
                future = pool.submit(execute_point, runner, point.experiment.to_engine_json())
                pending[future] = _Attempt(index, point, attempt, time.monotonic())
            finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            if signals.signum is not None:
                break  # the workers that died with the signal are no failures of their points
            for future in finished:
                attempt = pending.pop(future)
                settle(attempt, *_outcome(future))
            if policy.timeout_s is not None:
                now = time.monotonic()
                late = [f for f, a in pending.items() if now - a.started > policy.timeout_s]
                for future in late:
                    attempt = pending.pop(future)
                    _abort(pool, future)
                    error = f"timed out after {policy.timeout_s:g} s"
                    settle(attempt, {"error": error}, True)
    finally:
        _stop(pool, pending, finish, keep=signals.signum is not None)


def _abort(pool: Executor, future: Future[Any]) -> None:
    """End one point's attempt: its process (the local pool) or its task (Dask)."""
    abort = getattr(pool, "abort", None)
    if abort is not None:
        abort(future)
    else:
        future.cancel()


def _outcome(future: Future[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """The point's outcome, and whether a failure lies with the worker, not the point (so that
    another attempt may succeed): a dead or lost worker, an executor error."""
    try:
        return future.result(), False
    except WorkerDied as exc:
        return {"error": str(exc)}, True
    except CancelledError:
        return {"error": "cancelled by the executor"}, True
    except Exception as exc:  # the executor's own failures (Dask: KilledWorker, lost comms)
        return {"error": f"{type(exc).__name__}: {exc}"}, True


def _stop(pool: Executor, pending: Pending, finish: Callable[..., None], *, keep: bool) -> None:
    """End the workers still running; with `keep`, save the points that finished meanwhile."""
    kill = getattr(pool, "kill", None)
    if pending and kill is not None:
        kill()
        # Every process has ended: the pool completes their futures at once, with the result
        # of a point that finished just before, which is saved below.
        wait(pending, timeout=POLL_S * 10)
    if keep:
        for future, attempt in pending.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                seconds = time.monotonic() - attempt.started
                finish(attempt.index, attempt.point, future.result(), seconds)
    pool.shutdown(wait=True, cancel_futures=True)
