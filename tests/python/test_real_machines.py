"""The real-machine presets (issue: tapered, Slingshot-class Dragonflies): their shape, taper and
wiring as `dflab info` reports them; the wiring itself is tested in the engine
(crates/dflab-core/src/topology/tests.rs)."""

from __future__ import annotations

import pytest

from dflab import engine, simulate
from dflab.config import Experiment
from dflab.loading import validate

FRONTIER_TAPER = 292 / 512  # 73 groups x 4 links over 32 switches x 16 endpoints: 1 / 1.75


def _info(name: str) -> dict:
    return engine.topology_info(validate(Experiment, {"preset": name}).to_engine_json())


def test_frontier_class_has_the_public_shape() -> None:
    info = _info("frontier-class")
    assert (info["radix"], info["host_ports"], info["local_ports"], info["global_ports"]) == (
        64,
        16,
        31,
        17,
    )
    assert (info["groups"], info["nodes"], info["links_per_pair"]) == (74, 37_888, 4)
    assert info["global_links"] == 74 * 73 // 2 * 4
    assert info["unused_global_ports"] == 74 * (32 * 17 - 73 * 4)
    assert info["taper"] == pytest.approx(FRONTIER_TAPER)
    assert abs(1 / info["taper"] - 1.75) < 0.01
    assert info["global_port_order"] == "round-robin"


@pytest.mark.parametrize("name", ["frontier-class-half", "frontier-class-small"])
def test_the_scaled_frontier_presets_keep_its_ratios(name: str) -> None:
    info = _info(name)
    assert info["taper"] == pytest.approx(FRONTIER_TAPER, rel=0.02)
    assert info["links_per_pair"] >= 2
    assert info["unused_global_ports"] > 0
    assert info["global_port_order"] == "round-robin"
    full = validate(Experiment, {"preset": "frontier-class"})
    scaled = validate(Experiment, {"preset": name})
    assert scaled.network == full.network
    assert scaled.routing.algorithm == full.routing.algorithm


def test_frontier_class_small_carries_uniform_traffic_below_its_global_bound() -> None:
    # MIN under uniform traffic is bound by the tapered global links (`ur_min_global_bound`,
    # 0.623 here); at 0.3 the network carries all of it, at 0.8 no more than the bound.
    bound = _info("frontier-class-small")["ur_min_global_bound"]
    assert bound == pytest.approx(0.623, abs=0.001)
    base = {"preset": "frontier-class-small", "routing": {"algorithm": "MIN"}}
    run = {"warmup_us": 2.0, "measure_us": 2.0}
    low = simulate(validate(Experiment, {**base, "traffic": {"load": 0.3}, "run": run})).summary
    assert low.accepted_load == pytest.approx(0.3, rel=0.03)
    high = simulate(validate(Experiment, {**base, "traffic": {"load": 0.8}, "run": run})).summary
    assert 0.4 < high.accepted_load <= bound + 0.01
