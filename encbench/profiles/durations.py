"""How long a cell may run by its stopping rule, and a time in words: what `encbench plan`
and each study's plan lines say (plan.py's docstring gives the rule)."""

from __future__ import annotations

from typing import Protocol


class BudgetRule(Protocol):
    """The parts of a study's stopping rule that bound its cells' time."""

    @property
    def run_s(self) -> int: ...
    @property
    def warmup_s(self) -> int: ...
    @property
    def max_rounds(self) -> int: ...
    @property
    def cell_budget_s(self) -> float: ...
    @property
    def run_overhead_s(self) -> float: ...  # what a run takes beyond run_s (RUN_OVERHEAD_S)
    @property
    def block_s(self) -> float | None: ...  # a block, set-up included, where a study knows it


# What a run takes beyond its run_s: the client's start and connect, the counters read
# before and after, the per-run proof.  0.4 s: the whole runs of the two built-in profiles
# whose cells end at their maximum rounds (calibrate: 40 cells of 12 rounds of 1 s runs;
# smoke) came within 8% of it, where a second a run overstated them by 28–31%
# (profiles/measured_runs.toml holds those runs).
RUN_OVERHEAD_S = 0.4

# Both servers' restart before a block (measure.restart = "block"): about 0.4 s a server at
# the calibration's data size (docs/method.md); alibaba-rds-tde's blocks of reads, whose
# set-up is that restart and two 3 s warm-ups, recorded 6.1–7.0 s of set-up (2026-12-07).
RESTART_S = 0.8
# The same for MySQL's sandboxes restarted every block (a MySQL server restarts slower than
# MariaDB's): MySQL's smoke profile's whole run (2026-11-28, EPYC) took 200 s for 4 cells of
# 12 rounds of 1 s runs, 96 runs: about 1.0 s a run beyond its run_s.
MYSQL_RUN_OVERHEAD_S = 1.0


# Loading a server's tables (sysbench prepare, pgbench -i), with the server's start and its
# proof around it: seconds per million rows a server loads.  From the whole run of
# at-rest-servers (2026-11-28, EPYC): each pair of MariaDB servers took 45–60 s from the
# previous pair's end to its first run for 2 × 2.4M rows, the PostgreSQL pair 103 s for
# 2 × 6.0M (pgbench's and sysbench's), about 9 s per million rows per server either way.
LOAD_S_PER_MILLION_ROWS = 9.0


def load_seconds(servers: int, rows: int) -> float:
    """About how long `servers` servers take to be made and loaded with `rows` rows each."""
    return servers * rows / 1e6 * LOAD_S_PER_MILLION_ROWS


def cell_seconds(rule: BudgetRule, rounds: int | None = None) -> float:
    """How long one cell runs: its budget or its maximum rounds (or the rounds its study
    expects it to end at), whichever ends it first (a round taken as two runs of run_s and
    their overhead), and both warm-ups.  Where the study knows what a block takes, set-up
    included (`block_s`), the cell is the whole blocks that fit in its budget (the stopping
    rule ends a cell before a block would overrun it) — at least one."""
    most = rule.max_rounds if rounds is None else min(rounds, rule.max_rounds)
    if rule.block_s:
        blocks = min(max(1, int(rule.cell_budget_s // rule.block_s)), max(1, most // 2))
        return blocks * rule.block_s
    round_s = 2 * (rule.run_s + rule.run_overhead_s)
    return min(rule.cell_budget_s, most * round_s) + 2 * rule.warmup_s


def duration(seconds: float) -> str:
    """ "42 s", "14 min 10 s", "1 h 2 min"."""
    minutes, secs = divmod(round(seconds), 60)
    if not minutes:
        return f"{secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {secs:02d} s"
