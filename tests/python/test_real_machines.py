"""The real-machine presets (issue: tapered, Slingshot-class Dragonflies): their shape, taper,
NICs and compute groups as `dflab info` reports them; the wiring itself is tested in the engine
(crates/dflab-core/src/topology/tests.rs), and the traffic of multi-NIC nodes and non-compute
groups in crates/dflab-core/tests/real_machines.rs."""

from __future__ import annotations

import pytest

from dflab import engine, simulate
from dflab.config import Experiment
from dflab.loading import validate

FRONTIER_TAPER = 292 / 512  # 73 groups x 4 links over 32 switches x 16 endpoints: 1 / 1.75
AURORA_TAPER = 348 / 512  # 174 groups x 2 links over 32 switches x 16 endpoints


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
    # 4 nodes of 4 NICs per switch, every group computing.
    assert (info["nics_per_node"], info["compute_nodes"], info["compute_groups"]) == (4, 9_472, 74)


def test_aurora_class_has_the_public_shape() -> None:
    info = _info("aurora-class")
    assert (info["radix"], info["host_ports"], info["local_ports"], info["global_ports"]) == (
        64,
        16,
        31,
        17,
    )
    # 5,600 switches in 175 groups; 166 compute groups of 32 switches x 2 nodes x 8 NICs:
    # 10,624 nodes, 84,992 NICs ("nearly 85,000").
    assert (info["groups"], info["routers"], info["links_per_pair"]) == (175, 5_600, 2)
    assert (info["compute_groups"], info["nics_per_node"]) == (166, 8)
    assert (info["compute_nodes"], info["compute_endpoints"]) == (10_624, 84_992)
    assert info["global_links"] == 175 * 174 // 2 * 2
    assert info["taper"] == pytest.approx(AURORA_TAPER)
    # The compute groups' links among themselves, both directions: 1.37 PB/s (the paper's 1.38).
    c, links = info["compute_groups"], info["links_per_pair"]
    bw = validate(Experiment, {"preset": "aurora-class"}).network.global_bw_gbps
    global_pbs = c * (c - 1) / 2 * links * bw * 2 / 1e6
    assert global_pbs == pytest.approx(1.38, rel=0.01)


def test_aurora_class_small_keeps_its_ratios() -> None:
    info = _info("aurora-class-small")
    assert info["taper"] == pytest.approx(AURORA_TAPER, rel=0.02)
    assert (info["links_per_pair"], info["nics_per_node"]) == (2, 2)
    assert info["compute_groups"] == info["groups"] - 1
    assert info["host_ports"] // info["nics_per_node"] == 2  # 2 nodes per switch
    full = validate(Experiment, {"preset": "aurora-class"})
    small = validate(Experiment, {"preset": "aurora-class-small"})
    assert small.network == full.network
    assert small.routing.algorithm == full.routing.algorithm


def test_aurora_class_small_runs_traffic_on_its_compute_groups_only() -> None:
    # The accepted load is per compute NIC: were the storage group's NICs sending too, MIN
    # would carry 12/11 of the offered load.
    run = {"warmup_us": 2.0, "measure_us": 2.0}
    base = {"preset": "aurora-class-small", "routing": {"algorithm": "MIN"}, "run": run}
    low = simulate(validate(Experiment, {**base, "traffic": {"load": 0.3}})).summary
    assert low.accepted_load == pytest.approx(0.3, rel=0.03)


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
    # 0.617 here: (32 x 0.5625) / (32 x 288 / 316), a NIC never sending to its own node's other
    # 3 NICs); at 0.3 the network carries all of it, at 0.8 no more than the bound.
    bound = _info("frontier-class-small")["ur_min_global_bound"]
    assert bound == pytest.approx(0.5625 * 316 / 288, abs=1e-9)
    base = {"preset": "frontier-class-small", "routing": {"algorithm": "MIN"}}
    run = {"warmup_us": 2.0, "measure_us": 2.0}
    low = simulate(validate(Experiment, {**base, "traffic": {"load": 0.3}, "run": run})).summary
    assert low.accepted_load == pytest.approx(0.3, rel=0.03)
    high = simulate(validate(Experiment, {**base, "traffic": {"load": 0.8}, "run": run})).summary
    assert 0.4 < high.accepted_load <= bound + 0.01


def test_the_imb_bias_schedule_is_set_from_python() -> None:
    # A fixed-size list of numbers: the schedule reaches the engine and the store key.
    base = {"preset": "frontier-class-small", "routing": {"algorithm": "IMB"}}
    default = validate(Experiment, base)
    minimal = validate(
        Experiment, {**base, "routing": {"algorithm": "IMB", "bias_schedule": [2, 4, 6]}}
    )
    assert minimal.canonical()["routing"]["bias_schedule"] == [2.0, 4.0, 6.0]
    assert default.canonical()["routing"]["bias_schedule"] == [0.0, 1.0, 2.0]
    assert minimal.content_hash() != default.content_hash()
