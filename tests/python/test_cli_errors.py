"""User errors through the real CLI: exit 2, one `error:` line naming the field, no traceback.

None of these reach the engine, so they run with or without a compiled `_core`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import assert_user_error, run_cli


def _file(tmp_path: Path, text: str, name: str = "exp.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("toml", "needles"),
    [
        ("[topology]\nextra = 1\n", ["topology.extra: unknown key", "links_per_pair"]),
        ("[topology]\np = 'four'\n", ["topology.p", "'four'", "expected an integer"]),
        ("[traffic]\nload = 1.5\n", ["traffic.load", "1.5", "out of range", "<= 1"]),
        ("[traffic]\npattern = 'foo'\n", ["traffic.pattern", "'foo'", "adv+<i>"]),
        ("[routing]\nalgorithm = 'UGAL'\n", ["routing.algorithm", "MIN, VALg, VALn"]),
        ("[topology]\narrangement = 'zig'\n", ["topology.arrangement", "palmtree"]),
        ("preset = 'nope'\n", ["preset", "'nope'", "qadaptive-1056"]),
        ("[sweep]\nloads = [0.5, 2.0]\n", ["sweep.loads.1", "2.0"]),
        ("[sweep]\nloads = '0.1:0.9:1e-12'\n", ["sweep.loads '0.1:0.9:1e-12'", "at most 10000"]),
    ],
)
def test_bad_config_file(tmp_path: Path, toml: str, needles: list[str]) -> None:
    assert_user_error(run_cli("run", _file(tmp_path, toml)), *needles)


def test_missing_file(tmp_path: Path) -> None:
    proc = run_cli("run", "x.toml", cwd=tmp_path)
    line = assert_user_error(proc)
    assert line == "error: experiment file 'x.toml' not found"


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "seed = 1\n[run]\nwarmup_us = = 3\n", "broken.toml")
    assert_user_error(run_cli("run", path), "broken.toml", "invalid TOML", "line 3")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "--preset", "qadaptive-1056", "--set", "network.packet_flits=0"],
         ["network.packet_flits: 0 is out of range"]),
        (["run", "--preset", "qadaptive-1056", "--set", "network.flitbytes=4"],
         ["network.flitbytes: unknown key", "flit_bytes"]),
        (["run", "--preset", "qadaptive-1056", "--set", "nokey"], ["--set", "key=value"]),
        (["run", "--preset", "qadaptive-1056", "--load", "2"], ["traffic.load", "out of range"]),
        (["run", "--preset", "qadaptive-1056", "--routing", "bogus"], ["routing.algorithm"]),
        (["run", "--preset", "acor-1056", "--set", "routing.policy=foo"],
         ["routing.policy", "'foo'", "crg-gr, crg-sw, rrg-gr, rrg-sw"]),
        (["run", "--preset", "acor-1056", "--set", "routing.sequence=4L"],
         ["routing.sequence", "2LA, 2LB, 3L"]),
        (["run", "--preset", "acor-1056", "--set", "routing.it1=0"],
         ["routing.it1", "out of range"]),
        (["run", "--preset", "qadaptive-1056", "--set", "network.cut_through=true"],
         ["network.cut_through", "link-busy"]),
        (["run", "--preset", "qadaptive-1056", "--traffic", "adv+40"], ["traffic.pattern"]),
        (["run", "--preset", "nope"], ["preset", "qadaptive-2550"]),
        (["run", "--preset", "qadaptive-1056", "--series-out", "s.txt"], ["--series-out"]),
        (["sweep", "--preset", "qadaptive-1056", "--loads", "0.1:0.9"], ["--loads"]),
        (["sweep", "--preset", "qadaptive-1056", "--routings", "MIN,nope"],
         ["sweep.routings.1", "'nope'"]),
        (["sweep", "--preset", "qadaptive-1056", "--seeds", "1,x"], ["--seeds"]),
        (["sweep", "--preset", "qadaptive-1056", "--loads", "0.1:0.9:1e-12"],
         ["--loads", "800000000001 loads", "at most 10000"]),
        (["sweep", "--preset", "qadaptive-1056", "--routings", ","], ["--routings: empty list"]),
        (["sweep", "--preset", "qadaptive-1056", "--traffics", " "], ["--traffics: empty list"]),
        (["sweep", "--preset", "qadaptive-1056", "--seeds", ","], ["--seeds: empty list"]),
        (["sweep", "--preset", "qadaptive-1056", "--jobs", "0"], ["--jobs"]),
        (["plot", "no-such-dir"], ["no-such-dir", "not found"]),
        (["bench", "--scenario", "nope", "--quick"],
         ["unknown scenario", "qadaptive-1056-ur0.5-MIN"]),
        (["bench", "--repeat", "0", "--quick"], ["--repeat", "greater than or equal to 1"]),
        (["run", "--no-such-option"], ["--no-such-option"]),
        (["run", "--preset", "qadaptive-1056", "--load", "abc"], ["--load", "valid number"]),
        (["frobnicate"], ["frobnicate"]),
    ],
)  # fmt: skip
def test_bad_command_lines(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    assert_user_error(run_cli(*args, cwd=tmp_path), *needles)


def test_presets_command_lists_every_preset() -> None:
    proc = run_cli("presets")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        "acor-1056", "acor-16512", "acor-5256",
        "aurora-class", "aurora-class-small", "booksim-dgb-1056",
        "frontier-class", "frontier-class-half", "frontier-class-small",
        "qadaptive-1056", "qadaptive-2550", "sc22-1056", "ugal-le-1056", "ugal-le-288",
    ]  # fmt: skip
    assert "dfly(4,8,4,33)\t1056 nodes" in lines[0]
