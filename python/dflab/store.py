"""Result store: one directory per sweep, keyed by experiment content hash.

Layout:
    store.json              what made the store: the engine semantics and the key schema
    points/<hash>.json      one finished point: coordinates, summary, hops histogram, config
    series/<hash>.parquet   its per-window time series
    journal.jsonl           append-only: one line per finished point (its record and the size
                            and time of its point file), read instead of every point file
    failed/<hash>.json      a point that failed (message); retried by the next run
    corrupt/<hash>.json     a point file found unreadable (cut short, edited), set aside by
                            the next sweep, which reruns the point
    summary.parquet, summary.csv     every finished point, one row each
    aggregate.parquet, aggregate.csv every point but the seed, one row each: means and 95 %
                            confidence intervals over its seeds (dflab.stats)
    jobs.parquet, jobs.csv  workload points only: one row per (point, job), the point's
                            coordinates then the job's row (docs/workloads.md, "Metrics")

Files are created with the permissions the umask gives (0644 typically), like any other file
the user makes, so that colleagues sharing a project directory can read the results.

**Finishing a point is O(1)**: its series and JSON are written atomically (temp file in the same
directory, fsync, rename), the JSON last, so a point counts as done only once all of its data is
on disk; then one line is appended to the journal (one `write` on a file opened O_APPEND). The
summary tables are not touched: a sweep writes them when it ends (also when interrupted), and
`load_results` builds them from the points. A crash or `kill -9` at any moment loses at most the
points still running, and the next sweep rewrites the tables.

**The point files are the truth, the journal an index.** A point is done when its file exists
in points/; its record is read from the journal when a journal line names it with the file's
current size and modification time, and from the file otherwise (a store made before the
journal, a line lost or cut short by a kill, a file replaced or edited since). So a damaged or
missing journal costs reading time, never a result. Several processes may write one store at
once: point files are replaced atomically, journal lines are appended whole, and a point found
twice (two writers finished it) is one row.

A store holds results of one engine semantics only (`store.json`): a store made by an engine
whose results differ (an older semantics, or a dflab before the manifest existed) is refused
with a message, never mixed with new points; nor are points of another configuration (see
`dflab.store_config`).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from dflab.api import Execution, Summary
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError
from dflab.store_config import check_stored

COORDINATES: tuple[str, ...] = ("routing", "traffic", "load", "seed")
JOURNAL = "journal.jsonl"
# A temporary file this old was left by a writer killed while writing it.
STALE_TEMP_S = 3600.0
# Seeds span the whole u64 range the engine accepts (Int64 would refuse those >= 2**63).
_COORD_TYPES = {"routing": pl.String, "traffic": pl.String, "load": pl.Float64, "seed": pl.UInt64}
_PY_TO_POLARS = {"float": pl.Float64, "int": pl.Int64, "str": pl.String}
# Whether the point reached a steady state (null: too few packets to tell); see the point's
# "diagnostics" for the engine's warnings.
DIAGNOSIS = {"steady_state": pl.Boolean}
# Which dflab and engine semantics made each row (last columns of the summary tables).
PROVENANCE = {"dflab_version": pl.String, "engine_semantics": pl.Int64}
# What a point's JSON must hold to count as finished.
_POINT_KEYS = ("hash", "coords", "summary", "config")


def _create_temp(path: Path) -> tuple[int, Path]:
    """A new temporary file beside `path`. os.open applies the umask to 0o666 (mkstemp would
    make it 0600 whatever the umask, and the rename would keep that)."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def atomic_write(path: Path, data: bytes) -> os.stat_result:
    """Replace `path` with `data` so that readers see the old or the new file, never a part.
    Returns the status (size, modification time) of the file written."""
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            status = os.fstat(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    # Persist the rename itself (the directory entry), not only the file contents.
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return status


def append_line(path: Path, line: bytes) -> None:
    """Append one line to `path` in one `write` (O_APPEND: concurrent appenders never overlap on
    a local file system). A last line left without its newline (a writer killed in the middle)
    is ended first, so that it spoils only itself."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _polars_type(annotation: Any) -> Any:
    """The column type of a dataclass field annotated 'int', 'float' or 'str' (or '... | None')."""
    return _PY_TO_POLARS[str(annotation).removesuffix(" | None")]


def _axis_type(values: list[Any]) -> Any:
    """The column type of a swept key's values: Boolean, Int64, Float64 or String."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pl.Boolean
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pl.Int64
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pl.Float64
    return pl.String


def summary_schema(
    axes: Sequence[str] = (), rows: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """The summary table's columns: hash, name, the coordinates (with the swept keys after the
    seed), the summary fields, the diagnosis and the provenance."""
    schema: dict[str, Any] = {"hash": pl.String, "name": pl.String, **_COORD_TYPES}
    for axis in axes:
        schema[axis] = _axis_type([row.get(axis) for row in rows])
    for field in Summary.__dataclass_fields__.values():
        schema[field.name] = _polars_type(field.type)
    return {**schema, **DIAGNOSIS, **PROVENANCE}


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.points_dir = self.root / "points"
        self.series_dir = self.root / "series"
        self.failed_dir = self.root / "failed"
        self.corrupt_dir = self.root / "corrupt"
        self._created = False

    @property
    def manifest(self) -> Path:
        return self.root / "store.json"

    def create(self) -> None:
        """Make the store's directories, or check that an existing store holds results of this
        engine's semantics (a store of another is refused, never mixed)."""
        self.check_semantics()
        for directory in (self.points_dir, self.series_dir, self.failed_dir):
            directory.mkdir(parents=True, exist_ok=True)
        if not self.manifest.exists():
            manifest = {"engine_semantics": ENGINE_SEMANTICS, "hash_schema": Experiment.HASH_SCHEMA}
            atomic_write(self.manifest, _json_bytes(manifest))
        self._created = True

    def check_semantics(self) -> None:
        """A UserError if the store holds results of another engine semantics."""
        if self.manifest.exists():
            try:
                made = json.loads(self.manifest.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise UserError(
                    f"result store file '{self.manifest}' is unreadable: {exc}"
                ) from None
            found = (made.get("engine_semantics"), made.get("hash_schema"))
        elif any(
            not name.startswith(".") and name.endswith(".json") for name in _names(self.points_dir)
        ):
            found = (None, None)
        else:
            return
        if found != (ENGINE_SEMANTICS, Experiment.HASH_SCHEMA):
            made_by = (
                f"engine semantics {found[0]}"
                if found[0] is not None
                else "an older dflab (no store.json)"
            )
            raise UserError(
                f"result store '{self.root}' holds results of {made_by}; this engine's results "
                f"(semantics {ENGINE_SEMANTICS}) differ and are never mixed with them: use another "
                "--out directory, or move the old one away"
            )

    def done_hashes(self) -> set[str]:
        """Hashes of finished points: what a resumed sweep skips."""
        return {path.stem for path in _json_files(self.points_dir)}

    def remove_stale_temp_files(self, older_than_s: float = STALE_TEMP_S) -> int:
        """Delete the temporary files that a writer killed in the middle of a write left (a
        live writer's exist for milliseconds); how many."""
        removed = 0
        now = time.time()
        for directory in (self.root, self.points_dir, self.series_dir, self.failed_dir):
            for name in list(_names(directory)):
                if not (name.startswith(".") and name.endswith(".tmp")):
                    continue
                path = directory / name
                try:
                    if now - path.stat().st_mtime > older_than_s:
                        path.unlink()
                        removed += 1
                except FileNotFoundError:
                    pass  # another sweep removed it
        return removed

    def set_aside_unreadable(self) -> list[str]:
        """Move point files that cannot be read (cut short, edited by hand) to corrupt/, so that
        their points count as not done and are rerun; one note per file moved."""
        notes = []
        for path in _json_files(self.points_dir):
            problem = _point_problem(path)
            if problem is None:
                continue
            self.corrupt_dir.mkdir(exist_ok=True)
            target = self.corrupt_dir / path.name
            os.replace(path, target)
            notes.append(
                f"note: result store file '{path}' is unreadable ({problem}); moved to "
                f"'{target}', its point will be rerun"
            )
        return notes

    @property
    def journal(self) -> Path:
        return self.root / JOURNAL

    def save_point(self, record: dict[str, Any], series: pl.DataFrame | None = None) -> None:
        """Persist one finished point: series first, JSON next (= commit), then its journal
        line. O(1): the summary tables are written by `write_summary` (at the end of a sweep)."""
        if not self._created:  # once per Store object: checking lists points/
            self.create()
        key = record["hash"]
        if series is not None:
            buffer = io.BytesIO()
            series.write_parquet(buffer)
            atomic_write(self.series_dir / f"{key}.parquet", buffer.getvalue())
        status = atomic_write(self.points_dir / f"{key}.json", _json_bytes(record))
        entry = {"size": status.st_size, "mtime_ns": status.st_mtime_ns, "record": record}
        line = json.dumps(entry, sort_keys=True, separators=(",", ":")) + "\n"
        append_line(self.journal, line.encode())
        (self.failed_dir / f"{key}.json").unlink(missing_ok=True)

    def save_failure(self, record: dict[str, Any]) -> None:
        if not self._created:
            self.create()
        atomic_write(self.failed_dir / f"{record['hash']}.json", _json_bytes(record))

    def _read_dir(self, directory: Path) -> list[dict[str, Any]]:
        return [_read_record(path) for path in _json_files(directory)]

    def _journal_entries(self) -> dict[str, list[dict[str, Any]]]:
        """The journal's readable lines by hash (a line cut short or garbled is skipped: its
        point is read from its file)."""
        entries: dict[str, list[dict[str, Any]]] = {}
        try:
            data = self.journal.read_bytes()
        except FileNotFoundError:
            return entries
        for line in data.splitlines():
            try:
                entry = json.loads(line)
                key = entry["record"]["hash"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(key, str):
                entries.setdefault(key, []).append(entry)
        return entries

    def points(self) -> list[dict[str, Any]]:
        """Every finished point's record, sorted by hash: from the journal where its line
        matches the point file's size and time, else from the file."""
        journal = self._journal_entries()
        records = []
        for path in _json_files(self.points_dir):
            status = path.stat()
            found = None
            for entry in reversed(journal.get(path.stem, [])):
                if (entry.get("size"), entry.get("mtime_ns")) == (
                    status.st_size,
                    status.st_mtime_ns,
                ):
                    found = entry["record"]
                    break
            records.append(found if found is not None else _read_record(path))
        return records

    def failures(self) -> list[dict[str, Any]]:
        return self._read_dir(self.failed_dir)

    def series(self, key: str) -> pl.DataFrame:
        return pl.read_parquet(self.series_dir / f"{key}.parquet")

    def summary_frame(self, records: list[dict[str, Any]] | None = None) -> pl.DataFrame:
        """All finished points as one table, sorted by their coordinates (routing, traffic,
        the other axes, load, seed). A store whose points mix configurations is refused (its
        rows would be averaged as seeds)."""
        records = self.points() if records is None else records
        axes = axes_of(records)
        check_stored(self.root, [r["config"] for r in records if "config" in r], axes)
        rows = [
            {"hash": r["hash"], "name": r.get("name"), **r["coords"], **r["summary"]}
            | {axis: axis_value(r, axis) for axis in axes}
            | {"steady_state": (r.get("diagnostics") or {}).get("steady_state")}
            | {key: r.get(key) for key in PROVENANCE}
            for r in records
        ]
        schema = summary_schema(axes, rows)
        # Only the known columns: the engine may add summary fields before this schema knows them.
        rows = [{name: row.get(name) for name in schema} for row in rows]
        frame = pl.DataFrame(rows, schema=schema, strict=False)
        return frame.sort([*sort_columns(axes), "hash"], nulls_last=True)

    def aggregate_frame(self, summary: pl.DataFrame | None = None) -> pl.DataFrame:
        """Every point but the seed, one row each: means and 95 % intervals over its seeds."""
        from dflab.stats import aggregate

        summary = self.summary_frame() if summary is None else summary
        by = [c for c in sort_columns(coordinate_axes(summary.columns)) if c != "seed"]
        return aggregate(summary, by)

    def execution_frame(self) -> pl.DataFrame:
        """How each finished point ran (wall time, events, speed), by hash: kept apart from the
        summary tables, which hold results only (so that they can be compared byte for byte)."""
        fields = Execution.__dataclass_fields__
        schema = {"hash": pl.String, **{n: _polars_type(f.type) for n, f in fields.items()}}
        rows = [
            {"hash": r["hash"], **{n: r.get("execution", {}).get(n) for n in fields}}
            for r in self.points()
        ]
        return pl.DataFrame(rows, schema=schema, strict=False)

    def jobs_frame(self, records: list[dict[str, Any]] | None = None) -> pl.DataFrame:
        """The per-job rows of the workload points: one row per (point, job), the point's hash
        and coordinates first (sorted as the summary), then the job's columns. Empty (no
        columns) when no point ran a workload."""
        records = self.points() if records is None else records
        records = [r for r in records if r.get("jobs")]
        if not records:
            return pl.DataFrame()
        axes = axes_of(records)
        rows = [
            {"hash": r["hash"], **r["coords"]}
            | {axis: axis_value(r, axis) for axis in axes}
            | {f"job_{k}" if k in r["coords"] else k: v for k, v in job.items()}
            for r in records
            for job in r["jobs"]
        ]
        frame = pl.DataFrame(rows, infer_schema_length=None)
        first = ["hash", *sort_columns(axes)]
        frame = frame.select(first + [c for c in frame.columns if c not in first])
        return frame.sort([*sort_columns(axes), "hash", "job"], nulls_last=True)

    def write_summary(self) -> pl.DataFrame:
        """Write summary.{parquet,csv} and aggregate.{parquet,csv} from the points, and
        jobs.{parquet,csv} when workload points are among them (atomically: a reader sees the
        old tables or the new ones)."""
        records = self.points()
        frame = self.summary_frame(records)
        tables = [("summary", frame), ("aggregate", self.aggregate_frame(frame))]
        jobs = self.jobs_frame(records)
        if jobs.height:
            tables.append(("jobs", jobs))
        for name, table in tables:
            parquet, csv = io.BytesIO(), io.BytesIO()
            table.write_parquet(parquet)
            table.write_csv(csv)
            atomic_write(self.root / f"{name}.parquet", parquet.getvalue())
            atomic_write(self.root / f"{name}.csv", csv.getvalue())
        return frame


def axes_of(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The coordinates of `records` beyond routing, traffic, load and seed (swept config keys),
    sorted."""
    found = {key for r in records for key in r.get("coords", {}) if key not in COORDINATES}
    return sorted(found)


def axis_value(record: Mapping[str, Any], axis: str) -> Any:
    """A point's value of a swept key: its coordinate, or for a point swept without it the
    value of its canonical configuration (null where it has none: a parameter of another
    routing). Tables and lists become JSON text."""
    coords = record.get("coords", {})
    if axis in coords:
        value = coords[axis]
    else:
        value: Any = record.get("config", {})
        for part in axis.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


def coordinate_axes(columns: Iterable[str]) -> list[str]:
    """The swept-key columns of a summary table (the dotted names)."""
    return sorted(c for c in columns if "." in c)


def sort_columns(axes: Sequence[str]) -> list[str]:
    return ["routing", "traffic", *axes, "load", "seed"]


def default_root(label: str, *, field: str = "name") -> Path:
    """`results/<label>`, the label made one path component: a name such as "UR/ADV runs" must
    not write into nested, parent or absolute directories. Separators and control characters
    become '_'; a label that is nothing but dots or blanks is refused, naming `field`."""
    safe = "".join("_" if ch in "/\\" or not ch.isprintable() else ch for ch in label).strip()
    if safe.strip(".") == "":
        raise UserError(
            f"{field}: {label!r} cannot name a results directory (results/NAME); "
            "choose another name or give --out"
        )
    return Path("results") / safe


def load_results(directory: str | Path) -> pl.DataFrame:
    """The summary of a result store as a polars DataFrame: one row per finished point, the
    columns of summary.csv (docs/config.md, "Sweeps and results"). `.to_pandas()` needs pandas
    (`pip install 'dflab[pandas]'`)."""
    store = Store(directory)
    if not store.root.is_dir():
        raise UserError(f"result directory '{store.root}' not found")
    if not store.points_dir.is_dir():
        raise UserError(f"result directory '{store.root}' is not a result store (no points/)")
    return store.summary_frame()


def load_jobs(directory: str | Path) -> pl.DataFrame:
    """The per-job rows of a result store's workload points (jobs.csv): one row per (point,
    job), the point's coordinates first. Refused when no point of the store ran a workload."""
    store = Store(directory)
    if not store.points_dir.is_dir():
        raise UserError(f"result directory '{store.root}' is not a result store (no points/)")
    frame = store.jobs_frame()
    if frame.height == 0:
        raise UserError(
            f"result directory '{store.root}' has no workload points (no [workload] jobs)"
        )
    return frame


def _point_problem(path: Path) -> str | None:
    """Why a point file cannot count as a finished point, or None if it can."""
    try:
        record = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return str(exc)
    if not isinstance(record, dict):
        return "not a JSON object"
    missing = [key for key in _POINT_KEYS if key not in record]
    return f"lacks {', '.join(missing)}" if missing else None


def _names(directory: Path) -> Iterator[str]:
    """The entries of `directory`, lazily (none if it does not exist)."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                yield entry.name
    except (FileNotFoundError, NotADirectoryError):
        return


def _json_files(directory: Path) -> list[Path]:
    """The `*.json` files of `directory`, sorted (none if it does not exist)."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [
        directory / name
        for name in sorted(names)
        if name.endswith(".json") and not name.startswith(".")
    ]


def _read_record(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(
            f"result store file '{path}' is unreadable: {exc}; rerunning the sweep sets "
            "it aside and redoes its point"
        ) from None


def _json_bytes(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()
