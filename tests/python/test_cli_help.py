"""`--help` of every command (newcomer #31): flags show no value type (`--json`, not
`--json <bool>`), and --routing / --traffic list the values the engine's schema allows."""

from __future__ import annotations

import pytest

from dflab.config import PATTERN_KINDS, ROUTING_ALGORITHMS
from dflab.schema_gen import committed_schema, routing_aliases
from helpers import run_cli

COMMANDS = ["run", "sweep", "plot", "info", "bench", "presets", "reproduce", "saturation"]


def _help(*command: str) -> str:
    proc = run_cli(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("command", [[], *([c] for c in COMMANDS)])
def test_flags_show_no_value_type(command: list[str]) -> None:
    text = _help(*command)
    assert "--help" in text
    assert "<bool>" not in text, text


def test_value_options_keep_their_type() -> None:
    text = " ".join(_help("run").split())
    assert "--load <float>" in text and "--seed <int>" in text


@pytest.mark.parametrize("command", ["run", "info"])
def test_routing_help_lists_algorithms_and_aliases(command: str) -> None:
    text = " ".join(_help(command).split())
    for name in [*ROUTING_ALGORITHMS, *routing_aliases()]:
        assert name in text, name


def test_traffic_help_lists_every_pattern_family() -> None:
    text = " ".join(_help("run").split())
    forms = [f for p in committed_schema()["x-dflab"]["patterns"] for f in p["forms"]]
    assert set(PATTERN_KINDS) <= {f.split(":")[0].split("+")[0] for f in forms}
    for form in forms:
        assert form in text, form
