"""The at-rest study's part of the report: how its summary is built from the results
directory, its sections (each kind's cells in a section of its own), and what `compare` and
the calibration read of it."""

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
    KindMeasured,
    ReportPart,
    Setup,
)
from encbench.report.study_parts import compared_cells
from encbench.results.store import ResultStore
from encbench.servers.mariadb import installs
from encbench.servers.variants import FILESYSTEM_WORDS, configuration_label
from encbench.studies.at_rest import (
    kind_section,
    postgresql_section,
    postgresql_side,
    scopes_section,
    section,
    shapes_section,
    summary,
)
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary
from encbench.studies.at_rest.postgresql_options import KIND as POSTGRESQL
from encbench.studies.at_rest.postgresql_options import is_oltp
from encbench.studies.at_rest.records import MARIADB, CellKey, RunRecord

NAME = RunRecord.STUDY


def build(store: ResultStore, profile: Profile, environment: Record | None) -> AtRestSummary:
    return summary.build(
        store.runs(RunRecord),
        profile,
        store.read_json(f"{NAME}.json"),
        environment,
        crypto=store.read_json("crypto.json"),
        cpu_profile=store.read_json(PROFILE_FILE),
        pg_record=store.read_json(postgresql_side.RECORD_FILE),
    )


def kinds_of(part: AtRestSummary) -> list[str]:
    """The kinds whose cells the part has, in its order (none: MariaDB's, the first)."""
    return list(dict.fromkeys(c.kind for c in part.cells)) or [MARIADB]


def own_part(part: AtRestSummary) -> AtRestSummary:
    """The part with MariaDB's cells alone: what its section's tables and words read."""
    return part.model_copy(update={"cells": [c for c in part.cells if c.kind == MARIADB]})


def sections(part: AtRestSummary, context: Context) -> list[Any]:
    """Each kind's section, in the order the kinds were measured; the study's differences
    across cells (one family of every kind's) in the first one's summary."""
    kinds, out = kinds_of(part), []
    for kind in kinds:
        if kind == MARIADB:
            own = own_part(part)
            scopes = scopes_section.section(own.cells)
            extra = [*shapes_section.sections(own), *([scopes] if scopes else [])]
            out += section.sections(own, extra, context.noise_floor)
            continue
        cells, alone = [c for c in part.cells if c.kind == kind], kinds[0] == kind
        if kind == POSTGRESQL:
            out += postgresql_section.sections(part, cells, context.noise_floor, alone=alone)
        else:  # a kind without words of its own here
            out += kind_section.sections(part, kind, cells, context.noise_floor, alone=alone)
    return out


def setup(part: AtRestSummary) -> Setup:
    kinds, own = kinds_of(part), own_part(part)
    mariadb = (part.servers or {}).get("mariadb_version")
    family = installs.title(installs.recorded_family(part.servers))
    postgresql = part.postgresql.postgresql_version if part.postgresql else None
    oltp = sorted({c.workload for c in part.cells if c.kind == POSTGRESQL and is_oltp(c.workload)})
    pg_software = (
        [f"{', '.join(oltp)}: sysbench's stock scripts through its PostgreSQL driver (pgsql)."]
        if oltp
        else []
    )
    if MARIADB not in kinds:
        return Setup(software=pg_software, kinds=[KindMeasured(POSTGRESQL, postgresql)])
    return Setup(
        servers=section.setup_servers(part.servers),
        software=section.setup_capacity(own) + pg_software,
        last=section.setup_last(own),
        server_version=mariadb,
        server_title=family,
        kinds=(
            [KindMeasured(MARIADB, mariadb, family), KindMeasured(POSTGRESQL, postgresql)]
            if POSTGRESQL in kinds
            else []
        ),
    )


def _compared_group(c: AtRestCell) -> str:
    if c.kind == POSTGRESQL:
        return f"PostgreSQL at rest: {c.regime}"
    return f"{c.workload}, {c.setting}"


def _compared_label(c: AtRestCell) -> str:
    if c.kind == POSTGRESQL:
        workload = postgresql_section.WORKLOADS.get(c.workload, c.workload)
        return f"{workload}, {c.threads} cl"
    return str(c.threads)


# Matched by (workload, regime [, algorithm and scope, shape where those are dimensions],
# threads, kind).
compared = compared_cells(
    NAME,
    lambda c: c.key,
    group=_compared_group,
    row_header="Threads",
    label=_compared_label,
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
        key = (c.workload, c.regime, str(c.threads))
        if c.kind == POSTGRESQL:
            column = f"PostgreSQL: {FILESYSTEM_WORDS}"
            out.append(Across(AT_REST_TABLE, AT_REST_KEY, key, column, tps))
            continue
        layer = c.layer or (enc.get("layer", "tde") if not (c.algorithm or c.scope) else "tde")
        algorithm = c.algorithm or enc.get("algorithm", "?")
        scope = c.scope or enc.get("scope", "?")
        words = configuration_label(algorithm, scope, layer)
        column = f"MariaDB: {'TDE ' if layer == 'tde' else ''}{words}"
        column += f", shape {c.shape}" if c.shape else ""
        out.append(Across(AT_REST_TABLE, AT_REST_KEY, key, column, tps))
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
    if part.postgresql is not None and part.postgresql.postgresql_version:
        out["PostgreSQL"] = part.postgresql.postgresql_version
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
