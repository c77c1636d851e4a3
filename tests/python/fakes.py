"""Picklable fake engine runners (module level, so spawn workers can import them)."""

from __future__ import annotations

import json
import os
from typing import Any

from dflab.api import SERIES_COLUMNS, Summary


def fake_result(config_json: str) -> dict[str, Any]:
    """An engine-shaped result whose numbers follow the config: a network that saturates at
    0.6 (MIN) or 0.45 (others), latency growing towards saturation."""
    config = json.loads(config_json)
    load = config["traffic"]["load"]
    cap = 0.6 if config["routing"]["algorithm"] == "MIN" else 0.45
    accepted = min(load, cap)
    latency = 1000.0 / max(1e-3, 1.0 - load / (cap + 0.5))
    summary: dict[str, Any] = {}
    for name in Summary.field_names():
        kind = Summary.__dataclass_fields__[name].type
        summary[name] = 7 if kind == "int" else 1.5
    summary.update(
        offered_load=load,
        accepted_load=accepted,
        latency_mean_ns=latency,
        latency_p99_ns=3 * latency,
        hops_mean=2.5,
        minimal_fraction=1.0 if config["routing"]["algorithm"] == "MIN" else 0.1,
    )
    series = {column: [0.0, 1.0] for column in SERIES_COLUMNS}
    series["in_measurement"] = [False, True]
    series["packets_delivered"] = [3, 4]
    execution = {"wall_s": 0.01, "events": 100, "ns_per_router_traversal": 50.0}
    execution.update(sim_us_per_wall_s=900.0, partitions=1)
    return {
        "summary": summary,
        "execution": execution,
        "series": series,
        "hops_histogram": [0, 1, 2],
        "config": config,
    }


def fail_at_half_load(config_json: str) -> dict[str, Any]:
    if json.loads(config_json)["traffic"]["load"] == 0.5:
        raise RuntimeError("deadlock at router 3 port 2 vc 0")
    return fake_result(config_json)


def die_at_half_load(config_json: str) -> dict[str, Any]:
    """Kills its worker process outright (as a segfault or the OOM killer would)."""
    if json.loads(config_json)["traffic"]["load"] == 0.5:
        os._exit(1)
    return fake_result(config_json)


# The directory where the runners below leave their marks (set by the test before the workers
# start: Dask's worker processes inherit the environment).
MARKS = "DFLAB_TEST_MARKS"


def _mark(name: str) -> bool:
    """Create the mark `name`; False if it was there already."""
    try:
        os.close(os.open(os.path.join(os.environ[MARKS], name), os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True


def die_once_at_half_load(config_json: str) -> dict[str, Any]:
    """Kills its worker process (as a crash or the OOM killer would) the first time it runs a
    point of load 0.5; every call leaves a mark `call-<pid>-<n>`."""
    config = json.loads(config_json)
    calls = len(os.listdir(os.environ[MARKS]))
    _mark(f"call-{os.getpid()}-{calls}-{config['traffic']['load']}")
    if config["traffic"]["load"] == 0.5 and _mark("died"):
        os._exit(1)
    return fake_result(config_json)


def hang_once_at_half_load(config_json: str) -> dict[str, Any]:
    """Sleeps far past any test's timeout the first time it runs a point of load 0.5."""
    import time

    if json.loads(config_json)["traffic"]["load"] == 0.5 and _mark("hung"):
        time.sleep(30)
    return fake_result(config_json)
