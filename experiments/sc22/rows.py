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
