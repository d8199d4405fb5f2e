"""Where the cost goes, measured: after a cell's rounds, one extra paired run (plain, then
encrypted) with `perf record` on the server that runs, so that sampling never disturbs the
measured rounds.  Each server's samples are grouped by function (servers/mariadb/cpu_groups.py) and
kept per cell in DIR/at-rest-profile.json, the perf files and reports in DIR/profiles/.

Once per results directory the cipher core is calibrated on `openssl speed` (its addresses
in libcrypto, which is stripped of them) and the probe `perf record -e cpu-clock true` says
whether perf can sample here at all; if it cannot, the file says why and the report quotes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from encbench import capacity
from encbench.errors import ToolError
from encbench.profiling import PROFILE_FILE, perf
from encbench.results.store import ResultStore
from encbench.servers.mariadb import cpu_groups as groups
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.studies.at_rest.records import CellKey

PROFILE_SCHEMA = 1
VARIANTS = ("plain", "encrypted")

# One sysbench run of one variant: (variant, seconds, raw output path) → transactions.
RunOne = Callable[[str, int, Path], int]


def _counters(server: SandboxServer) -> dict[str, int]:
    status = server.global_status()
    return {
        "pages_decrypted": int(status.get("Innodb_num_pages_decrypted", 0)),
        "pages_encrypted": int(status.get("Innodb_num_pages_encrypted", 0)),
    }


class CpuProfiler:
    def __init__(self, store: ResultStore, algorithm: str, seconds: int) -> None:
        self.store = store
        self.algorithm = algorithm
        self.seconds = seconds
        self.dir = store.path / "profiles"

    def _load(self) -> dict[str, Any]:
        data = self.store.read_json(PROFILE_FILE)
        if data is None:
            data = {"schema": PROFILE_SCHEMA, "seconds": self.seconds, "cells": {}}
        return dict(data)

    def prepare(self) -> dict[str, Any]:
        """The probe and the calibration, once per results directory."""
        data = self._load()
        if "unavailable" in data:
            return data
        self.dir.mkdir(exist_ok=True)
        data["unavailable"] = perf.why_it_cannot_sample(self.dir)
        if data["unavailable"] is None:
            cipher = capacity.SERVER_CIPHERS[self.algorithm]
            ranges: list[tuple[int, int]] = []
            for direction in capacity.DIRECTIONS:
                text = perf.calibrate(cipher, direction, self.dir)
                core = groups.CoreRanges.from_calibration(groups.parse_report(text))
                ranges += core.ranges
            # CTR runs one core both ways: the same ranges twice.
            data["calibration"] = {"cipher": cipher, "core_ranges": sorted(set(ranges))}
        self.store.write_json(PROFILE_FILE, data)
        return data

    def profile_cell(
        self, cell: CellKey, servers: dict[str, SandboxServer], run_one: RunOne
    ) -> None:
        data = self.prepare()
        if data["unavailable"] is not None:
            return
        ranges = data["calibration"]["core_ranges"]
        core = groups.CoreRanges(tuple((int(low), int(high)) for low, high in ranges))
        entry: dict[str, Any] = {"cell": asdict(cell), "variants": {}, "error": None}
        try:
            for variant in VARIANTS:
                entry["variants"][variant] = self._one(
                    cell, variant, servers[variant], run_one, core
                )
        except ToolError as exc:
            # The measured rounds stand; only this breakdown is missing, and the report says why.
            entry["error"] = str(exc)
        data["cells"][cell.slug] = entry
        self.store.write_json(PROFILE_FILE, data)

    def _one(
        self,
        cell: CellKey,
        variant: str,
        server: SandboxServer,
        run_one: RunOne,
        core: groups.CoreRanges,
    ) -> dict[str, Any]:
        stem = self.dir / f"{cell.slug}-{variant}"
        data_file = stem.with_suffix(".data")
        raw = self.store.raw_path(f"at-rest-{cell.slug}-profile-{variant}.txt")
        before = _counters(server)
        with perf.recording(server.pid, data_file, stem.with_suffix(".log")):
            transactions = run_one(variant, self.seconds, raw)
        after = _counters(server)
        report = groups.parse_report(perf.report_text(data_file, stem.with_suffix(".txt")))
        # The binary samples are large and the text report holds what the parser reads.
        data_file.unlink(missing_ok=True)
        return {
            "transactions": transactions,
            "samples": report.samples,
            "ns_per_sample": report.ns_per_sample,
            "ns_by_group": groups.ns_by_group(report, core),
            "top": groups.top_symbols(report, core),
            **{k: after[k] - before[k] for k in after},
            "report": str(stem.with_suffix(".txt").relative_to(self.store.path)),
        }
