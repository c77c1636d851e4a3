"""`dflab run` and `dflab info` with neither a file nor --preset start from the documented
defaults, as an empty experiment file does (newcomer #29)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import requires_engine, run_cli

pytestmark = requires_engine


def _json(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_info_with_only_set_uses_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "empty.toml").write_text("")
    facts = _json(run_cli("info", "--set", "topology.g=9", "--json", cwd=tmp_path))
    assert facts["shape"] == "dfly(4, 8, 4, 9)" and facts["nodes"] == 288
    from_file = run_cli("info", "empty.toml", "--set", "topology.g=9", "--json", cwd=tmp_path)
    assert facts == _json(from_file)


def test_run_with_only_set_uses_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "empty.toml").write_text("")
    window = ["--set", "run.warmup_us=0.5", "--set", "run.measure_us=1", "--json"]
    alone = _json(run_cli("run", "--set", "topology.g=9", *window, cwd=tmp_path))
    from_file = _json(run_cli("run", "empty.toml", "--set", "topology.g=9", *window, cwd=tmp_path))
    alone.pop("execution"), from_file.pop("execution")
    assert alone == from_file
    assert alone["packets_delivered"] > 0


def test_run_shortcuts_alone_use_the_defaults() -> None:
    summary = _json(
        run_cli("run", "--routing", "VALn", "--warmup-us", "0", "--measure-us", "0.5", "--json")
    )
    assert summary["sim_time_us"] == 0.5
