"""Where the `mariadb` kind's families keep the logs the at-rest proof scans
(servers/mariadb/logs.py)."""

from pathlib import Path

from encbench.servers.mariadb import logs
from encbench.servers.mariadb.logs import binary_logs


def test_the_binary_logs_scanned_are_the_logs_not_their_gtid_index(tmp_path: Path) -> None:
    """MariaDB 11.4+ keeps a GTID index beside each binary log (binlog.NNNNNN.idx): it holds
    positions, never events, so the plain server's marker is not in it (scope all on 11.8
    was refused for that: "marker not readable in binlog.000001.idx")."""
    for name in ("binlog.000002", "binlog.000001", "binlog.000001.idx", "binlog.index"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in binary_logs(tmp_path)] == ["binlog.000001", "binlog.000002"]


def test_mysqls_redo_files_are_scanned_but_not_its_spare_ones(tmp_path: Path) -> None:
    redo = tmp_path / "#innodb_redo"
    redo.mkdir()
    for name in ("#ib_redo5", "#ib_redo6", "#ib_redo7_tmp"):
        (redo / name).write_bytes(b"")
    assert [p.name for p in logs.MYSQL_LOGS.redo_files(tmp_path)] == ["#ib_redo5", "#ib_redo6"]
    (tmp_path / "ib_logfile0").write_bytes(b"")
    assert [p.name for p in logs.MARIADB_LOGS.redo_files(tmp_path)] == ["ib_logfile0"]
