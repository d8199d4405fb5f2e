"""The write path on real servers: oltp_insert's rows are removed before the next
run so both variants keep the same data, and the alibaba-rds-tde smoke profile runs through the
CLI with the binary log on and both encryption scopes as a dimension, each on its own
proven pair of servers."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from encbench.servers import registry
from encbench.studies.at_rest import growth
from encbench.workloads import sysbench
from tests.helpers import encbench, start_plain_server


def test_rows_oltp_insert_added_are_removed_and_purged_before_the_next_run(
    tmp_path: Path, state_dir: Path
) -> None:
    trimmed_and_purged(tmp_path, "system")


def trimmed_and_purged(tmp_path: Path, install: str) -> None:
    """oltp_insert's rows deleted and purged, and the binary logs before the current one
    purged, on a server of `install` (tests/integration/test_write_path_mysql.py: MySQL)."""
    server = start_plain_server(tmp_path / "s", install=install, binlog=True)
    try:
        server.query(f"CREATE DATABASE {server.database}")
        conn = server.endpoint()
        sysbench.prepare(
            conn, tables=2, table_size=500, log=tmp_path / "prepare.log", timeout_s=120
        )
        server.query("FLUSH BINARY LOGS")
        sysbench.run(sysbench.invocation(
            conn, "oltp_insert", threads=2, time_s=1, log=tmp_path / "insert.log",
            options=sysbench.oltp_options(2, 500, "uniform"),
        ))  # fmt: skip

        def rows() -> int:
            return sum(
                int(server.query(f"SELECT COUNT(*) FROM {server.database}.sbtest{i}")[0][0])
                for i in (1, 2)
            )

        grown = rows()
        assert grown > 1000  # the run did insert
        assert growth.trim_inserted_rows(server, 2, 500) == grown - 1000
        assert rows() == 1000
        # purge finished: InnoDB's history holds nothing of these deletes
        history = server.query(
            "SELECT COUNT FROM information_schema.INNODB_METRICS "
            "WHERE NAME = 'trx_rseg_history_len'"
        )
        assert int(history[0][0]) == 0
        # the binary logs before the current one are gone, the current one kept
        before = [row[0] for row in server.query("SHOW BINARY LOGS")]
        assert len(before) >= 2
        growth.purge_binary_logs(server)
        assert [row[0] for row in server.query("SHOW BINARY LOGS")] == before[-1:]
    finally:
        server.destroy()


def seed_rds_tde_tiny_writes_only(directory: Path) -> Path:
    """alibaba-rds-tde-tiny with its growing write alone, at its high concurrency, and scope
    all against scope tables beside each against plain: the assertions below are about
    oltp_insert under both scopes with the binary log on.  oltp_read_only and
    the thread counts only add cells, which tests/studies/at_rest/test_configurations.py proves the
    real
    parser makes from the built-in profile (reads at rest run in most other tests here).
    No round is measured again for the machine's other load (mechanics, not noise, as
    tests/helpers.tiny_profile): nothing below counts the rounds."""
    tiny = (files("encbench.profiles.builtin") / "alibaba-rds-tde-tiny.toml").read_text()
    workloads = 'workloads = ["oltp_read_only", "oltp_insert"]\n'
    assert workloads in tiny and "\nthreads = [1, 4]\n" in tiny
    assert tiny.count("[measure]\n") == 1
    profile = directory / "alibaba-rds-tde-tiny-writes.toml"
    profile.write_text(
        tiny.replace('"alibaba-rds-tde-tiny"', '"alibaba-rds-tde-tiny-writes"')
        .replace(workloads, 'workloads = ["oltp_insert"]\n')
        .replace("\nthreads = [1, 4]\n", "\nthreads = [4]\n")
        .replace("[measure]\n", "[measure]\ninterference_max_pct = 100\n")
        .replace("binlog = true\n", 'binlog = true\nencryption_against = ["plain", "tables"]\n')
    )
    return profile


def test_the_rds_tde_smoke_profile_measures_both_scopes_with_the_binlog_on(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    result = encbench("run", str(seed_rds_tde_tiny_writes_only(tmp_path)), "--out", str(out))
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    scopes = {(r["cell"]["scope"], r["cell"].get("against", "")) for r in runs}
    assert scopes == {("tables", ""), ("all", ""), ("all", "tables")}
    inserts = [r for r in runs if r["cell"]["workload"] == "oltp_insert"]
    # The steady design: no flush; both at once; each run with its series and its state.
    assert inserts and all(r["cpu_window"] == "event loop, steady state" for r in inserts)
    assert all(r["write_window"] == "steady" and r["sharing"] == "duet" for r in inserts)
    assert all(r["tps_per_s"] and r["latency_p99_ms"] >= r["latency_p95_ms"] for r in inserts)
    assert all(r["dirty_start"] is not None and r["leveled"] is not None for r in inserts)
    assert all(r["pages_encrypted"] > 0 for r in inserts if r["variant"] == "encrypted")
    # Each run carries the server's wait counters over it, the binary log's among them.
    assert all(r["waits"]["Binlog_commits"] > 0 for r in inserts)
    assert {"Innodb_row_lock_waits", "Innodb_log_waits"} <= set(runs[0]["waits"])
    record = json.loads((out / "at-rest.json").read_text())
    assert record["binary_log"] is True
    # every block's warm-up to the steady state, both servers read after every chunk
    warmups = [w for cell in record["steady"].values() for w in cell]
    assert warmups and all(set(w["readings"]) == {"plain", "encrypted"} for w in warmups)
    configs = record["configurations"]
    paired = "AES_CTR, scope all against scope tables"
    assert set(configs) == {"AES_CTR, scope tables", "AES_CTR, scope all", paired}
    for config in configs.values():
        assert config["proofs"]["encrypted"]["passed"] and config["proofs"]["plain"]["passed"]
        for variant in ("plain", "encrypted"):
            # both variants write a binary log under either scope
            assert config["regimes"]["io-bound"]["options"][variant]["log_bin"] == "binlog"
    # scope all: the logs were scanned and the plain server is the positive control
    scanned = configs["AES_CTR, scope all"]["proofs"]["encrypted"]["files_scanned"]
    assert "ib_logfile0" in scanned and any(f.startswith("binlog.") for f in scanned)
    # scope all against scope tables: the control's tables encrypted, its logs plain (the
    # positive control), the other's all encrypted; its runs proven as encrypted ones.
    control, other = (configs[paired]["proofs"][v] for v in ("plain", "encrypted"))
    assert control["tablespaces_encrypted"] == control["tablespaces_checked"]
    assert "ib_logfile0" in control["marker_found_in"]
    assert not any(f.endswith(".ibd") for f in control["marker_found_in"])
    assert other["marker_found_in"] == [] and "ib_logfile0" in other["files_scanned"]
    assert configs[paired]["sides"] == {"plain": "scope tables", "encrypted": "scope all"}
    against = [r for r in inserts if r["cell"].get("against") == "tables"]
    assert against and all(r["pages_encrypted"] > 0 for r in against)
    report = (out / "report.md").read_text()
    assert "## oltp_insert, io-bound, AES_CTR, scope all against scope tables" in report
    assert 'the "no encryption" side scope tables' in report
    assert "## oltp_insert, io-bound, AES_CTR, scope all" in report
    assert "oltp_insert adds rows" in report
    assert "p99 latency ms (enc / plain)" in report and "in their steady state" in report
    assert not (out / "sandbox").exists() and registry.entries() == []
