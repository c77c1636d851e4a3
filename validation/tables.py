"""The side-by-side tables of docs/validation.md, from the side-by-side CSVs.

    .venv/bin/python validation/tables.py      # prints the Markdown of the SST tables
    .venv/bin/python validation/tables.py booksim   # ... of the BookSim table

Reads validation/results/dflab_vs_sst_fork.csv (SST timing) and, for the link-busy mean column,
validation/results/dflab_linkbusy_vs_sst_fork.csv; both are written by dflab_side_by_side.py.
The BookSim table comes from validation/results/dflab_vs_booksim.csv
(booksim_side_by_side.py).
"""

from __future__ import annotations

import csv
import os
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
MINUS = "\N{MINUS SIGN}"  # typographic minus, as in the rest of docs/validation.md
HEADER = (
    "| routing | load | W+M µs | mean ns: SST / sst (err) / link-busy (err) "
    "| p50 ns: SST / sst (err) | p99 ns: SST / sst (err) | accepted: SST / sst (Δ) "
    "| router hops: SST / sst | steady | ✓ |\n"
    "|---|---:|---|---|---|---|---|---|:-:|:-:|"
)


def write_rows(out: list[dict], path: Path, key: tuple[str, ...], partial: bool) -> None:
    """Write a side-by-side CSV atomically; a `partial` run (some configurations only) replaces
    its own rows, identified by the columns of `key`, and keeps the others."""
    if partial and path.exists():
        new = {tuple(str(c[k]) for k in key) for c in out}
        kept = [r for r in csv.DictReader(path.open()) if tuple(r[k] for k in key) not in new]
        out = kept + out
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".csv")
    with os.fdopen(fd, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    os.replace(tmp, path)
    print(f"wrote {path} ({len(out)} configurations)")


def rows(name: str) -> dict[tuple[str, str, str], dict[str, str]]:
    with (RESULTS / name).open() as f:
        return {(r["routing"], r["pattern"], r["offered_load"]): r for r in csv.DictReader(f)}


def pct(x: str) -> str:
    return f"{float(x) * 100:+.1f} %".replace("-", MINUS)


def signed(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}".replace("-", MINUS)


def line(r: dict[str, str], old: dict[str, str]) -> str:
    def v(key: str) -> float:
        return float(r[key])

    window = f"{v('warmup_us'):g}+{v('measure_us'):g}"
    mean = (
        f"{v('sst_mean_lat_ns'):.0f} / {v('dflab_mean_lat_ns'):.0f} ({pct(r['err_mean'])}) / "
        f"{float(old['dflab_mean_lat_ns']):.0f} ({pct(old['err_mean'])})"
    )
    p50 = f"{v('sst_p50_lat_ns'):.0f} / {v('dflab_p50_lat_ns'):.0f} ({pct(r['err_p50'])})"
    p99 = f"{v('sst_p99_lat_ns'):.0f} / {v('dflab_p99_lat_ns'):.0f} ({pct(r['err_p99'])})"
    acc = (
        f"{v('sst_accepted_load'):.4f} / {v('dflab_accepted_load'):.4f} "
        f"({signed(v('diff_accepted'), 4)})"
    )
    hops = f"{v('sst_router_hops'):.2f} / {v('dflab_router_hops'):.2f}"
    ok = "✓" if r["agrees"] == "True" else ""
    load = f"{v('offered_load'):g}"
    cells = [r["routing"], load, window, mean, p50, p99, acc, hops, r["dflab_steady"], ok]
    return "| " + " | ".join(cells) + " |"


BOOKSIM_HEADER = (
    "| nodes | routing | pattern | load | mean: BookSim / dflab (err) | p99: BookSim / dflab "
    "| accepted: BookSim / dflab (Δ) | router hops: BookSim / dflab |\n"
    "|---:|---|---|---:|---|---|---|---|"
)


def booksim_line(r: dict[str, str]) -> str:
    if r["booksim_stable"] == "True":
        mean = (
            f"{float(r['booksim_mean']):.1f} / {float(r['dflab_mean']):.1f} ({pct(r['rel_mean'])})"
        )
        p99 = f"{r['booksim_p99']} / {float(r['dflab_p99']):.0f}"
        hops = f"{float(r['booksim_hops']):.3f} / {float(r['dflab_hops']):.3f}"
    else:
        mean = f"aborted (unstable) / {float(r['dflab_mean']):.0f}"
        p99, hops = "n/a", "n/a"
    acc = (
        f"{float(r['booksim_accepted']):.4f} / {float(r['dflab_accepted']):.4f} "
        f"({signed(float(r['diff_accepted']), 4)})"
    )
    cells = [r["nodes"], f"{r['routing']} ({r['num_vcs']})", r["pattern"], r["offered_load"]]
    return "| " + " | ".join([*cells, mean, p99, acc, hops]) + " |"


def booksim_table() -> None:
    with (RESULTS / "dflab_vs_booksim.csv").open() as f:
        print(BOOKSIM_HEADER)
        for r in csv.DictReader(f):
            print(booksim_line(r))


def main() -> None:
    if sys.argv[1:] == ["booksim"]:
        booksim_table()
        return
    new, old = rows("dflab_vs_sst_fork.csv"), rows("dflab_linkbusy_vs_sst_fork.csv")
    for pattern in ("ur", "adv+1"):
        print(f"\n{pattern}\n\n{HEADER}")
        for key, r in new.items():
            if r["pattern"] == pattern:
                print(line(r, old[key]))
    agree = sum(r["agrees"] == "True" for r in new.values())
    print(f"\nall three criteria: {agree} of {len(new)}")


if __name__ == "__main__":
    main()
