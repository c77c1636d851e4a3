"""Which dflab made a result: the package version and the engine's semantics version.

The package version comes from the installed distribution's metadata (pyproject.toml), so it
has one source. The semantics version says which engine results are comparable: it changes
whenever equal configurations may give different results (docs/config.md, "The canonical form").
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

from dflab.config import ENGINE_SEMANTICS

__all__ = ["ENGINE_SEMANTICS", "dflab_version", "version_line"]


@cache
def dflab_version() -> str:
    try:
        return version("dflab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def version_line() -> str:
    """What `dflab --version` prints: the package, and the compiled engine if there is one
    (its own semantics version, which a stale build would show differing from the models')."""
    line = f"dflab {dflab_version()}"
    try:
        from dflab import _core
    except ImportError:
        return f"{line}, engine semantics {ENGINE_SEMANTICS} (engine not built)"
    built = _core.version() if hasattr(_core, "version") else "unknown"
    kind = _core.build() if hasattr(_core, "build") else "release"
    return f"{line}, engine {built} ({kind}), engine semantics {_core.engine_semantics()}"
