"""The value types the generated config models (`_models.py`) use: strict sections, choices
matched case-insensitively and stored canonically, and traffic patterns (checked by the engine,
which owns their grammar)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WrapValidator
from pydantic_core import PydanticCustomError


class Section(BaseModel):
    """A config table: unknown keys are errors, types are strict (`p = "4"` is a mistake)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def choice(
    allowed: tuple[str, ...], aliases: Mapping[str, str] | None = None
) -> Callable[[str], str]:
    """A validator matching a value case-insensitively against `allowed` (and `aliases`, which
    map other spellings to allowed ones), returning the canonical spelling."""
    table = {name.lower(): name for name in allowed}
    table.update({alias.lower(): name for alias, name in (aliases or {}).items()})

    def check(value: str) -> str:
        found = table.get(value.strip().lower())
        if found is None:
            raise PydanticCustomError(
                "not_allowed", "not allowed; allowed: {allowed}", {"allowed": ", ".join(allowed)}
            )
        return found

    return check


def _pattern(value: Any, handler: Any) -> Any:
    """A pattern in its short form (a string) or as a table with `kind`: the engine parses both
    (and checks what depends on the topology); here only the shape is checked."""
    if isinstance(value, str):
        if not value.strip():
            raise PydanticCustomError(
                "not_allowed", "not allowed; allowed: {allowed}", {"allowed": "a pattern"}
            )
        return value.strip()
    if isinstance(value, Mapping):
        if not isinstance(value.get("kind"), str):
            raise PydanticCustomError(
                "not_allowed",
                "not allowed; allowed: {allowed}",
                {"allowed": "a table with a string kind"},
            )
        return dict(value)
    raise PydanticCustomError(
        "not_allowed", "not allowed; allowed: {allowed}", {"allowed": "a pattern name or a table"}
    )


Pattern = Annotated[str | dict[str, Any], WrapValidator(_pattern)]

# TOML has inf and nan; neither is a usable number of the model.
Number = Annotated[float, Field(allow_inf_nan=False)]
