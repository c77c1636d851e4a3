"""The result rows of the SC'22 scripts: one CSV per study, read whole and rewritten atomically
after every finished run (a temporary file beside it, then a rename), so that an interrupted
study keeps every row it finished and a rerun skips them."""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from dflab.overrides import parse_override


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of `path`, none if it does not exist yet."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> None:
    """Replace `path` by `rows` (with the header `columns`) in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(columns))
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def add_rows(
    path: Path, columns: Sequence[str], new: Iterable[dict[str, Any]], key: Sequence[str]
) -> None:
    """Add to `path` the rows of `new` whose `key` columns are not there yet (one simulation
    can serve two scripts' tables: the first to record it wins)."""
    rows = read_rows(path)
    have = {tuple(r[k] for k in key) for r in rows}
    for row in new:
        text = {k: str(v) for k, v in row.items()}
        if tuple(text[k] for k in key) not in have:
            rows.append(text)
            have.add(tuple(text[k] for k in key))
    write_rows(path, columns, rows)


def job_times(job: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A job row of `Result.workload.jobs` as the studies' CSV columns (times in ms, latencies
    in µs), each name prefixed with `prefix` (e.g. `target_` for the pair study's target)."""
    return {
        f"{prefix}finished": job["finished"],
        f"{prefix}exec_ms": job["exec_us"] / 1e3,
        f"{prefix}comm_mean_ms": job["comm_mean_us"] / 1e3,
        f"{prefix}comm_std_ms": job["comm_std_us"] / 1e3,
        f"{prefix}comm_max_ms": job["comm_max_us"] / 1e3,
        f"{prefix}latency_mean_us": job["latency_mean_ns"] / 1e3,
        f"{prefix}latency_p99_us": job["latency_p99_ns"] / 1e3,
    }


def parse_sets(items: list[str]) -> dict[str, Any]:
    """`key=value` overrides as `simulate`'s dotted keyword arguments, parsed as the CLI's
    `--set` is (`dflab.overrides`: TOML values, else strings)."""
    return {".".join(path): value for path, value in map(parse_override, items)}
