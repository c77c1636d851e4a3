"""Run BookSim2 points and append one CSV row per point (columns of results/booksim_load.csv).

Each point runs `booksim <cfg> key=value... stats_out=stats.m` under `nice -n 19`, one at a time,
in its own scratch directory outside the repository (default
/work/refsim/runs/booksim_small/<label>, <label> built from repo and overrides). The directory
keeps stdout.txt, stderr.txt, stats.m and meta.json (wall time, exit code, command). The row is
parsed from stdout.txt and stats.m; the column meanings are those of validation/README.md
("BookSim2 (`booksim_load.csv`)"):

* stable: False when BookSim printed "Simulation unstable" (latency_thres exceeded), never
  reached its overall statistics, or died on a signal; the row then holds the last per-period
  values printed (empty when none);
* mean_plat/mean_nlat: "Packet/Network latency average"; injected/accepted_load: flit rates;
* p50/p99/min plat: from plat_hist of stats.m (1-cycle bins; "999+" = at or beyond the last bin);
* mean_routers_traversed: "Hops average" (routers traversed), mean_router_hops = that - 1;
* hops_hist / plat_hist_nonzero: nonzero bins "value:count" (plat_hist_nonzero left empty when
  longer than 400 characters);
* warmup_cycles = warmup_periods x sample_period, measure_cycles = (max_samples - warmup_periods)
  x sample_period, from the effective configuration.

Points already in the output CSV (same repo, commit and command) are skipped, so a grid can be
resumed. The CSV is rewritten atomically (temporary file + os.replace) after every point.
`--sweep KEY=V1,V2,...` (repeatable) runs the Cartesian product of the listed values.

    python3 validation/run_booksim.py --bin /work/refsim/src/booksim2/src/booksim --repo bsmaster \\
        --cfg validation/booksim/dfly_72.cfg --out validation/results/booksim_small.csv \\
        routing_function=min num_vcs=2 traffic=uniform seed=1 sample_period=5000 \\
        --sweep injection_rate=0.01,0.3,0.5

`--reparse` parses an existing run directory (e.g. `--run-dir /work/refsim/runs/booksim/X`)
instead of running BookSim (wall_s is taken from its meta.json, empty without one).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RUNS_ROOT = Path("/work/refsim/runs/booksim_small")
STATS_FILE = "stats.m"
PLAT_HIST_MAX_CHARS = 400

COLUMNS = [
    "simulator",
    "repo",
    "commit",
    "routing",
    "num_vcs",
    "pattern",
    "offered_load",
    "seed",
    "warmup_cycles",
    "measure_cycles",
    "stable",
    "mean_plat_cycles",
    "mean_nlat_cycles",
    "p50_plat_cycles",
    "p99_plat_cycles",
    "min_plat_cycles",
    "injected_load",
    "accepted_load",
    "mean_routers_traversed",
    "mean_router_hops",
    "sim_cycles",
    "wall_s",
    "booksim_reported_run_time_s",
    "hops_hist",
    "plat_hist_nonzero",
    "config",
    "command",
]

# BookSim defaults (booksim_config.cpp) for the keys used to derive the window
DEFAULTS = {"warmup_periods": "3", "sample_period": "1000", "max_samples": "10"}

NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|-?nan|-?inf)"


def parse_overrides(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for it in items:
        if "=" not in it:
            raise SystemExit(f"override {it!r} is not key=value")
        k, v = it.split("=", 1)
        out.append((k.strip(), v.strip()))
    return out


def read_cfg(path: Path) -> dict[str, str]:
    """key = value; pairs of a BookSim config file (// comments removed)."""
    text = re.sub(r"//[^\n]*", "", path.read_text())
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"(\w+)\s*=\s*([^;]*);", text)}


def read_stats_config(text: str) -> dict[str, str]:
    """The effective configuration BookSim echoes at the top of stats.m (%key = value;)."""
    return {
        m.group(1): m.group(2).strip().strip("'")
        for m in re.finditer(r"^%(\w+) = ([^;]*);", text, re.M)
    }


def stats_vector(text: str, name: str) -> list[int] | None:
    m = re.findall(rf"^{name}\(1,:\) = \[([^\]]*)\]", text, re.M)
    return [int(x) for x in m[-1].split()] if m else None


def nonzero(hist: list[int]) -> str:
    return " ".join(f"{i}:{v}" for i, v in enumerate(hist) if v)


def percentile(hist: list[int], q: float) -> str:
    n = sum(hist)
    c = 0
    for i, v in enumerate(hist):
        c += v
        if c >= q * n:
            return f"{i}+" if i == len(hist) - 1 else str(i)
    return ""


def last_number(pattern: str, text: str) -> float | str:
    m = re.findall(pattern, text)
    return float(m[-1]) if m else ""


def label_for(repo: str, cfg: Path, overrides: list[tuple[str, str]]) -> str:
    kv = dict(overrides)
    main = ["routing_function", "num_vcs", "traffic", "injection_rate", "seed"]
    parts = [
        kv.get("routing_function", "default"),
        f"vc{kv.get('num_vcs', 'd')}",
        kv.get("traffic", "default"),
        kv.get("injection_rate", "default"),
        f"s{kv.get('seed', 'd')}",
    ]
    extra = [f"{k}-{v}" for k, v in overrides if k not in main]
    name = "__".join([repo, cfg.stem, "_".join(parts), *extra])
    return re.sub(r"[^A-Za-z0-9._=+-]", "_", name)


def rel_cfg(cfg: Path) -> str:
    try:
        return str(cfg.resolve().relative_to(ROOT))
    except ValueError:
        return str(cfg.resolve())


def command_string(cfg: Path, overrides: list[tuple[str, str]]) -> str:
    args = [f"{k}={v}" for k, v in overrides]
    return " ".join(["booksim", rel_cfg(cfg), *args, f"stats_out={STATS_FILE}"])


def parse_run(
    run_dir: Path,
    *,
    repo: str,
    commit: str,
    cfg: Path,
    overrides: list[tuple[str, str]],
) -> dict[str, object]:
    """One CSV row from run_dir/stdout.txt and run_dir/stats.m."""
    out_path = run_dir / "stdout.txt"
    out = out_path.read_text(errors="replace") if out_path.exists() else ""
    stats_path = run_dir / STATS_FILE
    stats = stats_path.read_text(errors="replace") if stats_path.exists() else ""
    meta_path = run_dir / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}

    # the values as given (cfg file, then command line) win; stats.m's echo of the effective
    # configuration fills in keys left at BookSim's defaults
    conf = dict(DEFAULTS)
    conf.update(read_stats_config(stats))
    conf.update(read_cfg(cfg))
    conf.update(dict(overrides))

    # BookSim's exit status is no success flag (main returns -1 = 255 after a completed run, 0
    # after an unstable one, exit(-1) on config errors); only a signal (crash, kill) counts
    crashed = meta.get("returncode", 0) < 0
    stable = (
        not crashed and "Simulation unstable" not in out and "Overall Traffic Statistics" in out
    )
    # overall section when the run completed, else the last per-period values printed
    ov = out.split("Overall Traffic Statistics", 1)[1] if stable else out

    plat = last_number(rf"Packet latency average = {NUM}", ov)
    nlat = last_number(rf"Network latency average = {NUM}", ov)
    inj = last_number(rf"Injected flit rate average ?= {NUM}", ov)
    acc = last_number(rf"Accepted flit rate average ?= {NUM}", ov)
    hops = last_number(rf"Hops average = {NUM}", ov)
    cycles = last_number(r"Time taken is (\d+) cycles", out)
    run_time = last_number(rf"Total run time {NUM}", out)

    p50 = p99 = pmin = plat_nz = ""
    hist = stats_vector(stats, "plat_hist")
    if hist and sum(hist):
        p50, p99 = percentile(hist, 0.5), percentile(hist, 0.99)
        pmin = next(i for i, v in enumerate(hist) if v)
        plat_nz = nonzero(hist)
        if len(plat_nz) >= PLAT_HIST_MAX_CHARS:
            plat_nz = ""
    hop_hist = stats_vector(stats, "hops")

    wp, sp, ms = (int(conf[k]) for k in ("warmup_periods", "sample_period", "max_samples"))
    wall = meta.get("wall_s", "")
    return {
        "simulator": "booksim2",
        "repo": repo,
        "commit": commit,
        "routing": conf.get("routing_function", ""),
        "num_vcs": conf.get("num_vcs", ""),
        "pattern": conf.get("traffic", ""),
        "offered_load": conf.get("injection_rate", ""),
        "seed": conf.get("seed", ""),
        "warmup_cycles": wp * sp,
        "measure_cycles": (ms - wp) * sp,
        "stable": stable,
        "mean_plat_cycles": plat,
        "mean_nlat_cycles": nlat,
        "p50_plat_cycles": p50,
        "p99_plat_cycles": p99,
        "min_plat_cycles": pmin,
        "injected_load": inj,
        "accepted_load": acc,
        "mean_routers_traversed": hops,
        "mean_router_hops": round(hops - 1, 4) if hops != "" else "",
        "sim_cycles": cycles,
        "wall_s": round(wall, 1) if wall != "" else "",
        "booksim_reported_run_time_s": run_time,
        "hops_hist": nonzero(hop_hist) if hop_hist else "",
        "plat_hist_nonzero": plat_nz,
        "config": rel_cfg(cfg),
        "command": command_string(cfg, overrides),
    }


def run_point(
    binary: Path,
    cfg: Path,
    overrides: list[tuple[str, str]],
    run_dir: Path,
    max_wall: float,
) -> bool:
    """Run BookSim once in run_dir; False when it was killed for exceeding max_wall."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in ("stdout.txt", "stderr.txt", STATS_FILE, "meta.json"):
        (run_dir / name).unlink(missing_ok=True)
    cmd = [
        "nice",
        "-n",
        "19",
        str(binary),
        str(cfg.resolve()),
        *(f"{k}={v}" for k, v in overrides),
        f"stats_out={STATS_FILE}",
    ]
    t0 = time.monotonic()
    timed_out = False
    with (run_dir / "stdout.txt").open("w") as fo, (run_dir / "stderr.txt").open("w") as fe:
        proc = subprocess.Popen(cmd, cwd=run_dir, stdout=fo, stderr=fe)
        try:
            rc = proc.wait(timeout=max_wall if max_wall > 0 else None)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            timed_out = True
    wall = time.monotonic() - t0
    meta = {"wall_s": wall, "returncode": rc, "timed_out": timed_out, "argv": cmd}
    (run_dir / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return not timed_out


def load_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames and reader.fieldnames != COLUMNS:
            raise SystemExit(f"{path}: columns differ from booksim_load.csv's")
        return list(reader)


def write_rows(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def git_commit(binary: Path) -> str:
    r = subprocess.run(
        ["git", "-C", str(binary.resolve().parent), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
    )
    return r.stdout.strip() if r.returncode == 0 else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", type=Path, help="BookSim binary (not needed with --reparse)")
    ap.add_argument("--repo", required=True, help="repo label for the CSV, e.g. bsmaster, hk")
    ap.add_argument("--commit", default="", help="commit of the binary (default: git rev-parse)")
    ap.add_argument("--cfg", type=Path, required=True, help="BookSim config file")
    ap.add_argument("--out", type=Path, required=True, help="CSV to append to")
    ap.add_argument("--runs-root", type=Path, default=DEFAULT_RUNS_ROOT)
    ap.add_argument("--run-dir", type=Path, help="run directory (single point only)")
    ap.add_argument("--sweep", action="append", default=[], metavar="KEY=V1,V2,...")
    ap.add_argument("--max-wall", type=float, default=0, help="kill a point after S s and stop")
    ap.add_argument("--reparse", action="store_true", help="parse --run-dir, do not run")
    ap.add_argument("overrides", nargs="*", metavar="key=value")
    args = ap.parse_args(argv)

    cfg = args.cfg if args.cfg.is_absolute() else Path.cwd() / args.cfg
    if not cfg.exists():
        raise SystemExit(f"no such config: {cfg}")
    fixed = parse_overrides(args.overrides)
    sweeps = [(k, v.split(",")) for k, v in parse_overrides(args.sweep)]
    points = [
        fixed + list(zip([k for k, _ in sweeps], combo, strict=True))
        for combo in itertools.product(*(vals for _, vals in sweeps))
    ]
    if args.run_dir and len(points) > 1:
        raise SystemExit("--run-dir takes a single point")
    if args.reparse and not args.run_dir:
        raise SystemExit("--reparse needs --run-dir")
    if not args.reparse and not (args.bin and args.bin.exists()):
        raise SystemExit(f"no BookSim binary: {args.bin}")
    commit = args.commit or (git_commit(args.bin) if args.bin else "")
    if not commit:
        raise SystemExit("--commit not given and not found with git")

    rows: list[dict[str, object]] = list(load_rows(args.out))
    done = {(r["repo"], r["commit"], r["command"]) for r in rows}
    for ov in points:
        key = (args.repo, commit, command_string(cfg, ov))
        if key in done:
            print(f"skip (in {args.out}): {key[2]}", flush=True)
            continue
        run_dir = args.run_dir or args.runs_root / label_for(args.repo, cfg, ov)
        if not args.reparse:
            print(f"run: {key[2]}  [{run_dir}]", flush=True)
            if not run_point(args.bin, cfg, ov, run_dir, args.max_wall):
                print(f"STOP: point exceeded --max-wall {args.max_wall:g} s: {key[2]}", flush=True)
                return 3
        row = parse_run(run_dir, repo=args.repo, commit=commit, cfg=cfg, overrides=ov)
        rows.append(row)
        done.add(key)
        write_rows(args.out, rows)
        print(
            "  stable={stable} plat={mean_plat_cycles} p99={p99_plat_cycles} "
            "acc={accepted_load} hops={mean_routers_traversed} wall={wall_s}".format(**row),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
