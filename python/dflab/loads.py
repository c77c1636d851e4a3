"""Parsing of offered-load lists for sweeps: '0.1:0.9:0.1' (end inclusive) or '0.1,0.5,0.9'."""

from __future__ import annotations

import math

from dflab.errors import UserError

# Loads are fractions with a few decimals; rounding removes float drift (0.1 + 2*0.1 != 0.3)
# so that a range point and the same load typed by hand give the same config hash.
_DECIMALS = 10


def _number(text: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UserError(f"--loads {spec!r}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"--loads {spec!r}: {text.strip()!r} is not a finite number")
    return value


def parse_loads(spec: str) -> list[float]:
    """Expand a load spec into a list of floats.

    `start:end:step` includes `end` when it lies on the grid (within a small tolerance);
    `a,b,c` is taken as is. Range checks of each load happen in the experiment model.
    """
    spec = spec.strip()
    if not spec:
        raise UserError("--loads: empty; use start:end:step or a comma list")
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) != 3:
            raise UserError(f"--loads {spec!r}: expected start:end:step, e.g. 0.1:0.9:0.1")
        start, end, step = (_number(part, spec) for part in parts)
        if step <= 0:
            raise UserError(f"--loads {spec!r}: step must be > 0")
        if end < start:
            raise UserError(f"--loads {spec!r}: end is smaller than start")
        count = math.floor((end - start) / step + 1e-9) + 1
        return [round(start + i * step, _DECIMALS) for i in range(count)]
    return [_number(part, spec) for part in spec.split(",")]
