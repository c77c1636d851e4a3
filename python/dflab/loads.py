"""Parsing of offered-load lists for sweeps: '0.1:0.9:0.1' (end inclusive) or '0.1,0.5,0.9'."""

from __future__ import annotations

import math

from dflab.errors import UserError

# Loads are fractions with a few decimals; rounding removes float drift (0.1 + 2*0.1 != 0.3)
# so that a range point and the same load typed by hand give the same config hash.
_DECIMALS = 10
# Every load is at least one simulation: a range with more is a typo in its step (a sweep of
# 10^4 loads already takes days), and the list itself would exhaust memory long before.
MAX_LOADS = 10_000


def _number(text: str, spec: str, field: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"{field} {spec!r}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"{field} {spec!r}: {text.strip()!r} is not a finite number")
    return value


def parse_loads(spec: str, field: str = "--loads") -> list[float]:
    """Expand a load spec into a list of floats; errors name `field` (the option or key).

    `start:end:step` includes `end` when it lies on the grid (within a small tolerance);
    `a,b,c` is taken as is. Range checks of each load happen in the experiment model. More
    than MAX_LOADS loads are refused before any list is built.
    """
    spec = spec.strip()
    if not spec:
        raise UserError(f"{field}: empty; use start:end:step or a comma list")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 3:
            raise UserError(f"{field} {spec!r}: expected start:end:step, e.g. 0.1:0.9:0.1")
        start, end, step = (_number(part, spec, field) for part in parts)
        if step <= 0:
            raise UserError(f"{field} {spec!r}: step must be > 0")
        if end < start:
            raise UserError(f"{field} {spec!r}: end is smaller than start")
        count = _count(start, end, step)
        if count > MAX_LOADS:
            raise UserError(f"{field} {spec!r}: {_big(count)} loads; at most {MAX_LOADS}")
        return [round(start + i * step, _DECIMALS) for i in range(count)]
    parts = spec.split(",")
    if len(parts) > MAX_LOADS:
        raise UserError(f"{field}: {len(parts)} loads; at most {MAX_LOADS}")
    return [_number(part, spec, field) for part in parts]


def _count(start: float, end: float, step: float) -> int | float:
    """Grid points from start to end; inf when the quotient overflows (step near 0)."""
    quotient = (end - start) / step + 1e-9
    return math.floor(quotient) + 1 if math.isfinite(quotient) else math.inf


def _big(count: int | float) -> str:
    return "more than 10^308" if math.isinf(count) else str(count)
