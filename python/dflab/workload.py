"""Application workloads from Python: the per-job result frames of a run, and programs written
as Python functions (run by the engine as a `table` motif, at full speed).

    from dflab.workload import program, send, recv, compute, allreduce

    def ping(rank, iteration):
        if rank == 0:
            yield send(1, bytes=4096)
        else:
            yield recv(0)
        yield allreduce(8)

    job = program(ping, ranks=2, iterations=3)          # a [[workload.jobs]] entry
    result = dflab.simulate("net.toml", workload={"jobs": [job]})
    result.workload.jobs                                # one row per job (polars)

See docs/workloads.md for the model and every column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from dflab.errors import UserError

Op = dict[str, Any]


def compute(ns: float) -> Op:
    return {"op": "compute", "ns": ns}


def isend(peer: int, bytes: int, tag: int = 0) -> Op:
    return {"op": "isend", "peer": peer, "bytes": bytes, "tag": tag}


def send(peer: int, bytes: int, tag: int = 0) -> Op:
    return {"op": "send", "peer": peer, "bytes": bytes, "tag": tag}


def irecv(peer: int, tag: int = 0) -> Op:
    return {"op": "irecv", "peer": peer, "tag": tag}


def recv(peer: int, tag: int = 0) -> Op:
    return {"op": "recv", "peer": peer, "tag": tag}


def waitall() -> Op:
    return {"op": "waitall"}


def allreduce(bytes: int) -> Op:
    return {"op": "allreduce", "bytes": bytes}


def reduce(root: int, bytes: int) -> Op:
    return {"op": "reduce", "peer": root, "bytes": bytes}


def bcast(root: int, bytes: int) -> Op:
    return {"op": "bcast", "peer": root, "bytes": bytes}


def barrier() -> Op:
    return {"op": "barrier"}


def alltoall(bytes: int) -> Op:
    return {"op": "alltoall", "bytes": bytes}


def program(
    ops: Callable[[int, int], Iterable[Op]],
    *,
    ranks: int,
    iterations: int = 1,
    name: str | None = None,
    wait2start_us: float = 0.0,
) -> dict[str, Any]:
    """A `[[workload.jobs]]` entry that runs `ops(rank, iteration)` (an iterable of the
    operations above) for every rank and iteration, as a `table` motif."""
    if ranks < 1 or iterations < 1:
        raise UserError(f"program: ranks ({ranks}) and iterations ({iterations}) must be >= 1")
    rows: list[Op] = []
    for rank in range(ranks):
        for iteration in range(iterations):
            for op in ops(rank, iteration):
                if not isinstance(op, dict) or "op" not in op:
                    raise UserError(
                        f"program: rank {rank} iteration {iteration} yielded {op!r}; yield the "
                        "operations of dflab.workload (send, recv, compute, ...)"
                    )
                rows.append({"rank": rank, "iteration": iteration, **op})
    # Every iteration exists for every rank, even one without operations.
    rows.append({"rank": 0, "iteration": iterations - 1, "op": "compute", "ns": 0})
    job: dict[str, Any] = {
        "motif": "table",
        "ranks": ranks,
        "wait2start_us": wait2start_us,
        "params": {"ops": rows},
    }
    if name is not None:
        job["name"] = name
    return job


@dataclass(frozen=True)
class WorkloadResult:
    """The per-job results of a run (docs/workloads.md, "What a run reports")."""

    jobs: pl.DataFrame
    iterations: pl.DataFrame
    throughput: pl.DataFrame
    # One row per router port: router, port, class (host/local/global/unused), group, peer,
    # peer_group, stall_us, and `bytes`, the bytes each job sent through it (a list by job).
    ports: pl.DataFrame
    # Background traffic beside the jobs (`workload.background`): one row with its nodes,
    # pattern, load, packets, offered and accepted load and latency; None without.
    background: pl.DataFrame | None = None

    @classmethod
    def from_engine(
        cls,
        raw: dict[str, Any],
        ports: list[dict[str, Any]] | None = None,
        background: dict[str, Any] | None = None,
    ) -> WorkloadResult:
        window = float(raw.get("throughput_window_us", 1.0))
        rows = [
            {"job": job, "window_start_us": w * window, "bytes": count}
            for job, counts in enumerate(raw.get("throughput_bytes", []))
            for w, count in enumerate(counts)
        ]
        throughput = pl.DataFrame(
            rows, schema={"job": pl.Int64, "window_start_us": pl.Float64, "bytes": pl.Int64}
        ).with_columns(
            # GB/ms, as the paper plots it: 1 GB/ms is 1e9 bytes in 1,000 us, 1e6 bytes per us.
            (pl.col("bytes") / window / 1e6).alias("gb_per_ms")
        )
        iterations = pl.DataFrame(
            raw.get("iterations", []),
            schema={
                "job": pl.Int64,
                "rank": pl.Int64,
                "iteration": pl.Int64,
                "start_us": pl.Float64,
                "stop_us": pl.Float64,
                "comm_us": pl.Float64,
            },
        )
        return cls(
            jobs=pl.DataFrame(raw["jobs"]),
            iterations=iterations,
            throughput=throughput,
            ports=pl.DataFrame(ports or []),
            background=pl.DataFrame([background]) if background else None,
        )


def congestion_index(
    ports: pl.DataFrame, sim_time_us: float, link_gbps: float
) -> list[list[float]]:
    """The SC'22 congestion index as a groups x groups matrix: entry (s, d), s != d, is the
    bytes the global links from group s to group d carried over what they could carry in
    `sim_time_us` at `link_gbps`; the diagonal entry of group s is the same for all its local
    ports together (docs/workloads.md)."""
    network = ports.filter(pl.col("class").is_in(["local", "global"]))
    groups = int(ports["group"].max()) + 1 if ports.height else 0
    capacity = sim_time_us * 1e3 * link_gbps  # bytes one link carries in the run
    sums = network.with_columns(pl.col("bytes").list.sum().alias("total"))
    links = sums.group_by("group", "peer_group").agg(pl.col("total").sum(), pl.len().alias("links"))
    index = [[0.0] * groups for _ in range(groups)]
    for row in links.iter_rows(named=True):
        index[row["group"]][row["peer_group"]] = row["total"] / (capacity * row["links"])
    return index
