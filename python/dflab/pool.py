"""One process per sweep point: spawned fresh, its result sent back through a pipe, killable.

Why not `ProcessPoolExecutor`: it spawns replacement workers from a hidden thread, has no way to
end running workers before Python 3.14, and one worker that dies breaks the whole pool (every
point in flight fails with it). Here each point owns its process: a crash fails that point
only, and `kill()` ends every running process at once (on Ctrl-C or SIGTERM, see `sweep`).

Signals, so that the parent alone decides what an interrupt does:
* Workers start with SIGINT blocked (the mask survives exec). Ctrl-C in a terminal signals the
  whole foreground process group; a worker that is still importing would otherwise die with a
  KeyboardInterrupt traceback on the user's terminal.
* SIGTERM keeps its default action, so `kill()` (or a scheduler signalling the process group)
  ends a worker at once, even while the engine runs without the GIL.
* On Linux a worker asks the kernel for SIGTERM when its parent dies (SIGKILL included), so no
  worker goes on computing a point that nobody will read.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from typing import Any

# How long `kill()` waits for SIGTERM to work before it sends SIGKILL.
KILL_GRACE_S = 2.0
_PR_SET_PDEATHSIG = 1


def default_jobs() -> int:
    """Points to run at once by default: the CPUs this process may run on (its affinity, as
    `taskset` or a batch allocation set it), not all the machine's."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class WorkerDied(Exception):
    """The process of a point ended without sending a result (crash, out of memory, killed)."""


def _die_with_parent(parent: int) -> None:
    """Linux: SIGTERM when the parent goes; elsewhere a no-op."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _child(conn: Connection, parent: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    _die_with_parent(parent)
    try:
        message: tuple[str, Any] = ("result", fn(*args))
    except BaseException as exc:  # the parent turns it into a failed point
        message = ("raised", f"{type(exc).__name__}: {exc}")
    conn.send(message)
    conn.close()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while a child is started (the child inherits the mask); a
    Ctrl-C meanwhile is delivered to the parent right after."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class PointPool(Executor):
    """Runs every submission in its own spawned process; futures complete from a watcher thread.

    The caller limits how many run at once (the sweep keeps `jobs` in flight)."""

    def __init__(self) -> None:
        self._context = multiprocessing.get_context("spawn")
        self._running: dict[Future[Any], tuple[multiprocessing.process.BaseProcess, Connection]]
        self._running = {}
        self._lock = threading.Lock()
        self._wake_reader, self._wake_writer = self._context.Pipe(duplex=False)
        self._closed = False
        self._watcher = threading.Thread(target=self._watch, name="dflab-pool", daemon=True)
        self._watcher.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if kwargs:
            raise TypeError("PointPool.submit takes positional arguments only")
        reader, writer = self._context.Pipe(duplex=False)
        process = self._context.Process(
            target=_child, args=(writer, os.getpid(), fn, args), daemon=True
        )
        if os.name == "posix":
            # Started by the first spawn otherwise, the resource tracker unblocks SIGINT in
            # this thread on its way out (multiprocessing.resource_tracker), and the worker
            # would be started with SIGINT deliverable.
            resource_tracker.ensure_running()
        with _sigint_blocked():
            process.start()
        writer.close()  # the child holds the only write end: EOF tells us it is gone
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        with self._lock:
            if self._closed:
                process.kill()
                raise RuntimeError("cannot submit to a pool that was shut down")
            self._running[future] = (process, reader)
        self._wake_writer.send_bytes(b"")
        return future

    def pids(self) -> list[int]:
        """Processes still running (tests use it to check that none is left)."""
        with self._lock:
            return [process.pid for process, _ in self._running.values() if process.pid]

    def kill(self) -> None:
        """End every running point now: SIGTERM, then SIGKILL after KILL_GRACE_S."""
        with self._lock:
            processes = [process for process, _ in self._running.values()]
        for process in processes:
            process.terminate()
        deadline = time.monotonic() + KILL_GRACE_S
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
        self._wake_writer.send_bytes(b"")
        if wait:
            self._watcher.join()
            self._wake_reader.close()
            self._wake_writer.close()

    def _watch(self) -> None:
        while True:
            with self._lock:
                if self._closed and not self._running:
                    return
                owners: dict[Any, Future[Any]] = {}
                for future, (process, reader) in self._running.items():
                    owners[reader] = owners[process.sentinel] = future
            for ready in wait([self._wake_reader, *owners]):
                if ready is self._wake_reader:
                    self._wake_reader.recv_bytes()
                elif owners[ready] in self._running:
                    self._collect(owners[ready])

    def _collect(self, future: Future[Any]) -> None:
        """The point's process sent its result or ended: complete its future."""
        process, reader = self._running[future]
        message, closed = None, False
        try:
            if reader.poll():
                message = reader.recv()
        except (EOFError, OSError):
            closed = True  # the child is gone or going: its end of the pipe closed
        if message is None and not closed and process.is_alive():
            return  # woken early; the result or the exit comes next
        process.join()
        reader.close()
        with self._lock:
            del self._running[future]
        if message is None:
            future.set_exception(WorkerDied(_how_it_ended(process.exitcode)))
        elif message[0] == "raised":
            future.set_exception(WorkerDied(f"worker raised {message[1]}"))
        else:
            future.set_result(message[1])


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"worker process died ({name}: crash, out of memory or killed)"
    return f"worker process died (exit status {exitcode}: crash or out of memory)"
