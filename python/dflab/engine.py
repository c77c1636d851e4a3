"""The only module that talks to the compiled engine (`dflab._core`).

It is imported lazily so that config validation, the CLI's error paths and the result store
work (and are testable) without a compiled engine. Engine `ConfigError`s become UserErrors;
deadlocks and invariant failures keep their own types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from dflab.errors import UserError


def _core() -> ModuleType:
    try:
        from dflab import _core
    except ImportError as exc:
        raise UserError(
            f"the dflab engine is not built ({exc}); run scripts/setup.sh or "
            "'maturin develop --release'"
        ) from None
    return _core


def has(function: str) -> bool:
    """Whether the compiled engine exists and provides `function`."""
    try:
        return hasattr(_core(), function)
    except UserError:
        return False


def _call(function: str, config_json: str) -> Any:
    core = _core()
    if not hasattr(core, function):
        raise UserError(f"the dflab engine has no '{function}' yet; rebuild it")
    config_error = getattr(core, "ConfigError", None)
    try:
        return getattr(core, function)(config_json)
    except Exception as exc:
        # The engine re-validates; what it rejects is the user's input, not a bug.
        if config_error is not None and isinstance(exc, config_error):
            raise UserError(str(exc)) from None
        raise


@dataclass(frozen=True)
class JobProgress:
    """How far one job of a workload run is (the `job_progress` callback's items)."""

    name: str
    ranks: int
    ranks_done: int
    # Iterations per rank, and iterations finished summed over the ranks.
    iterations: int
    iterations_done: int

    @property
    def fraction(self) -> float:
        """Finished rank-iterations over all of them (1 for a job without iterations once its
        ranks are done)."""
        total = self.ranks * self.iterations
        if total == 0:
            return 1.0 if self.ranks_done == self.ranks else 0.0
        return self.iterations_done / total

    def describe(self) -> str:
        """'fft3d 3.0/8 it (38%)': mean iterations per rank finished."""
        mean = self.iterations_done / self.ranks if self.ranks else 0.0
        return f"{self.name} {mean:.1f}/{self.iterations} it ({100 * self.fraction:.0f}%)"


def simulate(
    config_json: str,
    progress: Callable[[float, float, float], None] | None = None,
    job_progress: Callable[[list[JobProgress]], None] | None = None,
    every_s: float = 0.2,
) -> dict[str, Any]:
    """Run one experiment. `progress(now_us, end_us, wall_s)` is called about every `every_s`
    of wall time; in a workload run `job_progress(jobs)` just before it, one `JobProgress` per
    job. Ctrl-C raises KeyboardInterrupt within about that time."""
    if progress is None and job_progress is None:
        return _call("simulate", config_json)
    core = _core()
    config_error = getattr(core, "ConfigError", None)
    jobs = None
    if job_progress is not None:
        report = job_progress

        def jobs(raw: list[tuple[str, int, int, int, int]]) -> None:
            report([JobProgress(*job) for job in raw])

    try:
        return core.simulate(config_json, progress, every_s=every_s, job_progress=jobs)
    except Exception as exc:
        if config_error is not None and isinstance(exc, config_error):
            raise UserError(str(exc)) from None
        raise


def canonical(config_json: str) -> dict[str, Any]:
    """The canonical effective form of an experiment (see `Experiment.canonical`)."""
    return _call("canonical", config_json)


def schema() -> dict[str, Any]:
    """The engine's experiment schema (see `dflab.schema_gen`)."""
    return _core().schema()


def topology_info(config_json: str) -> dict[str, Any]:
    return _call("topology_info", config_json)


def validate(config_json: str) -> dict[str, Any]:
    return _call("validate", config_json)


def build() -> str:
    """How the engine was compiled: `release+pgo` (profile-guided, scripts/pgo.sh) or `release`."""
    core = _core()
    return core.build() if hasattr(core, "build") else "release"


def host_clock_ghz() -> float | None:
    """The host's core clock in GHz, measured now (about 0.1 s); None where it cannot be."""
    core = _core()
    return core.host_clock_ghz() if hasattr(core, "host_clock_ghz") else None


def is_deadlock(exc: BaseException) -> bool:
    """Whether `exc` is the engine's DeadlockError (the watchdog fired)."""
    try:
        error = getattr(_core(), "DeadlockError", None)
    except UserError:
        return False
    return error is not None and isinstance(exc, error)
