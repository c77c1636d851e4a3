"""Where a sweep's points run: the local process pool (the default) or a Dask cluster.

The `[cluster]` table of an experiment file (or `dflab sweep --backend dask --scheduler ...`)
picks the backend; both run the same points through `dflab.sweep.run_sweep`, which alone writes
the result store, so a point is stored once whatever happens to the workers.

Dask (`pip install 'dflab[cluster]'`): `scheduler` is
* `local` or `local:N`: a `distributed.LocalCluster` of N single-threaded worker processes on
  this machine (N: the CPUs this process may use);
* an address, `tcp://host:8786`: a running Dask scheduler (its workers need this dflab);
* `slurm` or `pbs`: `dask-jobqueue` submits `jobs` batch jobs of `cores` cores, `memory`,
  `walltime`, on `queue` (`account`, `job_extra` for anything else the scheduler needs).

A worker that dies (crash, out of memory, node lost) makes Dask run its tasks elsewhere, up to
Dask's `distributed.scheduler.allowed-failures`; past that, or on any other executor error or a
point past `timeout_s`, the point fails and the sweep retries it `retries` times (2 by default
on Dask, 0 on the local pool, whose failures are recorded and retried by the next run).
"""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import CancelledError, Executor, Future, InvalidStateError
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from dflab.config_types import choice
from dflab.errors import UserError
from dflab.pool import default_jobs
from dflab.sweep import ExecutorFactory, Policy, process_pool

# How often the sweep asks the scheduler how many worker threads the cluster has.
CAPACITY_EVERY_S = 5.0
# Pinned with the `cluster` extra of pyproject.toml.
INSTALL_HINT = "pip install 'dflab[cluster]'"


class ClusterSpec(BaseModel):
    """The `[cluster]` table: how the points of a sweep run (not part of any point's key)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    backend: Annotated[str, AfterValidator(choice(("local", "dask")))] = "local"
    # Dask: "local", "local:N", "tcp://host:port" (any scheduler address), "slurm", "pbs".
    scheduler: str | None = None
    # Attempts after the first for a point whose worker failed or that timed out.
    retries: Annotated[int, Field(ge=0, le=100)] | None = None
    timeout_s: Annotated[float, Field(gt=0)] | None = None
    # dask-jobqueue (scheduler = "slurm" or "pbs"): batch jobs, each one Dask worker job.
    jobs: Annotated[int, Field(ge=1)] = 1
    cores: Annotated[int, Field(ge=1)] = 1
    processes: Annotated[int, Field(ge=1)] | None = None
    memory: str = "4GB"
    walltime: str = "01:00:00"
    queue: str | None = None
    account: str | None = None
    job_extra: list[str] = []
    interface: str | None = None
    local_directory: str | None = None

    def policy(self) -> Policy:
        retries = self.retries if self.retries is not None else (2 if self.dask else 0)
        return Policy(retries=retries, timeout_s=self.timeout_s)

    @property
    def dask(self) -> bool:
        return self.backend == "dask"


def cluster_spec(table: dict[str, Any], **given: Any) -> ClusterSpec:
    """The file's `[cluster]` table with the command line's options laid over it; a scheduler
    given means the Dask backend."""
    from dflab.loading import validate

    data = {**table, **{k: v for k, v in given.items() if v is not None}}
    if data.get("scheduler") is not None and "backend" not in data:
        data["backend"] = "dask"
    try:
        spec = validate(ClusterSpec, data)
    except UserError as exc:
        raise UserError(f"cluster.{exc.message}") from None
    if spec.dask and spec.scheduler is not None:
        _scheduler_kind(spec.scheduler)  # checked before anything runs
    if not spec.dask and spec.scheduler is not None:
        raise UserError('cluster.scheduler: needs backend = "dask" (--backend dask)')
    return spec


def _scheduler_kind(scheduler: str) -> tuple[str, int | None]:
    """("local", workers or None), ("address", None), ("slurm" | "pbs", None)."""
    text = scheduler.strip()
    if text in ("slurm", "pbs"):
        return text, None
    if text == "local" or text.startswith("local:"):
        _, _, count = text.partition(":")
        if not count:
            return "local", None
        if count.isdigit() and int(count) >= 1:
            return "local", int(count)
        raise UserError(f"cluster.scheduler: {scheduler!r}: expected local:N with N >= 1")
    if "://" in text or ":" in text:
        return "address", None
    raise UserError(
        f"cluster.scheduler: {scheduler!r} is not allowed; allowed: local, local:N, a "
        "scheduler address (tcp://host:8786), slurm, pbs"
    )


class Backend:
    """An executor factory for `run_sweep`, and what it started (closed by `close`)."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def factory(self) -> ExecutorFactory:
        return process_pool

    def default_jobs(self) -> int:
        return default_jobs()

    def describe(self) -> str:
        return "local processes"

    def close(self) -> None:
        pass


def backend(spec: ClusterSpec) -> Backend:
    return DaskBackend(spec) if spec.dask else Backend(spec)


class DaskBackend(Backend):
    """Connects to (or starts) a Dask cluster on first use; `close` ends what it started."""

    def __init__(self, spec: ClusterSpec) -> None:
        super().__init__(spec)
        self._client: Any = None
        self._cluster: Any = None
        self._what = ""

    def client(self) -> Any:
        if self._client is None:
            self._connect()
        return self._client

    def _connect(self) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise UserError(
                f"cluster.backend: dask needs the distributed package: {INSTALL_HINT}"
            ) from None
        kind, count = _scheduler_kind(self.spec.scheduler or "local")
        if kind == "local":
            workers = count or default_jobs()
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                # No dashboard; the scheduler's HTTP server on a free port (8787 may be taken).
                dashboard_address=":0",
                scheduler_kwargs={"dashboard": False},
                # The workers ignore SIGINT: the sweep alone decides what an interrupt does.
                preload=["dflab.dask_worker"],
            )
            self._what = f"Dask LocalCluster of {workers} workers"
        elif kind == "address":
            self._what = f"Dask scheduler {self.spec.scheduler}"
        else:
            self._cluster = jobqueue_cluster(self.spec)
            self._cluster.scale(jobs=self.spec.jobs)
            self._what = f"Dask {kind} cluster of {self.spec.jobs} jobs"
        try:
            self._client = Client(self._cluster or self.spec.scheduler, timeout="30s")
        except OSError as exc:
            self.close()
            raise UserError(
                f"cluster.scheduler: cannot reach {self.spec.scheduler!r}: {exc}"
            ) from None

    @property
    def factory(self) -> ExecutorFactory:
        return lambda jobs: DaskPool(self.client())

    def default_jobs(self) -> int:
        """Points in flight: the cluster's worker threads (the jobs' cores before they start)."""
        kind, _ = _scheduler_kind(self.spec.scheduler or "local")
        if kind in ("slurm", "pbs"):
            return self.spec.jobs * self.spec.cores
        threads = sum(self.client().nthreads().values())
        return max(1, threads)

    def describe(self) -> str:
        self.client()
        return self._what

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def jobqueue_cluster(spec: ClusterSpec) -> Any:
    """A dask-jobqueue SLURMCluster or PBSCluster from the `[cluster]` table (no job submitted
    before `scale`)."""
    try:
        import dask_jobqueue
    except ImportError:
        raise UserError(
            f"cluster.scheduler: {spec.scheduler} needs the dask-jobqueue package: {INSTALL_HINT}"
        ) from None
    kind = {"slurm": dask_jobqueue.SLURMCluster, "pbs": dask_jobqueue.PBSCluster}
    options: dict[str, Any] = {
        "cores": spec.cores,
        "memory": spec.memory,
        "walltime": spec.walltime,
        "processes": spec.processes or 1,
        "job_extra_directives": list(spec.job_extra),
    }
    if spec.queue is not None:
        options["queue"] = spec.queue
    if spec.account is not None:
        options["account"] = spec.account
    if spec.interface is not None:
        options["interface"] = spec.interface
    if spec.local_directory is not None:
        options["local_directory"] = spec.local_directory
    return kind[str(spec.scheduler)](**options)


class DaskPool(Executor):
    """Submits each point as a Dask task; its concurrent future completes with the task.

    `abort` and `kill` cancel tasks (a task already running finishes in its worker thread:
    Dask cannot stop it; its result is then ignored)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._tasks: dict[Future[Any], Any] = {}
        self._lock = threading.Lock()
        self._threads, self._asked = 0, -CAPACITY_EVERY_S

    def capacity(self) -> int:
        """The cluster's worker threads now (asked of the scheduler every few seconds): the
        sweep keeps that many points in flight, so that workers joining later (batch jobs
        that start) are used too."""
        now = time.monotonic()
        if now - self._asked >= CAPACITY_EVERY_S:
            self._asked = now
            with contextlib.suppress(Exception):  # the scheduler is away: keep the last count
                self._threads = sum(self._client.nthreads().values())
        return self._threads

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        if kwargs:
            raise TypeError("DaskPool.submit takes positional arguments only")
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        task = self._client.submit(fn, *args, pure=False)
        with self._lock:
            self._tasks[future] = task
        task.add_done_callback(lambda task: self._complete(future, task))
        return future

    def _complete(self, future: Future[Any], task: Any) -> None:
        with self._lock:
            self._tasks.pop(future, None)
        try:
            if task.status == "finished":
                outcome: tuple[str, Any] = ("result", task.result())
            elif task.status == "cancelled":
                outcome = ("error", CancelledError())
            else:
                outcome = ("error", task.exception())
        except BaseException as exc:  # the task's own error, or the client's
            outcome = ("error", exc)
        if future.done():
            return
        with contextlib.suppress(InvalidStateError):  # completed meanwhile by `abort`, `kill`
            if outcome[0] == "result":
                future.set_result(outcome[1])
            else:
                future.set_exception(outcome[1])

    def abort(self, future: Future[Any]) -> None:
        """Give up one point (it timed out): cancel its task and restart the worker running it,
        whose thread it would hold otherwise (Dask cannot stop a running task)."""
        with self._lock:
            task = self._tasks.pop(future, None)
        if task is not None:
            try:
                processing = self._client.processing()
                workers = [w for w, keys in processing.items() if task.key in keys]
            except Exception:  # the scheduler is gone: nothing to restart
                workers = []
            task.cancel()
            if workers:
                self._client.restart_workers(workers, timeout=60, raise_for_error=False)
        if not future.done():
            with contextlib.suppress(InvalidStateError):
                future.set_exception(CancelledError())

    def kill(self) -> None:
        """Cancel every task (on an interrupt; the cluster is closed next)."""
        with self._lock:
            tasks, self._tasks = self._tasks, {}
        for future, task in tasks.items():
            task.cancel()
            if not future.done():
                with contextlib.suppress(InvalidStateError):
                    future.set_exception(CancelledError())

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self.kill()


__all__ = [
    "Backend",
    "ClusterSpec",
    "DaskBackend",
    "DaskPool",
    "backend",
    "cluster_spec",
    "jobqueue_cluster",
]
