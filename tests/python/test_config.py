"""Experiment models: documented defaults, normalisation, validation messages, presets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dflab import presets
from dflab.config import ROUTING_ALGORITHMS, Experiment
from dflab.errors import UserError
from dflab.loading import (
    load_experiment,
    load_experiment_file,
    preset,
    validate,
    with_overrides,
)


def test_defaults_are_the_documented_ones() -> None:
    # The engine's input carries what was given (here nothing of the routing but the algorithm);
    # the canonical form fills in everything, with only the chosen algorithm's parameters.
    assert json.loads(Experiment().to_engine_json())["routing"] == {"algorithm": "MIN"}
    assert Experiment().canonical() == {
        "name": "",
        "seed": 1,
        "topology": {
            "p": 4, "a": 8, "h": 4, "g": 33, "links_per_pair": 1, "arrangement": "absolute",
            "global_port_order": "by-router", "nics_per_node": 1, "compute_groups": None,
        },
        "network": {
            "flit_bytes": 128, "packet_flits": 1,
            "host_bw_gbps": 4.0, "local_bw_gbps": 4.0, "global_bw_gbps": 4.0,
            "xbar_bw_gbps": 40.0, "input_buffer_flits": 20, "output_buffer_flits": 20,
            "host_buffer_flits": None, "local_buffer_flits": None, "global_buffer_flits": None,
            "host_latency_ns": 10.0, "local_latency_ns": 30.0, "global_latency_ns": 300.0,
            "input_latency_ns": 10.0, "output_latency_ns": 10.0, "timing": "link-busy",
            "router_pipeline": "standard", "credit_delay_cycles": 2, "cut_through": False,
            "output_queue": "per-vc", "transit_priority": False,
        },
        "routing": {"algorithm": "MIN", "vc_layout": "reference"},
        "traffic": {
            "pattern": "ur", "load": 0.5, "process": "bernoulli", "allow_self": False, "phases": [],
            "source_queue_packets": None, "nic_policy": "random",
        },
        "run": {
            "warmup_us": 20.0, "measure_us": 50.0, "window_us": 1.0, "check": False,
            "whole_ns_latency": False, "decision_probes": False, "watchdog_us": 50.0,
            "steady_warmup": False, "stop_when_saturated": False, "steady_windows": 5,
            "steady_tolerance": 0.05,
        },
    }  # fmt: skip
    ugal = validate(Experiment, {"routing": {"algorithm": "ugaln"}}).canonical()["routing"]
    assert ugal == {
        "algorithm": "UGALn", "adaptive_threshold": 2.0, "intermediate": "outside",
        "intra_group": "minimal",
    }  # fmt: skip


def test_engine_json_has_no_preset_key() -> None:
    data = json.loads(preset("qadaptive-1056").to_engine_json())
    assert "preset" not in data


def _groups_and_links(experiment: Experiment) -> tuple[int, int]:
    topology = experiment.canonical()["topology"]
    return topology["g"], topology["links_per_pair"]


@pytest.mark.parametrize(
    ("topology", "groups"),
    [({"a": 4, "h": 2}, 9), ({"a": 8, "h": 4, "links_per_pair": 2}, 17), ({"h": 0}, 1)],
)
def test_groups_default_to_the_canonical_maximum(topology: dict, groups: int) -> None:
    assert _groups_and_links(validate(Experiment, {"topology": topology}))[0] == groups


def test_computed_groups_follow_later_overrides() -> None:
    # g was never given, so changing a must recompute it rather than keep the old 33.
    assert _groups_and_links(with_overrides(Experiment(), {"topology.a": 4}))[0] == 17


@pytest.mark.parametrize(
    ("topology", "links"),
    [
        ({}, 1),
        ({"g": 9}, 4),  # ICS'24 Table 1: dfly(4,8,4,9) has 4 links per group pair
        ({"g": 10}, 3),  # 9 other groups share 32 global ports: 3 each, 5 unused
        ({"g": 1}, 1),
        ({"g": 9, "links_per_pair": 1}, 1),  # explicit: SST's sparse wiring
        ({"links_per_pair": 2}, 2),
    ],
)
def test_links_per_pair_derived_from_groups(topology: dict, links: int) -> None:
    assert _groups_and_links(validate(Experiment, {"topology": topology}))[1] == links


def test_derived_links_follow_later_overrides() -> None:
    # The preset gives neither g nor links_per_pair: setting g alone derives the links anew.
    small = with_overrides(preset("qadaptive-1056"), {"topology.g": 9})
    assert _groups_and_links(small) == (9, 4)
    back = with_overrides(small, {"topology.g": 33})
    assert _groups_and_links(back) == (33, 1)


def test_links_per_pair_must_divide_ports_without_groups() -> None:
    with pytest.raises(
        UserError, match=r"topology\.links_per_pair: a\*h = 32 is not divisible by .* 3"
    ):
        validate(Experiment, {"topology": {"links_per_pair": 3}})


@pytest.mark.parametrize(
    ("given", "canonical"), [("min", "MIN"), ("valn", "VALn"), ("VALG", "VALg")]
)
def test_routing_names_are_case_insensitive(given: str, canonical: str) -> None:
    assert canonical in ROUTING_ALGORITHMS
    experiment = validate(Experiment, {"routing": {"algorithm": given}})
    assert experiment.routing.algorithm == canonical


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("UR", "ur"), ("ADV+1", "adv+1"), ("adv+07", "adv+7"), ("Adv+H", "adv+4"), ("PERM", "perm"),
     ("uniform", "ur"), ("permutation", "perm"), ("many-to-many", "m2m:4x8x33"),
     ("hot:25%:12.5%", "hot:25:12.5"), ("random-neighbors-fixed", "rn-fixed:6:20"),
     ({"kind": "router-mix", "base": "adv+1", "percent": 25}, "router-mix:adv+1:25")],
)  # fmt: skip
def test_patterns_are_normalised(given: str | dict, canonical: str) -> None:
    experiment = validate(Experiment, {"traffic": {"pattern": given}})
    assert experiment.canonical()["traffic"]["pattern"] == canonical


def _message(data: dict) -> str:
    with pytest.raises(UserError) as info:
        validate(Experiment, data)
    return info.value.message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"topology": {"extra": 1}},
            "topology.extra: unknown key; allowed keys: a, arrangement, compute_groups, g, "
            "global_port_order, h, links_per_pair, nics_per_node, p",
        ),
        ({"traffic": {"pattern": "foo"}}, "traffic.pattern: 'foo' is not allowed; allowed: ur, "
         "adv+<i> (1 <= i < g), adv+h, advc, advl, hot"),
        ({"traffic": {"pattern": "adv+0"}}, "traffic.pattern: 'adv+0' shifts by 0 groups"),
        ({"traffic": {"load": 1.5}}, "traffic.load: 1.5 is out of range; allowed: > 0 and <= 1"),
        ({"traffic": {"load": 0.0}}, "traffic.load: 0.0 is out of range"),
        ({"topology": {"p": "4"}}, "topology.p: '4' has the wrong type; expected an integer"),
        ({"topology": {"p": 4.0}}, "topology.p: 4.0 has the wrong type; expected an integer"),
        ({"run": {"check": 1}}, "run.check: 1 has the wrong type; expected true or false"),
        ({"topology": 3}, "topology: 3 has the wrong type; expected a table"),
        ({"topology": {"p": 0}}, "topology.p: 0 is out of range; allowed: 1 to 4096"),
        ({"routing": {"vcs": 0}}, "routing.vcs: 0 is out of range; allowed: 1 to 64"),
        ({"topology": {"g": 40}}, "topology.g: 40 is too large for a=8, h=4, links_per_pair=1"),
        ({"topology": {"arrangement": "zigzag"}}, "topology.arrangement: 'zigzag' is not allowed; "
         "allowed: absolute, relative, palmtree, circulant"),
        ({"traffic": {"process": "poisson"}}, "traffic.process: 'poisson' is not allowed; "
         "allowed: bernoulli, periodic"),
        ({"routing": {"algorithm": "UGAL"}}, "routing.algorithm: 'UGAL' is not allowed; allowed: "
         "MIN, VALg, VALn"),
        ({"traffic": {"pattern": "adv+33"}}, "traffic.pattern: 'adv+33' shifts by 33 groups; "
         "adv+<i> needs 1 <= i <= g - 1 = 32"),
        ({"network": {"packet_flits": 4, "input_buffer_flits": 3}},
         "network.input_buffer_flits: 3 is smaller than one packet; allowed: >= packet_flits (4)"),
        ({"network": {"packet_flits": 4, "global_buffer_flits": 2}},
         "network.global_buffer_flits: 2 is smaller than one packet; allowed: >= packet_flits (4)"),
        ({"seed": -1}, "seed: -1 is out of range"),
        ({"network": {"host_latency_ns": float("inf")}},
         "network.host_latency_ns: inf is not allowed; allowed: a finite number"),
        ({"routing": {"vcs": 65}}, "routing.vcs: 65 is out of range; allowed: 1 to 64"),
        ({"bogus": 1}, "bogus: unknown key; allowed keys: name, seed, topology, network, routing"),
        # A parameter of another algorithm is checked, then ignored.
        ({"routing": {"algorithm": "MIN", "max_q": 99}}, "routing.max_q: 99 is out of range; "
         "allowed: 0 to 32"),
        ({"routing": {"algorithm": "MIN", "q_thld9": 1}}, "routing.q_thld9: unknown key"),
        ({"routing": {"algorithm": "IMB", "bias_schedule": [2, 4]}},
         "routing.bias_schedule: [2, 4] has 2 items; allowed: exactly 3 items"),
        ({"routing": {"algorithm": "IMB", "bias_schedule": [2, "x", 4]}},
         "routing.bias_schedule.1: 'x' has the wrong type; expected a number"),
        ({"topology": {"nics_per_node": 3}}, "topology.nics_per_node: 3 does not divide p = 4; "
         "allowed: a divisor of p"),
        ({"topology": {"compute_groups": 40}}, "topology.compute_groups: 40 is out of range; "
         "allowed: 1 to g = 33"),
    ],
)  # fmt: skip
def test_validation_messages_name_field_value_and_allowed(data: dict, expected: str) -> None:
    assert _message(data).startswith(expected)


def test_several_problems_are_counted_in_one_line() -> None:
    message = _message({"topology": {"p": 0, "a": 0}})
    assert "\n" not in message
    assert "(and 1 more problem)" in message


def test_presets_registry_and_paper_parameters() -> None:
    assert presets.names() == [
        "acor-1056", "acor-16512", "acor-5256",
        "aurora-class", "aurora-class-small", "booksim-dgb-1056",
        "frontier-class", "frontier-class-half", "frontier-class-small",
        "qadaptive-1056", "qadaptive-2550", "sc22-1056", "ugal-le-1056", "ugal-le-288",
    ]  # fmt: skip
    sc22 = preset("sc22-1056")
    net = sc22.network
    assert (net.flit_bytes, net.packet_flits) == (128, 4)
    assert (net.host_bw_gbps, net.xbar_bw_gbps) == (25, 100)
    assert (net.input_buffer_flits, net.global_latency_ns, sc22.run.warmup_us) == (120, 300, 0)
    assert sc22.workload is not None
    assert [(j.motif, j.ranks) for j in sc22.workload.jobs] == [("fft3d", 528), ("halo3d", 528)]
    # Jobs given over the preset replace its pair.
    own = preset("sc22-1056", workload={"jobs": [{"motif": "dl", "ranks": 528}]})
    assert own.workload is not None and [j.motif for j in own.workload.jobs] == ["dl"]
    small, large = preset("qadaptive-1056"), preset("qadaptive-2550")
    assert (small.topology_label(), small.nodes()) == ("dfly(4,8,4,33)", 1056)
    assert (large.topology_label(), large.nodes()) == ("dfly(5,10,5,51)", 2550)
    for experiment in (small, large):
        net = experiment.network
        assert (net.flit_bytes, net.packet_flits) == (128, 1)
        assert {net.host_bw_gbps, net.local_bw_gbps, net.global_bw_gbps} == {4.0}
        assert net.xbar_bw_gbps == 40.0
        assert (net.input_buffer_flits, net.output_buffer_flits) == (20, 20)
        assert (net.host_latency_ns, net.local_latency_ns, net.global_latency_ns) == (
            10.0, 30.0, 300.0,
        )  # fmt: skip
        assert (net.input_latency_ns, net.output_latency_ns) == (10.0, 10.0)
        assert experiment.topology.arrangement == "absolute"


def test_booksim_dgb_preset_is_the_dgb_forks_network() -> None:
    e = preset("booksim-dgb-1056")
    net = e.network
    assert (e.topology_label(), e.routing.algorithm) == ("dfly(4,8,4,33)", "DGB")
    assert (net.timing, net.router_pipeline) == ("booksim", "single-cycle")
    assert net.credit_delay_cycles == 0
    assert (net.input_buffer_flits, net.global_buffer_flits) == (32, 256)
    assert net.xbar_bw_gbps / net.local_bw_gbps == pytest.approx(1.6)
    assert (net.local_latency_ns, net.global_latency_ns) == (10.0, 100.0)


def test_acor_presets_are_the_papers_fogsim_network() -> None:
    for name, label, nodes in [
        ("acor-5256", "dfly(6,12,6,73)", 5256),
        ("acor-1056", "dfly(4,8,4,33)", 1056),
        ("acor-16512", "dfly(8,16,8,129)", 16512),
    ]:
        e = preset(name)
        net = e.network
        assert (e.topology_label(), e.nodes(), e.topology.arrangement) == (label, nodes, "palmtree")
        # 250 B packets of 10 phits, 25 GB/s links, speedup 2, 90 ns router, 15/150 ns links.
        assert (net.flit_bytes, net.packet_flits) == (25, 10)
        assert {net.host_bw_gbps, net.local_bw_gbps, net.global_bw_gbps} == {25.0}
        assert net.xbar_bw_gbps == 50.0
        assert net.cut_through and net.input_latency_ns + net.output_latency_ns == 85.5
        assert (net.local_latency_ns, net.global_latency_ns) == (15.0, 150.0)
        # 126 / 18 / 45 KB per VC.
        assert (net.host_buffer_flits, net.local_buffer_flits, net.global_buffer_flits) == (
            5040, 720, 1800,
        )  # fmt: skip
        assert (e.routing.algorithm, e.traffic.process) == ("ACOR", "bernoulli")


def test_unknown_preset_lists_the_allowed_names() -> None:
    with pytest.raises(UserError, match=r"'nope' is not allowed; allowed: acor-1056, acor-16512"):
        preset("nope")


def test_preset_overrides_dotted_and_nested() -> None:
    experiment = preset("qadaptive-2550", **{"traffic.load": 0.25}, routing={"algorithm": "valn"})
    assert experiment.traffic.load == 0.25
    assert experiment.routing.algorithm == "VALn"
    assert experiment.topology.p == 5  # untouched preset field


def test_file_over_preset_then_set_overrides(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        'preset = "qadaptive-1056"\n[network]\npacket_flits = 2\n[traffic]\nload = 0.7\n'
    )
    experiment = load_experiment(path, ["network.input_buffer_flits=40", "routing.algorithm=VALn"])
    assert experiment.preset == "qadaptive-1056"
    assert experiment.network.packet_flits == 2  # file over preset
    assert experiment.network.input_buffer_flits == 40  # --set over file
    assert experiment.network.output_buffer_flits == 20  # preset, deep-merged
    assert experiment.network.global_latency_ns == 300.0
    assert experiment.traffic.load == 0.7
    assert experiment.routing.algorithm == "VALn"


def test_sweep_table_is_split_off(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text(
        '[traffic]\nload = 0.2\n[sweep]\nloads = "0.1:0.3:0.1"\nroutings = ["min", "VALN"]\n'
        'traffics = ["ADV+1"]\nseeds = [1, 2]\n'
    )
    experiment, spec = load_experiment_file(path)
    assert experiment.traffic.load == 0.2
    assert spec.loads == [0.1, 0.2, 0.3]
    assert spec.routings == ["MIN", "VALn"]
    assert spec.traffics == ["ADV+1"]
    assert spec.seeds == [1, 2]
    # load_experiment ignores the sweep table rather than rejecting it as an unknown key.
    assert load_experiment(path) == experiment


def test_bad_sweep_entries_are_named(tmp_path: Path) -> None:
    path = tmp_path / "exp.toml"
    path.write_text('[sweep]\nroutings = ["MIN", "bogus"]\n')
    with pytest.raises(UserError, match=r"^sweep\.routings\.1: 'bogus' is not allowed"):
        load_experiment_file(path)


def test_missing_file_and_toml_syntax(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"experiment file '.*nothere\.toml' not found"):
        load_experiment(tmp_path / "nothere.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[topology]\np = 4\na = = 8\n")
    with pytest.raises(UserError, match=r"bad\.toml: invalid TOML: .*line 3"):
        load_experiment(bad)


def test_traffic_phases_validate_and_reach_the_engine_json() -> None:
    phases = [{"start_us": 10.0, "load": 0.8}, {"start_us": 20.0, "pattern": "ADV+1"}]
    experiment = validate(Experiment, {"traffic": {"phases": phases}})
    sent = json.loads(experiment.to_engine_json())["traffic"]["phases"]
    assert sent == [{"start_us": 10.0, "load": 0.8}, {"start_us": 20.0, "pattern": "ADV+1"}]
    assert experiment.canonical()["traffic"]["phases"][1]["pattern"] == "adv+1"
    assert experiment.content_hash() != Experiment().content_hash()


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ([{"start_us": 20.0, "load": 0.5}, {"start_us": 10.0, "load": 0.6}],
         "traffic.phases[1].start_us: phases must start in increasing order"),
        ([{"start_us": 10.0}], "traffic.phases[0]: a phase must set load, pattern or both"),
        ([{"start_us": 10.0, "pattern": "bogus"}],
         "traffic.phases[0].pattern: 'bogus' is not allowed"),
        ([{"start_us": 10.0, "load": 2.0}], "traffic.phases.0.load: 2.0 is out of range"),
    ],
)  # fmt: skip
def test_bad_phases_name_the_field(phases: list, expected: str) -> None:
    assert _message({"traffic": {"phases": phases}}).startswith(expected)


@pytest.mark.parametrize(
    ("given", "canonical"),
    [("ADVC", "advc"), ("Hot:25:12.5", "hot:25:12.5"),
     ("router-mix:ADV+1:30", "router-mix:adv+1:30"), ("stencil:4x8x33", "stencil:4x8x33"),
     ("RN:6:21", "rn:6:21"), ("m2m", "m2m:4x8x33")],
)  # fmt: skip
def test_issue3_patterns_are_accepted_and_reach_the_engine(given: str, canonical: str) -> None:
    from dflab import engine

    experiment = validate(Experiment, {"traffic": {"pattern": given}})
    # The engine parses the grammar (and the topology-dependent parts) and makes every default
    # explicit in the canonical form.
    assert engine.canonical(experiment.to_engine_json())["traffic"]["pattern"] == canonical


def test_ugal_le_presets_carry_the_ics24_booksim_setup() -> None:
    big, small = preset("ugal-le-1056"), preset("ugal-le-288")
    assert (big.topology_label(), big.nodes()) == ("dfly(4,8,4,33)", 1056)
    assert (small.topology_label(), small.nodes(), _groups_and_links(small)[1]) == (
        "dfly(4,8,4,9)", 288, 4,
    )  # fmt: skip
    for experiment in (big, small):
        net = experiment.network
        # One flit per 1 ns cycle on every link; crossbar speedup 2.5; 256-flit buffers.
        flit_ns = net.flit_bytes / net.local_bw_gbps
        assert flit_ns == 1.0 and net.flit_bytes / net.global_bw_gbps == 1.0
        assert net.xbar_bw_gbps / net.local_bw_gbps == 2.5
        assert (net.input_buffer_flits, net.packet_flits) == (256, 1)
        assert (net.local_latency_ns, net.global_latency_ns) == (10.0, 15.0)
        assert experiment.topology.arrangement == "absolute"
        assert (experiment.run.warmup_us, experiment.run.measure_us) == (30.0, 10.0)
        # BookSim's input-queued router, its pipeline, unbounded output queues.
        assert (net.timing, net.router_pipeline, net.credit_delay_cycles) == (
            "booksim",
            "standard",
            2,
        )
        assert (net.input_latency_ns, net.output_latency_ns, net.output_buffer_flits) == (
            0,
            0,
            1280,
        )


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("valiant", "VALn"),
        ("val", "VAL"),
        ("piggyback", "PB"),
        ("pbacor", "PB-ACOR"),
        ("minimal", "MIN"),
        ("ugal-3vc", "UGALg"),
        ("ugal-n", "UGALn"),
        ("ugal-4vc", "UGALn"),
        ("qadaptive", "Q-adaptive"),
    ],
)
def test_documented_aliases_are_accepted(alias: str, name: str) -> None:
    # newcomer #6: the engine accepted them, the Python validator refused them.
    experiment = validate(Experiment, {"routing": {"algorithm": alias}})
    assert experiment.canonical()["routing"]["algorithm"] == name
