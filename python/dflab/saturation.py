"""Saturation search: the highest offered load each routing sustains under each pattern.

**Criterion.** A load is *sustained* when the run's accepted load is at least `accept` (0.99)
times its offered load, both measured over the run's window, and, if `max_latency_ns` is given,
its mean latency is at most that (BookSim's convention aborts a run whose latency passes its
`latency_thres`; ICS'24 does not state its own). A point that fails (a deadlock) is not
sustained. Accepted and offered load of one window differ by about latency / window even below
saturation (packets in flight at its ends): 0.99 needs a window of a hundred latencies or more;
with short windows lower `accept` (0.95 for ten latencies).

The saturation load is the highest sustained load of the grid `lo, lo + step, ..., hi`; below
it every grid load is assumed sustained and above it none (a network past saturation stays
saturated), so each curve is found by bisection over the grid in about `log2(n)` runs instead
of `n`.

**Running.** The curves (routing x pattern x seed) advance together: each round runs the next
probe of every unsettled curve as one sweep (`dflab.sweep.run_sweeps`, in parallel, into the
result store; several searches, each with its store, share the rounds: `search_many`), so the
probes are ordinary stored points: a search that is interrupted, or rerun
with more seeds or routings, runs only the points the store does not hold. The table of results
(`saturation.csv` in the store) is rewritten atomically after each search.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from rich.console import Console

from dflab.config import Experiment
from dflab.errors import UserError
from dflab.loading import SweepSpec
from dflab.store import Store, atomic_write
from dflab.sweep import ExecutorFactory, Point, Policy, expand, process_pool, run_sweeps
from dflab.worker import Runner, run_engine

# Decimal places of the grid's loads (a grid step below 0.001 is refused).
DIGITS = 3


@dataclass(frozen=True)
class Criterion:
    accept: float = 0.99
    max_latency_ns: float | None = None

    def __post_init__(self) -> None:
        if not 0.0 < self.accept <= 1.0:
            raise UserError(f"--accept: {self.accept} is out of range; allowed: > 0 and <= 1")
        if self.max_latency_ns is not None and self.max_latency_ns <= 0.0:
            raise UserError(
                f"--max-latency-ns: {self.max_latency_ns} is out of range; allowed: > 0"
            )

    def sustained(self, record: dict[str, Any] | None) -> bool:
        """Whether a stored point (None: it failed) sustains its offered load."""
        if record is None:
            return False
        s = record["summary"]
        offered, accepted = s.get("offered_load"), s.get("accepted_load")
        if not offered or accepted is None or accepted < self.accept * offered:
            return False
        latency = s.get("latency_mean_ns")
        return self.max_latency_ns is None or (
            latency is not None and latency <= self.max_latency_ns
        )


def grid(lo: float, hi: float, step: float) -> list[float]:
    """The loads searched: `lo` to `hi` (included) by `step`."""
    if not 0.0 < lo <= hi <= 1.0:
        raise UserError(f"--range: {lo}:{hi} is out of range; allowed: 0 < lo <= hi <= 1")
    if not step >= 10.0**-DIGITS:
        raise UserError(f"--step: {step} is out of range; allowed: >= {10.0**-DIGITS}")
    n = math.floor((hi - lo) / step + 1e-9) + 1
    return [round(lo + k * step, DIGITS) for k in range(n)]


@dataclass
class Curve:
    """One (routing, pattern, seed): loads `grid[:low + 1]` are sustained, `grid[high:]` not."""

    routing: str
    traffic: str
    seed: int
    low: int
    high: int
    probes: list[tuple[float, bool]] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return self.high - self.low <= 1

    def next_index(self) -> int:
        return (self.low + self.high) // 2


@dataclass(frozen=True)
class Saturation:
    routing: str
    traffic: str
    seed: int
    load: float | None  # highest sustained grid load; None: not even the lowest
    above: float | None  # the first load not sustained; None: all of the range is sustained
    probes: tuple[tuple[float, bool], ...]


@dataclass(frozen=True)
class Search:
    """One search: the curves of `spec` (routings x traffics x seeds) of `base`, bisected over
    `loads` (ascending) into `store`."""

    base: Experiment
    spec: SweepSpec
    store: Store
    loads: Sequence[float]
    criterion: Criterion


def search(
    base: Experiment,
    spec: SweepSpec,
    store: Store,
    *,
    loads: Sequence[float],
    criterion: Criterion,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
    policy: Policy | None = None,
) -> list[Saturation]:
    """Bisect every (routing, traffic, seed) of `spec` over `loads` (ascending)."""
    (found,) = search_many(
        [Search(base, spec, store, loads, criterion)],
        jobs=jobs,
        runner=runner,
        executor_factory=executor_factory,
        console=console,
        policy=policy,
    )
    return found


def _curves(one: Search) -> list[tuple[Curve, Experiment]]:
    """The search's curves, each with the experiment its probes start from."""
    if not one.loads:
        raise UserError("--range: no load in the range")
    spec = one.spec
    if spec.axes or spec.zips or spec.points:
        raise UserError(
            "sweep: the saturation search varies routings, traffics and seeds only; give each "
            "value of another swept key its own search (--set KEY=VALUE --out DIR)"
        )
    points = expand(
        one.base,
        SweepSpec(
            routings=spec.routings,
            traffics=spec.traffics,
            seeds=spec.seeds,
            seed_count=spec.seed_count,
        ),
    )
    return [
        (
            Curve(p.coords["routing"], p.coords["traffic"], p.coords["seed"], -1, len(one.loads)),
            p.experiment,
        )
        for p in points
    ]


def search_many(
    searches: Sequence[Search],
    *,
    jobs: int = 1,
    runner: Runner = run_engine,
    executor_factory: ExecutorFactory = process_pool,
    console: Console | None = None,
    policy: Policy | None = None,
) -> list[list[Saturation]]:
    """Several searches side by side: each round runs the next probe of every unsettled curve
    of every search through one pool (`dflab.sweep.run_sweeps`), each into its search's store,
    so that a search of one curve does not leave the other workers idle."""
    states = [_curves(one) for one in searches]
    while any(not c.settled for curves in states for c, _ in curves):
        rounds: list[list[tuple[Curve, Point]]] = []
        for one, curves in zip(searches, states, strict=True):
            probes = []
            for c, experiment in curves:
                if not c.settled:
                    (point,) = expand(experiment, SweepSpec(loads=[one.loads[c.next_index()]]))
                    probes.append((c, point))
            rounds.append(probes)
        run_sweeps(
            [
                ([p for _, p in probes], one.store)
                for one, probes in zip(searches, rounds, strict=True)
                if probes
            ],
            jobs=jobs,
            runner=runner,
            executor_factory=executor_factory,
            console=console,
            policy=policy,
        )
        for one, probes in zip(searches, rounds, strict=True):
            records = {r["hash"]: r for r in one.store.points()} if probes else {}
            for c, point in probes:
                k = c.next_index()
                ok = one.criterion.sustained(records.get(point.key))
                c.probes.append((one.loads[k], ok))
                if ok:
                    c.low = k
                else:
                    c.high = k
    found = []
    for one, curves in zip(searches, states, strict=True):
        results = [_result(c, one.loads) for c, _ in curves]
        write_table(one.store, results, one.criterion)
        found.append(results)
    return found


def _result(c: Curve, loads: Sequence[float]) -> Saturation:
    return Saturation(
        c.routing,
        c.traffic,
        c.seed,
        loads[c.low] if c.low >= 0 else None,
        loads[c.high] if c.high < len(loads) else None,
        tuple(c.probes),
    )


def rows(results: Sequence[Saturation]) -> list[dict[str, Any]]:
    """One row per (routing, traffic): the mean saturation load over seeds and each seed's."""
    table: dict[tuple[str, str], list[Saturation]] = {}
    for r in results:
        table.setdefault((r.routing, r.traffic), []).append(r)
    out = []
    for (routing, traffic), per_seed in table.items():
        found = [r.load for r in per_seed if r.load is not None]
        out.append(
            {
                "routing": routing,
                "traffic": traffic,
                "seeds": " ".join(str(r.seed) for r in per_seed),
                "saturation_load": round(mean(found), DIGITS)
                if len(found) == len(per_seed)
                else None,
                "per_seed": " ".join("-" if r.load is None else f"{r.load:g}" for r in per_seed),
                "first_unsustained": " ".join(
                    "-" if r.above is None else f"{r.above:g}" for r in per_seed
                ),
                "runs": sum(len(r.probes) for r in per_seed),
            }
        )
    return out


def write_table(store: Store, results: Sequence[Saturation], criterion: Criterion) -> None:
    """`saturation.csv`: the rows, each with the criterion that found it."""
    buffer = io.StringIO()
    given = {"accept": criterion.accept, "max_latency_ns": criterion.max_latency_ns}
    table = [{**row, **given} for row in rows(results)]
    writer = csv.DictWriter(buffer, fieldnames=list(table[0]) if table else ["routing"])
    writer.writeheader()
    writer.writerows(table)
    atomic_write(store.root / "saturation.csv", buffer.getvalue().encode())
