"""How routings and traffic patterns look in every dflab figure.

Each routing gets a colour, a marker and a line style of its own, in the same order in every
figure, so that curves that lie on top of each other (MIN and Q-adaptive under UR) stay
distinguishable and a figure printed in grey can still be read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

#: Paper order of the routings; others follow alphabetically.
ROUTING_ORDER = ("MIN", "VALn", "UGALg", "UGALn", "PAR", "Q-adaptive", "Q-routing")

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# Dash patterns that stay apart when lines overlap: solid, dashed, dash-dot, dotted, long dash,
# dash-dot-dot.
_LINESTYLES: tuple[Any, ...] = ("-", "--", "-.", ":", (0, (8, 3)), (0, (4, 1, 1, 1, 1, 1)))


# Marker sizes shrink along the routing order, so that the markers of equal points nest (all
# visible) instead of the last one covering the others.
_LARGEST_MARKER, _MARKER_STEP, _SMALLEST_MARKER = 8.0, 1.2, 3.5


@dataclass(frozen=True)
class Style:
    colour: str
    marker: str
    linestyle: Any
    markersize: float
    zorder: float

    def line_kwargs(self) -> dict[str, Any]:
        return {
            "color": self.colour,
            "marker": self.marker,
            "linestyle": self.linestyle,
            "markersize": self.markersize,
        }


def routing_key(routing: str) -> tuple[int, str]:
    return (
        (ROUTING_ORDER.index(routing), routing)
        if routing in ROUTING_ORDER
        else (len(ROUTING_ORDER), routing)
    )


def traffic_order(pattern: str) -> tuple[int, int, str]:
    """Panels left to right: ur, adv+1, adv+2, ..., adv+h, perm, then anything else."""
    if pattern == "ur":
        return (0, 0, pattern)
    if pattern.startswith("adv+"):
        offset = pattern[4:]
        return (1, int(offset), pattern) if offset.isdigit() else (2, 0, pattern)
    return (3 if pattern == "perm" else 4, 0, pattern)


def routing_styles(routings: Iterable[str]) -> dict[str, Style]:
    """A distinct style per routing (colour, marker, dashes, marker size), assigned in paper
    order (so a routing keeps its look when another is added after it)."""
    ordered = sorted(set(routings), key=routing_key)
    return {
        routing: Style(
            colour=f"C{index % 10}",
            marker=_MARKERS[index % len(_MARKERS)],
            linestyle=_LINESTYLES[index % len(_LINESTYLES)],
            markersize=max(_SMALLEST_MARKER, _LARGEST_MARKER - _MARKER_STEP * index),
            zorder=2.0 + 0.01 * index,  # smaller markers on top
        )
        for index, routing in enumerate(ordered)
    }


def log_axis(ax: Any) -> None:
    """A log y axis with plain 1-2-5 labels (latency spans decades near saturation)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
