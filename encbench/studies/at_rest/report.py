"""The at-rest study's part of the report: how its summary is built from the results
directory, its sections, and what `compare` and the calibration read of it."""

from __future__ import annotations

from typing import Any

from encbench.engine.questions import AT_REST_KEY, AT_REST_TABLE
from encbench.profiles.profile import Profile
from encbench.profiling import PROFILE_FILE
from encbench.report.models import Record
from encbench.report.parts import (
    Across,
    Calibrated,
    Context,
    ReportPart,
    Setup,
)
from encbench.report.study_parts import compared_cells
from encbench.results.store import ResultStore
from encbench.servers.mariadb import installs
from encbench.servers.variants import configuration_label
from encbench.studies.at_rest import scopes_section, section, shapes_section, summary
from encbench.studies.at_rest.models import AtRestSummary
from encbench.studies.at_rest.records import CellKey, RunRecord

NAME = RunRecord.STUDY


def build(store: ResultStore, profile: Profile, environment: Record | None) -> AtRestSummary:
    return summary.build(
        store.runs(RunRecord),
        profile,
        store.read_json(f"{NAME}.json"),
        environment,
        store.read_json("crypto.json"),
        store.read_json(PROFILE_FILE),
    )


def sections(part: AtRestSummary, context: Context) -> list[Any]:
    scopes = scopes_section.section(part.cells)
    extra = [*shapes_section.sections(part), *([scopes] if scopes else [])]
    return section.sections(part, extra, context.noise_floor)


def setup(part: AtRestSummary) -> Setup:
    return Setup(
        servers=section.setup_servers(part.servers),
        software=section.setup_capacity(part),
        last=section.setup_last(part),
        server_version=(part.servers or {}).get("mariadb_version"),
        server_title=installs.title(installs.recorded_family(part.servers)),
    )


# Matched by (workload, regime [, algorithm and scope, shape where those are dimensions],
# threads).
compared = compared_cells(
    NAME,
    lambda c: (c.workload, c.setting, c.threads),
    group=lambda c: f"{c.workload}, {c.setting}",
    row_header="Threads",
    label=lambda c: str(c.threads),
    name=lambda c: f"{c.workload} {c.setting} {c.threads} thr",
)


def across(part: AtRestSummary) -> list[Across]:
    """Its TPS costs beside another server's, for the same workload, regime and threads
    (report/across.py): a column per encrypted configuration."""
    enc = (part.servers or {}).get("encryption") or {}
    out = []
    for c in part.cells:
        tps = c.comparisons.get("tps")
        # Scope all against scope tables is no cost of encryption against none.
        if not c.rounds or tps is None or c.against:
            continue
        layer = c.layer or (enc.get("layer", "tde") if not (c.algorithm or c.scope) else "tde")
        algorithm = c.algorithm or enc.get("algorithm", "?")
        scope = c.scope or enc.get("scope", "?")
        words = configuration_label(algorithm, scope, layer)
        column = f"MariaDB: {'TDE ' if layer == 'tde' else ''}{words}"
        column += f", shape {c.shape}" if c.shape else ""
        out.append(
            Across(AT_REST_TABLE, AT_REST_KEY, (c.workload, c.regime, str(c.threads)), column, tps)
        )
    return out


def compare_setup(part: AtRestSummary) -> dict[str, str]:
    servers = part.servers or {}
    out: dict[str, str] = {}
    enc, data = servers.get("encryption") or {}, servers.get("data") or {}
    if enc:
        out["encryption"] = f"{enc.get('algorithm', '?')}, scope {enc.get('scope', '?')}"
    install = servers.get("install")
    if install:
        out["OpenSSL"] = f"{install['openssl']} (the {install['name']} root's)"
    if servers.get("mariadb_version"):
        family = installs.title(installs.recorded_family(servers))
        out["MariaDB"] = f"{family} " * bool(family) + str(servers["mariadb_version"])
    if data:
        out["data"] = f"{data['tables']} tables × {data['table_size']:,} rows"
    pools = ", ".join(
        f"{r} {rec.get('buffer_pool_mb')} MB" for r, rec in (servers.get("regimes") or {}).items()
    )
    if pools:
        out["buffer pool"] = pools
    return out


def calibration_label(cell: CellKey) -> tuple[str, str]:
    group = f"{cell.workload}, {cell.regime}"
    return group, f"{group}, {cell.threads} thr"


PART = ReportPart(
    model=AtRestSummary,
    build=build,
    sections=sections,
    setup=setup,
    lead=section.lead,
    compared=compared,
    compare_metrics={"tps": "Throughput (TPS)", "cpu_ms_per_txn": "Server CPU per transaction"},
    compare_setup=compare_setup,
    across=across,
    cipher=lambda part: ((part.servers or {}).get("encryption") or {}).get("algorithm"),
    sharing=lambda part: part.sharing,
)
CALIBRATED = Calibrated(label=calibration_label, setup=section.calibration_setup)
