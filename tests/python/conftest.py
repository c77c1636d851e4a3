"""Fixtures shared by the Python tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import TINY_TOML


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    return path
