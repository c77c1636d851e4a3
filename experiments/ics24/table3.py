"""ICS'24 Table 3: mean communication time of MILC, Nekbone, LAMMPS and Stencil3D under UGAL-L
and UGAL-LE, with random and continuous placement, each application alone on dfly(4,8,4,33).

    .venv/bin/python experiments/ics24/table3.py --apps milc,stencil3d --routings UGAL-L,UGAL-LE
    .venv/bin/python experiments/ics24/table3.py --markdown      # the table with the paper's

One row per (app, placement, routing, seed) goes to `results/table3.csv` (resumable: rows
already there are not run again; written atomically by experiments/sc22/rows.py).

The paper replays the applications' SWM skeletons in CODES; their parameters are not public,
so each is approximated by a dflab motif (APPS below; docs/ugal-le-results.md says how).
The network is the `ugal-le-1056` preset's topology and latencies with the paper's CODES
settings (200 Gb/s links, 256-packet VC buffers, UGAL-LE's 500 ns window and threshold 3), and
`network.timing = "link-busy"`: the BookSim timing takes only single-size packets, and a
message's last packet is shorter.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from dflab.api import simulate

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("sc22_rows", HERE.parent / "sc22" / "rows.py")
assert _spec is not None and _spec.loader is not None
result_rows = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(result_rows)

RESULTS = HERE / "results" / "table3.csv"
COLUMNS = (
    "app",
    "placement",
    "routing",
    "seed",
    "ranks",
    "motif",
    "finished",
    "exec_ms",
    "comm_mean_ms",
    "comm_std_ms",
    "comm_max_ms",
    "latency_mean_us",
    "latency_p99_us",
    "wire_mb",
    "minimal_fraction",
    "wall_s",
)

# The paper's ranks; the motif and its parameters stand in for the SWM skeleton.
APPS: dict[str, dict[str, Any]] = {
    # MILC: the LQCD (MILC-like 4D stencil) motif on a 48^4 lattice (1024 ranks: 6x6x12x12
    # sites each, 10-41 KB messages to 8 neighbours), 12 iterations.
    "milc": {
        "motif": "lqcd",
        "ranks": 1024,
        "params": {"nx": 48, "ny": 48, "nz": 48, "nt": 48, "iterations": 12},
    },
    # MILC with larger messages: a 96^4 lattice (12x12x24x24 sites a rank, 83-332 KB
    # messages), 2 iterations.
    "milc-96": {
        "motif": "lqcd",
        "ranks": 1024,
        "params": {"nx": 96, "ny": 96, "nz": 96, "nt": 96, "iterations": 2},
    },
    # Nekbone (CG on spectral elements): 3D nearest-neighbour exchange of small faces (8 KB,
    # eager) and an allreduce of one double per iteration, 9x9x9 ranks, 300 iterations.
    "nekbone": {
        "motif": "halo3d",
        "ranks": 729,
        "params": {"fields_per_cell": 1024, "iterations": 300, "reduce": True},
    },
    # LAMMPS: 3D nearest-neighbour exchange of larger faces (64 KB, rendezvous) and an
    # allreduce of one double per iteration, 9x9x9 ranks, 100 iterations.
    "lammps": {
        "motif": "halo3d",
        "ranks": 729,
        "params": {"fields_per_cell": 8192, "iterations": 100, "reduce": True},
    },
    # Stencil3D: the 7-point Halo3D exchange, 32 KB faces, 8x8x16 ranks, 30 iterations.
    "stencil3d": {
        "motif": "halo3d",
        "ranks": 1024,
        "params": {"fields_per_cell": 4096, "iterations": 30},
    },
}
NAMES = {
    "milc": "MILC",
    "milc-96": "MILC (96⁴)",
    "nekbone": "Nekbone",
    "lammps": "LAMMPS",
    "stencil3d": "Stencil3D",
}
PLACEMENTS = {"random": "random-list", "continuous": "linear"}
# Table 3 (ms): (UGAL-L, UGAL-LE, improvement %).
PAPER = {
    ("milc", "random"): (3.30, 3.25, 1.52),
    ("milc", "continuous"): (4.01, 3.06, 23.69),
    ("milc-96", "random"): (3.30, 3.25, 1.52),
    ("milc-96", "continuous"): (4.01, 3.06, 23.69),
    ("nekbone", "random"): (22.66, 21.47, 5.25),
    ("nekbone", "continuous"): (22.01, 19.18, 12.85),
    ("lammps", "random"): (6.029, 5.95, 1.31),
    ("lammps", "continuous"): (6.19, 5.67, 8.4),
    ("stencil3d", "random"): (0.694, 0.681, 1.87),
    ("stencil3d", "continuous"): (0.67, 0.54, 19.40),
}

FLIT_BYTES = 64
PACKET_FLITS = 8  # 512 B packets
LINK_GBPS = 25.0  # 200 Gb/s (the paper's CODES links)
BUFFER_PACKETS = 256  # the paper's VC buffers
# The MPI model without the SC'22 toolkit's host costs and Firefly's NIC (CODES's replay is not
# Firefly): one FIFO per NIC, and the network decides the communication time.
BARE_PROTOCOL = {
    "eager_copy_ps_per_byte": 0.0,
    "rendezvous_pin_ns": 0.0,
    "rendezvous_pin_ns_per_page": 0.0,
    "rendezvous_ack": False,
    "call_enter_ns": 0.0,
    "call_return_ns": 0.0,
    "rendezvous_recv_pin_blocks": False,
    "rendezvous_recv_unpin": False,
    "nic_control_stream": False,
}


def experiment(app: str, placement: str, routing: str, seed: int) -> dict[str, Any]:
    job = {**APPS[app], "name": app, "wait2start_us": 0.0}
    return {
        "preset": "ugal-le-1056",
        "seed": seed,
        "network": {
            "timing": "link-busy",
            "flit_bytes": FLIT_BYTES,
            "packet_flits": PACKET_FLITS,
            "host_bw_gbps": LINK_GBPS,
            "local_bw_gbps": LINK_GBPS,
            "global_bw_gbps": LINK_GBPS,
            "xbar_bw_gbps": 2.5 * LINK_GBPS,  # the preset's speedup
            "input_buffer_flits": BUFFER_PACKETS * PACKET_FLITS,
            "output_buffer_flits": BUFFER_PACKETS * PACKET_FLITS,
        },
        "routing": {"algorithm": routing, "window_ns": 500.0, "active_threshold": 3},
        "run": {"warmup_us": 0.0, "measure_us": 100_000.0},
        "workload": {
            "mpi": BARE_PROTOCOL,
            "placement": PLACEMENTS[placement],
            "placement_seed": seed,
            "jobs": [job],
            "record_iterations": False,
        },
    }


def run_one(app: str, placement: str, routing: str, seed: int) -> dict[str, Any]:
    result = simulate(experiment(app, placement, routing, seed))
    assert result.workload is not None
    j = result.workload.jobs.to_dicts()[0]
    return {
        "app": app,
        "placement": placement,
        "routing": routing,
        "seed": seed,
        "ranks": APPS[app]["ranks"],
        "motif": APPS[app]["motif"],
        **result_rows.job_times(j),
        "wire_mb": j["wire_bytes"] / 1e6,
        "minimal_fraction": result.summary.minimal_fraction,
        "wall_s": round(result.execution.wall_s, 1),
    }


def read_rows() -> list[dict[str, str]]:
    return result_rows.read_rows(RESULTS)


def write_rows(done: list[dict[str, Any]]) -> None:
    result_rows.write_rows(RESULTS, COLUMNS, done)


def table(rows: list[dict[str, str]], seed: int) -> list[str]:
    """Markdown rows: per app and placement, the mean communication time under UGAL-L and
    UGAL-LE, UGAL-LE's improvement, and the paper's values."""
    got = {(r["app"], r["placement"], r["routing"]): r for r in rows if r["seed"] == str(seed)}
    out = [
        "| app | ranks | placement | UGAL-L ms | UGAL-LE ms | improvement | paper UGAL-L / "
        "UGAL-LE ms | paper improvement | minimal share L / LE | p99 latency L / LE µs | "
        "wall s L / LE |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for app in APPS:
        for placement in PLACEMENTS:
            lo, le = got.get((app, placement, "UGAL-L")), got.get((app, placement, "UGAL-LE"))
            if lo is None and le is None:
                continue
            p_l, p_le, p_imp = PAPER[(app, placement)]

            def cell(r: dict[str, str] | None, key: str, fmt: str) -> str:
                return "—" if r is None else format(float(r[key]), fmt)

            imp = "—"
            if lo is not None and le is not None:
                a, b = float(lo["comm_mean_ms"]), float(le["comm_mean_ms"])
                imp = f"{100 * (a - b) / a:.2f} %"
            unfinished = [r["routing"] for r in (lo, le) if r and r["finished"] != "True"]
            note = f" (unfinished: {', '.join(unfinished)})" if unfinished else ""
            out.append(
                f"| {NAMES[app]}{note} | {APPS[app]['ranks']} | {placement} | "
                f"{cell(lo, 'comm_mean_ms', '.3f')} | {cell(le, 'comm_mean_ms', '.3f')} | {imp} | "
                f"{p_l} / {p_le} | {p_imp:.2f} % | "
                f"{cell(lo, 'minimal_fraction', '.3f')} / {cell(le, 'minimal_fraction', '.3f')} | "
                f"{cell(lo, 'latency_p99_us', '.2f')} / {cell(le, 'latency_p99_us', '.2f')} | "
                f"{cell(lo, 'wall_s', '.0f')} / {cell(le, 'wall_s', '.0f')} |"
            )
    return out


def by_seed(rows: list[dict[str, str]]) -> list[str]:
    """Markdown rows: UGAL-LE's improvement per seed, for the (app, placement) pairs run with
    more than one seed."""
    comm = {
        (r["app"], r["placement"], r["routing"], r["seed"]): float(r["comm_mean_ms"]) for r in rows
    }
    seeds: dict[tuple[str, str], list[str]] = {}
    for app, placement, routing, seed in comm:
        if routing == "UGAL-L" and (app, placement, "UGAL-LE", seed) in comm:
            seeds.setdefault((app, placement), []).append(seed)
    out = ["| app | placement | improvement by seed |", "|---|---|---|"]
    for app in APPS:
        for placement in PLACEMENTS:
            got = sorted(seeds.get((app, placement), []), key=int)
            if len(got) < 2:
                continue
            cells = []
            for seed in got:
                a, b = (
                    comm[(app, placement, "UGAL-L", seed)],
                    comm[(app, placement, "UGAL-LE", seed)],
                )
                cells.append(f"seed {seed}: {100 * (a - b) / a:.2f} %")
            out.append(f"| {NAMES[app]} | {placement} | {', '.join(cells)} |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--placements", default=",".join(PLACEMENTS))
    parser.add_argument("--routings", default="UGAL-L,UGAL-LE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print the table and exit")
    args = parser.parse_args()
    rows = read_rows()
    if args.markdown:
        print("\n".join(table(rows, args.seed)))
        print()
        print("\n".join(by_seed(rows)))
        return 0
    done = {(r["app"], r["placement"], r["routing"], r["seed"]) for r in rows}
    for app in args.apps.split(","):
        for placement in args.placements.split(","):
            for routing in args.routings.split(","):
                if (app, placement, routing, str(args.seed)) in done:
                    continue
                row = run_one(app, placement, routing, args.seed)
                rows.append({k: str(v) for k, v in row.items()})
                write_rows(rows)
                print(row, file=sys.stderr, flush=True)
    print("\n".join(table(rows, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
