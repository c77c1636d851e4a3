"""A result store holds one configuration, varied only by the sweep coordinates.

The summary tables and `dflab plot` know a point by its coordinates (routing, traffic, load,
seed): two points with equal coordinates are taken as the same experiment, and seeds are
averaged. A rerun with another warm-up or buffer size into the same directory would make two
such points of different configurations, averaged as if they were seeds. So a store refuses a
point whose configuration differs from its points' in anything but the coordinates, naming the
keys that differ; and a store that mixes them anyway (filled by an older dflab, or by hand) is
refused when it is read.

The coordinates of a point are routing, traffic, load and seed, and the config keys its sweep
varied (`[sweep]` axes such as `"routing.q_thld1" = [...]`, kept in the point's `coords`): the
keys swept by any point of the store, or by the sweep being added, are not compared either.

What is compared is the canonical form (see `Experiment.canonical`) without the coordinates,
the name and the execution-only keys. Routing parameters are compared per algorithm: each
algorithm has its own, and a store may hold several algorithms.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from dflab.config import Experiment, without_later_defaults
from dflab.errors import UserError, show_value

# Canonical keys that place a point in a sweep (or only label it), never compared.
_NOT_COMPARED = frozenset(
    {"name", "seed", "traffic.pattern", "traffic.load", "routing.algorithm"}
    | {f"run.{key}" for key in Experiment.EXECUTION_ONLY}
)
COORDINATE_NAMES = "routing, traffic, load, seed and the keys of its sweep axes"


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested tables as dotted keys; lists (phases) stay whole values."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _parts(
    canonical: Mapping[str, Any], axes: Collection[str] = ()
) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(algorithm, the routing parameters, every other compared key) of a canonical form; the
    swept keys `axes` are not compared (nor what lies under one: an axis may set a table)."""
    comparable = without_later_defaults(dict(canonical))
    flat = {
        k: v
        for k, v in flatten(comparable).items()
        if k not in _NOT_COMPARED and not _under_axis(k, axes)
    }
    routing = {k: v for k, v in flat.items() if k.startswith("routing.")}
    shared = {k: v for k, v in flat.items() if not k.startswith("routing.")}
    return str(canonical["routing"]["algorithm"]), routing, shared


def _under_axis(key: str, axes: Collection[str]) -> bool:
    return any(key == axis or key.startswith(f"{axis}.") for axis in axes)


_ABSENT = object()


def _differences(
    reference: Mapping[str, Any], other: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    keys = sorted(set(reference) | set(other))
    found = [(k, reference.get(k, _ABSENT), other.get(k, _ABSENT)) for k in keys]
    return [(k, a, b) for k, a, b in found if a != b]


def _show(value: Any) -> str:
    return "(not set)" if value is _ABSENT else show_value(value)


def first_conflict(
    configs: Iterable[Mapping[str, Any]], axes: Collection[str] = ()
) -> list[tuple[str, Any, Any]]:
    """The keys in which a configuration differs from the first ones (the reference), as
    (key, reference value, its value), the swept keys `axes` apart; [] when all are one
    configuration."""
    shared_ref: dict[str, Any] | None = None
    # Routing parameters are compared among the points of one algorithm and one value of each
    # swept routing key: the canonical form may set a parameter from another (PB's
    # `reevaluate` reads false with recomputation, where it has no effect).
    routing_ref: dict[tuple[str, str], dict[str, Any]] = {}
    swept = sorted(a for a in axes if a.startswith("routing."))
    for canonical in configs:
        algorithm, routing, shared = _parts(canonical, axes)
        if shared_ref is None:
            shared_ref = shared
        found = _differences(shared_ref, shared)
        values = flatten(canonical)
        group = (algorithm, repr([values.get(a) for a in swept]))
        found += _differences(routing_ref.setdefault(group, routing), routing)
        if found:
            return found
    return []


def _also(found: list[tuple[str, Any, Any]]) -> str:
    rest = [key for key, _, _ in found[1:]]
    return f"; also differ: {', '.join(rest)}" if rest else ""


def check_new_points(
    root: Path,
    stored: list[Mapping[str, Any]],
    new: list[Mapping[str, Any]],
    axes: Collection[str] = (),
) -> None:
    """A UserError naming the differing keys if `new` configurations (canonical forms) do not
    match those `stored` in the store at `root` (or differ among themselves) in anything but
    the coordinates and the swept keys `axes` (of the store's points and the new ones)."""
    found = first_conflict([*stored, *new], axes)
    if not found:
        return
    key, there, here = found[0]
    where = f"the points in result store '{root}'" if stored else "the sweep's first points"
    raise UserError(
        f"{key}: {_show(here)} differs from {_show(there)} of {where}; a store holds one "
        f"configuration, varied only by {COORDINATE_NAMES}{_also(found)}: give another --out "
        "directory"
    )


def check_stored(root: Path, stored: list[Mapping[str, Any]], axes: Collection[str] = ()) -> None:
    """A UserError naming the differing keys if the store's points mix configurations (in
    anything but the coordinates and the swept keys `axes`)."""
    found = first_conflict(stored, axes)
    if not found:
        return
    key, one, other = found[0]
    raise UserError(
        f"{key}: result store '{root}' mixes points with {_show(one)} and {_show(other)}, which "
        f"its tables and plots would average as seeds (only {COORDINATE_NAMES} may vary in a "
        f"store){_also(found)}: move the points of one configuration (points/*.json, each "
        "with its config) to a store of their own"
    )
