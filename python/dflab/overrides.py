"""`--set key=value` overrides and deep merging of nested config dicts.

Values are parsed as TOML scalars so that `network.packet_flits=4` is an integer, `run.check=true`
a boolean and `traffic.load=0.5` a float; anything that is not valid TOML (`routing.algorithm=VALn`,
`traffic.pattern=adv+1`) is taken as a bare string, which is what a shell user means.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from dflab.errors import UserError


def parse_value(text: str) -> Any:
    """A TOML value (scalar, array or inline table), or the text itself if it is not TOML."""
    text = text.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_override(item: str) -> tuple[tuple[str, ...], Any]:
    """'a.b=value' -> (('a', 'b'), parsed value). The first '=' separates key and value."""
    key, sep, raw = item.partition("=")
    if not sep:
        raise UserError(f"--set {item!r}: expected key=value, e.g. traffic.load=0.5")
    path = tuple(part.strip() for part in key.split("."))
    if not all(path):
        raise UserError(f"--set {item!r}: bad key {key.strip()!r}; use dotted keys like run.seed")
    return path, parse_value(raw)


def set_path(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Assign `value` at a dotted path, creating intermediate tables."""
    node = data
    for depth, part in enumerate(path[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            where = ".".join(path[: depth + 1])
            raise UserError(f"{where}: is a value, not a table; cannot set {'.'.join(path)}")
        node = child
    node[path[-1]] = value


def apply_overrides(data: dict[str, Any], items: Iterable[str]) -> dict[str, Any]:
    """A copy of `data` with every `key=value` item applied in order."""
    result = copy.deepcopy(data)
    for item in items:
        path, value = parse_override(item)
        set_path(result, path, value)
    return result


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """`top` over `base`: tables merge key by key, any other value in `top` replaces."""
    merged = copy.deepcopy(dict(base))
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword overrides -> nested dict; keys may be dotted ('traffic.load') or whole tables."""
    result: dict[str, Any] = {}
    for key, value in flat.items():
        piece: Any = value
        for part in reversed(key.split(".")):
            piece = {part: piece}
        result = deep_merge(result, piece)
    return result
