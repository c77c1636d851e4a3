"""What a sweep worker process runs for one point.

Kept free of heavy imports: with one process per point, every point pays for this module's
imports. Exceptions are turned into data here because engine exception types need not be
picklable across the process boundary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Runner = Callable[[str], dict[str, Any]]


def run_engine(config_json: str) -> dict[str, Any]:
    """The real runner: one engine simulation of an engine-JSON experiment."""
    from dflab import engine

    return engine.simulate(config_json)


def execute_point(runner: Runner, config_json: str) -> dict[str, Any]:
    """{"result": raw engine result} or {"error": "Type: message"}; never raises Exception."""
    try:
        return {"result": runner(config_json)}
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
