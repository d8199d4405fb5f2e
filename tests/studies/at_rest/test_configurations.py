"""Encryption algorithm and scope as dimensions of the at-rest study: one value fixes them
for the run (cells, records and summary.json exactly as before); several make one cell per
configuration, measured on a fresh pair of servers per configuration."""

from __future__ import annotations

import itertools

import pytest

from encbench.errors import BadInput
from encbench.profiles import profile
from encbench.servers.variants import EncryptionSpec
from encbench.studies.at_rest import cells
from encbench.studies.at_rest.models import AtRestCell
from encbench.studies.at_rest.records import CellKey, RunRecord

BASE = 'name = "x"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["in-memory"]\n'
BASE += "threads = [1, 4]\n"


def test_one_value_fixes_the_configuration_and_cells_are_named_as_before() -> None:
    prof = profile.parse(BASE + '[server]\nencryption_scope = "all"\n', "p")
    assert prof.server.encryption_scope == ["all"]
    assert not prof.server.dimensions
    found = cells.cells(prof)
    assert found == [
        CellKey("oltp_read_only", "in-memory", 1),
        CellKey("oltp_read_only", "in-memory", 4),
    ]
    assert found[0].slug == "oltp_read_only-in-memory-t1"
    assert cells.configuration(found[0], prof) == EncryptionSpec("AES_CTR", "all")


def test_lists_make_one_cell_per_configuration_grouped_by_configuration() -> None:
    toml = BASE + '[server]\nencryption_algorithm = ["AES_CTR", "AES_CBC"]\n'
    toml += 'encryption_scope = ["tables", "all"]\n'
    prof = profile.parse(toml, "p")
    assert prof.server.dimensions and prof.server.binary_log
    found = cells.cells(prof)
    assert len(found) == 8
    # Configurations change only between runs of cells: a fresh pair each, never back.
    order = [cells.configuration(c, prof) for c in found]
    entered = [order[0]] + [b for a, b in itertools.pairwise(order) if a != b]
    assert len(entered) == len(set(entered)) == 4
    assert found[0].label == "oltp_read_only in-memory AES_CTR tables 1 thr"
    assert found[-1].slug == "oltp_read_only-in-memory-AES_CBC-all-t4"
    assert cells.configuration(found[-1], prof) == EncryptionSpec("AES_CBC", "all")


def test_scope_tables_alone_writes_no_binlog_unless_asked() -> None:
    assert not profile.parse(BASE, "p").server.binary_log
    assert profile.parse(BASE + "[server]\nbinlog = true\n", "p").server.binary_log


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ('encryption_scope = ["tables", "disk"]', "unknown encryption scope 'disk'; choose"),
        ('encryption_algorithm = "AES_GCM"', "unknown encryption algorithm 'AES_GCM'; choose"),
        ('encryption_scope = ["all", "all"]', '"all" is listed twice'),
        ("encryption_scope = []", "server.encryption_scope"),
        ("binlog = 1", "server.binlog: expected true or false"),
    ],
)
def test_bad_configurations_are_refused_in_one_line(server: str, message: str) -> None:
    with pytest.raises(BadInput, match=message) as err:
        profile.parse(BASE + f"[server]\n{server}\n", "p")
    assert "\n" not in str(err.value)


def test_profiling_the_cpu_needs_one_algorithm() -> None:
    toml = BASE.replace("[measure]\n", "[measure]\nprofile_cpu = true\n")
    toml += '[server]\nencryption_algorithm = ["AES_CTR", "AES_CBC"]\n'
    with pytest.raises(BadInput, match="profile one algorithm at a time"):
        profile.parse(toml, "p")


def _record(cell: CellKey) -> RunRecord:
    return RunRecord(
        cell=cell, round=1, variant="plain", position=0, session="s", started_at="t",
        wall_s=1.0, tps=10.0, qps=100.0, transactions=10, ignored_errors=0, reconnects=0,
        latency_avg_ms=1.0, latency_p95_ms=2.0, latency_max_ms=3.0, server_cpu_s=0.1,
        cpu_ms_per_txn=10.0, harness_cpu_s=0.0, bp_read_requests=0, bp_reads=0, pages_read=0,
        pages_written=0, raw_output="raw/x",
    )  # fmt: skip


def test_records_of_one_configuration_are_written_as_before_and_others_carry_theirs() -> None:
    plain_cell = CellKey("oltp_read_only", "in-memory", 1)
    line = _record(plain_cell).to_json()
    assert line["cell"] == {"workload": "oltp_read_only", "regime": "in-memory", "threads": 1}
    assert RunRecord.from_json(line).cell == plain_cell
    dim = CellKey("oltp_read_only", "in-memory", 1, algorithm="AES_CBC", scope="all")
    line = _record(dim).to_json()
    assert line["cell"]["scope"] == "all"
    assert RunRecord.from_json(line).cell == dim


def test_summary_cells_name_their_configuration_only_when_it_varies() -> None:
    one = AtRestCell(workload="w", regime="io-bound", threads=1, rounds=0, measured_s=0, status="")
    assert "scope" not in one.model_dump(mode="json") and one.setting == "io-bound"
    dim = one.model_copy(update={"algorithm": "AES_CBC", "scope": "all"})
    assert dim.model_dump(mode="json")["scope"] == "all"
    assert dim.setting == "io-bound, AES_CBC, scope all"
    assert AtRestCell.model_validate(dim.model_dump(mode="json")) == dim


def test_the_rds_tde_tiny_profile_reads_and_writes_at_both_concurrencies_per_scope() -> None:
    """The built-in profile's cells, by the real parser: its integration test
    (tests/integration/test_write_path.py) runs only oltp_insert at 4 threads of it."""
    tiny, _ = profile.load("alibaba-rds-tde-tiny")
    assert tiny.server.binlog is True
    assert cells.cells(tiny) == [
        CellKey(workload, "io-bound", threads, algorithm="AES_CTR", scope=scope)
        for scope in ("tables", "all")
        for workload in ("oltp_read_only", "oltp_insert")
        for threads in (1, 4)
    ]


def test_scope_all_against_scope_tables_is_a_configuration_of_its_own() -> None:
    """encryption_against = ["plain", "tables"]: each scope against plain, and scope all
    against scope tables, each on its own pair; the last cells say so."""
    toml = BASE + '[server]\nencryption_scope = ["tables", "all"]\n'
    toml += 'encryption_against = ["plain", "tables"]\n'
    prof = profile.parse(toml, "p")
    assert prof.server.dimensions
    assert cells.configurations(prof) == [
        EncryptionSpec("AES_CTR", "tables"),
        EncryptionSpec("AES_CTR", "all"),
        EncryptionSpec("AES_CTR", "all", against="tables"),
    ]
    found = cells.cells(prof)
    assert len(found) == 6
    last = found[-1]
    assert last == CellKey("oltp_read_only", "in-memory", 4, "AES_CTR", "all", against="tables")
    assert last.label == "oltp_read_only in-memory AES_CTR all against tables 4 thr"
    assert last.slug == "oltp_read_only-in-memory-AES_CTR-all-against-tables-t4"
    spec = cells.configuration(last, prof)
    assert spec.label == "AES_CTR, scope all against scope tables"
    assert spec.control == EncryptionSpec("AES_CTR", "tables")
    assert cells.configuration(found[0], prof).control is None
    # A record of such a cell reads back as it was written.
    line = _record(last).to_json()
    assert line["cell"]["against"] == "tables"
    assert RunRecord.from_json(line).cell == last


def test_against_tables_alone_measures_only_the_paired_cells() -> None:
    toml = BASE + '[server]\nencryption_scope = "all"\nencryption_against = "tables"\n'
    prof = profile.parse(toml, "p")
    assert cells.configurations(prof) == [EncryptionSpec("AES_CTR", "all", against="tables")]
    assert [c.against for c in cells.cells(prof)] == ["tables", "tables"]


@pytest.mark.parametrize(
    "server",
    [
        'encryption_against = "tables"',  # scope tables alone
        'encryption_scope = "all"\nencryption_layer = "fs"\nencryption_against = "tables"',
    ],
)
def test_against_tables_needs_scope_all_under_tde(server: str) -> None:
    with pytest.raises(BadInput, match='encryption_against = "tables" measures scope all') as err:
        profile.parse(BASE + f"[server]\n{server}\n", "p")
    assert "\n" not in str(err.value)


def test_against_tables_alone_cannot_leave_other_configurations_out() -> None:
    server = 'encryption_scope = ["tables", "all"]\nencryption_against = "tables"'
    with pytest.raises(BadInput, match='alone measures only scope all under TDE: add "plain"'):
        profile.parse(BASE + f"[server]\n{server}\n", "p")


def test_against_tables_is_refused_in_an_a_a_calibration() -> None:
    toml = BASE.replace('name = "x"\n', 'name = "x"\ncalibration = true\n')
    toml += '[server]\nencryption_scope = "all"\nencryption_against = "tables"\n'
    with pytest.raises(BadInput, match=r"measures plain against plain: server\.encryption_against"):
        profile.parse(toml, "p")


def test_against_tables_is_refused_on_a_target() -> None:
    toml = BASE + '[server]\nencryption_scope = "all"\nencryption_against = "tables"\n'
    toml += '[target]\nhost = "127.0.0.1"\nuser = "u"\n'
    with pytest.raises(BadInput, match='encryption_against takes "plain"'):
        profile.parse(toml, "p")


def test_an_unknown_side_to_measure_against_is_named_with_the_choices() -> None:
    with pytest.raises(BadInput, match="unknown side to measure against 'tabels'; choose"):
        profile.parse(BASE + '[server]\nencryption_against = "tabels"\n', "p")
