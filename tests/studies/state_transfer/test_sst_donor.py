"""The state-transfer study as a DBA lives it: the donor's own service under a light load
while it serves the transfer, mariabackup's time to Synced less the donor's pause, and a
donor encrypted at rest — their options, records, summary and report, from fake records."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from encbench.commands import plan
from encbench.errors import BadInput
from encbench.profiles.profile import Profile, parse
from encbench.report import markdown
from encbench.report.tables import Document
from encbench.studies.state_transfer import donor_load, sstlog
from encbench.studies.state_transfer import section as sst_section
from encbench.studies.state_transfer import summary as sst_summary
from encbench.studies.state_transfer.options import state_transfer_options
from encbench.studies.state_transfer.records import SstCell, SstRecord


def a_profile(extra: str = "") -> Profile:
    return parse(f'name = "sst"\nstudies = ["state-transfer"]\n{extra}', "p.toml")


# -- options -----------------------------------------------------------------------------------
def test_the_donor_load_is_off_unless_asked_and_takes_its_settings() -> None:
    spec = state_transfer_options(a_profile())
    assert spec.donor_load_threads == 0 and not spec.donor_encrypted_at_rest
    spec = state_transfer_options(
        a_profile(
            "[state_transfer]\ndonor_load_threads = 2\ndonor_load_rate = 300\n"
            'donor_load_workload = "oltp_point_select"\ndonor_load_before_s = 4\n'
            "donor_encrypted_at_rest = true\n"
        )
    )
    assert (spec.donor_load_threads, spec.donor_load_rate, spec.donor_load_before_s) == (2, 300, 4)
    assert spec.donor_load_workload == "oltp_point_select" and spec.donor_encrypted_at_rest


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("donor_load_threads = -1", "-1 is out of range; use 0 to 64"),
        ("donor_load_threads = 65", "65 is out of range; use 0 to 64"),
        (
            'donor_load_workload = "oltp_write_only"',
            'choose from "oltp_read_only", "oltp_point_select"',
        ),
        ("donor_load_before_s = 1", "1 is out of range; use 2 to 600"),
        ("donor_load_rate = -5", "-5 is out of range; use 0 to 1000000"),
        ('methods = ["tar"]\ndonor_load_threads = 2', "has none: add mariabackup or rsync"),
    ],
)
def test_bad_donor_settings_are_refused(line: str, fragment: str) -> None:
    with pytest.raises(BadInput, match=fragment):
        a_profile(f"[state_transfer]\n{line}\n")


# -- the load's windows --------------------------------------------------------------------------
REPORTS = "\n".join(
    [
        "Threads started!",
        "",
        *(
            f"[ {at}s ] thds: 2 tps: {tps:.2f} qps: {tps * 14:.2f} (r/w/o: 1/0/1) "
            f"lat (ms,95%): {p95:.2f} err/s: 0.00 reconn/s: 0.00"
            for at, tps, p95 in [
                (1, 50.0, 9.0),  # the ramp
                (2, 100.0, 1.0),
                (3, 110.0, 1.2),
                (4, 90.0, 1.1),
                (5, 40.0, 5.0),  # straddles the transfer's start at 4.5 s
                (6, 60.0, 3.0),
                (7, 50.0, 4.0),
                (8, 70.0, 8.0),
                (9, 100.0, 1.0),  # after the transfer's end at 8.2 s
            ]
        ),
        "[ 3s ] queue length: 0, concurrency: 1",
    ]
)


def test_each_window_counts_only_its_whole_seconds() -> None:
    reports = donor_load.seconds(REPORTS)
    assert [r.at for r in reports] == list(range(1, 10))
    before = donor_load.window(reports, donor_load.RAMP_S, 4.5)
    assert before.tps == pytest.approx(100.0) and before.p95_ms == pytest.approx(1.1)
    during = donor_load.window(reports, 4.5, 8.2)
    assert during.tps == pytest.approx(60.0) and during.p95_ms == pytest.approx(4.0)
    assert donor_load.window(reports, 4.5, 5.2) == donor_load.Figures(None, None)


def test_the_load_is_read_only_rate_limited_and_reports_every_second() -> None:
    from encbench.servers.target import Connection

    conn = Connection.unix(Path("/nonexistent/donor.sock"), "root", "sbtest")
    argv = donor_load.argv(
        conn, "oltp_point_select", threads=2, rate=300, tables=4, table_size=1000
    )
    assert argv[-2:] == ["oltp_point_select", "run"]
    assert "--report-interval=1" in argv and "--rate=300" in argv and "--threads=2" in argv
    assert "--mysql-socket=/nonexistent/donor.sock" in argv and "--tables=4" in argv
    unlimited = donor_load.argv(conn, "oltp_read_only", threads=1, rate=0, tables=1, table_size=1)
    assert not any(a.startswith("--rate") for a in unlimited)


# -- records, summary and report -----------------------------------------------------------------
def a_record(
    cell: SstCell, variant: str, round_: int, sync_s: float, during: float | None
) -> SstRecord:
    encrypted = variant == "encrypted"
    transport = {"rsync": ("stunnel", "rsync plain")}.get(
        cell.method, ("socat openssl", "socat plain")
    )[0 if encrypted else 1]
    return SstRecord(
        cell=cell,
        round=round_,
        variant=variant,
        position=0,
        session="s",
        started_at="2026-11-23T00:00:00+00:00",
        wall_s=sync_s + 1,
        sync_s=sync_s,
        transfer_s=sync_s / 4,
        link_rx_bytes=100 * 2**20,
        link_tx_bytes=2**20,
        donor_cpu_s=1.0,
        joiner_cpu_s=2.0,
        harness_cpu_s=0.01,
        other_cpu_s=0.0,
        steal_s=0.0,
        interference_pct=0.0,
        donor_transport=transport,
        joiner_transport=transport,
        stages={sstlog.PAUSE_STAGE: 10.0, sstlog.STREAM_STAGE: sync_s / 4},
        donor_tps_before=None if during is None else 200.0,
        donor_tps_during=during,
        donor_p95_before_ms=None if during is None else 1.5,
        donor_p95_during_ms=None if during is None else 6.0,
    )


def test_sync_less_the_pause_is_mariabackups_alone_and_round_trips() -> None:
    backup = a_record(SstCell("mariabackup", "TLSv1.3"), "plain", 1, 14.0, 150.0)
    assert backup.sync_less_pause_s == pytest.approx(4.0)
    data = backup.to_json()
    assert data["sync_less_pause_s"] == pytest.approx(4.0)
    assert SstRecord.from_json(data) == backup
    assert a_record(SstCell("rsync"), "plain", 1, 14.0, None).sync_less_pause_s is None
    assert replace(backup, stages={}).sync_less_pause_s is None  # the pause not logged
    old = {k: v for k, v in backup.to_json().items() if not k.startswith("donor_tps")}
    assert SstRecord.from_json(old).donor_tps_during is None  # a line from before the load


def rounds(
    cell: SstCell, plain: tuple[float, float], encrypted: tuple[float, float] | None
) -> list[SstRecord]:
    """Four rounds in blocks of A B / B A: (sync_s, donor TPS during) per variant."""
    runs = []
    for r in range(4):
        order = ("plain", "encrypted") if r in (0, 3) else ("encrypted", "plain")
        for v in order:
            sync, during = plain if v == "plain" else (encrypted or plain)
            runs.append(a_record(cell, v, r + 1, sync, during if encrypted else None))
    return runs


def test_the_report_shows_the_donors_service_and_mariabackups_time_less_its_pause() -> None:
    profile = a_profile(
        '[state_transfer]\nmethods = ["mariabackup", "rsync"]\nmin_rounds = 2\n'
        "donor_load_threads = 2\ndonor_load_rate = 300\n"
    )
    backup, rsync = SstCell("mariabackup", "TLSv1.3"), SstCell("rsync")
    runs = rounds(backup, (14.0, 160.0), (16.0, 120.0)) + rounds(rsync, (5.0, 180.0), (6.0, 150.0))
    load = {"workload": "oltp_read_only", "threads": 2, "rate_tps": 300, "before_s": 5}
    part = sst_summary.build(runs, profile, {"proofs": {}, "donor_load": load})
    by_method = {c.method: c for c in part.cells}
    # Encrypted, the donor served 25% fewer transactions during mariabackup's transfer: a
    # cost of +25%, as every figure's cost reads (positive: encryption made it worse).
    served = by_method["mariabackup"].comparisons["donor_tps_during"]
    assert served.overhead_pct == pytest.approx(25.0)
    # Less the pause (10 s both): 4 s against 6 s, +50%, where to Synced was +14.3%.
    less = by_method["mariabackup"].comparisons["sync_less_pause_s"]
    assert less.overhead_pct == pytest.approx(50.0)
    assert "sync_less_pause_s" not in by_method["rsync"].comparisons
    variants = by_method["rsync"].variants
    assert variants is not None and variants.plain.sync_less_pause_s is None
    assert variants.encrypted.donor_tps_during is not None
    text = markdown.render(Document("t", sst_section.sections(part)))
    assert "The donor's own clients while it serves the transfer" in text
    assert "-20.0% / -40.0%" in text  # mariabackup's drop from 200 TPS: plain / encrypted
    assert "-10.0% / -25.0%" in text  # rsync's
    assert "1.50 → 6.00" in text
    assert "+25.0%" in text
    assert "rate-limited to 300 transactions/s" in text
    assert "less the donor's fixed pause" in text and "+50.0%" in text


def test_without_the_load_the_report_has_no_donor_table() -> None:
    profile = a_profile('[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\n')
    part = sst_summary.build(rounds(SstCell("rsync"), (5.0, 0.0), None), profile, {"proofs": {}})
    assert "donor_tps_during" not in part.cells[0].comparisons
    text = markdown.render(Document("t", sst_section.sections(part)))
    assert "donor's own clients" not in text and "less the donor's fixed pause" not in text


def test_the_set_up_says_the_donor_was_encrypted_at_rest_and_what_was_proven() -> None:
    profile = a_profile('[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\n')
    runs = rounds(SstCell("rsync"), (5.0, 0.0), None)
    plain = markdown.render(
        Document("t", sst_section.sections(sst_summary.build(runs, profile, {})))
    )
    assert "Encrypted at rest" not in plain
    found = {
        "key_management": "file_key_management",
        "algorithm": "AES_CTR",
        "donor_tables_encrypted": 3,
        "tables": 3,
        "marker_table": "not encrypted (ENCRYPTED=NO)",
    }
    part = sst_summary.build(runs, profile, {"at_rest": found})
    text = markdown.render(Document("t", sst_section.sections(part)))
    assert "Encrypted at rest, both variants" in text
    assert "the donor's 3 of 3 sysbench tables encrypted" in text
    assert "The marker table is not encrypted (ENCRYPTED=NO)" in text


def test_every_node_encrypts_with_one_private_key_file(tmp_path: Path) -> None:
    from encbench.studies.state_transfer import at_rest

    first, again = at_rest.options(tmp_path), at_rest.options(tmp_path)
    assert first == again  # one key file for every node
    key = Path(first["file_key_management_filename"])
    assert key.parent == tmp_path / "private" and key.stat().st_mode & 0o777 == 0o600
    assert (
        first["innodb_encrypt_tables"] == "ON" and first["plugin_load_add"] == "file_key_management"
    )


# -- a method's own budget ---------------------------------------------------------------------
def test_a_method_with_a_budget_of_its_own_runs_and_plans_by_it() -> None:
    profile = a_profile(
        '[state_transfer]\nmethods = ["mariabackup", "rsync"]\ncell_budget_s = 100\n'
        "method_budget_s = { mariabackup = 400 }\n"
    )
    spec = state_transfer_options(profile)
    backup, rsync = SstCell("mariabackup", "TLSv1.3"), SstCell("rsync")
    assert spec.for_cell(backup).cell_budget_s == 400
    assert spec.for_cell(rsync).cell_budget_s == 100 and spec.for_cell(rsync) is spec
    (sst,) = plan.study_plans(profile)
    assert sst.cells_s == [400.0, 100.0]  # no warm-up in this study
    text = "\n".join(plan.lines(profile))
    assert "2 cells of about 1 min 40 s to 6 min 40 s = 8 min 20 s" in text
    assert "(its own budget: 400 s)" in text
    # The report's status reads the cell's own budget: 6 rounds of 40 s end a 400 s cell.
    runs = [
        replace(r, wall_s=35.0)
        for r in rounds(backup, (14.0, 160.0), (16.0, 120.0))
        + rounds(backup, (14.0, 160.0), (16.0, 120.0))
    ]
    runs = [replace(r, round=i // 2 + 1) for i, r in enumerate(runs)]
    (cell,) = sst_summary.build(
        runs,
        a_profile(
            '[state_transfer]\nmethods = ["mariabackup"]\ncell_budget_s = 100\n'
            "method_budget_s = { mariabackup = 400 }\n"
        ),
        {"proofs": {}},
    ).cells
    assert cell.status.startswith("time budget (400 s)"), cell.status


def test_a_budget_for_a_method_the_profile_does_not_list_is_refused() -> None:
    with pytest.raises(BadInput, match="method_budget_s gives rsync a budget"):
        a_profile('[state_transfer]\nmethods = ["mariabackup"]\nmethod_budget_s = { rsync = 60 }\n')
