"""Experiment configuration models (the contract is docs/config.md).

The same structure is used in TOML files, in Python and in the Rust engine. Python resolves
presets and overrides, validates, and hands the engine a JSON document with every field filled
in. Unknown keys are errors, and types are strict: `p = "4"` in a file is a mistake, not a 4.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from dflab import presets
from dflab.overrides import deep_merge

# Canonical spellings, in one place (a test keeps them equal to the engine registry). Input is
# matched case-insensitively and stored canonically.
ROUTING_ALGORITHMS: tuple[str, ...] = (
    "MIN", "VALg", "VALn", "UGALg", "UGALn", "UGAL-L", "UGAL-G", "PAR", "Q-adaptive", "Q-routing",
)  # fmt: skip
ARRANGEMENTS: tuple[str, ...] = ("absolute", "relative", "palmtree", "circulant")
PROCESSES: tuple[str, ...] = ("bernoulli", "periodic")
PATTERNS_HELP = (
    "ur, adv+<i>, adv+h, advc, advl, perm, hot[:<traffic%>:<nodes%>], "
    "router-mix:<adv+i|adv+h|perm>:<pct>, node-mix:<adv+i|adv+h|perm>:<pct>, stencil[:XxYxZ], "
    "m2m[:XxYxZ], rn[:<min>:<max>], rn-fixed[:<min>:<max>]"
)
# The grammar of the engine's pattern parser (crates/dflab-core/src/traffic/pattern.rs); what
# depends on the topology (adv+i range, grid sizes) is checked by the engine.
_NUM = r"\d+(?:\.\d+)?"
_GRID = r"\d+x\d+x\d+"
_PATTERN_RE = re.compile(
    rf"^(ur|perm|advc|advl|adv\+(\d+|h)|hot(?::{_NUM}:{_NUM})?"
    rf"|(?:router|node)-mix:(?:adv\+(?:\d+|h)|perm):{_NUM}"
    rf"|stencil(?::{_GRID})?|(?:m2m|many-to-many)(?::{_GRID})?"
    rf"|(?:rn|random-neighbors|rn-fixed)(?::\d+:\d+)?)$",
    re.IGNORECASE,
)

PositiveInt = Annotated[int, Field(ge=1)]
# TOML has inf and nan; neither is a usable time, bandwidth or load.
PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def canonical_choice(value: str, allowed: tuple[str, ...]) -> str:
    """Case-insensitive match of `value` against `allowed`, returning the canonical spelling."""
    for name in allowed:
        if value.lower() == name.lower():
            return name
    raise PydanticCustomError(
        "not_allowed", "not allowed; allowed: {allowed}", {"allowed": ", ".join(allowed)}
    )


def canonical_routing(value: str) -> str:
    return canonical_choice(value, ROUTING_ALGORITHMS)


def canonical_pattern(value: str) -> str:
    """'UR' -> 'ur', 'ADV+01' -> 'adv+1', 'Adv+H' -> 'adv+h'; anything else is an error."""
    match = _PATTERN_RE.match(value.strip())
    offset = match.group(2) if match else None
    if match is None or (offset is not None and offset.isdigit() and int(offset) == 0):
        raise PydanticCustomError(
            "not_allowed", "not allowed; allowed: {allowed}", {"allowed": PATTERNS_HELP}
        )
    if offset is not None and offset.isdigit():
        return f"adv+{int(offset)}"
    return match.group(1).lower()


RoutingName = Annotated[str, AfterValidator(canonical_routing)]
PatternName = Annotated[str, AfterValidator(canonical_pattern)]
Arrangement = Annotated[str, AfterValidator(lambda value: canonical_choice(value, ARRANGEMENTS))]
Process = Annotated[str, AfterValidator(lambda value: canonical_choice(value, PROCESSES))]
Load = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=0, le=2**64 - 1)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _field_error(field: str, value: Any, allowed: str) -> PydanticCustomError:
    """An error about one field raised from a model-level check (see errors.describe_error)."""
    return PydanticCustomError(
        "out_of_range",
        "{field} = {value} is out of range; allowed: {allowed}",
        {"field": field, "value": value, "allowed": allowed},
    )


class Topology(_Section):
    """dfly(p, a, h, g) with `links_per_pair` (l) parallel global links between each group pair.

    Left out, `links_per_pair` is derived as the papers' notation implies: with `g` given, the
    most links that fit, `a*h // (g - 1)` (dfly(4,8,4,9) has 4, ICS'24 Table 1); with neither
    given, 1 and `g = a*h + 1`. Both derived values are written without marking the field as
    set, so a later override of a, h or g recomputes them. Give `links_per_pair = 1` for SST's
    sparse wiring of a smaller g.
    """

    p: PositiveInt = 4
    a: PositiveInt = 8
    h: Annotated[int, Field(ge=0)] = 4
    g: Annotated[int | None, Field(ge=1)] = None
    links_per_pair: PositiveInt | None = None
    arrangement: Arrangement = "absolute"

    @property
    def max_groups(self) -> int:
        return self.a * self.h // (self.links_per_pair or 1) + 1

    @model_validator(mode="after")
    def _fill_groups(self) -> Topology:
        ports = self.a * self.h
        if self.g is None:
            links = self.links_per_pair or 1
            if ports % links:
                raise _field_error(
                    "links_per_pair", links, f"a divisor of a*h = {ports}, or set topology.g"
                )
            # Computed defaults, written without marking the fields as set (see the class doc).
            self.__dict__["links_per_pair"] = links
            self.__dict__["g"] = ports // links + 1
        else:
            if self.g > self.max_groups:
                raise _field_error("g", self.g, f"1..{self.max_groups} (a*h/links_per_pair + 1)")
            if self.links_per_pair is None:
                self.__dict__["links_per_pair"] = max(1, ports // (self.g - 1)) if self.g > 1 else 1
        if self.g > 1 and self.h == 0:
            raise _field_error("h", self.h, ">= 1 when g > 1")
        return self

    @property
    def routers(self) -> int:
        return self.a * (self.g or 1)

    @property
    def nodes(self) -> int:
        return self.p * self.routers

    def label(self) -> str:
        return f"dfly({self.p},{self.a},{self.h},{self.g})"


class Network(_Section):
    """Packet, link, crossbar and buffer parameters (ns, GB/s, flits, bytes)."""

    flit_bytes: PositiveInt = 128
    packet_flits: PositiveInt = 1
    host_bw_gbps: PositiveFloat = 4.0
    local_bw_gbps: PositiveFloat = 4.0
    global_bw_gbps: PositiveFloat = 4.0
    xbar_bw_gbps: PositiveFloat = 40.0
    input_buffer_flits: PositiveInt = 20
    output_buffer_flits: PositiveInt = 20
    host_latency_ns: NonNegativeFloat = 10.0
    local_latency_ns: NonNegativeFloat = 30.0
    global_latency_ns: NonNegativeFloat = 300.0
    input_latency_ns: NonNegativeFloat = 10.0
    output_latency_ns: NonNegativeFloat = 10.0

    @model_validator(mode="after")
    def _buffers_hold_a_packet(self) -> Network:
        # Virtual cut-through: a packet occupies its whole size in every buffer it enters.
        for field in ("input_buffer_flits", "output_buffer_flits"):
            if getattr(self, field) < self.packet_flits:
                allowed = f">= packet_flits ({self.packet_flits})"
                raise _field_error(field, getattr(self, field), allowed)
        return self


INTERMEDIATES: tuple[str, ...] = ("outside", "any")
INTRA_GROUP: tuple[str, ...] = ("minimal", "adaptive")
Q_UPDATES: tuple[str, ...] = ("hysteretic", "plain")
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Rate = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Candidates = Annotated[int, Field(ge=1, le=64)]


class Routing(_Section):
    """The algorithm and its knobs (each knob names the algorithms it applies to)."""

    algorithm: RoutingName = "MIN"
    # Forces the number of VCs; fewer than the algorithm needs is allowed (deadlock studies).
    vcs: Annotated[int | None, Field(ge=1, le=64)] = None
    # UGALg, UGALn, PAR: non-minimal iff q_min > floor(adaptive_threshold * q_nm).
    adaptive_threshold: NonNegativeFloat = 2.0
    # UGAL-L: bias b (flits) of q_m*H_m <= q_nm*H_nm + b; candidates compared per decision.
    bias: FiniteFloat = 0.0
    min_candidates: Candidates = 1
    nonmin_candidates: Candidates = 1
    # UGAL*/PAR: intermediate router outside source/destination groups, or any router.
    intermediate: Annotated[str, AfterValidator(lambda v: canonical_choice(v, INTERMEDIATES))] = (
        "outside"
    )
    # UGAL*/PAR: intra-group packets always minimal, or by the algorithm's own rule.
    intra_group: Annotated[str, AfterValidator(lambda v: canonical_choice(v, INTRA_GROUP))] = (
        "minimal"
    )
    # Q-adaptive, Q-routing (HPDC'21 1056-node values; the 2550-node system uses
    # q_thld1 = 0.05, q_thld2 = 0.4).
    learning_rate: Rate = 0.2
    learning_rate2: Rate = 0.04
    epsilon: Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)] = 0.001
    q_thld1: FiniteFloat = 0.2
    q_thld2: FiniteFloat = 0.35
    max_q: Annotated[int, Field(ge=0, le=32)] = 2
    q_update: Annotated[str, AfterValidator(lambda v: canonical_choice(v, Q_UPDATES))] = (
        "hysteretic"
    )
    q_truncate: bool = True


class Phase(_Section):
    """From `start_us` on, this load and/or pattern replace the previous ones (transients)."""

    start_us: PositiveFloat
    load: Load | None = None
    pattern: PatternName | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> Phase:
        if self.load is None and self.pattern is None:
            raise _field_error("load", None, "a phase must set load, pattern or both")
        return self


class Traffic(_Section):
    pattern: PatternName = "ur"
    load: Load = 0.5
    process: Process = "bernoulli"
    allow_self: bool = False
    phases: list[Phase] = Field(default_factory=list)
    # Bounded source queue: generation pauses while it is full (SST's TrafficGen); None = open loop.
    source_queue_packets: Annotated[int | None, Field(ge=1)] = None

    @model_validator(mode="after")
    def _phases_in_order(self) -> Traffic:
        starts = [phase.start_us for phase in self.phases]
        if starts != sorted(set(starts)):
            raise _field_error("phases", starts, "start_us strictly increasing")
        return self

    @property
    def adv_offset(self) -> int | None:
        """The numeric i of 'adv+i', None for other patterns (and for adv+h)."""
        if self.pattern.startswith("adv+") and self.pattern[4:].isdigit():
            return int(self.pattern[4:])
        return None


class Run(_Section):
    warmup_us: NonNegativeFloat = 20.0
    measure_us: PositiveFloat = 50.0
    window_us: PositiveFloat = 1.0
    check: bool = False
    watchdog_us: PositiveFloat = 50.0


class Experiment(_Section):
    """One experiment: topology + network + routing + traffic + run window + seed."""

    name: str | None = None
    preset: str | None = None
    seed: Seed = 1
    topology: Topology = Field(default_factory=Topology)
    network: Network = Field(default_factory=Network)
    routing: Routing = Field(default_factory=Routing)
    traffic: Traffic = Field(default_factory=Traffic)
    run: Run = Field(default_factory=Run)

    # Keys that exist only on the Python side and never reach the engine.
    PYTHON_ONLY: ClassVar[frozenset[str]] = frozenset({"preset"})

    @model_validator(mode="before")
    @classmethod
    def _resolve_preset(cls, data: Any) -> Any:
        """Start from the named preset and lay the given fields over it."""
        if not isinstance(data, dict) or not isinstance(data.get("preset"), str):
            return data
        name = data["preset"]
        try:
            base = presets.load(name)
        except KeyError:
            raise PydanticCustomError(
                "not_allowed",
                "unknown preset",
                {"field": "preset", "value": name, "allowed": ", ".join(presets.names())},
            ) from None
        merged = deep_merge(base, data)
        merged["preset"] = presets.canonical(name)
        return merged

    @model_validator(mode="after")
    def _pattern_fits_topology(self) -> Experiment:
        offset = self.traffic.adv_offset
        groups = self.topology.g or 1
        if offset is not None and not 1 <= offset < groups:
            allowed = f"adv+1..adv+{groups - 1} for g = {groups}" if groups > 1 else "not adv"
            raise _field_error("traffic.pattern", self.traffic.pattern, allowed)
        return self

    def engine_dict(self) -> dict[str, Any]:
        """Every field the engine expects, filled in; Python-only keys removed."""
        data = self.model_dump(mode="json", exclude=set(self.PYTHON_ONLY))
        # The engine's name is a plain string (no null): "no name" is the empty string.
        data["name"] = self.name or ""
        return data

    def to_engine_json(self) -> str:
        """Canonical JSON (sorted keys, compact): the engine's input and the hash's input."""
        return json.dumps(self.engine_dict(), sort_keys=True, separators=(",", ":"))

    # Part of every content hash. Bump it when a default *value* changes meaning (results made
    # under the old default must not be reused); adding a key with a default needs no bump.
    HASH_SCHEMA: ClassVar[str] = "dflab-1"

    def content_hash(self) -> str:
        """The result store key: first 16 hex chars of sha256 over the canonical JSON of the
        fields that differ from their defaults. Hashing only those keeps existing store keys
        valid when later versions add keys with defaults."""
        data = self.model_dump(mode="json", exclude=set(self.PYTHON_ONLY), exclude_defaults=True)
        # Equal experiments must hash equally however they were written: g is always hashed
        # (explicit or computed) and an empty name is no name.
        topology = data.setdefault("topology", {})
        topology["g"] = self.topology.g
        # links_per_pair is hashed when it is not 1, explicit or derived: the store keys of
        # every one-link network stay what they were before it could be derived.
        topology.pop("links_per_pair", None)
        if self.topology.links_per_pair != 1:
            topology["links_per_pair"] = self.topology.links_per_pair
        if not data.get("name"):
            data.pop("name", None)
        text = json.dumps([self.HASH_SCHEMA, data], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def label(self) -> str:
        return (
            f"{self.topology.label()} {self.routing.algorithm} {self.traffic.pattern} "
            f"load {self.traffic.load:g} seed {self.seed}"
        )
