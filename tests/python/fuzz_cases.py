"""Fuzz cases for the CLI: valid and mutated experiments as TOML files and `--set` overrides.

Every case is small: dfly networks of at most a few hundred nodes and run windows of at most
2 µs, so that a case takes milliseconds. Cases in classes that the engine is known to mishandle
today (see `EXCLUDED`) are recognised by `excluded` and left out by the test, each with the
defect it waits for.
"""

from __future__ import annotations

import contextlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from dflab import presets
from dflab.config import ROUTING_ALGORITHMS
from dflab.errors import UserError
from dflab.overrides import apply_overrides, deep_merge, nest
from dflab.schema_gen import routing_aliases

# The input classes kept out of the fuzz test, and why. Keys are what `excluded` returns.
EXCLUDED = {
    "huge-buffers": "#3: buffers of 10^3+ flits allocate per flit of capacity",
    "huge-network": "#3, #12: networks of thousands of nodes or radix > 64 (memory, info time)",
    "long-run": "budget: run windows beyond 2 µs (not a defect; #14 covers absurd times)",
    "watchdog-below-hop": "#17: a watchdog below one hop reports a false deadlock",
    "one-node": "#27: a 1-node network sends to itself with ur",
    "empty-window": "#11: a measured window of under 1 ps",
    "forced-vcs": "by design: fewer VCs than the routing needs may deadlock (exit 1)",
}

BASE: dict[str, Any] = {
    "name": "fuzz",
    "seed": 1,
    "topology": {"p": 2, "a": 4, "h": 2, "g": 9, "links_per_pair": 1, "arrangement": "absolute"},
    "network": {
        "flit_bytes": 128, "packet_flits": 1, "host_bw_gbps": 4.0, "local_bw_gbps": 4.0,
        "global_bw_gbps": 4.0, "xbar_bw_gbps": 40.0, "input_buffer_flits": 20,
        "output_buffer_flits": 20, "host_latency_ns": 10.0, "local_latency_ns": 30.0,
        "global_latency_ns": 300.0, "input_latency_ns": 10.0, "output_latency_ns": 10.0,
    },
    "routing": {"algorithm": "MIN"},
    "traffic": {"pattern": "ur", "load": 0.5, "process": "bernoulli", "allow_self": False},
    "run": {"warmup_us": 0.5, "measure_us": 1.0, "window_us": 0.5, "check": False,
            "watchdog_us": 50.0},
}  # fmt: skip

ROUTINGS = (*ROUTING_ALGORITHMS, *routing_aliases())
ARRANGEMENTS = ("absolute", "relative", "palmtree", "circulant")
PATTERNS: tuple[Any, ...] = (
    "ur", "adv+1", "adv+2", "adv+h", "advc", "advl", "hot", "hot:50:10", "hot:100:1", "perm",
    "router-mix:adv+1:50", "router-mix:perm:30", "node-mix:adv+h:20", "node-mix:perm:100",
    "stencil", "m2m", "many-to-many", "rn", "rn:1:1", "rn:1:4", "rn-fixed", "rn-fixed:2:3",
    "random-neighbors", "uniform", {"kind": "hot", "traffic": 30, "nodes": 10},
    {"kind": "adv", "shift": "h"}, {"kind": "router-mix", "base": "perm", "percent": 25},
)  # fmt: skip
BAD_PATTERNS: tuple[Any, ...] = (
    "", " ", "adv+0", "adv+-1", "adv+1.5", "adv+99", "adv+ 1", "ADV+01", "hot:1e3:5", "hot:50",
    "stencil:2x2x2", "m2m:0x0x0", "rn:5:2", "router-mix:adv+99:50", "node-mix:perm:0", "perm:1",
    "üñí©ødé", "🚀", "\x00", "a" * 300, {"kind": "nope"}, {"kind": "hot", "traffic": "x"}, {},
)  # fmt: skip
WEIRD: tuple[Any, ...] = (
    0, 1, -1, 2, 7, 64, 65, 4097, 65536, 2**31, 2**32, 2**53 + 1, 2**63, 2**64, -(2**63),
    10**30, 0.0, -0.0, -1.5, 1e-300, 1e-12, 0.5, 0.999999, 1.0000001, 2.0, 1e6, 1e15, 1e30, 1e300,
    math.nan, math.inf, -math.inf, "", " ", "x", "1", "true", "nan", "üñí©ødé", "🚀", "MIN",
    "adv+1", "a" * 300, True, False, [1, "x"], [], {"x": 1}, {},
)  # fmt: skip
UNKNOWN_KEYS = ("foo", "P", "load ", "vcs", "phases", "bias", "max_q", "ü", "", "x.y")
TOP_KEYS = ("seed", "name", "preset", "sweep", "bogus")

# --set values as a shell user types them: TOML literals and bare words.
SET_VALUES = (
    "1", "0", "-1", "0.5", "1.5", "1e300", "-1e300", "nan", "inf", "-inf", "true", '"x"', "x",
    "", " ", "[1, 2]", "{a = 1}", "2147483648", "4294967296", "18446744073709551616",
    "99999999999999999999999", "üñí©ødé", "🚀", "adv+1", "hot:50:10", "Q-adaptive", "perm",
    "[{start_us = 0.7, load = 0.9}]", "[{start_us = 0.7}]", "[{start_us = 1e300, load = 0.1}]",
)  # fmt: skip
SET_KEYS = (
    *(f"{section}.{key}" for section in ("topology", "network", "traffic", "run")
      for key in BASE[section]),
    "routing.algorithm", "routing.vcs", "routing.intermediate", "routing.epsilon", "seed",
    "name", "preset", "traffic.phases", "traffic.source_queue_packets", "topology.x", "foo",
    "network.flitbytes", "traffic.phases.0.load", "run", "topology", "seed.x", "ü.ß",
)  # fmt: skip
SET_ITEMS_RAW = ("=", "key", "topology.p=", "=1", ".p=1", "a..b=1", "topology.p==2")
# Shortcut flags of `dflab run` with values of every kind.
FLAGS = ("--load", "--routing", "--traffic", "--warmup-us", "--measure-us", "--seed")
FLAG_VALUES = ("abc", "", "-1", "0", "2", "nan", "inf", "1e300", "0.3", "VALn", "adv+1", "🚀")


@dataclass
class Case:
    """One fuzz case: an experiment file's content and the arguments after it (`--set` items
    and shortcut flags, also kept apart as `items` and typed `flags` to judge the case)."""

    kind: str
    toml: str | bytes
    items: list[str] = field(default_factory=list)
    flags: dict[str, Any] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)

    def excluded(self) -> str | None:
        """The excluded class of the experiment this case makes, or None (also when the file
        or the overrides are refused before anything runs)."""
        text = self.toml.decode("utf-8", "replace") if isinstance(self.toml, bytes) else self.toml
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None
        return excluded_overrides(doc, self.items, self.flags)


# ---- TOML ---------------------------------------------------------------------------------------


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    pairs = (f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in value.items())
    return "{" + ", ".join(pairs) + "}"


def to_toml(doc: dict[str, Any]) -> str:
    lines = [
        f"{json.dumps(k)} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)
    ]
    for key, table in doc.items():
        if isinstance(table, dict):
            lines.append(f"\n[{json.dumps(key, ensure_ascii=False)}]")
            lines += [
                f"{json.dumps(k, ensure_ascii=False)} = {toml_value(v)}" for k, v in table.items()
            ]
    return "\n".join(lines) + "\n"


# ---- The excluded classes -----------------------------------------------------------------------


def _number(table: Any, key: str) -> float | None:
    value = table.get(key) if isinstance(table, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _effective(doc: dict[str, Any]) -> dict[str, Any]:
    """The experiment with its preset (if it names one) laid under it."""
    name = doc.get("preset")
    try:
        return deep_merge(presets.load(name), doc) if isinstance(name, str) else doc
    except KeyError:
        return doc


def _topology_class(topology: Any) -> str | None:
    p, a, h = (_number(topology, key) for key in ("p", "a", "h"))
    p, a, h = p or 4, a or 8, 4 if h is None else h  # the defaults where unset or not numbers
    if max(p, a, h) > 64:
        return "huge-network"
    g = _number(topology, "g")
    groups = g if g is not None else a * h + 1
    if p * a * groups > 5000:
        return "huge-network"
    return "one-node" if p * a * groups == 1 else None


def _run_class(run: Any) -> str | None:
    warmup, measure, window = (
        _number(run, key) for key in ("warmup_us", "measure_us", "window_us")
    )
    if (warmup or 0) + (measure or 0) > 2 or (window is not None and 0 < window < 0.01):
        return "long-run"  # a tiny window means many windows: long as well
    if measure is not None and 0 < measure < 1e-6:
        return "empty-window"
    watchdog = _number(run, "watchdog_us")
    return "watchdog-below-hop" if watchdog is not None and 0 < watchdog < 1 else None


def excluded(doc: dict[str, Any]) -> str | None:
    """The excluded class (a key of EXCLUDED) `doc` falls in, or None."""
    doc = _effective(doc)
    network = doc.get("network")
    for key in ("input_buffer_flits", "output_buffer_flits", "packet_flits"):
        value = _number(network, key)
        if value is not None and 1000 < value < 2**32:
            return "huge-buffers"
    if _number(doc.get("routing"), "vcs") is not None:
        return "forced-vcs"
    return _topology_class(doc.get("topology", {})) or _run_class(doc.get("run", {}))


def excluded_overrides(doc: dict[str, Any], items: list[str], flags: dict[str, Any]) -> str | None:
    """`excluded` for the experiment that `--set` items and shortcut flags make of `doc`."""
    try:
        doc = apply_overrides(doc, items)
    except UserError:
        return None  # refused before anything runs
    return excluded(deep_merge(doc, nest(flags)) if flags else doc)


# ---- Strategies ---------------------------------------------------------------------------------


@st.composite
def _topology(draw: st.DrawFn) -> dict[str, Any]:
    p, a, h = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(0, 3))
    topology: dict[str, Any] = {"p": p, "a": a, "h": h}
    topology["arrangement"] = draw(st.sampled_from(ARRANGEMENTS))
    if h == 0:
        topology["g"] = 1
    elif draw(st.booleans()):
        links = draw(st.sampled_from([1, 1, 2, 3]))
        topology["links_per_pair"] = links
        topology["g"] = draw(st.integers(1, max(1, a * h // links + 1)))
    return topology


@st.composite
def _network(draw: st.DrawFn) -> dict[str, Any]:
    flits = draw(st.sampled_from([1, 1, 2, 4]))
    network: dict[str, Any] = {"packet_flits": flits}
    for key in ("input_buffer_flits", "output_buffer_flits"):
        network[key] = flits * draw(st.sampled_from([1, 2, 5, 20]))
    for key in ("local_latency_ns", "global_latency_ns", "host_latency_ns"):
        if draw(st.integers(0, 4)) == 0:
            network[key] = draw(st.sampled_from([0.0, 0.5, 1.0, 1000.0]))
    for key in ("xbar_bw_gbps", "global_bw_gbps", "local_bw_gbps"):
        if draw(st.integers(0, 4)) == 0:
            network[key] = draw(st.sampled_from([0.5, 1.0, 4.0, 400.0]))
    return network


@st.composite
def _routing(draw: st.DrawFn) -> dict[str, Any]:
    routing: dict[str, Any] = {"algorithm": draw(st.sampled_from(ROUTINGS))}
    if draw(st.booleans()):
        routing["intermediate"] = draw(st.sampled_from(["outside", "any"]))
    if draw(st.booleans()):
        routing["intra_group"] = draw(st.sampled_from(["minimal", "adaptive"]))
    if draw(st.integers(0, 3)) == 0:
        routing["adaptive_threshold"] = draw(st.sampled_from([0.0, 1.0, 1.5, 2.0]))
    return routing


@st.composite
def _traffic(draw: st.DrawFn) -> dict[str, Any]:
    traffic: dict[str, Any] = {
        "pattern": draw(st.sampled_from(PATTERNS)),
        "load": draw(st.sampled_from([0.01, 0.1, 0.3, 0.7, 1.0])),
        "process": draw(st.sampled_from(["bernoulli", "periodic"])),
        "allow_self": draw(st.booleans()),
    }
    if draw(st.integers(0, 4)) == 0:
        traffic["source_queue_packets"] = draw(st.sampled_from([1, 2, 20]))
    if draw(st.integers(0, 3)) == 0:
        phase = {"start_us": draw(st.sampled_from([0.3, 0.7, 1.2])), "load": 0.9}
        if draw(st.booleans()):
            phase["pattern"] = draw(st.sampled_from(PATTERNS))
        traffic["phases"] = [phase]
    return traffic


@st.composite
def valid_cases(draw: st.DrawFn) -> Case:
    """Experiments built from valid values only (their combination may still be refused)."""
    doc: dict[str, Any] = {
        "seed": draw(st.integers(0, 2**64 - 1)),
        "topology": draw(_topology()),
        "network": draw(_network()),
        "routing": draw(_routing()),
        "traffic": draw(_traffic()),
        "run": {
            "warmup_us": draw(st.sampled_from([0.0, 0.5, 1.0])),
            "measure_us": draw(st.sampled_from([0.5, 1.0])),
            "window_us": draw(st.sampled_from([0.25, 0.5, 1.0])),
            "check": draw(st.booleans()),
            "watchdog_us": draw(st.sampled_from([50.0, 5.0, 2.0])),
        },
    }
    return Case("valid", to_toml(doc))


def _mutate(draw: st.DrawFn, doc: dict[str, Any]) -> None:
    """One change: a value made weird, a key removed, an unknown key, a top-level key, a pattern
    or a phase."""
    tables = [key for key, value in doc.items() if isinstance(value, dict)]
    table = doc[draw(st.sampled_from(tables))]
    op = draw(st.sampled_from(["value", "value", "value", "delete", "unknown", "top", "pattern",
                               "phase"]))  # fmt: skip
    if op == "value" and table:
        table[draw(st.sampled_from(sorted(table)))] = draw(st.sampled_from(WEIRD))
    elif op == "delete" and table:
        del table[draw(st.sampled_from(sorted(table)))]
    elif op == "unknown":
        table[draw(st.sampled_from(UNKNOWN_KEYS))] = draw(st.sampled_from(WEIRD))
    elif op == "top":
        doc[draw(st.sampled_from(TOP_KEYS))] = draw(st.sampled_from((*WEIRD, "qadaptive-1056")))
    elif op == "pattern":
        doc["traffic"]["pattern"] = draw(st.sampled_from((*BAD_PATTERNS, *PATTERNS)))
    else:
        start, load = draw(st.sampled_from(WEIRD)), draw(st.sampled_from((*WEIRD, 0.9)))
        doc["traffic"]["phases"] = [{"start_us": start, "load": load}]


@st.composite
def mutated_cases(draw: st.DrawFn) -> Case:
    """The base experiment with one to three changes: wrong types, out-of-range and huge
    numbers, unknown keys, bad patterns, empty and unicode strings."""
    doc = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 3))):
        _mutate(draw, doc)
    return Case("mutated", to_toml(doc))


def _typed_flag(flag: str, text: str) -> Any:
    """The value typer gives a shortcut flag (a ValueError where typer refuses it)."""
    if flag in ("--routing", "--traffic"):
        return text
    return int(text) if flag == "--seed" else float(text)


_FLAG_KEYS = {
    "--load": "traffic.load", "--routing": "routing.algorithm", "--traffic": "traffic.pattern",
    "--warmup-us": "run.warmup_us", "--measure-us": "run.measure_us", "--seed": "seed",
}  # fmt: skip


@st.composite
def set_cases(draw: st.DrawFn) -> Case:
    """The base experiment with `--set` overrides and shortcut flags of every kind."""
    items = [
        draw(st.sampled_from(SET_ITEMS_RAW))
        if draw(st.integers(0, 9)) == 0
        else f"{draw(st.sampled_from(SET_KEYS))}={draw(st.sampled_from(SET_VALUES))}"
        for _ in range(draw(st.integers(1, 3)))
    ]
    args = [arg for item in items for arg in ("--set", item)]
    flags: dict[str, Any] = {}
    if draw(st.booleans()):
        flag, text = draw(st.sampled_from(FLAGS)), draw(st.sampled_from(FLAG_VALUES))
        args += [flag, text]
        with contextlib.suppress(ValueError):  # typer refuses it: nothing to judge
            flags[_FLAG_KEYS[flag]] = _typed_flag(flag, text)
    return Case("set", to_toml(BASE), items, flags, args)


@st.composite
def byte_cases(draw: st.DrawFn) -> Case:
    """The base experiment's TOML with bytes changed, removed or inserted."""
    text = bytearray(to_toml(BASE).encode())
    for _ in range(draw(st.integers(1, 8))):
        at, op = draw(st.integers(0, len(text) - 1)), draw(st.sampled_from(["set", "del", "ins"]))
        if op == "set":
            text[at] = draw(st.integers(0, 255))
        elif op == "del":
            del text[at]
        else:
            text[at:at] = bytes([draw(st.integers(0, 255))])
    return Case("bytes", bytes(text))
