"""Content hash: stable for equal experiments, different for any changed field."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from dflab.config import Experiment
from dflab.loading import load_experiment, preset, validate

# Every string field's alternative value; a new string field fails the sensitivity test below
# until it is added here, which is the point: each field must reach the hash.
OTHER_STRING = {
    "name": "other",
    "topology.arrangement": "relative",
    "routing.algorithm": "VALn",
    "traffic.pattern": "perm",
    "traffic.process": "periodic",
    "routing.intermediate": "any",
    "routing.intra_group": "adaptive",
    "routing.q_update": "plain",
}
# The hash of the all-defaults experiment.
GOLDEN = "505b961a0f30c05b"
BASE = {
    "topology": {"p": 2, "a": 4, "h": 2, "g": 5, "links_per_pair": 1},
    "routing": {"vcs": 2},
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
    # Only non-default fields are hashed: the defaults hash as an empty document (plus the
    # computed g), so keys added later with defaults leave existing store keys unchanged.
    canonical = json.dumps(
        [Experiment.HASH_SCHEMA, {"topology": {"g": 33}}], sort_keys=True, separators=(",", ":")
    )
    assert key == hashlib.sha256(canonical.encode()).hexdigest()[:16]
    # Store keys of existing results depend on this; change it only on purpose.
    assert key == GOLDEN


def test_hash_ignores_key_order_spelling_and_preset_shorthand(tmp_path: Path) -> None:
    a = validate(Experiment, {"traffic": {"load": 0.3, "pattern": "UR"}, "seed": 2})
    b = validate(Experiment, {"seed": 2, "traffic": {"pattern": "ur", "load": 0.3}})
    assert a.content_hash() == b.content_hash()
    expanded = json.loads(preset("qadaptive-1056").to_engine_json())
    assert validate(Experiment, expanded).content_hash() == preset("qadaptive-1056").content_hash()
    path = tmp_path / "e.toml"
    path.write_text("seed = 2\n[traffic]\npattern = 'ur'\nload = 0.3\n")
    assert load_experiment(path).content_hash() == a.content_hash()


def test_hash_of_links_per_pair_follows_the_network() -> None:
    # One-link networks keep the keys they had before links_per_pair could be derived; a
    # derived value hashes like the same value written out, and unlike a different one.
    assert validate(Experiment, {"topology": {"links_per_pair": 1}}).content_hash() == GOLDEN
    derived = validate(Experiment, {"topology": {"g": 9}}).content_hash()
    explicit = validate(Experiment, {"topology": {"g": 9, "links_per_pair": 4}}).content_hash()
    sparse = validate(Experiment, {"topology": {"g": 9, "links_per_pair": 1}}).content_hash()
    assert derived == explicit != sparse


@pytest.mark.parametrize(
    ("path", "value"), _leaves(json.loads(validate(Experiment, BASE).to_engine_json()))
)
def test_every_field_changes_the_hash(path: str, value: Any) -> None:
    base = validate(Experiment, BASE)
    data = json.loads(base.to_engine_json())
    node = data
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    node[last] = _changed(path, value)
    assert validate(Experiment, data).content_hash() != base.content_hash()
