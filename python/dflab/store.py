"""Result store: one directory per sweep, keyed by experiment content hash.

Layout:
    store.json              what made the store: the engine semantics and the key schema
    points/<hash>.json      one finished point: coordinates, summary, hops histogram, config
    series/<hash>.parquet   its per-window time series
    failed/<hash>.json      a point that failed (message); retried by the next run
    summary.parquet, summary.csv   every finished point, one row each

Every file is written atomically (temp file in the same directory, fsync, rename), and a point's
JSON is written last, so a point counts as done only once all of its data is on disk: a crash
at any moment loses at most the points still running.

A store holds results of one engine semantics only (`store.json`): a store made by an engine
whose results differ (an older semantics, or a dflab before the manifest existed) is refused
with a message, never mixed with new points.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import polars as pl

from dflab.api import Execution, Summary
from dflab.config import ENGINE_SEMANTICS, Experiment
from dflab.errors import UserError

COORDINATES: tuple[str, ...] = ("routing", "traffic", "load", "seed")
_COORD_TYPES = {"routing": pl.String, "traffic": pl.String, "load": pl.Float64, "seed": pl.Int64}
_PY_TO_POLARS = {"float": pl.Float64, "int": pl.Int64}


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old or the new file, never a part."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # Persist the rename itself (the directory entry), not only the file contents.
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def summary_schema() -> dict[str, Any]:
    schema: dict[str, Any] = {"hash": pl.String, "name": pl.String, **_COORD_TYPES}
    for field in Summary.__dataclass_fields__.values():
        schema[field.name] = _PY_TO_POLARS[str(field.type)]
    return schema


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.points_dir = self.root / "points"
        self.series_dir = self.root / "series"
        self.failed_dir = self.root / "failed"

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

    def check_semantics(self) -> None:
        """A UserError if the store holds results of another engine semantics."""
        has_points = self.points_dir.is_dir() and any(self.points_dir.glob("*.json"))
        if self.manifest.exists():
            try:
                made = json.loads(self.manifest.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise UserError(
                    f"result store file '{self.manifest}' is unreadable: {exc}"
                ) from None
            found = (made.get("engine_semantics"), made.get("hash_schema"))
        elif has_points:
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
        if not self.points_dir.is_dir():
            return set()
        return {path.stem for path in self.points_dir.glob("*.json")}

    def save_point(self, record: dict[str, Any], series: pl.DataFrame | None = None) -> None:
        """Persist one finished point (series first, JSON last = commit), then the tables."""
        self.create()
        key = record["hash"]
        if series is not None:
            buffer = io.BytesIO()
            series.write_parquet(buffer)
            atomic_write(self.series_dir / f"{key}.parquet", buffer.getvalue())
        atomic_write(self.points_dir / f"{key}.json", _json_bytes(record))
        (self.failed_dir / f"{key}.json").unlink(missing_ok=True)
        self.write_summary()

    def save_failure(self, record: dict[str, Any]) -> None:
        self.create()
        atomic_write(self.failed_dir / f"{record['hash']}.json", _json_bytes(record))

    def _read_dir(self, directory: Path) -> list[dict[str, Any]]:
        records = []
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            try:
                records.append(json.loads(path.read_text("utf-8")))
            except (OSError, ValueError) as exc:
                raise UserError(f"result store file '{path}' is unreadable: {exc}") from None
        return records

    def points(self) -> list[dict[str, Any]]:
        return self._read_dir(self.points_dir)

    def failures(self) -> list[dict[str, Any]]:
        return self._read_dir(self.failed_dir)

    def series(self, key: str) -> pl.DataFrame:
        return pl.read_parquet(self.series_dir / f"{key}.parquet")

    def summary_frame(self) -> pl.DataFrame:
        """All finished points as one table, sorted by routing, traffic, load, seed."""
        rows = [
            {"hash": r["hash"], "name": r.get("name"), **r["coords"], **r["summary"]}
            for r in self.points()
        ]
        schema = summary_schema()
        # Only the known columns: the engine may add summary fields before this schema knows them.
        rows = [{name: row.get(name) for name in schema} for row in rows]
        frame = pl.DataFrame(rows, schema=schema, strict=False)
        return frame.sort(list(COORDINATES))

    def execution_frame(self) -> pl.DataFrame:
        """How each finished point ran (wall time, events, speed), by hash: kept apart from the
        summary tables, which hold results only (so that they can be compared byte for byte)."""
        fields = Execution.__dataclass_fields__
        schema = {"hash": pl.String, **{n: _PY_TO_POLARS[str(f.type)] for n, f in fields.items()}}
        rows = [
            {"hash": r["hash"], **{n: r.get("execution", {}).get(n) for n in fields}}
            for r in self.points()
        ]
        return pl.DataFrame(rows, schema=schema, strict=False)

    def write_summary(self) -> pl.DataFrame:
        frame = self.summary_frame()
        parquet, csv = io.BytesIO(), io.BytesIO()
        frame.write_parquet(parquet)
        frame.write_csv(csv)
        atomic_write(self.root / "summary.parquet", parquet.getvalue())
        atomic_write(self.root / "summary.csv", csv.getvalue())
        return frame


def _json_bytes(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()
