"""Fixed benchmark scenarios, each in a fresh subprocess so peak RSS is per scenario.

`python -m dflab.bench --one NAME [--quick]` runs one scenario and prints one JSON object;
`run_bench()` (behind `dflab bench`) starts one such child per scenario. The child imports only
the config models and the engine, so its RSS is the engine's plus a small interpreter baseline.

Wall time on a virtual machine includes the time the hypervisor gives the CPU to other guests
(*steal*), which on the shared hosts this project is developed on moves wall figures by ±30 %
from run to run. So each row also has the process CPU time of the run (`cpu_s`, which a Linux
guest does not charge with steal) and the host's steal share while it ran (`host_steal_pct`,
from `/proc/stat`; None where that file does not exist). Wall and CPU time per traversal also
move with the clock the core runs at, which on these hosts has ranged from under 1 to about 4
GHz: `host_ghz_before` and `host_ghz_after` measure it just before and after the run (a chain of
dependent additions, see `dflab_core::hostclock`), and `cycles_per_router_traversal` is the CPU
time per traversal at their mean, the figure to compare across hosts (when the two readings
differ much, the clock moved during the run). `engine_build` says whether the engine
was compiled with profile-guided optimisation (`release+pgo`, see scripts/pgo.sh) or not
(`release`). `cpu_s` covers the engine call as a
whole: the network set-up and the conversion of the results (a few ms) besides the run itself.

Back-to-back runs of one scenario on such a host differ by up to ±20 % even at the same clock
and with no steal (the last-level cache is shared with other guests, and the engine's working
set does not fit the per-core L2). `repeat=N` (`dflab bench --repeat N`) runs each scenario N
times, each in its own child, and reports the run with the median wall time per traversal,
with the fastest and slowest of the N in `ns_per_router_traversal_min` / `_max` and N in
`repeats` (with one run, both equal the run's own figure).
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterable
from typing import Any

from dflab.errors import UserError


def _hpdc(routing: str, pattern: str, load: float, **extra: Any) -> dict[str, Any]:
    """A scenario on the qadaptive-1056 network (SST timing, lock-step injection): 10 µs
    warm-up, 40 µs measured."""
    return {
        "preset": "qadaptive-1056",
        "routing": {"algorithm": routing},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 10.0, "measure_us": 40.0},
        **extra,
    }


def _link_busy(routing: str, pattern: str, load: float) -> dict[str, Any]:
    """The same scenario with the link-busy timing: the cost of SST's timers, side by side."""
    return _hpdc(routing, pattern, load, network={"timing": "link-busy"})


def _ics24(routing: str, pattern: str, load: float) -> dict[str, Any]:
    """A scenario on the ugal-le-1056 network (BookSim timing: BookSim's input-queued router,
    cycle by cycle): 10 µs warm-up, 20 µs measured."""
    return {
        "preset": "ugal-le-1056",
        "routing": {"algorithm": routing},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 10.0, "measure_us": 20.0},
    }


def _dgb(pattern: str, load: float) -> dict[str, Any]:
    """DGB on its fork's own network (booksim-dgb-1056, BookSim timing): an oracle on one
    partition that reads occupancies at every source-group hop and keeps the fork's in-flight
    window of every port's sends. 5 µs warm-up, 5 µs measured."""
    return {
        "preset": "booksim-dgb-1056",
        "routing": {"algorithm": "DGB"},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 5.0, "measure_us": 5.0},
    }


def _acor(routing: str, pattern: str, load: float) -> dict[str, Any]:
    """A scenario on the acor-5256 network (the ACOR paper's FOGSim setup, link-busy timing cut
    through): 5 µs warm-up, 10 µs measured. VAL and PB are restricted and recomputing (the
    preset's); PB-ACOR pays the group broadcast of its saturation flags."""
    return {
        "preset": "acor-5256",
        "routing": {"algorithm": routing},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 5.0, "measure_us": 10.0},
    }


def _frontier(routing: str, pattern: str, load: float) -> dict[str, Any]:
    """A scenario on the frontier-class network (37,888 endpoints, 2,368 switches of radix 64,
    tapered: issue 25's real machine): 2 µs warm-up, 3 µs measured."""
    return {
        "preset": "frontier-class",
        "routing": {"algorithm": routing},
        "traffic": {"pattern": pattern, "load": load},
        "run": {"warmup_us": 2.0, "measure_us": 3.0},
    }


def _sc22(routing: str) -> dict[str, Any]:
    """The SC'22 pair on sc22-1056: FFT3D and Halo3D, 528 ranks each, the first simulated ms of
    their communication (no `wait2start`, so that short windows move packets too). Its
    `sim_us_per_wall_s` gives the wall time per simulated ms (1000 / it)."""
    jobs = [
        {"motif": "fft3d", "ranks": 528, "wait2start_us": 0.0},
        {"motif": "halo3d", "ranks": 528, "wait2start_us": 0.0},
    ]
    return {
        "preset": "sc22-1056",
        "routing": {"algorithm": routing},
        "run": {"warmup_us": 0.0, "measure_us": 1000.0},
        "workload": {"jobs": jobs, "record_iterations": False},
    }


# Network parameters of the presets; only the topology, routing and windows differ.
SCENARIOS: dict[str, dict[str, Any]] = {
    "qadaptive-1056-ur0.5-MIN": _hpdc("MIN", "ur", 0.5),
    "qadaptive-1056-ur0.5-VALn": _hpdc("VALn", "ur", 0.5),
    "qadaptive-1056-ur0.5-UGALn": _hpdc("UGALn", "ur", 0.5),
    "qadaptive-1056-ur0.5-PAR": _hpdc("PAR", "ur", 0.5),
    "qadaptive-1056-ur0.5-Q-adaptive": _hpdc("Q-adaptive", "ur", 0.5),
    "qadaptive-1056-adv+1-0.4-MIN": _hpdc("MIN", "adv+1", 0.4),
    "qadaptive-1056-adv+1-0.4-Q-adaptive": _hpdc("Q-adaptive", "adv+1", 0.4),
    "link-busy-ur0.5-MIN": _link_busy("MIN", "ur", 0.5),
    "link-busy-ur0.5-PAR": _link_busy("PAR", "ur", 0.5),
    "link-busy-adv+1-0.4-Q-adaptive": _link_busy("Q-adaptive", "adv+1", 0.4),
    "booksim-ur0.5-MIN": _ics24("MIN", "ur", 0.5),
    "booksim-adv+1-0.4-UGAL-L": _ics24("UGAL-L", "adv+1", 0.4),
    "booksim-dgb-1056-adv+1-0.3-DGB": _dgb("adv+1", 0.3),
    "acor-5256-ur0.5-VAL": _acor("VAL", "ur", 0.5),
    "acor-5256-ur0.5-ACOR": _acor("ACOR", "ur", 0.5),
    "acor-5256-ur0.5-PB-ACOR": _acor("PB-ACOR", "ur", 0.5),
    "acor-5256-adv+h-0.3-ACOR": _acor("ACOR", "adv+h", 0.3),
    "frontier-class-ur0.3-MIN": _frontier("MIN", "ur", 0.3),
    "frontier-class-ur0.3-IMB": _frontier("IMB", "ur", 0.3),
    "sc22-1056-fft3d+halo3d-PAR": _sc22("PAR"),
    "sc22-1056-fft3d+halo3d-Q-adaptive": _sc22("Q-adaptive"),
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
    "cpu_s",
    "cpu_ns_per_router_traversal",
    "host_steal_pct",
    "host_ghz_before",
    "host_ghz_after",
    "cycles_per_router_traversal",
    "router_traversals",
    "events",
    "peak_rss_mb",
    "engine_build",
    "repeats",
    "ns_per_router_traversal_min",
    "ns_per_router_traversal_max",
)

# Columns of the human-readable table (the JSON has every field of FIELDS): the build is the
# same for every row and goes in the title; wall and simulated time are in the rates.
TABLE_FIELDS = (
    "scenario",
    "sim_us_per_wall_s",
    "ns_per_router_traversal",
    "cpu_ns_per_router_traversal",
    "host_ghz_before",
    "host_ghz_after",
    "cycles_per_router_traversal",
    "host_steal_pct",
    "router_traversals",
    "peak_rss_mb",
)

# Extra columns of the table when scenarios were repeated: the spread around the median run.
REPEAT_TABLE_FIELDS = ("repeats", "ns_per_router_traversal_min", "ns_per_router_traversal_max")

# Headers of the human-readable table (the JSON keeps the field names above).
LABELS = {
    "wall_s": "wall s",
    "sim_us": "sim µs",
    "sim_us_per_wall_s": "sim µs / wall s",
    "ns_per_router_traversal": "ns / trav.",
    "cpu_s": "CPU s",
    "cpu_ns_per_router_traversal": "CPU ns / trav.",
    "host_steal_pct": "steal %",
    "host_ghz_before": "GHz before",
    "host_ghz_after": "GHz after",
    "cycles_per_router_traversal": "cycles / trav.",
    "router_traversals": "traversals",
    "peak_rss_mb": "peak MB",
    "engine_build": "build",
    "repeats": "runs",
    "ns_per_router_traversal_min": "min ns / trav.",
    "ns_per_router_traversal_max": "max ns / trav.",
}


def scenario_config(name: str, quick: bool = False) -> dict[str, Any]:
    if name not in SCENARIOS:
        raise UserError(f"unknown scenario {name!r}; allowed: {', '.join(SCENARIOS)}")
    config = copy.deepcopy(SCENARIOS[name])
    config["name"] = f"bench-{name}"
    if quick:
        config["run"] = {**config["run"], **QUICK_RUN}
        if "workload" in config:
            # A workload's first packets are out after its set-up delays, well within this.
            config["run"]["measure_us"] = 5.0
    return config


def _cpu_ticks() -> tuple[int, int] | None:
    """(steal, total) jiffies of the whole host since boot, or None without `/proc/stat`."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 8:
        return None
    # user nice system idle iowait irq softirq steal (guest time is already inside user).
    return fields[7], sum(fields)


def _steal_pct(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round(100.0 * (after[0] - before[0]) / (after[1] - before[1]), 1)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def run_one(name: str, quick: bool = False) -> dict[str, Any]:
    """Run a scenario in this process; call only in a fresh process (RSS is process-wide)."""
    from dflab import engine
    from dflab.config import Experiment
    from dflab.loading import validate

    experiment = validate(Experiment, scenario_config(name, quick))
    config_json = experiment.to_engine_json()
    ghz_before = engine.host_clock_ghz()
    ticks_before, cpu_before = _cpu_ticks(), time.process_time()
    raw = engine.simulate(config_json)
    summary, execution = raw["summary"], raw["execution"]
    cpu_s = time.process_time() - cpu_before
    steal = _steal_pct(ticks_before, _cpu_ticks())
    ghz_after = engine.host_clock_ghz()
    traversals = summary["router_traversals"]
    cpu_ns = cpu_s * 1e9 / traversals if traversals else 0.0
    cycles = None
    if ghz_before is not None and ghz_after is not None:
        cycles = cpu_ns * (ghz_before + ghz_after) / 2
    # Linux reports ru_maxrss in KiB.
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "scenario": name,
        "wall_s": execution["wall_s"],
        "sim_us": summary["sim_time_us"],
        "sim_us_per_wall_s": execution["sim_us_per_wall_s"],
        "ns_per_router_traversal": execution["ns_per_router_traversal"],
        "cpu_s": cpu_s,
        "cpu_ns_per_router_traversal": cpu_ns,
        "host_steal_pct": steal,
        "host_ghz_before": _rounded(ghz_before),
        "host_ghz_after": _rounded(ghz_after),
        "cycles_per_router_traversal": None if cycles is None else round(cycles),
        "router_traversals": traversals,
        "events": execution["events"],
        "peak_rss_mb": round(peak_rss_mb, 1),
        "engine_build": engine.build(),
    }


def _run_child(name: str, quick: bool) -> dict[str, Any]:
    """One `python -m dflab.bench --one NAME` child: a fresh process, so RSS is its own."""
    command = [sys.executable, "-m", "dflab.bench", "--one", name]
    if quick:
        command.append("--quick")
    child = subprocess.run(command, capture_output=True, text=True, check=False)
    if child.returncode != 0:
        detail = (child.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"bench scenario {name} failed: {detail}")
    return json.loads(child.stdout)


def median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median wall ns per traversal (the lower middle one of an even count),
    with the number of runs and the fastest and slowest figure beside it."""
    if not runs:
        raise ValueError("median_row needs at least one run")
    ordered = sorted(runs, key=lambda row: row["ns_per_router_traversal"])
    row = dict(ordered[(len(ordered) - 1) // 2])
    row["repeats"] = len(runs)
    row["ns_per_router_traversal_min"] = ordered[0]["ns_per_router_traversal"]
    row["ns_per_router_traversal_max"] = ordered[-1]["ns_per_router_traversal"]
    return row


def run_bench(
    names: Iterable[str] | None = None, quick: bool = False, repeat: int = 1
) -> list[dict[str, Any]]:
    """Each scenario `repeat` times, each run in its own child; one row per scenario, in order."""
    if repeat < 1:
        raise UserError(f"repeat is {repeat}; allowed: a whole number of runs, at least 1")
    names = list(names or SCENARIOS)
    for name in names:
        scenario_config(name)  # unknown names fail before any child starts
    return [median_row([_run_child(name, quick) for _ in range(repeat)]) for name in names]


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
