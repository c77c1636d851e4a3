"""The campaign files of `dflab reproduce`: one TOML file per paper figure or table
(docs/studies.md). Adding a study = adding a file here."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from dflab.errors import UserError


def _files() -> dict[str, Path]:
    found = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".toml"):
            found[entry.name.removesuffix(".toml")] = Path(str(entry))
    return dict(sorted(found.items()))


def names() -> list[str]:
    return list(_files())


def find(study: str) -> tuple[str, Path]:
    """(name, campaign file) of a study's name, or of a campaign file's path."""
    files = _files()
    if study.strip().lower() in files:
        name = study.strip().lower()
        return name, files[name]
    path = Path(study)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise UserError(f"campaign file '{path}' not found")
        return path.stem, path
    raise UserError(
        f"study {study!r} is not allowed; allowed: {', '.join(files)} (dflab reproduce --list), "
        "or a campaign file (.toml)"
    )
