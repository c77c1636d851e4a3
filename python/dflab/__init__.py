"""dflab: Dragonfly interconnect simulator and routing laboratory (Python front end).

Public names are imported on first use (PEP 562) so that light entry points, such as sweep
workers and benchmark children whose memory is measured, do not pay for polars and friends.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dflab.api import Result, Summary, simulate
    from dflab.config import Experiment
    from dflab.errors import UserError
    from dflab.loading import load_experiment, preset
    from dflab.store import load_jobs, load_results

    __version__: str

_WHERE = {
    "Experiment": "dflab.config",
    "Result": "dflab.api",
    "Summary": "dflab.api",
    "UserError": "dflab.errors",
    "load_experiment": "dflab.loading",
    "load_jobs": "dflab.store",
    "load_results": "dflab.store",
    "preset": "dflab.loading",
    "simulate": "dflab.api",
}

__all__ = [
    "Experiment",
    "Result",
    "Summary",
    "UserError",
    "__version__",
    "load_experiment",
    "load_jobs",
    "load_results",
    "preset",
    "simulate",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # from the package metadata (pyproject.toml), read on first use
        from dflab.version import dflab_version

        return dflab_version()
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'dflab' has no attribute {name!r}")
