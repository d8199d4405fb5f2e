"""The at-rest study's PostgreSQL cells without a server: its options refused in one line (io-bound
that memory would serve, above all), its cells and regimes' memory, a memory group's page
cache read from memory.stat, its per-run proof, and its section of the study's report on
made-up records."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import rendering
from encbench.errors import BadInput, ProofError
from encbench.profiles import profile as profiles
from encbench.report import markdown
from encbench.report.tables import Document
from encbench.results.store import ResultStore
from encbench.servers import shapes
from encbench.studies import at_rest
from encbench.studies.at_rest import postgresql_needs as needs
from encbench.studies.at_rest import postgresql_options as options
from encbench.studies.at_rest import postgresql_pgbench as pgbench
from encbench.studies.at_rest import postgresql_proof as proof
from encbench.studies.at_rest import postgresql_section as section
from encbench.studies.at_rest import report as at_rest_report
from encbench.studies.at_rest import summary as at_rest_summary
from encbench.studies.at_rest.models import AtRestSummary
from encbench.studies.at_rest.records import CellKey, RunRecord
from tests.helpers import GOLDEN_ROOT, encbench_here

MIB = 2**20


def pg_cell(regime: str, workload: str, clients: int) -> CellKey:
    return CellKey(workload, regime, clients, layer="fs", kind="postgresql")


POSTGRESQL = 'studies = ["at-rest"]\n[server]\nkinds = ["postgresql"]\n'


def load(body: str) -> profiles.Profile:
    return profiles.parse(f'name = "t"\n{POSTGRESQL}[pg_at_rest]\n{body}', "t")


# -- options ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('workloads = ["tpcc"]', "pg_at_rest.workloads"),
        ('regimes = ["cpu-bound"]', "pg_at_rest.regimes"),
        ("clients = [0]", "pg_at_rest.clients"),
        ("scale = 0", "pg_at_rest.scale: 0 is out of range"),
        ("shared_buffers_mb = 8", "pg_at_rest.shared_buffers_mb: 8 is out of range"),
        ("cache_allowance_mb = 10", "pg_at_rest.cache_allowance_mb"),
        ("tables = 4", "unknown key"),
        # 5 × 16 MB of data against 128 + 256 MB of memory: io-bound would be served by RAM.
        ("scale = 5", "io-bound would be served from memory; raise pg_at_rest.scale to 48"),
    ],
)
def test_a_bad_pg_at_rest_value_is_refused_in_one_line_naming_it(body: str, words: str) -> None:
    with pytest.raises(BadInput) as refused:
        load(body)
    message = str(refused.value)
    assert words in message and "\n" not in message


def test_a_small_data_set_is_fine_in_memory_alone() -> None:
    assert load('scale = 5\nregimes = ["in-memory"]').studies == ["at-rest"]


def test_the_cli_refuses_an_io_bound_served_from_memory_with_exit_status_2(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(f'name = "bad"\n{POSTGRESQL}[pg_at_rest]\nscale = 10\n')
    result = encbench_here("plan", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pg_at_rest.scale 10" in lines[0], result.stderr


def test_a_calibration_of_the_study_is_refused() -> None:
    with pytest.raises(BadInput, match="no A/A calibration"):
        profiles.parse(f'name = "t"\ncalibration = true\n{POSTGRESQL}', "t")


def test_sysbenchs_tables_that_an_io_bound_group_would_hold_are_refused() -> None:
    # 4 × 100,000 rows are about 98 MB in PostgreSQL; each io-bound group holds 384 MB.
    body = 'workloads = ["oltp_read_only"]\nscale = 50\n'
    with pytest.raises(BadInput, match=r"about 98 MB .* holds 384 MB .*come from memory"):
        load(body)
    # In memory alone, or with tables of twice the group, it is fine.
    assert load(body + 'regimes = ["in-memory"]\n').studies == ["at-rest"]
    big = profiles.parse(
        f'name = "t"\n{POSTGRESQL}[data]\ntables = 8\ntable_size = 400000\n[pg_at_rest]\n{body}',
        "t",
    )
    assert needs.data_mb(big) == 50 * 16 + 781
    assert "sysbench" in {c.name for c in at_rest.STUDY.machine_needs(big)}


# -- cells and memory ---------------------------------------------------------------------------
def test_cells_go_regime_by_regime_then_workload_then_clients() -> None:
    prof = load('regimes = ["io-bound", "in-memory"]\nclients = [1, 4]\nscale = 64')
    found = options.cells(prof)
    assert [c.label for c in found[:3]] == [
        "io-bound tpcb_like 1 cl",
        "io-bound tpcb_like 4 cl",
        "io-bound select_only 1 cl",
    ]
    assert [c.regime for c in found] == ["io-bound"] * 4 + ["in-memory"] * 4
    assert len({c.slug for c in found}) == len(found) == 8
    assert options.cells(profiles.parse('name = "t"\n', "t")) == []


def test_each_regime_sizes_the_servers_memory_from_the_data() -> None:
    spec = options.pg_at_rest_options(load("scale = 100"))
    data_mb = 1500.0
    # In memory: shared_buffers above the data; io-bound: the profile's, the data 4× above.
    assert spec.buffers_mb("in-memory", data_mb) > data_mb
    assert spec.memory_limit_mb("in-memory", data_mb) == spec.buffers_mb("in-memory", data_mb) + (
        spec.cache_allowance_mb
    )
    assert spec.memory_limit_mb("io-bound", data_mb) == 128 + 256 < data_mb / 2
    need, what = needs.memory_mb(load("scale = 100"))
    assert need == 2 * spec.memory_limit_mb("in-memory", options.data_mb_estimate(100))
    assert "pg_at_rest.scale" in what


def test_pgbench_runs_the_default_script_or_select_only_with_a_thread_per_client() -> None:
    tpcb = pgbench.argv(pg_cell("io-bound", "tpcb_like", 4), 3)
    select = pgbench.argv(pg_cell("io-bound", "select_only", 1), 3)
    assert Path(tpcb[0]).name == "pgbench"
    assert tpcb[1:] == ["-n", "-T", "3", "-c", "4", "-j", "4", "encbench"]
    assert select[-2:] == ["-S", "encbench"] and "-S" not in tpcb


def test_plan_says_the_images_and_each_regimes_memory() -> None:
    lines = needs.plan_lines(load("scale = 100"))
    assert any("MiB ext4 image on a loop device" in line for line in lines)
    assert any(line.startswith("  io-bound: shared_buffers 128 MB") for line in lines)
    assert at_rest.STUDY.here.root(load("scale = 100")) is not None


# -- the page cache ------------------------------------------------------------------------------
V1_STAT = """cache 9437184
rss 2097152
shmem 4194304
mapped_file 1048576
hierarchical_memory_limit 83886080
total_cache 10485760
total_rss 2097152
total_shmem 5242880
"""
V2_STAT = """anon 2097152
file 12582912
kernel_stack 65536
shmem 8388608
file_mapped 1048576
"""


def test_a_groups_page_cache_is_its_cache_less_the_shared_memory_in_it() -> None:
    v1 = shapes.parse_memory_stat(V1_STAT, 1)
    # v1: the hierarchical figures, where the kernel gives them.
    assert (v1.cache_bytes, v1.shmem_bytes) == (10 * MIB, 5 * MIB)
    assert v1.page_cache_bytes == 5 * MIB
    v2 = shapes.parse_memory_stat(V2_STAT, 2)
    assert (v2.cache_bytes, v2.page_cache_bytes) == (12 * MIB, 4 * MIB)
    older = shapes.parse_memory_stat("cache 4096\nrss 0\n", 1)
    assert older.page_cache_bytes == 4096
    with pytest.raises(ValueError, match="no file"):
        shapes.parse_memory_stat("anon 1\n", 2)


# -- records and proof ------------------------------------------------------------------------
def run_record(cell: CellKey, variant: str, rnd: int = 0, tps: float = 500.0,
               **changes: Any) -> RunRecord:  # fmt: skip
    transactions = changes.pop("transactions", max(1, int(tps)))
    fields: dict[str, Any] = {
        "cell": cell, "round": rnd, "variant": variant, "session": "s",
        # A B, then B A: the order of the sides alternates by round.
        "position": 0 if (rnd % 2 == 0) == (variant == "plain") else 1,
        "started_at": "2026-11-26T04:00:00+00:00", "wall_s": 1.0, "tps": tps, "qps": None,
        "transactions": transactions, "ignored_errors": 0, "reconnects": 0,
        "latency_avg_ms": 1000 / tps, "latency_p95_ms": None, "latency_max_ms": None,
        "server_cpu_s": 0.5, "cpu_ms_per_txn": 500 / max(1, transactions),
        "bp_read_requests": None, "bp_reads": None, "pages_read": None, "pages_written": None,
        "client_cpu_s": 0.2, "harness_cpu_s": 0.01, "other_cpu_s": 0.0,
        "steal_s": 0.0, "group_cache_bytes": 200 * MIB, "group_shmem_bytes": 130 * MIB,
        "page_cache_mb": 70.0, "memory_limit_bytes": 384 * MIB,
        "data_bytes": 1500 * MIB, "device": "/dev/loop7", "raw_output": "raw/x.txt",
    }  # fmt: skip
    fields.update(changes)
    return RunRecord(**fields)


IO_TPCB = pg_cell("io-bound", "tpcb_like", 1)


def test_a_record_reads_back_as_it_was_written() -> None:
    record = run_record(IO_TPCB, "encrypted", checkpoint_s=0.2)
    data = json.loads(json.dumps(record.to_json()))
    assert data["cell"]["kind"] == "postgresql" and data["schema"] == 1
    assert RunRecord.from_json(data) == record
    # What a kind does not give is left out of its line, and reads back as None.
    read = run_record(IO_TPCB, "encrypted")
    assert "checkpoint_s" not in read.to_json()
    assert RunRecord.from_json(read.to_json()).checkpoint_s is None
    assert record.cache_share_of_data == pytest.approx(70 / 1500)
    assert record.hit_ratio is None and record.pages_read_per_txn is None
    with pytest.raises(ValueError, match="impossible run"):
        run_record(IO_TPCB, "plain", transactions=0)


def test_a_line_of_the_earlier_pg_at_rest_file_reads_as_this_studys_record() -> None:
    from encbench.studies.at_rest.records import from_pg_at_rest

    line = json.loads((GOLDEN_OLD / "pg-at-rest.jsonl").read_text().splitlines()[0])
    record = RunRecord.from_json(from_pg_at_rest(line))
    assert record.cell == pg_cell(line["cell"]["regime"], line["cell"]["workload"],
                                  line["cell"]["clients"])  # fmt: skip
    assert (record.tps, record.transactions, record.ignored_errors) == (
        line["tps"], line["transactions"], line["failed"]
    )  # fmt: skip
    assert record.page_cache_mb == pytest.approx(line["page_cache_bytes"] / MIB)
    assert record.cell.label == "{regime} {workload} {clients} cl".format(**line["cell"])


def test_every_run_is_proven_on_its_image_and_io_bound_below_the_data() -> None:
    proof.check_run(run_record(IO_TPCB, "plain"), "/dev/loop7")
    with pytest.raises(ProofError, match="not on its image's /dev/loop3"):
        proof.check_run(run_record(IO_TPCB, "plain"), "/dev/loop3")
    held_all = run_record(IO_TPCB, "encrypted", page_cache_mb=1600.0)
    with pytest.raises(ProofError, match="not io-bound"):
        proof.check_run(held_all, "/dev/loop7")
    in_memory = pg_cell("in-memory", "tpcb_like", 1)
    proof.check_run(run_record(in_memory, "plain", page_cache_mb=1600.0), "/dev/loop7")


# -- report -----------------------------------------------------------------------------------
TINY = load("clients = [1]\nscale = 64")
FILESYSTEM = {
    "policy": {"version": 2, "contents": "AES-256-XTS", "filenames": "AES-256-CTS"},
    "image_mib": 2048, "mkfs": "mkfs.ext4 -O encrypt", "mount_options": "nodev,nosuid",
    "loop_direct_io": {"plain": True, "encrypted": True}, "cpu_aes": True,
    "ciphers": [{"role": "contents", "mode": "AES-256-XTS", "algorithm": "xts(aes)",
                 "driver": "xts(ecb(aes-generic))", "priority": 100, "aes_ni": False}],
    "proofs": {"plain": {"explanation": "marker found in the raw image"},
               "encrypted": {"explanation": "marker absent", "example_without_key": "AbC"}},
    "key": "removed",
}  # fmt: skip
RECORD = {
    "postgresql_version": "15.14", "scale": 64, "server_user": "postgres",
    "data_bytes": {"plain": 1000 * MIB, "encrypted": 1000 * MIB},
    "regimes": {"in-memory": {"shared_buffers_mb": 1314, "memory_limit_mb": 1570,
                              "cgroup_version": 1,
                              "servers": {"plain": {"prewarmed_blocks": 128000}}},
                "io-bound": {"shared_buffers_mb": 128, "memory_limit_mb": 384,
                             "cgroup_version": 1, "servers": {}}},
    "filesystem": FILESYSTEM,
}  # fmt: skip


def fake_runs(rounds: int = 12, seed: int = 3) -> list[RunRecord]:
    rng = random.Random(seed)
    runs = []
    for cell in options.cells(TINY):
        cost = 0.2 if cell.regime == "io-bound" else 0.0
        for r in range(rounds):
            for variant in ("plain", "encrypted"):
                factor = 1 - cost if variant == "encrypted" else 1.0
                tps = 800 * factor * rng.uniform(0.99, 1.01)
                # A write run's CHECKPOINT after pgbench, inside its window: longer on fs.
                checkpoint = (0.4 if variant == "encrypted" else 0.1) if cell.workload == (
                    "tpcb_like") else None  # fmt: skip
                runs.append(run_record(cell, variant, r, tps, checkpoint_s=checkpoint))
    return runs


def pg_at_rest_part(runs: list[RunRecord] | None = None, prof: Any = None) -> AtRestSummary:
    """The study's part built from made-up PostgreSQL records, as the report builds it."""
    prof = prof or TINY
    return at_rest_summary.build(runs or fake_runs(), prof, None, None, pg_record=RECORD)


def labelled(part: AtRestSummary) -> dict[str, Any]:
    return {section.label(c): c for c in part.cells}


def test_the_report_has_a_table_per_regime_with_the_cost_of_fscrypt_and_its_proof() -> None:
    part = pg_at_rest_part()
    by_label = labelled(part)
    io = by_label["io-bound tpcb_like 1 cl"].comparisons["tps"]
    assert io.overhead_pct == pytest.approx(20, abs=2) and io.kind == "cost"
    assert by_label["in-memory select_only 1 cl"].comparisons["tps"].kind != "cost"
    text = markdown.render(Document("t", section.sections(part, part.cells, alone=True)))
    assert section.TITLE in text
    assert "In memory: the data in shared_buffers" in text
    assert "Io-bound: the data well above shared_buffers and the page cache" in text
    assert "| lost to fscrypt (95% CI) |" in text
    # The page cache each group held, against the data its runs measured (70 of 1,500 MiB).
    assert "70 / 70 (at most 5% of the data)" in text
    # Server CPU per transaction (0.5 s over about 640 or 800 txn), with its CHECKPOINT.
    assert "| server CPU ms per transaction, fs / plain |" in text
    assert "0.780 / 0.624 (CHECKPOINT 0.40 / 0.10 s)" in text
    assert "Checkpoints: every run began after a CHECKPOINT" in text
    assert "driver `xts(ecb(aes-generic))`" in text and "does not use AES-NI here" in text
    assert "e.g. `AbC`" in text and "The fscrypt key at the end: removed." in text
    compared = at_rest_report.PART.compared(part)
    assert compared[0].key == (
        "at-rest",
        "tpcb_like",
        "in-memory, filesystem (fscrypt)",
        1,
        "postgresql",
    )
    assert compared[0].group == "PostgreSQL at rest: in-memory"
    assert len(compared) == 4


def test_a_run_of_the_study_gets_its_report_from_the_results_directory(tmp_path: Path) -> None:
    text = f'name = "t"\n{POSTGRESQL}[pg_at_rest]\nclients = [2]\nscale = 64\n'
    prof = profiles.parse(text, "t")
    store = ResultStore.create(tmp_path / "out", "t", text)
    found = options.cells(prof)
    for r in range(2):
        for cell in found:
            for variant in ("plain", "encrypted"):
                store.append(run_record(cell, variant, r))
    store.write_json("pg-at-rest.json", RECORD)
    summary = rendering.build_summary(store, prof)
    part = summary.part("at-rest")
    assert [c.rounds for c in part.cells] == [2] * len(found)
    again = rendering.read_summary(json.loads(json.dumps(summary.to_json())), "t")
    assert again.part("at-rest") == part
    # A PostgreSQL run's setup names its server's version, and no MariaDB and no sysbench,
    # which it never ran.
    store.write_json("environment.json", {
        "os": "Debian", "kernel": "6.1", "mariadb": "10.11", "openssl": "OpenSSL 3.0",
        "sysbench": "1.0.20", "cpu": {"model": "x", "cores": 2, "flags": {"aes": True}},
    })  # fmt: skip
    rendering.render_documents(store, prof)
    software = next(
        line for line in (store.path / "report.md").read_text().splitlines() if "Software:" in line
    )
    assert software == "- Software: Debian, kernel 6.1, PostgreSQL 15.14, OpenSSL 3.0."


def test_without_root_the_study_is_left_out_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from encbench import studies
    from encbench.servers import fscrypt

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(
        fscrypt, "unavailable", lambda: "the filesystem layer needs root (a loop device)"
    )
    prof = load("scale = 64")
    why = studies.unavailable_studies(prof)["at-rest"]
    assert "needs root (a loop device)" in why and "memory cgroups need root" in why
    assert studies.left_out(prof, {"at-rest": why}) == {"at-rest": why}


# -- one study over both kinds ------------------------------------------------------------------
GOLDEN_OLD = GOLDEN_ROOT / "pg-at-rest"


def builtin(name: str) -> profiles.Profile:
    return profiles.load(name)[0]


@pytest.mark.parametrize(
    ("studies_line", "server", "studies_read", "kinds"),
    [
        ('["pg-at-rest"]', "", ["at-rest"], ["postgresql"]),
        ('["at-rest", "pg-at-rest"]', "", ["at-rest"], ["mariadb", "postgresql"]),
        ('["pg-in-transit", "pg-at-rest"]', "", ["in-transit", "at-rest"], ["postgresql"]),
        (
            '["pg-at-rest"]',
            '[server]\nkinds = ["mariadb"]\n',
            ["at-rest"],
            ["mariadb", "postgresql"],
        ),
    ],
)
def test_a_profile_that_lists_pg_at_rest_is_read_as_the_at_rest_study_on_postgresql(
    studies_line: str, server: str, studies_read: list[str], kinds: list[str]
) -> None:
    prof = profiles.parse(f'name = "t"\nstudies = {studies_line}\n{server}', "t")
    assert prof.studies == studies_read and prof.server.kinds == kinds
    assert len(options.cells(prof)) == 8


def test_the_at_rest_study_measures_each_kind_that_server_kinds_names() -> None:
    from encbench.studies.at_rest.cells import cells as mariadb_cells

    both = builtin("at-rest-servers")
    assert both.studies == ["at-rest"] and both.server.kinds == ["mariadb", "postgresql"]
    assert len(mariadb_cells(both)) == 8 and len(options.cells(both)) == 4
    assert len(at_rest.STUDY.cells(both)) == 12
    rule = at_rest.STUDY.rule(both)
    # Each cell runs by its own kind's section (a budget of 42 s MariaDB's, 60 s PostgreSQL's).
    budgets = {rule.for_cell(c).cell_budget_s for c in at_rest.STUDY.cells(both)}
    assert budgets == {42, 60}
    postgresql = builtin("pg-at-rest-tiny")
    assert mariadb_cells(postgresql) == [] and len(options.cells(postgresql)) == 4
    assert at_rest.STUDY.listed_in(postgresql) == "at-rest"
    # The plan and the report's Setup see PostgreSQL's section alone.
    assert at_rest.STUDY.rule(postgresql).cell_budget_s == 30
    assert at_rest.STUDY.here.optional(postgresql) and not at_rest.STUDY.here.optional(both)


def test_one_runner_measures_mariadbs_cells_then_postgresqls(tmp_path: Path) -> None:
    from encbench import studies
    from encbench.engine.progress import RunProgress
    from encbench.studies.at_rest.study import AtRestStudy

    def kinds(name: str) -> list[str]:
        prof = builtin(name)
        store = ResultStore.create(tmp_path / name, name, "")
        found = [s for s in studies.build_studies(store, prof, RunProgress(1.0))]
        [runner] = [s for s in found if s.name == "at-rest"]
        assert isinstance(runner, AtRestStudy)
        return list(dict.fromkeys(c.kind for c in runner.cells()))

    assert kinds("at-rest-servers") == ["mariadb", "postgresql"]
    assert kinds("pg-at-rest-tiny") == ["postgresql"]
    assert kinds("quick") == ["mariadb"]


def test_beside_mariadb_a_machine_without_root_leaves_the_postgresql_cells_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from encbench.engine.study import CellSkipped

    monkeypatch.setattr(needs, "unavailable", lambda profile: "memory cgroups need root")
    prof = builtin("at-rest-servers")
    store = ResultStore.create(tmp_path / "out", "t", "")
    [runner] = at_rest.STUDY.runners(store, prof, rendering_progress())
    first = next(c for c in runner.cells() if c.kind == "postgresql")
    with (
        runner.setup(runner.cells()),
        pytest.raises(CellSkipped, match="memory cgroups need root"),
        runner.open_cell(first),
    ):
        pass
    assert not (store.path / "pg-volumes").exists()


def rendering_progress() -> Any:
    from encbench.engine.progress import RunProgress

    return RunProgress(1.0)


def test_results_written_by_the_pg_at_rest_study_still_open_in_report_and_compare(
    tmp_path: Path, state_dir: Path
) -> None:
    """Written when PostgreSQL's at-rest cells were a study of their own (pg-at-rest.jsonl,
    pg-at-rest.json, a summary with a pg-at-rest part): `report` renders them again as the
    at-rest study's, every cell with the rounds it had; `compare` builds their summary
    again from the runs and matches their cells with those written now."""
    # state_dir: this machine's calibration, if it has one, is not the golden report's.
    old = tmp_path / "old"
    shutil.copytree(GOLDEN_OLD, old, ignore=shutil.ignore_patterns("README.md"))
    result = encbench_here("report", str(old))
    assert result.returncode == 0, result.stderr
    before = json.loads((GOLDEN_OLD / "summary.json").read_text())["studies"]["pg-at-rest"]
    now = json.loads((old / "summary.json").read_text())["studies"]["at-rest"]
    assert [c["rounds"] for c in now["cells"]] == [c["rounds"] for c in before["cells"]]
    assert {c["kind"] for c in now["cells"]} == {"postgresql"}
    assert now["postgresql"]["postgresql_version"] == before["postgresql_version"]
    # Each cell's cost as it was reported then.
    assert [c["comparisons"]["tps"]["overhead_pct"] for c in now["cells"]] == pytest.approx(
        [c["comparisons"]["tps"]["overhead_pct"] for c in before["cells"]]
    )
    report = (old / "report.md").read_text()
    assert section.TITLE in report and "lost to fscrypt" in report
    # Its summary as it was written, against the one written now.
    compared = encbench_here("compare", str(GOLDEN_OLD), str(old), "--out", str(tmp_path / "c"))
    assert compared.returncode == 0, compared.stderr
    text = (tmp_path / "c" / "comparison.md").read_text()
    assert "PostgreSQL at rest: io-bound" in text and "| PostgreSQL | 15.14 | 15.14 |" in text
    assert "only in" not in text


def beside_mariadb(mariadb: Any, postgresql: AtRestSummary) -> AtRestSummary:
    """MariaDB's cells of a summary, and PostgreSQL's of another: one part of the study."""
    cells = [*mariadb.cells, *postgresql.cells]
    return mariadb.model_copy(update={"cells": cells, "postgresql": postgresql.postgresql})


def test_one_profile_puts_both_kinds_side_by_side_across_servers() -> None:
    from encbench.report import documents
    from tests.report.test_html_report import golden_summary

    prof = load('workloads = ["oltp_read_only"]\nregimes = ["in-memory"]\nclients = [1, 16]')
    runs = [
        run_record(cell, variant, r, 800 * (0.8 if variant == "encrypted" else 1) + r)
        for cell in options.cells(prof)
        for r in range(6)
        for variant in ("plain", "encrypted")
    ]
    pg = pg_at_rest_part(runs, prof)
    parts = {"at-rest": beside_mariadb(golden_summary().part("at-rest"), pg)}
    environment = golden_summary().environment
    summary = documents.summarize("at-rest-servers", environment, parts)
    text = markdown.render(rendering.document(summary))
    across = text.split("## Across servers", 1)[1].split("\n## ", 1)[0]
    assert "PostgreSQL: filesystem (fscrypt)" in across and "MariaDB: TDE" in across
    assert "| oltp_read_only | in-memory | 16 |" in across
    # The setup names each kind's server with its version.
    mariadb = (golden_summary().part("at-rest").servers or {})["mariadb_version"]
    software = next(line for line in text.splitlines() if "Software:" in line)
    assert f"MariaDB {mariadb}" in software and "PostgreSQL 15.14" in software


def test_pg_cells_across_servers_carry_holms_mark_by_the_rule_mariadbs_do() -> None:
    """A PostgreSQL cost that still differs after Holm's adjustment over its part's cells
    is marked † in the table across servers, as MariaDB's are; one that does not, is not."""
    from encbench.report import documents
    from tests.report.test_html_report import golden_summary

    prof = load('workloads = ["oltp_read_only"]\nregimes = ["in-memory"]\nclients = [1, 16]')

    def across_row(rounds: int) -> str:
        jitter = random.Random(7)
        runs = [
            run_record(
                cell, variant, r, 800 * (0.8 if variant == "encrypted" else 1) + r + jitter.random()
            )
            for cell in options.cells(prof)
            for r in range(rounds)
            for variant in ("plain", "encrypted")
        ]
        pg = pg_at_rest_part(runs, prof)
        parts = {"at-rest": beside_mariadb(golden_summary().part("at-rest"), pg)}
        summary = documents.summarize("at-rest-servers", golden_summary().environment, parts)
        text = markdown.render(rendering.document(summary))
        across = text.split("## Across servers", 1)[1].split("\n## ", 1)[0]
        row = next(
            line for line in across.splitlines() if "| oltp_read_only | in-memory | 1 |" in line
        )
        survives = pg.cells[0].comparisons["tps"].differs_holm
        assert row.rstrip(" |").endswith("†") == bool(survives), row
        return row

    # Too few blocks for Holm's threshold: a cost, no mark; enough: the mark.
    assert not across_row(12).rstrip(" |").endswith("†")
    assert across_row(30).rstrip(" |").endswith("†")


def test_pg_at_rest_beside_another_study_of_several_kinds_is_refused_with_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses

    from encbench import studies

    several = [
        dataclasses.replace(s, kinds=("mariadb", "postgresql")) if s.name == "in-transit" else s
        for s in studies.STUDIES
    ]
    monkeypatch.setattr(profiles._REGISTRY, "studies", tuple(several))
    with pytest.raises(BadInput) as refused:
        profiles.parse('name = "t"\nstudies = ["in-transit", "pg-at-rest"]\n', "t.toml")
    message = str(refused.value)
    assert message.startswith("t.toml: studies: ") and "\n" not in message
    assert 'list "at-rest" instead and give [server] kinds' in message
