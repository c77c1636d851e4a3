"""Named experiment presets that reproduce the papers' setups.

Each preset is a TOML file in this package holding a partial experiment (the fields the paper
fixes); a user's file or overrides are laid over it. Adding a preset = adding a file here.
"""

from __future__ import annotations

import copy
import tomllib
from functools import cache
from importlib import resources
from typing import Any


@cache
def _all() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for entry in resources.files(__name__).iterdir():
        if entry.name.endswith(".toml"):
            found[entry.name.removesuffix(".toml")] = tomllib.loads(entry.read_text("utf-8"))
    return dict(sorted(found.items()))


def names() -> list[str]:
    return list(_all())


def canonical(name: str) -> str:
    """The registered spelling of a preset name (matching is case-insensitive)."""
    for known in _all():
        if known == name.strip().lower():
            return known
    raise KeyError(name)


def load(name: str) -> dict[str, Any]:
    """The preset's fields as a fresh dict; KeyError for an unknown name."""
    return copy.deepcopy(_all()[canonical(name)])
