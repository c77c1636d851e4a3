"""The only module that talks to the compiled engine (`dflab._core`).

It is imported lazily so that config validation, the CLI's error paths and the result store
work (and are testable) without a compiled engine. Engine `ConfigError`s become UserErrors;
deadlocks and invariant failures keep their own types.
"""

from __future__ import annotations

from collections.abc import Callable
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


def simulate(
    config_json: str, progress: Callable[[float, float, float], None] | None = None
) -> dict[str, Any]:
    """Run one experiment. `progress(now_us, end_us, wall_s)` is called about every 0.2 s of
    wall time; Ctrl-C raises KeyboardInterrupt within about that time."""
    if progress is None:
        return _call("simulate", config_json)
    core = _core()
    config_error = getattr(core, "ConfigError", None)
    try:
        return core.simulate(config_json, progress)
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
