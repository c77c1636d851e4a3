"""Fixed benchmark scenarios, each in a fresh subprocess so peak RSS is per scenario.

`python -m dflab.bench --one NAME [--quick]` runs one scenario and prints one JSON object;
`run_bench()` (behind `dflab bench`) starts one such child per scenario. The child imports only
the config models and the engine, so its RSS is the engine's plus a small interpreter baseline.
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

from dflab.errors import UserError


def _hpdc(routing: str, pattern: str, load: float, **extra: Any) -> dict[str, Any]:
    """A scenario on the qadaptive-1056 network: 10 µs warm-up, 40 µs measured."""
    return {
        "preset": "qadaptive-1056",
        "routing": {"algorithm": routing},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 10.0, "measure_us": 40.0},
        **extra,
    }


# Network parameters of the qadaptive presets; only the topology, routing and windows differ.
SCENARIOS: dict[str, dict[str, Any]] = {
    "qadaptive-1056-ur0.5-MIN": _hpdc("MIN", "ur", 0.5),
    "qadaptive-1056-ur0.5-VALn": _hpdc("VALn", "ur", 0.5),
    "qadaptive-1056-ur0.5-UGALn": _hpdc("UGALn", "ur", 0.5),
    "qadaptive-1056-ur0.5-PAR": _hpdc("PAR", "ur", 0.5),
    "qadaptive-1056-ur0.5-Q-adaptive": _hpdc("Q-adaptive", "ur", 0.5),
    "qadaptive-1056-adv+1-0.4-Q-adaptive": _hpdc("Q-adaptive", "adv+1", 0.4),
    "dfly-6-12-6-73-ur0.5-MIN": _hpdc(
        "MIN",
        "ur",
        0.5,
        topology={"p": 6, "a": 12, "h": 6, "g": 73},
        run={"warmup_us": 5.0, "measure_us": 15.0},
    ),
}

# --quick: windows short enough for a test, long enough to move packets across the network.
QUICK_RUN = {"warmup_us": 0.5, "measure_us": 1.5}

FIELDS = (
    "scenario",
    "wall_s",
    "sim_us",
    "sim_us_per_wall_s",
    "ns_per_router_traversal",
    "router_traversals",
    "events",
    "peak_rss_mb",
)


def scenario_config(name: str, quick: bool = False) -> dict[str, Any]:
    if name not in SCENARIOS:
        raise UserError(f"unknown scenario {name!r}; allowed: {', '.join(SCENARIOS)}")
    config = copy.deepcopy(SCENARIOS[name])
    config["name"] = f"bench-{name}"
    if quick:
        config["run"] = {**config["run"], **QUICK_RUN}
    return config


def run_one(name: str, quick: bool = False) -> dict[str, Any]:
    """Run a scenario in this process; call only in a fresh process (RSS is process-wide)."""
    from dflab import engine
    from dflab.config import Experiment
    from dflab.loading import validate

    experiment = validate(Experiment, scenario_config(name, quick))
    summary = engine.simulate(experiment.to_engine_json())["summary"]
    # Linux reports ru_maxrss in KiB.
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "scenario": name,
        "wall_s": summary["wall_s"],
        "sim_us": summary["sim_time_us"],
        "sim_us_per_wall_s": summary["sim_us_per_wall_s"],
        "ns_per_router_traversal": summary["ns_per_router_traversal"],
        "router_traversals": summary["router_traversals"],
        "events": summary["events"],
        "peak_rss_mb": round(peak_rss_mb, 1),
    }


def run_bench(names: Iterable[str] | None = None, quick: bool = False) -> list[dict[str, Any]]:
    """Each scenario in its own `python -m dflab.bench --one NAME` child; rows in order."""
    rows = []
    for name in names or SCENARIOS:
        scenario_config(name)  # unknown names fail before any child starts
        command = [sys.executable, "-m", "dflab.bench", "--one", name]
        if quick:
            command.append("--quick")
        child = subprocess.run(command, capture_output=True, text=True, check=False)
        if child.returncode != 0:
            detail = (child.stderr.strip().splitlines() or ["no output"])[-1]
            raise UserError(f"bench scenario {name} failed: {detail}")
        rows.append(json.loads(child.stdout))
    return rows


def _child_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dflab.bench")
    parser.add_argument("--one", required=True, choices=sorted(SCENARIOS))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    try:
        row = run_one(args.one, args.quick)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(_child_main())
