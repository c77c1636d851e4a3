"""A one-line description of the configuration behind a figure, for its title.

A PNG travels without its result store: the title must say what was simulated (network,
preset, run windows, seeds), or the figure cannot be read on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from dflab.errors import UserError

# The sections that make a preset's network: a store whose topology and network are a preset's
# is captioned with the preset's name.
_NETWORK_SECTIONS = ("topology", "network")


@cache
def _preset_networks() -> tuple[tuple[str, dict[str, Any]], ...]:
    from dflab import presets
    from dflab.config import Experiment
    from dflab.loading import validate

    found = []
    for name in presets.names():
        try:
            canonical = validate(Experiment, {"preset": name}).canonical()
        except (UserError, RuntimeError):  # no compiled engine: no canonical form to compare
            continue
        found.append((name, {key: canonical[key] for key in _NETWORK_SECTIONS}))
    return tuple(found)


def matching_preset(config: Mapping[str, Any]) -> str | None:
    """The preset whose topology and network are those of `config` (a canonical form)."""
    mine = {key: config.get(key) for key in _NETWORK_SECTIONS}
    for name, network in _preset_networks():
        if network == mine:
            return name
    return None


def _network_text(config: Mapping[str, Any]) -> str:
    t = config["topology"]
    nodes = t["p"] * t["a"] * t["g"]
    text = f"dfly({t['p']},{t['a']},{t['h']},{t['g']}) {t['arrangement']}, {nodes} nodes"
    if t.get("links_per_pair", 1) != 1:
        text += f", {t['links_per_pair']} links per group pair"
    preset = matching_preset(config)
    return f"{text} (preset {preset})" if preset else text


def _seeds_text(seeds_per_point: Sequence[int]) -> str:
    low, high = min(seeds_per_point), max(seeds_per_point)
    count = f"{low}" if low == high else f"{low}-{high}"
    if high == 1:
        return "1 seed"
    return f"{count} seeds per point (mean; bars: 95 % CI)"


def store_caption(
    config: Mapping[str, Any], name: str | None, seeds_per_point: Sequence[int]
) -> str:
    """Two lines (a figure one panel wide must hold them), e.g.
    'demo: dfly(4,8,4,33) absolute, 1056 nodes (preset qadaptive-1056)' and
    'warm-up 10 µs, measured 20 µs · 1 seed'."""
    run = config["run"]
    network = _network_text(config)
    windows = f"warm-up {run['warmup_us']:g} µs, measured {run['measure_us']:g} µs"
    first = f"{name}: {network}" if name else network
    return f"{first}\n{windows} · {_seeds_text(seeds_per_point or [1])}"
