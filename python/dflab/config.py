"""Experiment configuration. The engine owns the schema: the models of every table are generated
from it (`_models.py`, by `python -m dflab.schema_gen`; the keys are listed in
docs/config-keys.md) and check keys, types and ranges in Python; the engine checks the rest
(what depends on the topology, the patterns, the routing parameters) and gives the canonical
effective form of an experiment, which is what the result store keys on.

Python adds what only the front end knows: presets, and the label and key of an experiment.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, ClassVar

from pydantic import Field, PrivateAttr, model_validator
from pydantic_core import PydanticCustomError

from dflab import presets
from dflab._models import (
    ENGINE_SEMANTICS,
    PATTERN_KINDS,
    PATTERNS_HELP,
    ROUTING_ALGORITHMS,
    ROUTING_PARAMS,
    ExperimentModel,
    Network,
    Phase,
    Routing,
    Run,
    Topology,
    Traffic,
)
from dflab.errors import UserError
from dflab.overrides import deep_merge

__all__ = [
    "ENGINE_SEMANTICS",
    "PATTERNS_HELP",
    "PATTERN_KINDS",
    "ROUTING_ALGORITHMS",
    "ROUTING_PARAMS",
    "Experiment",
    "Network",
    "Phase",
    "Routing",
    "Run",
    "Topology",
    "Traffic",
]


# Keys added to the experiment after its hash schema (`Experiment.HASH_SCHEMA`) was fixed, with
# the value that reproduces the engine from before them (dotted path -> value). A canonical form
# holding one at that value hashes and compares like one without it, so that a result store made
# before the key keeps its keys and its points.
LATER_DEFAULTS: dict[str, Any] = {
    "run.whole_ns_latency": False,
    "run.decision_probes": False,
    "network.timing": "link-busy",
    "network.router_pipeline": "standard",
    "network.credit_delay_cycles": 2,
    "network.cut_through": False,
    "network.output_queue": "per-vc",
    "network.transit_priority": False,
    "routing.form": "hop-weighted",
    "routing.min_gateways": "own-first",
    "routing.vc_layout": "reference",
    "network.host_buffer_flits": None,
    "network.local_buffer_flits": None,
    "network.global_buffer_flits": None,
    "run.steady_warmup": False,
    "run.stop_when_saturated": False,
    "run.steady_windows": 5,
    "run.steady_tolerance": 0.05,
    "workload.mpi.rendezvous_recv_pin": False,
    "workload.mpi.rendezvous_recv_pin_blocks": False,
    "workload.mpi.rendezvous_recv_unpin": False,
    "workload.mpi.nic_control_stream": False,
    "workload.mpi.nic_staged_packets": 100,  # its default: the canonical form with the stream off
    "routing.reevaluate": False,
    "routing.q_init_scale": 1.0,
    "topology.global_port_order": "by-router",
    "topology.nics_per_node": 1,
    "topology.compute_groups": None,
    "traffic.nic_policy": "random",
    "workload.end_with_jobs": [],
    "routing.feedback": "ideal",
    "routing.piggyback_global_queues": True,
    "routing.hysteresis": "restart",
}


def without_later_defaults(canonical: dict[str, Any]) -> dict[str, Any]:
    """A copy of `canonical` without the keys of `LATER_DEFAULTS` that hold their value."""
    data = copy.deepcopy(canonical)
    for dotted, value in LATER_DEFAULTS.items():
        *path, last = dotted.split(".")
        table: Any = data
        for part in path:
            table = table.get(part) if isinstance(table, dict) else None
        if isinstance(table, dict) and last in table and table[last] == value:
            del table[last]
    return data


class Experiment(ExperimentModel):
    """One experiment: topology + network + routing + traffic + run window + seed."""

    name: str | None = Field(
        None, description="A label for the experiment (results directory, plot titles)."
    )
    preset: str | None = Field(None, description="The preset the experiment starts from.")

    # Keys that exist only on the Python side and never reach the engine.
    PYTHON_ONLY: ClassVar[frozenset[str]] = frozenset({"preset"})
    # Part of every store key: bump it when the key's definition changes.
    HASH_SCHEMA: ClassVar[str] = "dflab-2"
    # Run keys that change how a run is carried out, never its results: not in the store key.
    EXECUTION_ONLY: ClassVar[frozenset[str]] = frozenset({"check"})

    _canonical: dict[str, Any] | None = PrivateAttr(default=None)

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
    def _engine_checks(self) -> Experiment:
        """What only the engine can tell (anything that depends on the topology, the patterns'
        grammar, the routing parameters): asked here, so that a bad experiment is refused when
        it is read, with the engine's field-named message. Skipped without a compiled engine."""
        from dflab import engine

        if engine.has("canonical"):
            try:
                self._canonical = engine.canonical(self.to_engine_json())
            except UserError as exc:
                raise PydanticCustomError("engine", "{message}", {"message": exc.message}) from None
        return self

    def engine_dict(self) -> dict[str, Any]:
        """The engine's input: the fields given, parameters of no algorithm left out."""
        data = self.model_dump(mode="json", exclude=set(self.PYTHON_ONLY))
        # The engine's name is a plain string (no null): "no name" is the empty string.
        data["name"] = self.name or ""
        data["routing"] = {k: v for k, v in data["routing"].items() if v is not None}
        for section in ("topology", "traffic"):
            data[section] = {k: v for k, v in data[section].items() if v is not None}
        data["traffic"]["phases"] = [
            {k: v for k, v in phase.items() if v is not None} for phase in data["traffic"]["phases"]
        ]
        # No [workload]: the engine's form has no key (and the same for unset optional keys).
        workload = data.pop("workload", None)
        if workload is not None:
            workload = {k: v for k, v in workload.items() if v is not None}
            # No background traffic: the engine's form leaves the key out (the store's key of a
            # workload run stays what it was before the key existed).
            if workload.get("background") == "none":
                del workload["background"]
            workload["jobs"] = [
                {k: v for k, v in job.items() if v is not None} for job in workload["jobs"]
            ]
            data["workload"] = workload
        return data

    def to_engine_json(self) -> str:
        """Canonical JSON (sorted keys, compact) of the engine's input."""
        return json.dumps(self.engine_dict(), sort_keys=True, separators=(",", ":"))

    def canonical(self) -> dict[str, Any]:
        """The engine's canonical effective form: only the chosen algorithm's parameters, with
        defaults; canonical pattern strings; the derived `g` and `links_per_pair`. Raises a
        UserError naming the field if the engine refuses the experiment."""
        if self._canonical is None:
            from dflab import engine

            self._canonical = engine.canonical(self.to_engine_json())
        # A copy: the cached form must not change with what a caller does to the result.
        return copy.deepcopy(self._canonical)

    def content_hash(self) -> str:
        """The result store key: the first 16 hex digits of the SHA-256 of the canonical form
        (name and execution-only keys left out) with the engine's semantics version, so that
        equal simulations share a key and results of different engine semantics never do."""
        data = without_later_defaults(self.canonical())
        data.pop("name", None)
        for key in self.EXECUTION_ONLY:
            data["run"].pop(key, None)
        text = json.dumps(
            [self.HASH_SCHEMA, ENGINE_SEMANTICS, data], sort_keys=True, separators=(",", ":")
        )
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def topology_label(self) -> str:
        """`dfly(p,a,h,g)`, with `g` derived by the engine when not given."""
        t = self.topology
        groups = t.g if t.g is not None else self.canonical()["topology"]["g"]
        return f"dfly({t.p},{t.a},{t.h},{groups})"

    def nodes(self) -> int:
        t = self.topology
        groups = t.g if t.g is not None else self.canonical()["topology"]["g"]
        return t.p * t.a * groups

    def pattern_label(self) -> str:
        """The traffic pattern in its canonical short form (as written, without an engine)."""
        from dflab import engine

        if engine.has("canonical"):
            return str(self.canonical()["traffic"]["pattern"])
        return pattern_label(self.traffic.pattern)

    def label(self) -> str:
        return (
            f"{self.topology_label()} {self.routing.algorithm} {self.pattern_label()} "
            f"load {self.traffic.load:g} seed {self.seed}"
        )


def pattern_label(pattern: str | dict[str, Any]) -> str:
    """A pattern as one short string: itself, or a table's kind and parameters."""
    if isinstance(pattern, str):
        return pattern
    params = ":".join(str(v) for k, v in sorted(pattern.items()) if k != "kind")
    return f"{pattern['kind']}:{params}" if params else str(pattern["kind"])
