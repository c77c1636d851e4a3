"""Content hash: stable for equal simulations, different for any changed field that changes the
simulation, never shared by results of different engine semantics."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dflab.config import ENGINE_SEMANTICS, Experiment, without_later_defaults
from dflab.loading import load_experiment, preset, validate
from helpers import BOOKSIM_NETWORK

# Every string field's alternative value; a new string field fails the sensitivity test below
# until it is added here, which is the point: each field must reach the hash.
OTHER_STRING = {
    "name": "other",
    "topology.arrangement": "relative",
    "topology.global_port_order": "round-robin",
    "routing.algorithm": "VALn",
    "traffic.pattern": "perm",
    "traffic.process": "periodic",
    "traffic.nic_policy": "same-index",
    "network.timing": "sst",
    "network.router_pipeline": "single-cycle",
    "network.output_queue": "shared",
    "routing.intermediate": "any",
    "routing.intra_group": "adaptive",
    "routing.q_update": "plain",
}
# Keys that change how a run is carried out or labelled, never its results.
NOT_HASHED = {"name", "run.check"}
# Keys that only apply with the BookSim timing (refused with the base's link-busy timing):
# their own test changes them on a BookSim network.
BOOKSIM_ONLY = {"network.router_pipeline", "network.credit_delay_cycles"}
# The hash of the all-defaults experiment under this engine semantics.
GOLDEN = "e8d71f005c255ead"
BASE = {
    "topology": {"p": 2, "a": 4, "h": 2, "g": 5, "links_per_pair": 1},
    "routing": {"algorithm": "UGALn", "vcs": 4, "adaptive_threshold": 1.5},
    "traffic": {"source_queue_packets": 8},
}


def _leaves(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    leaves: list[tuple[str, Any]] = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        leaves += _leaves(value, f"{path}.") if isinstance(value, dict) else [(path, value)]
    return leaves


def _changed(path: str, value: Any) -> Any:
    if isinstance(value, list):
        return [*value, {"start_us": 1.0, "load": 0.25}]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value / 2 if value else 0.5
    return OTHER_STRING[path]


def test_hash_format_and_golden_value() -> None:
    experiment = Experiment()
    key = experiment.content_hash()
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    # The key is the hash of the engine's canonical form (name, execution-only keys and keys
    # added later at their old value left out) with the engine's semantics version.
    canonical = without_later_defaults(experiment.canonical())
    canonical.pop("name")
    canonical["run"].pop("check")
    text = json.dumps(
        [Experiment.HASH_SCHEMA, ENGINE_SEMANTICS, canonical], sort_keys=True, separators=(",", ":")
    )
    assert key == hashlib.sha256(text.encode()).hexdigest()[:16]
    # Store keys of existing results depend on this; change it only on purpose.
    assert key == GOLDEN


def test_hash_ignores_key_order_spelling_and_preset_shorthand(tmp_path: Path) -> None:
    a = validate(Experiment, {"traffic": {"load": 0.3, "pattern": "UR"}, "seed": 2})
    b = validate(Experiment, {"seed": 2, "traffic": {"pattern": "uniform", "load": 0.3}})
    c = validate(Experiment, {"seed": 2, "traffic": {"pattern": {"kind": "ur"}, "load": 0.3}})
    assert a.content_hash() == b.content_hash() == c.content_hash()
    expanded = json.loads(preset("qadaptive-1056").to_engine_json())
    assert validate(Experiment, expanded).content_hash() == preset("qadaptive-1056").content_hash()
    path = tmp_path / "e.toml"
    path.write_text("seed = 2\n[traffic]\npattern = 'ur'\nload = 0.3\n")
    assert load_experiment(path).content_hash() == a.content_hash()


def test_a_knob_of_another_algorithm_hashes_like_its_absence() -> None:
    # MIN with Q-learning and UGAL-L knobs is the same simulation as MIN: the same key.
    plain = validate(Experiment, {"routing": {"algorithm": "MIN"}})
    knobs = validate(Experiment, {"routing": {"algorithm": "min", "q_thld1": 0.3, "bias": 5.0}})
    assert knobs.content_hash() == plain.content_hash() == GOLDEN
    # The same knob where it applies changes the key.
    q = validate(Experiment, {"routing": {"algorithm": "Q-adaptive"}})
    q_knob = validate(Experiment, {"routing": {"algorithm": "Q-adaptive", "q_thld1": 0.3}})
    assert q.content_hash() != q_knob.content_hash()
    # A default written out is the default.
    q_default = validate(Experiment, {"routing": {"algorithm": "Q-adaptive", "q_thld1": 0.2}})
    assert q_default.content_hash() == q.content_hash()


def test_hash_of_links_per_pair_follows_the_network() -> None:
    # A derived value hashes like the same value written out, and unlike a different one.
    assert validate(Experiment, {"topology": {"links_per_pair": 1}}).content_hash() == GOLDEN
    derived = validate(Experiment, {"topology": {"g": 9}}).content_hash()
    explicit = validate(Experiment, {"topology": {"g": 9, "links_per_pair": 4}}).content_hash()
    sparse = validate(Experiment, {"topology": {"g": 9, "links_per_pair": 1}}).content_hash()
    assert derived == explicit != sparse


@pytest.mark.parametrize(("path", "value"), _leaves(validate(Experiment, BASE).canonical()))
def test_every_field_changes_the_hash(path: str, value: Any) -> None:
    base = validate(Experiment, BASE)
    data = base.canonical()
    node = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    if value is None:
        pytest.skip(f"{path} is unset in the base")
    if path in BOOKSIM_ONLY:
        data["network"].update(BOOKSIM_NETWORK)
        base = validate(Experiment, data)
    node[last] = _changed(path, value)
    changed = validate(Experiment, data).content_hash()
    if path in NOT_HASHED:
        assert changed == base.content_hash(), path
    else:
        assert changed != base.content_hash(), path


def test_a_key_added_later_at_its_old_value_keeps_existing_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if traffic.process had been added after the hash schema, "bernoulli" reproducing the
    # engine from before it: a point at that value keeps the key it had without the field, and
    # compares equal to a stored point that lacks it; another value is another key.
    from dflab import config, store_config

    before = Experiment().canonical()
    before.pop("name")
    before["run"].pop("check")
    del before["traffic"]["process"]
    text = json.dumps(
        [Experiment.HASH_SCHEMA, ENGINE_SEMANTICS, before], sort_keys=True, separators=(",", ":")
    )
    old_key = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert Experiment().content_hash() != old_key
    monkeypatch.setattr(config, "LATER_DEFAULTS", {"traffic.process": "bernoulli"})
    assert Experiment().content_hash() == old_key
    periodic = validate(Experiment, {"traffic": {"process": "periodic"}})
    assert periodic.content_hash() != old_key
    stored = Experiment().canonical()
    del stored["traffic"]["process"]
    assert store_config._parts(stored) == store_config._parts(Experiment().canonical())


def test_whole_ns_latency_is_a_later_key() -> None:
    # run.whole_ns_latency came after the hash schema: off, the key of every existing store is
    # unchanged (GOLDEN); on, it is another simulation.
    assert Experiment().canonical()["run"]["whole_ns_latency"] is False
    assert Experiment().content_hash() == GOLDEN
    on = validate(Experiment, {"run": {"whole_ns_latency": True}})
    assert on.content_hash() != GOLDEN


def test_network_timing_is_a_later_key() -> None:
    # network.timing came after the hash schema: link-busy (the engine before it) keeps the key
    # of every existing store; sst is another simulation, and the qadaptive presets use it.
    assert Experiment().canonical()["network"]["timing"] == "link-busy"
    assert Experiment().content_hash() == GOLDEN
    sst = validate(Experiment, {"network": {"timing": "sst"}})
    assert sst.content_hash() != GOLDEN
    preset = validate(Experiment, {"preset": "qadaptive-1056"})
    assert (preset.network.timing, preset.traffic.process) == ("sst", "lockstep")


def test_booksim_keys_are_later_keys() -> None:
    # The BookSim timing's keys, MIN's VC layout and UGAL-L's form came after the hash schema:
    # at their defaults every existing key is unchanged (GOLDEN); other values are other keys.
    assert Experiment().canonical()["routing"]["vc_layout"] == "reference"
    assert Experiment().content_hash() == GOLDEN
    booksim_min = validate(Experiment, {"routing": {"algorithm": "MIN", "vc_layout": "booksim"}})
    assert booksim_min.content_hash() != GOLDEN
    ugal = validate(Experiment, {"routing": {"algorithm": "UGAL-L"}})
    form = validate(Experiment, {"routing": {"algorithm": "UGAL-L", "form": "booksim"}})
    assert ugal.canonical()["routing"]["form"] == "hop-weighted"
    assert form.content_hash() != ugal.content_hash()
    # routing.min_gateways came later too: own-first keeps the key UGAL-L had before it under
    # the same engine semantics, all is another simulation.
    assert ugal.canonical()["routing"]["min_gateways"] == "own-first"
    assert ugal.content_hash() == "e2c5fae1e57e1c72"
    spread = validate(Experiment, {"routing": {"algorithm": "UGAL-L", "min_gateways": "all"}})
    assert spread.content_hash() != ugal.content_hash()
    booksim = validate(Experiment, {"network": BOOKSIM_NETWORK})
    single_cycle = {**BOOKSIM_NETWORK, "router_pipeline": "single-cycle"}
    single = validate(Experiment, {"network": single_cycle})
    assert booksim.content_hash() != single.content_hash()


@pytest.mark.parametrize(("key", "fork"), [("sample_forced", True), ("explore_global_port", False)])
def test_dgbs_fork_behaviours_reach_the_hash(key: str, fork: bool) -> None:
    # Sampling the packets that go minimal undecided and exploring a global minimal port as a
    # local one are DGB's defaults (the fork's); the other value is another simulation, for
    # DGB and EDGB alike.
    for algorithm in ("DGB", "EDGB"):
        plain = validate(Experiment, {"routing": {"algorithm": algorithm}})
        assert plain.canonical()["routing"][key] is fork
        same = validate(Experiment, {"routing": {"algorithm": algorithm, key: fork}})
        other = validate(Experiment, {"routing": {"algorithm": algorithm, key: not fork}})
        assert same.content_hash() == plain.content_hash() != other.content_hash()


def test_per_class_buffers_are_later_keys_and_reach_the_hash() -> None:
    # Unset (every class uses input_buffer_flits) keeps every existing key; a class's own size
    # is another simulation; the common size written out for a class is the common size.
    assert Experiment().content_hash() == GOLDEN
    for key in ("host_buffer_flits", "local_buffer_flits", "global_buffer_flits"):
        assert validate(Experiment, {"network": {key: 20}}).content_hash() == GOLDEN, key
        assert validate(Experiment, {"network": {key: 10}}).content_hash() != GOLDEN, key
    a = validate(Experiment, {"network": {"local_buffer_flits": 10}}).content_hash()
    b = validate(Experiment, {"network": {"global_buffer_flits": 10}}).content_hash()
    assert a != b


def test_receive_pinning_is_a_later_key() -> None:
    # workload.mpi.rendezvous_recv_pin came after the hash schema: off (the engine before it)
    # is dropped from the hashed form, so a stored workload point keeps its key; on, the
    # default since (Firefly pins), is another simulation.
    on = validate(Experiment, {"preset": "sc22-1056"})
    off = validate(
        Experiment,
        {"preset": "sc22-1056", "workload": {"mpi": {"rendezvous_recv_pin": False}}},
    )
    assert on.canonical()["workload"]["mpi"]["rendezvous_recv_pin"] is True
    assert "rendezvous_recv_pin" not in without_later_defaults(off.canonical())["workload"]["mpi"]
    assert without_later_defaults(on.canonical())["workload"]["mpi"]["rendezvous_recv_pin"]
    assert on.content_hash() != off.content_hash()


def test_the_nic_control_stream_is_a_later_key() -> None:
    # workload.mpi.nic_control_stream and nic_staged_packets came after the hash schema: off
    # (the engine before them) keeps a stored workload point's key, whatever the staged packets
    # say then (they act only on the stream); on, the default since (Firefly's control
    # machine), is another simulation per staged count.
    def mpi(**keys: Any) -> Experiment:
        return validate(Experiment, {"preset": "sc22-1056", "workload": {"mpi": keys}})

    on = mpi()
    assert on.canonical()["workload"]["mpi"]["nic_control_stream"] is True
    before = mpi(nic_control_stream=False)
    stored = without_later_defaults(before.canonical())["workload"]["mpi"]
    assert "nic_control_stream" not in stored and "nic_staged_packets" not in stored
    assert (
        mpi(nic_control_stream=False, nic_staged_packets=7).content_hash() == before.content_hash()
    )
    assert on.content_hash() != before.content_hash()
    assert mpi(nic_staged_packets=7).content_hash() != on.content_hash()


def test_fireflys_receive_pin_and_unpin_are_later_keys() -> None:
    # Off, as before them, they keep a stored workload point's key; on, the default since
    # (Firefly's receive side), is another simulation.
    base = validate(Experiment, {"preset": "sc22-1056"})
    for key in ("rendezvous_recv_pin_blocks", "rendezvous_recv_unpin"):
        assert base.canonical()["workload"]["mpi"][key] is True
        assert key in without_later_defaults(base.canonical())["workload"]["mpi"]
        off = validate(Experiment, {"preset": "sc22-1056", "workload": {"mpi": {key: False}}})
        assert key not in without_later_defaults(off.canonical())["workload"]["mpi"]
        assert off.content_hash() != base.content_hash(), key


def test_ending_with_chosen_jobs_is_a_later_key() -> None:
    # workload.end_with_jobs came after the hash schema: empty (every job, the engine before
    # it) keeps a stored workload point's key; ending with job 0 is another result (the other
    # jobs' rows stop there).
    def jobs(**keys: Any) -> Experiment:
        return validate(Experiment, {"preset": "sc22-1056", "workload": keys})

    plain = jobs()
    assert plain.canonical()["workload"]["end_with_jobs"] == []
    assert "end_with_jobs" not in without_later_defaults(plain.canonical())["workload"]
    assert jobs(end_with_jobs=[]).content_hash() == plain.content_hash()
    assert jobs(end_with_jobs=[0]).content_hash() != plain.content_hash()


def test_dgbs_feedback_transport_is_a_later_key() -> None:
    # routing.feedback and routing.piggyback_global_queues came after the hash schema: ideal
    # (the engine before them) keeps a stored DGB or EDGB point's key; piggybacked feedback,
    # with or without the global queues, is another simulation.
    for algorithm in ("DGB", "EDGB"):

        def dgb(algorithm: str = algorithm, **params: Any) -> Experiment:
            routing = {"algorithm": algorithm, **params}
            return validate(Experiment, {"preset": "ugal-le-288", "routing": routing})

        plain = dgb()
        assert plain.canonical()["routing"]["feedback"] == "ideal"
        assert "feedback" not in without_later_defaults(plain.canonical())["routing"]
        assert dgb(feedback="ideal").content_hash() == plain.content_hash()
        piggyback = dgb(feedback="piggyback")
        assert piggyback.content_hash() != plain.content_hash()
        assert dgb(feedback="piggyback", piggyback_global_queues=True).content_hash() == (
            piggyback.content_hash()
        )
        assert dgb(feedback="piggyback", piggyback_global_queues=False).content_hash() != (
            piggyback.content_hash()
        )


def test_acors_hysteresis_grid_is_a_later_key() -> None:
    # routing.hysteresis came after the hash schema: restart (FOGSim, the engine before it)
    # keeps a stored ACOR or PB-ACOR point's key; the paper's fixed grid is another run.
    for algorithm in ("ACOR", "PB-ACOR"):
        routing = {"algorithm": algorithm}
        plain = validate(Experiment, {"preset": "acor-1056", "routing": routing})
        assert plain.canonical()["routing"]["hysteresis"] == "restart"
        assert "hysteresis" not in without_later_defaults(plain.canonical())["routing"]
        restart = {"preset": "acor-1056", "routing": {**routing, "hysteresis": "restart"}}
        assert validate(Experiment, restart).content_hash() == plain.content_hash()
        fixed = {"preset": "acor-1056", "routing": {**routing, "hysteresis": "fixed"}}
        assert validate(Experiment, fixed).content_hash() != plain.content_hash()


def test_q_adaptives_initial_scale_is_a_later_key() -> None:
    # routing.q_init_scale came after the hash schema: 1 (the reference's initial values, the
    # engine before it) keeps a stored Q-adaptive point's key; another scale is another run.
    def q(**params: Any) -> Experiment:
        routing = {"algorithm": "Q-adaptive", **params}
        return validate(Experiment, {"preset": "qadaptive-1056", "routing": routing})

    plain = q()
    assert plain.canonical()["routing"]["q_init_scale"] == 1.0
    assert "q_init_scale" not in without_later_defaults(plain.canonical())["routing"]
    assert q(q_init_scale=1.0).content_hash() == plain.content_hash()
    assert q(q_init_scale=4.0).content_hash() != plain.content_hash()


def test_pb_reevaluation_is_a_later_key_that_only_plain_pb_hashes() -> None:
    # routing.reevaluate came after the hash schema: false (PB deciding once, the engine before
    # it) keeps the key of a stored plain PB point; true, the default (FOGSim's SRC_ADP), is
    # another simulation. With recomputation it has no effect, and a recomputing PB point keeps
    # its key whatever it says.
    def pb(**params: Any) -> Experiment:
        return validate(
            Experiment, {"preset": "acor-1056", "routing": {"algorithm": "PB", **params}}
        )

    plain = pb(recompute=False)
    once = pb(recompute=False, reevaluate=False)
    assert plain.canonical()["routing"]["reevaluate"] is True
    assert "reevaluate" not in without_later_defaults(once.canonical())["routing"]
    assert plain.content_hash() != once.content_hash()
    recomputing = pb(recompute=True)
    assert recomputing.content_hash() == pb(recompute=True, reevaluate=False).content_hash()
    assert "reevaluate" not in without_later_defaults(recomputing.canonical())["routing"]


def test_global_port_order_is_a_later_key() -> None:
    # topology.global_port_order came after the hash schema: by-router (the wiring before it)
    # keeps every existing key; round-robin is another network.
    assert Experiment().canonical()["topology"]["global_port_order"] == "by-router"
    assert Experiment().content_hash() == GOLDEN
    spread = validate(Experiment, {"topology": {"global_port_order": "round-robin"}})
    assert spread.content_hash() != GOLDEN


def test_nics_and_compute_groups_are_later_keys() -> None:
    # One NIC per node, every group computing and random destination NICs are the network
    # before these keys: every existing key stays; each other value is another network.
    canonical = Experiment().canonical()
    assert canonical["topology"]["nics_per_node"] == 1
    assert canonical["topology"]["compute_groups"] is None
    assert canonical["traffic"]["nic_policy"] == "random"
    assert Experiment().content_hash() == GOLDEN
    every_group = validate(Experiment, {"topology": {"compute_groups": 33}})  # dfly(4,8,4): g 33
    assert every_group.content_hash() == GOLDEN
    keys = {
        validate(Experiment, {"topology": extra}).content_hash()
        for extra in ({"compute_groups": 32}, {"nics_per_node": 2}, {"nics_per_node": 4})
    }
    keys.add(validate(Experiment, {"traffic": {"nic_policy": "same-index"}}).content_hash())
    assert len(keys) == 4 and GOLDEN not in keys
