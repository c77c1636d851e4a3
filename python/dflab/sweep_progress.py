"""Per-point progress of a sweep, on stderr.

On a terminal: a progress bar with the last point finished and an ETA. When stderr is not a
terminal (`2> log`, `nohup`, a batch scheduler): one plain line per finished point, so that a
log shows how far a long sweep got while it runs, not only at its end. Notes (a point set
aside, ...) go to the same place.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class SweepProgress(Protocol):
    def start(self, total: int, done: int) -> None: ...
    def point(self, label: str, seconds: float, error: str | None) -> None: ...
    def note(self, text: str) -> None: ...
    def close(self) -> None: ...


def duration(seconds: float) -> str:
    """'3.2 s', '4 min 5 s', '2 h 3 min': precise enough for a progress line."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


class _Counts:
    """Points finished so far and the pace of this session (skipped points take no time)."""

    def __init__(self) -> None:
        self.total = self.done = self.ran = self.failed = 0
        self.started = time.monotonic()

    def start(self, total: int, done: int) -> None:
        self.total, self.done = total, done
        self.started = time.monotonic()

    def finish(self, error: str | None) -> None:
        self.done += 1
        self.ran += 1
        self.failed += error is not None

    def eta_s(self) -> float | None:
        """Seconds left at this session's pace (points in parallel included); None before any."""
        if self.ran == 0:
            return None
        return (time.monotonic() - self.started) / self.ran * (self.total - self.done)


class LineProgress:
    """One plain line per finished point (stderr is not a terminal)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.counts = _Counts()

    def start(self, total: int, done: int) -> None:
        self.counts.start(total, done)

    def point(self, label: str, seconds: float, error: str | None) -> None:
        counts = self.counts
        counts.finish(error)
        what = "done" if error is None else "failed"
        eta = counts.eta_s()
        tail = f"; ETA {duration(eta)}" if eta is not None and counts.done < counts.total else ""
        self.note(
            f"point {counts.done}/{counts.total} {what} ({label}) in {duration(seconds)}{tail}"
        )

    def note(self, text: str) -> None:
        # print(), not rich: a log line must not be wrapped or styled.
        print(text, file=self.console.file, flush=True)

    def close(self) -> None:
        pass


class BarProgress:
    """A live progress bar (stderr is a terminal)."""

    def __init__(self, console: Console) -> None:
        self.counts = _Counts()
        self.bar = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("points"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self.task = self.bar.add_task("sweep", total=0)

    def start(self, total: int, done: int) -> None:
        self.counts.start(total, done)
        self.bar.update(self.task, total=total, completed=done)
        self.bar.start()

    def point(self, label: str, seconds: float, error: str | None) -> None:
        self.counts.finish(error)
        failed = f" ({self.counts.failed} failed)" if self.counts.failed else ""
        self.bar.update(self.task, advance=1, description=f"sweep{failed}: {label}")

    def note(self, text: str) -> None:
        self.bar.console.print(text, markup=False, highlight=False)

    def close(self) -> None:
        self.bar.stop()


class NoProgress:
    """No progress display (the Python API); notes still go to stderr."""

    def start(self, total: int, done: int) -> None:
        pass

    def point(self, label: str, seconds: float, error: str | None) -> None:
        pass

    def note(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def sweep_progress(console: Console | None) -> SweepProgress:
    """A bar on a terminal, plain lines otherwise, nothing without a console."""
    if console is None:
        return NoProgress()
    return BarProgress(console) if console.is_terminal else LineProgress(console)
