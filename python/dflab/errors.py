"""User-facing errors.

Everything a user can get wrong (a file, a key, a value, an option) ends up as a `UserError`
whose message is one line naming the offending file or dotted field. The CLI prints it as
`error: <message>` and exits with status 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import re
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo


class UserError(Exception):
    """A mistake in the user's input, reported without a traceback."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def show_value(value: Any) -> str:
    """Render a bad value the way the user wrote it (TOML-ish), e.g. 'foo', 0, true."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return json.dumps(value, default=str)
    return str(value)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def dotted(loc: tuple[str | int, ...]) -> str:
    """A field's path as TOML writes it: topology.p, traffic.phases.0.load; a key that is not a
    bare TOML key is quoted (topology."" or topology."load "), so that it shows."""
    return ".".join(
        str(part)
        if isinstance(part, int) or _BARE_KEY.fullmatch(part)
        else json.dumps(part, ensure_ascii=False)
        for part in loc
    )


_TYPE_NAMES = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "model_type": "a table",
    "dict_type": "a table",
}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model an annotation holds: itself, or the items of a list or an optional one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _walk(model: type[BaseModel], loc: tuple[str | int, ...]) -> Any:
    """Follow `loc` through nested models (and lists of them: an index part stays on the list's
    model); the model class or FieldInfo found there, or None."""
    node: Any = model
    for part in loc:
        if isinstance(part, int) and isinstance(node, FieldInfo):
            node = _model_in(node.annotation)
            continue
        owner = node.annotation if isinstance(node, FieldInfo) else node
        if not (isinstance(owner, type) and issubclass(owner, BaseModel)):
            return None
        node = owner.model_fields.get(str(part))
        if node is None:
            return None
    return node


_BOUNDS = (("gt", "> "), ("ge", ">= "), ("lt", "< "), ("le", "<= "))


def _number(value: Any) -> str:
    """A bound as the engine writes it: 0 rather than 0.0, integers in full."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def _range_text(info: FieldInfo | None, ctx: dict[str, Any]) -> str:
    """The full allowed range of a field as the engine words it: '1 to 64', '> 0 and <= 1'.

    Read from the field's constraints; failing that (a constraint inside a union), the error's
    own bound is what we have.
    """
    found: dict[str, Any] = {}
    for meta in info.metadata if info is not None else []:
        for attr, _ in _BOUNDS:
            if getattr(meta, attr, None) is not None:
                found[attr] = getattr(meta, attr)
    if not found:
        found = {attr: ctx[attr] for attr, _ in _BOUNDS if attr in ctx}
    if set(found) == {"ge", "le"}:
        return f"{_number(found['ge'])} to {_number(found['le'])}"
    return " and ".join(f"{text}{_number(found[attr])}" for attr, text in _BOUNDS if attr in found)


def describe_error(model: type[BaseModel], err: dict[str, Any]) -> str:
    """One pydantic error dict -> 'field: what is wrong; what is allowed'."""
    loc = tuple(err["loc"])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = ctx.get("value", err.get("input"))
    # Model-level checks that concern one field name it through ctx["field"].
    if "field" in ctx:
        loc = (*loc, ctx["field"])
    name = dotted(loc) if loc else "experiment"

    if kind == "engine":
        # The engine's own message already names the field and the allowed values.
        return str(ctx["message"])
    if kind == "extra_forbidden":
        owner = _walk(model, loc[:-1])
        if isinstance(owner, FieldInfo):
            owner = owner.annotation
        if isinstance(owner, type) and issubclass(owner, BaseModel):
            allowed = ", ".join(owner.model_fields)
            return f"{name}: unknown key; allowed keys: {allowed}"
        return f"{name}: unknown key"
    if kind == "not_allowed":
        return f"{name}: {show_value(value)} is not allowed; allowed: {ctx['allowed']}"
    if kind == "out_of_range":
        return f"{name}: {show_value(value)} is out of range; allowed: {ctx['allowed']}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        info = _walk(model, loc)
        allowed = _range_text(info if isinstance(info, FieldInfo) else None, ctx) or err["msg"]
        return f"{name}: {show_value(value)} is out of range; allowed: {allowed}"
    if kind in ("too_short", "too_long"):
        info = _walk(model, loc)
        lengths = {type(m).__name__: m for m in getattr(info, "metadata", [])}
        low = getattr(lengths.get("MinLen"), "min_length", None)
        high = getattr(lengths.get("MaxLen"), "max_length", None)
        allowed = f"exactly {low} items" if low is not None and low == high else err["msg"]
        found = ctx.get("actual_length")
        return f"{name}: {show_value(value)} has {found} items; allowed: {allowed}"
    if kind == "finite_number":
        return f"{name}: {show_value(value)} is not allowed; allowed: a finite number"
    if kind in _TYPE_NAMES:
        return f"{name}: {show_value(value)} has the wrong type; expected {_TYPE_NAMES[kind]}"
    if kind == "missing":
        return f"{name}: required key is missing"
    return f"{name}: {err['msg']}"


def from_validation_error(model: type[BaseModel], exc: ValidationError) -> UserError:
    """Convert a pydantic ValidationError into a single-line UserError (first problem shown)."""
    errors = exc.errors(include_url=False)
    message = describe_error(model, errors[0])
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})"
    return UserError(message)
