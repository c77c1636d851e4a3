"""Output files named on the command line, checked before any work is done.

A simulation or a plot can take minutes; a typo in its output path must not cost them. So an
output path is checked first: its suffix, the directories on the way to it (one of them may be a
file), and whether a file can be made there (permissions, a read-only file system). Problems are
`UserError`s naming the option: `--series-out 'README.md/x.csv': not a directory ...`.

The check makes no directory and leaves no file behind; `prepare` makes the directories when the
output is about to be written.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from dflab.errors import UserError

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.figure import Figure

SERIES_SUFFIXES = (".csv", ".parquet")
# The default format of a figure named without a suffix (matplotlib's `savefig.format`).
FIGURE_DEFAULT_SUFFIX = ".png"


def figure_suffixes() -> tuple[str, ...]:
    """The file types matplotlib's Agg canvas writes, as suffixes ('.png', '.pdf', ...)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    return tuple(sorted(f".{kind}" for kind in FigureCanvasAgg.get_supported_filetypes()))


def figure_path(path: str | Path) -> Path:
    """The file a figure named `path` is written to: a name without a suffix gets '.png', which
    is what matplotlib would write (so the path we print is the file that exists)."""
    path = Path(path)
    return path if path.suffix else path.with_name(path.name + FIGURE_DEFAULT_SUFFIX)


def _nearest_existing(path: Path) -> Path:
    """`path`'s closest ancestor (or itself) that exists; '.' at worst."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _probe_directory(directory: Path) -> str | None:
    """Why no file can be made in `directory`, or None. A real attempt, since permission bits
    do not tell (root ignores them; read-only mounts and pseudo file systems refuse anyway)."""
    probe = directory / f".dflab-probe-{secrets.token_hex(6)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    probe.unlink(missing_ok=True)
    return None


def _probe_file(path: Path) -> str | None:
    """Why the existing file `path` cannot be overwritten, or None (opened for append: its
    contents are untouched)."""
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _problem(path: Path) -> str | None:
    """What stands in the way of writing the file `path`, or None."""
    if path.is_dir():
        return "is a directory"
    if path.exists():
        reason = _probe_file(path)
        return None if reason is None else f"cannot be overwritten ({reason.lower()})"
    found = _nearest_existing(path.parent)
    if not found.is_dir():
        return f"not a directory ('{found}' is a file)"
    reason = _probe_directory(found)
    return None if reason is None else f"cannot write in '{found}' ({reason.lower()})"


def check_output(option: str, path: str | Path, suffixes: Collection[str]) -> Path:
    """`path` if a file of one of `suffixes` can be written there, else a UserError naming
    `option` and the path as given."""
    path = Path(path)
    if path.suffix.lower() not in suffixes:
        kind = f"'{path.suffix}'" if path.suffix else "no suffix"
        allowed = ", ".join(sorted(suffixes))
        raise UserError(f"{option} '{path}': unsupported file type ({kind}); use {allowed}")
    problem = _problem(path)
    if problem is not None:
        raise UserError(f"{option} '{path}': {problem}")
    return path


def check_output_dir(option: str, path: str | Path) -> Path:
    """`path` if it is, or can be made, a directory to write files in (a result store), else a
    UserError naming `option`: `--out 'README.md/x': not a directory ('README.md' is a file)`."""
    path = Path(path)
    found = _nearest_existing(path)
    if not found.is_dir():
        what = "not a directory" if found == path else f"not a directory ('{found}' is a file)"
        raise UserError(f"{option} '{path}': {what}")
    reason = _probe_directory(found)
    if reason is not None:
        raise UserError(f"{option} '{path}': cannot write in '{found}' ({reason.lower()})")
    return path


def prepare(option: str, path: Path) -> None:
    """Make the directories up to `path` (checked before, so a failure here is a race or a
    full disk: still one line naming the option)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{option} '{path}': {exc.strerror or exc}") from None


def write_failed(option: str, path: Path, exc: OSError) -> UserError:
    """The UserError for an output that could not be written after all (disk full, ...)."""
    return UserError(f"{option} '{path}': could not be written ({exc.strerror or exc})")


def write_series(frame: pl.DataFrame, path: Path, option: str = "--series-out") -> None:
    """Write a run's per-window series as CSV or Parquet, by the suffix of `path` (checked
    before the run by `check_output`)."""
    # Encoded in memory, so that every failure to write is an OSError of ours (polars reports
    # some as its own ComputeError); a run's series is small.
    buffer = io.BytesIO()
    if path.suffix.lower() == ".csv":
        frame.write_csv(buffer)
    else:
        frame.write_parquet(buffer)
    prepare(option, path)
    try:
        path.write_bytes(buffer.getvalue())
    except OSError as exc:
        raise write_failed(option, path, exc) from None


def save_figure(figure: Figure, paths: list[Path], option: str, dpi: int) -> None:
    """Write `figure` to each of `paths` (checked before), making their directories."""
    for path in paths:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            figure.savefig(path, dpi=dpi)
        except OSError as exc:
            raise write_failed(option, path, exc) from None
