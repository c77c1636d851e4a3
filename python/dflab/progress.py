"""Progress of one run while the engine works: simulated-time fraction and ETA.

The engine calls back about every 0.2 s of wall time (and checks for Ctrl-C then, so a run
stops within about that). On a terminal a progress bar shows the simulated time and an ETA;
when stderr is not a terminal (batch logs, `nohup`), a plain line every `DFLAB_PROGRESS_S`
seconds (default 30) says the same, so a long job is never silent. A workload run also shows
each job's finished iterations (a bar per job, or `jobs:` on the plain line).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from dflab.engine import JobProgress
from dflab.errors import UserError

DEFAULT_LINE_EVERY_S = 30.0
# Exit codes of an interrupted run (the shell's 128 + signal) and of a simulation that failed.
EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 130, 143


class Terminated(Exception):
    """SIGTERM arrived during a run (raised by the handler `on_sigterm` installs)."""


@contextmanager
def on_sigterm() -> Iterator[None]:
    """Turn SIGTERM into `Terminated` while the block runs, so that a run stops as cleanly as
    on Ctrl-C (the engine checks for signals about every 0.2 s)."""

    def handler(_signum: int, _frame: object) -> None:
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def line_every_s() -> float:
    """Seconds between two plain progress lines (`DFLAB_PROGRESS_S`)."""
    raw = os.environ.get("DFLAB_PROGRESS_S")
    if raw is None:
        return DEFAULT_LINE_EVERY_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise UserError(
            f"DFLAB_PROGRESS_S: '{raw}' is not allowed; allowed: a number of seconds > 0"
        )
    return value


def eta_s(now_us: float, end_us: float, wall_s: float) -> float | None:
    """Wall seconds left if the rest of the run goes at the pace so far (None before any)."""
    if now_us <= 0 or wall_s <= 0:
        return None
    return wall_s * (end_us - now_us) / now_us


def describe(
    now_us: float, end_us: float, wall_s: float, jobs: list[JobProgress] | None = None
) -> str:
    """One plain progress line (with each job's iterations in a workload run)."""
    done = 100.0 * now_us / end_us if end_us > 0 else 100.0
    eta = eta_s(now_us, end_us, wall_s)
    eta_text = f", ETA {eta:.0f} s" if eta is not None else ""
    where = f"t = {now_us:.1f} of {end_us:.1f} us"
    jobs_text = f"; jobs: {', '.join(job.describe() for job in jobs)}" if jobs else ""
    return f"progress: {done:.0f}% ({where}) after {wall_s:.0f} s{eta_text}{jobs_text}"


@dataclass
class Tracker:
    """Where the run is: what the engine said last (also for the interrupt message)."""

    now_us: float = 0.0
    end_us: float = 0.0
    wall_s: float = 0.0
    listeners: list[Callable[[float, float, float], None]] = field(default_factory=list)
    # Each job's progress in a workload run (reported just before the time).
    jobs: list[JobProgress] = field(default_factory=list)

    def on_jobs(self, jobs: list[JobProgress]) -> None:
        self.jobs = jobs

    def __call__(self, now_us: float, end_us: float, wall_s: float) -> None:
        self.now_us, self.end_us, self.wall_s = now_us, end_us, wall_s
        for listener in self.listeners:
            listener(now_us, end_us, wall_s)

    def where(self) -> str:
        if self.end_us <= 0:
            return "before the first progress report"
        return f"at t = {self.now_us:.1f} of {self.end_us:.1f} us"


def simulate_with_progress(
    simulate: Callable[..., dict[str, Any]],
    config_json: str,
    label: str,
    err: Console,
    tracker: Tracker,
) -> dict[str, Any]:
    """Run `simulate(config_json, progress=..., job_progress=...)` showing progress on `err`."""
    if err.is_terminal:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[t]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        )
        with Progress(*columns, console=err, transient=True) as bar:
            task = bar.add_task(f"simulating {label}", total=1.0, t="")
            job_tasks: list[Any] = []

            def show(now_us: float, end_us: float, _wall: float) -> None:
                done = now_us / end_us if end_us > 0 else 1.0
                bar.update(task, completed=done, t=f"{now_us:.1f}/{end_us:.1f} us")
                for i, job in enumerate(tracker.jobs):
                    if i == len(job_tasks):
                        job_tasks.append(bar.add_task(f"  job {job.name}", total=1.0, t=""))
                    text = f"{job.describe()}, {job.ranks_done}/{job.ranks} ranks done"
                    bar.update(job_tasks[i], completed=job.fraction, t=text)

            tracker.listeners.append(show)
            return simulate(config_json, progress=tracker, job_progress=tracker.on_jobs)
    every = line_every_s()
    last = time.monotonic()

    def line(now_us: float, end_us: float, wall_s: float) -> None:
        nonlocal last
        if time.monotonic() - last >= every:
            last = time.monotonic()
            err.print(describe(now_us, end_us, wall_s, tracker.jobs), highlight=False)

    tracker.listeners.append(line)
    # The engine reports at least as often as the lines are asked for.
    every_s = min(0.2, every)
    return simulate(config_json, progress=tracker, job_progress=tracker.on_jobs, every_s=every_s)


def run_one(config_json: str, label: str, err: Console) -> dict[str, Any]:
    """`dflab run`'s engine call: progress on `err`; Ctrl-C, SIGTERM and a deadlock end it with
    one line on stderr and an exit code (130, 143, 1) instead of a traceback."""
    from dflab import engine

    tracker = Tracker()
    try:
        with on_sigterm():
            return simulate_with_progress(engine.simulate, config_json, label, err, tracker)
    except (KeyboardInterrupt, Terminated) as exc:
        terminated = isinstance(exc, Terminated)
        what, code = (
            ("terminated", EXIT_TERMINATED) if terminated else ("interrupted", EXIT_INTERRUPTED)
        )
        print(f"error: {what} {tracker.where()}; nothing was saved", file=sys.stderr)
        raise typer.Exit(code) from None
    except RuntimeError as exc:
        if not engine.is_deadlock(exc):
            raise
        # A simulation outcome (e.g. too few VCs), not a usage error: exit 1.
        message = str(exc)
        if not message.startswith("deadlock"):
            message = f"deadlock: {message}"
        print(f"error: {message}", file=sys.stderr)
        raise typer.Exit(EXIT_FAILED) from None
