"""pgbench's report, read: what every study that runs pgbench takes from its output.

pgbench 15 ends its run with lines such as

    number of transactions actually processed: 2791
    number of failed transactions: 0 (0.000%)
    latency average = 0.358 ms
    average connection time = 1.234 ms
    tps = 2791.616139 (including reconnection times)

(`initial connection time` and `(without initial connection time)` without -C); pgbench 13
and older print two tps lines, with and without connection establishing.  The tps is
pgbench's own: with -C it includes every connection's set-up.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import ToolError

# A run's time limit beyond its -T: pgbench finishes its transactions and disconnects.
GRACE_S = 60

_PROCESSED = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
_FAILED = re.compile(r"^number of failed transactions: (\d+)", re.M)
_LATENCY = re.compile(r"^latency average = ([\d.]+) ms", re.M)
_CONNECTION = re.compile(r"^(?:average|initial) connection time = ([\d.]+) ms", re.M)
_TPS = re.compile(r"^tps = ([\d.]+) \(([^)]*)\)", re.M)


@dataclass(frozen=True)
class PgbenchResult:
    transactions: int
    failed: int
    tps: float
    latency_avg_ms: float
    connection_ms: float  # 0.0 where pgbench did not say (13 and older)


def _tps(text: str, reconnecting: bool) -> float:
    found = {note: float(value) for value, note in _TPS.findall(text)}
    if not found:
        raise ValueError("no `tps = …` line")
    for note in ("including reconnection times", "without initial connection time"):
        if note in found:
            return found[note]
    # pgbench 13 and older: with -C the figure that includes connecting is the one wanted.
    wanted = "including" if reconnecting else "excluding"
    for note, value in found.items():
        if note.startswith(wanted):
            return value
    return next(iter(found.values()))


def parse(text: str, reconnecting: bool) -> PgbenchResult:
    """The figures of a pgbench report; ValueError naming what is missing or impossible."""
    processed = _PROCESSED.search(text)
    latency = _LATENCY.search(text)
    if processed is None or latency is None:
        missing = "transactions processed" if processed is None else "latency average"
        raise ValueError(f"pgbench's report has no {missing} line")
    failed = _FAILED.search(text)
    connection = _CONNECTION.search(text)
    result = PgbenchResult(
        transactions=int(processed[1]),
        failed=int(failed[1]) if failed else 0,
        tps=_tps(text, reconnecting),
        latency_avg_ms=float(latency[1]),
        connection_ms=float(connection[1]) if connection else 0.0,
    )
    if result.transactions <= 0 or result.tps <= 0:
        raise ValueError(f"pgbench completed {result.transactions} transactions")
    return result


def run(
    argv: Sequence[str],
    label: str,
    seconds: int,
    env: Mapping[str, str],
    log: Path,
    reconnecting: bool,
) -> PgbenchResult:
    """One pgbench run of `seconds` (its -T), its whole output kept in `log`: a pgbench that
    fails, or whose report has no figures, raises ToolError with the end of it."""
    out = proc.run(
        list(argv),
        phase=f"pgbench, {label}",
        timeout_s=seconds + GRACE_S,
        stdout_path=log,
        env=env,
        hint=f"its output is in {log}",
    )
    try:
        return parse(out.stdout, reconnecting)
    except ValueError as exc:
        raise ToolError(f"{label}: {exc}", phase="pgbench", tail=proc.tail(log)) from exc
