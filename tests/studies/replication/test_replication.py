"""The replication study's own parts without servers: its cells and profile checks, Galera's
socket.ssl options and their refusals, the per-run and per-cell proofs' verdicts, and its
record."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from encbench.engine import galera_pair_study
from encbench.errors import BadInput, ProofError
from encbench.profiles.profile import Profile, parse
from encbench.servers.mariadb import galera
from encbench.studies.replication import cells
from encbench.studies.replication.records import ReplicationCell, ReplicationRecord
from encbench.studies.replication.study import judge, prove_run
from tests.helpers import encbench_here
from tests.test_cli_bad_input import assert_one_line_error


def a_profile(extra: str = "") -> Profile:
    return parse(f'name = "repl"\nstudies = ["replication"]\n{extra}', "p.toml")


# -- cells and the profile ---------------------------------------------------------------------
def test_a_cell_per_write_workload_and_thread_count() -> None:
    profile = a_profile(
        '[replication]\nworkloads = ["oltp_write_only", "oltp_read_write"]\nthreads = [1, 8]\n'
    )
    assert [c.slug for c in cells.cells(profile)] == [
        "oltp_write_only-t1",
        "oltp_write_only-t8",
        "oltp_read_write-t1",
        "oltp_read_write-t8",
    ]
    assert cells.cells(parse('name = "x"\n', "p.toml")) == []
    assert ReplicationCell("oltp_write_only", 4).label == "replication oltp_write_only 4 thr"


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('workloads = ["oltp_read_only"]', "unknown replication workload 'oltp_read_only'"),
        ('workloads = ["tpcc"]', "unknown replication workload 'tpcc'"),
        ("threads = [0]", "0 is out of range; use at least 1"),
        ("threads = [5000]", "use at most 590"),
        ('key_type = "rsa1024"', "rsa2048"),
        ("rate_mbit = 0", "0 is out of range; use above 0 and at most 100000"),
        ("min_rounds = 8\nmax_rounds = 4", "min_rounds is larger than"),
    ],
)
def test_bad_replication_settings_are_refused(line: str, fragment: str) -> None:
    with pytest.raises(BadInput, match=fragment):
        a_profile(f"[replication]\n{line}\n")


def test_bad_input_from_the_command_line_is_one_line(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text('name = "r"\nstudies = ["replication"]\n[replication]\nthreads = [0]\n')
    out = tmp_path / "o"
    result = encbench_here("run", str(prof), "--out", str(out))
    assert_one_line_error(result, "replication.threads", "out of range; use at least 1")
    assert not out.exists()


def test_a_calibration_of_the_replication_study_is_refused() -> None:
    with pytest.raises(BadInput, match="replication study has no A/A calibration"):
        a_profile("calibration = true\n")


def test_the_memory_counts_four_nodes_up_at_once() -> None:
    need, what = galera_pair_study.memory_mb(a_profile())
    assert need >= 4 * 64 and "two 2-node clusters" in what
    small = a_profile("[data]\ntables = 1\ntable_size = 10\n")
    assert galera_pair_study.disk_bytes(a_profile()) > galera_pair_study.disk_bytes(small) > 0


def test_missing_rsync_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench import proc
    from encbench.commands import preflight

    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name == "rsync" else real(name))
    monkeypatch.setattr(galera, "provider", lambda: Path("/x.so"))
    with pytest.raises(BadInput, match="rsync not found: apt-get install rsync"):
        preflight.require_tools(a_profile())


# -- Galera's own TLS ------------------------------------------------------------------------
KEYS = {"key": Path("/r/k.pem"), "cert": Path("/r/c.pem"), "ca": Path("/r/ca.pem")}


def test_socket_ssl_names_the_key_certificate_and_ca_in_the_provider_options() -> None:
    extra = galera.ssl_provider_options(**KEYS, cipher="AES256-SHA")
    options = galera.wsrep_options(
        galera.Node("n2", "10.0.0.1"),
        cluster="c",
        peers=(galera.Node("n1", "10.0.0.2"),),
        sst_method="rsync",
        user="root",
        provider_path=Path("/p.so"),
        provider_extra=extra,
    )["wsrep_provider_options"].split(";")
    assert "socket.ssl=YES" in options
    assert "socket.ssl_key=/r/k.pem" in options and "socket.ssl_cert=/r/c.pem" in options
    assert "socket.ssl_ca=/r/ca.pem" in options and "socket.ssl_cipher=AES256-SHA" in options
    assert galera.ssl_provider_options(key=None, cert=None, ca=None) == ()


@pytest.mark.parametrize(
    "given",
    [
        {"key": None, "cert": None, "ca": Path("/r/ca.pem")},
        {"key": None, "cert": Path("/r/c.pem"), "ca": None, "cipher": "AES256-SHA"},
        {"key": None, "cert": None, "ca": None, "cipher": "AES256-SHA"},
    ],
)
def test_ssl_options_without_a_certificate_and_key_are_refused(given: dict[str, Any]) -> None:
    with pytest.raises(BadInput, match=r"without socket\.ssl_key and socket\.ssl_cert"):
        galera.ssl_provider_options(**given)


def test_a_path_that_would_split_the_provider_options_is_refused() -> None:
    with pytest.raises(BadInput, match="without ';'"):
        galera.ssl_provider_options(**{**KEYS, "key": Path("/r/a;b.pem")})
    with pytest.raises(BadInput, match="absolute path"):
        galera.ssl_provider_options(**{**KEYS, "cert": Path("c.pem")})


def test_socket_ssl_is_read_from_the_reported_provider_options() -> None:
    reported = "base_dir = /d/; socket.ssl = YES; socket.ssl_cert = /c.pem; socket.ssl_key = /k"
    assert galera.provider_ssl(reported) == "YES"
    assert galera.provider_ssl("socket.ssl = NO; socket.ssl_cert = ") == "NO"
    assert galera.provider_ssl("gcache.size = 64M") == ""


# -- the proofs ------------------------------------------------------------------------------
def record(
    variant: str, ssl: str = "", size: int = 2, tps: float = 100.0, round_: int = 1
) -> ReplicationRecord:
    return ReplicationRecord(
        cell=ReplicationCell("oltp_write_only", 2),
        round=round_,
        variant=variant,
        position=0,
        session="s",
        started_at="2026-11-23T00:00:00+00:00",
        wall_s=6.0,
        tps=tps,
        qps=tps * 6,
        transactions=int(tps * 5),
        ignored_errors=0,
        latency_avg_ms=20.0,
        latency_p95_ms=30.0,
        apply_wait_s=0.1,
        link_bytes=1_000_000,
        node1_cpu_s=2.0,
        node2_cpu_s=0.5,
        harness_cpu_s=0.01,
        other_cpu_s=0.0,
        steal_s=0.0,
        interference_pct=0.0,
        node1_ssl=ssl or ("YES" if variant == "encrypted" else "NO"),
        node2_ssl=ssl or ("YES" if variant == "encrypted" else "NO"),
        cluster_size=size,
    )


def test_a_run_is_proven_by_both_nodes_socket_ssl_and_a_cluster_of_two() -> None:
    prove_run(record("plain"))
    prove_run(record("encrypted"))
    prove_run(record("plain", ssl=""))  # a plain node may not name socket.ssl at all
    with pytest.raises(ProofError, match=r"socket\.ssl = NO, not YES"):
        prove_run(record("encrypted", ssl="NO"))
    with pytest.raises(ProofError, match=r"socket\.ssl = YES, not NO"):
        prove_run(record("plain", ssl="YES"))
    with pytest.raises(ProofError, match="a cluster of 1, not 2"):
        prove_run(record("plain", size=1))


def test_a_record_refuses_no_transactions_and_round_trips_with_per_txn_figures() -> None:
    with pytest.raises(ValueError, match="impossible run"):
        record("plain", tps=0.0)
    r = record("plain")
    data = r.to_json()
    assert data["link_bytes_per_txn"] == pytest.approx(1_000_000 / 500)
    assert data["cpu_ms_per_txn"] == pytest.approx(2500 / 500)
    assert ReplicationRecord.from_json(data) == r


def found(
    by_port: dict[str, int], hellos: list[dict[str, str]], seen: int = 1000
) -> dict[str, Any]:
    return {
        "hits_by_port": by_port,
        "bytes_by_port": {"4567": seen},
        "dropped": 0,
        "hellos": hellos,
        "payload_bytes": seen,
        "frames": 9,
    }


CELL = ReplicationCell("oltp_write_only", 2)
HELLO = [{"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"}]


def test_a_plain_link_without_the_marker_on_the_replication_port_fails_the_control() -> None:
    with pytest.raises(ProofError, match="positive control failed"):
        judge(CELL, "plain", found({}, []), 1200, 4)
    with pytest.raises(ProofError, match="positive control failed"):
        judge(CELL, "plain", found({"4568": 2}, []), 1200, 4)
    with pytest.raises(ProofError, match="TLS handshake crossed a plain"):
        judge(CELL, "plain", found({"4567": 4}, HELLO), 1200, 4)
    assert judge(CELL, "plain", found({"4567": 4}, []), 1200, 4)["marker_hits"] == 4


def test_a_tls_link_must_hide_the_marker_everywhere_and_show_its_handshake() -> None:
    with pytest.raises(ProofError, match="in plaintext 2 times"):
        judge(CELL, "encrypted", found({"4568": 2}, HELLO), 1200, 4)
    with pytest.raises(ProofError, match="no TLS ServerHello"):
        judge(CELL, "encrypted", found({}, []), 1200, 4)
    ok = judge(CELL, "encrypted", found({}, HELLO), 1200, 4)
    assert (ok["protocol"], ok["cipher"]) == ("TLSv1.3", "TLS_AES_256_GCM_SHA384")


def test_a_proof_needs_the_marker_on_node_2_and_a_capture_that_saw_the_link() -> None:
    with pytest.raises(ProofError, match="holds 3 of node 1's 4 marker rows"):
        judge(CELL, "encrypted", found({}, HELLO), 1200, 3)
    with pytest.raises(ProofError, match="cannot vouch"):
        judge(CELL, "encrypted", found({}, HELLO, seen=100), 1200, 4)


# -- the report ------------------------------------------------------------------------------
def test_the_report_shows_the_tps_cost_and_the_proof_of_each_cell() -> None:
    from encbench.report import markdown
    from encbench.report.tables import Document
    from encbench.studies.replication import section as replication_section
    from encbench.studies.replication import summary as replication

    profile = a_profile(
        '[replication]\nworkloads = ["oltp_write_only"]\nthreads = [2]\nmin_rounds = 2\n'
    )
    runs = []
    for r in range(4):
        order = ("plain", "encrypted") if r in (0, 3) else ("encrypted", "plain")
        runs += [record(v, tps=100.0 if v == "plain" else 80.0, round_=r + 1) for v in order]
    proof = {
        "plain": {"marker_hits": 8, "marker_hits_by_port": {"4567": 8}, "rejoin_s": 3.0},
        "encrypted": {"marker_hits": 0, "protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"},
    }
    part = replication.build(runs, profile, {"proofs": {"oltp_write_only-t2": proof}})
    cell = part.cells[0]
    assert cell.rounds == 4
    assert cell.comparisons["tps"].overhead_pct == pytest.approx(20.0)  # a cost: 20% fewer
    # fewer transactions for the same link bytes and CPU: more of each per transaction
    assert cell.comparisons["cpu_ms_per_txn"].overhead_pct == pytest.approx(25.0)
    text = markdown.render(Document("t", replication_section.sections(part)))
    row = "| replication oltp_write_only 2 thr | 100.0 (100.0–100.0) | 80.0 (80.0–80.0) | +20.0%"
    assert row in text
    assert "TLSv1.3 TLS_AES_256_GCM_SHA384" in text


def test_a_tls_cluster_that_came_out_faster_is_flagged_with_the_clusters_as_a_cause() -> None:
    from encbench.report import markdown
    from encbench.report.tables import Document
    from encbench.studies.replication import section as replication_section
    from encbench.studies.replication import summary as replication

    profile = a_profile(
        '[replication]\nworkloads = ["oltp_write_only"]\nthreads = [2]\nmin_rounds = 12\n'
    )
    runs = []
    for r in range(14):
        order = ("plain", "encrypted") if r % 2 == 0 else ("encrypted", "plain")
        plain = 100.0 * (1 + 0.01 * (r % 3))
        runs += [
            replace(record(v, tps=plain if v == "plain" else plain * 1.05, round_=r), position=i)
            for i, v in enumerate(order)
        ]
    part = replication.build(runs, profile, {})
    assert part.cells[0].comparisons["tps"].implausible_gain
    text = markdown.render(Document("t", replication_section.sections(part)))
    assert "5.0% faster (95% CI" in text and "⚠" in text
    flagged = next(line for line in text.splitlines() if "Encrypted faster" in line)
    assert "replication oltp_write_only 2 thr: TPS 5.0% faster" in flagged
    assert "clusters' processes" in flagged and "noise floor is unknown" in flagged
