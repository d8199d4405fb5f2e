"""The state-transfer study's raw pipelines (tar, xbstream) without servers: their cells and
profile checks, the commands of both ends, socat's own log (real ones, tests/golden/sst/),
the chain of processes joined by pipes, the proof's verdict, the limits and the report."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from encbench.errors import BadInput, ProofError, ToolError
from encbench.profiles.profile import Profile, parse
from encbench.report import markdown
from encbench.servers.mariadb import galera
from encbench.studies.state_transfer import cells, limits, pipeline_rsync, pipelines, sizing, sstlog
from encbench.studies.state_transfer.cluster import sockopt
from encbench.studies.state_transfer.records import SstCell, SstRecord
from encbench.studies.state_transfer.study import judge, prepare_pipeline
from tests.helpers import GOLDEN_ROOT, encbench_here
from tests.test_cli_bad_input import assert_one_line_error

GOLDEN = GOLDEN_ROOT / "sst"


def a_profile(extra: str = "") -> Profile:
    return parse(f'name = "p"\nstudies = ["state-transfer"]\n{extra}', "p.toml")


def ends(buffer_kib: int = 1024) -> pipelines.Ends:
    return pipelines.Ends(
        donor_prefix=["ip", "netns", "exec", "d"],
        joiner_prefix=["ip", "netns", "exec", "j"],
        joiner_addr="10.9.0.1",
        cert=Path("/r/private/server-cert.pem"),
        key=Path("/r/private/server-key.pem"),
        ca=Path("/r/private/ca.pem"),
        client_cert=Path("/r/private/client-cert.pem"),
        client_key=Path("/r/private/client-key.pem"),
        buffer_kib=buffer_kib,
    )


# -- cells and the profile ---------------------------------------------------------------------
def test_pipelines_have_a_cell_per_cipher_and_tar_one_thread() -> None:
    profile = a_profile(
        '[state_transfer]\nmethods = ["xbstream", "tar", "rsync"]\n'
        'ciphers = ["TLSv1.3", "AES128-GCM"]\nbackup_threads = [1, 4]\n'
    )
    assert [c.label for c in cells.cells(profile)] == [
        "pipeline xbstream, socat TLS 1.3, 1 thread",
        "pipeline xbstream, socat TLS 1.3, 4 threads",
        "pipeline xbstream, socat TLS 1.2 AES128-GCM, 1 thread",
        "pipeline xbstream, socat TLS 1.2 AES128-GCM, 4 threads",
        "pipeline tar, socat TLS 1.3, 1 thread",
        "pipeline tar, socat TLS 1.2 AES128-GCM, 1 thread",
        "rsync, stunnel, 1 thread",
        "rsync, stunnel, 4 threads",
    ]
    assert SstCell("tar", "AES128-GCM", 1).slug == "tar-aes128-gcm-t1"


def test_the_smoke_pipelines_profile_makes_each_pipeline_at_one_and_two_threads() -> None:
    """The built-in smoke profile's cells, by the real parser: the integration test runs it at
    two threads only (tests/integration/test_sst_pipelines_run.py), so the one-thread cells it
    would also make are proven here."""
    from encbench.profiles import profile as profiles

    smoke, _ = profiles.load("smoke-pipelines")
    assert {c.slug for c in cells.cells(smoke)} == {
        "xbstream-aes128-gcm-t1",
        "xbstream-aes128-gcm-t2",
        "tar-aes128-gcm-t1",
        "rsync-dir-aes128-gcm-t1",
        "rsync-dir-aes128-gcm-t2",
    }


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('methods = ["tarball"]', 'did you mean "tar"\\? .*"xbstream", "rsync-dir", "rsync-file"'),
        ("socat_buffer_kib = 0", "a socat buffer of 0 KiB is out of range: use 1 to 65536"),
        ("socat_buffer_kib = 65537", "a socat buffer of 65537 KiB is out of range"),
    ],
)
def test_bad_pipeline_settings_are_refused(line: str, fragment: str) -> None:
    with pytest.raises(BadInput, match=fragment):
        a_profile(f"[state_transfer]\n{line}\n")


def test_an_unknown_pipeline_from_the_command_line_is_one_line(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text(
        'name = "s"\nstudies = ["state-transfer"]\n[state_transfer]\nmethods = ["cp"]\n'
    )
    out = tmp_path / "o"
    result = encbench_here("run", str(prof), "--out", str(out))
    assert_one_line_error(result, "state_transfer.methods.0", '"rsync-dir", "rsync-file"')
    assert not out.exists()


def test_missing_mbstream_names_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench import proc
    from encbench.commands import preflight

    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name == "mbstream" else real(name))
    monkeypatch.setattr(galera, "provider", lambda: Path("/x.so"))
    profile = a_profile('[state_transfer]\nmethods = ["xbstream"]\n')
    with pytest.raises(BadInput, match="mbstream not found: apt-get install mariadb-backup"):
        preflight.require_tools(profile)


def test_a_pipeline_target_counts_one_more_copy_of_the_data() -> None:
    sst = a_profile('[state_transfer]\nmethods = ["mariabackup"]\n')
    both = a_profile('[state_transfer]\nmethods = ["mariabackup", "tar"]\n')
    one = sizing.disk_bytes(sst) // 3
    assert sizing.disk_bytes(both) - sizing.disk_bytes(sst) == pytest.approx(one, rel=0.01)


# -- the commands of both ends -----------------------------------------------------------------
def test_plain_socat_carries_tcp_with_the_profiles_buffer() -> None:
    send = pipelines.socat_argv(ends(8), send=True, encrypted=False, sockopt="")
    receive = pipelines.socat_argv(ends(8), send=False, encrypted=False, sockopt="")
    assert send == ["socat", "-u", "-b", "8192", "-d", "-d", "STDIN", "TCP:10.9.0.1:4444"]
    assert receive[-2:] == ["TCP-LISTEN:4444,reuseaddr,bind=10.9.0.1", "STDOUT"]


def test_encrypted_socat_verifies_both_ends_and_pins_a_tls12_suite() -> None:
    cell = SstCell("tar", "AES128-GCM", 1)
    opt = sockopt(cell)
    assert opt == ",cipher=ECDHE-RSA-AES128-GCM-SHA256,max-version=TLS1.2"
    send = pipelines.socat_argv(ends(), send=True, encrypted=True, sockopt=opt)
    receive = pipelines.socat_argv(ends(), send=False, encrypted=True, sockopt=opt)
    ca = "cafile=/r/private/ca.pem"
    server = f"cert=/r/private/server-cert.pem,key=/r/private/server-key.pem,{ca}"
    client = f"cert=/r/private/client-cert.pem,key=/r/private/client-key.pem,{ca}"
    assert send[-1] == f"OPENSSL-CONNECT:10.9.0.1:4444,{client}{opt}"
    assert receive[-2] == f"OPENSSL-LISTEN:4444,reuseaddr,bind=10.9.0.1,{server}{opt}"
    assert send[3] == str(1024 * 1024)
    assert sockopt(SstCell("xbstream", "TLSv1.3", 2)) == ""  # socat's TLS 1.3 default


def test_the_senders_and_receivers_of_tar_and_xbstream() -> None:
    backup = pipelines.BackupSource(Path("/s/my.cnf"), Path("/t/d.sock"), "root", Path("/s/w"))
    data, target = Path("/s/data"), Path("/j/target")
    assert pipelines.sender_tool(SstCell("tar", "", 1), data, backup) == [
        "tar", "-c", "-f", "-", "-C", "/s/data", ".",
    ]  # fmt: skip
    xb = pipelines.sender_tool(SstCell("xbstream", "", 4), data, backup)
    assert xb[1] == "--defaults-file=/s/my.cnf"  # mariadb-backup wants it first
    assert {"--backup", "--stream=xbstream", "--parallel=4", "--target-dir=/s/w"} <= set(xb)
    assert pipelines.receiver_tool(SstCell("tar", "", 1), target) == [
        "tar", "-x", "-f", "-", "-C", "/j/target",
    ]  # fmt: skip
    assert pipelines.receiver_tool(SstCell("xbstream", "", 4), target) == [
        "mbstream", "-x", "-C", "/j/target",
    ]  # fmt: skip


# -- socat's own log: the per-run proof ------------------------------------------------------
@pytest.mark.parametrize(
    ("log", "want", "protocol", "suite"),
    [
        ("socat-plain-receiver.log", "socat plain", "", ""),
        ("socat-plain-sender.log", "socat plain", "", ""),
        ("socat-tls12-receiver.log", "socat openssl", "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        ("socat-tls12-sender.log", "socat openssl", "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        ("socat-tls13-receiver.log", "socat openssl", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ],
)
def test_socats_log_says_how_it_carried_the_stream(
    log: str, want: str, protocol: str, suite: str
) -> None:
    text = (GOLDEN / log).read_text()
    assert pipelines.transport(text) == want
    assert pipelines.negotiated(text) == (protocol, suite)


def test_a_socat_that_carried_nothing_says_nothing() -> None:
    assert pipelines.transport("2026/11/23 socat[1] N listening on AF=2 10.9.0.1:4444\n") == ""


def test_a_pipeline_run_is_expected_to_be_carried_by_socat() -> None:
    assert sstlog.expected_transport("tar", True) == "socat openssl"
    assert sstlog.expected_transport("xbstream", False) == "socat plain"


# -- the chain of processes ------------------------------------------------------------------
def test_a_chain_joins_its_processes_by_pipes_and_notes_each_exit(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    chain = pipelines.Chain(
        [["printf", "one\\ntwo\\n"], ["tee", str(out)]],
        [tmp_path / "a.log", tmp_path / "b.log"],
        "test",
    )
    chain.start()
    try:
        pipelines.wait_both(chain, pipelines.Chain([], [], "none"), timeout_s=30)
    finally:
        chain.stop()
    assert out.read_text() == "one\ntwo\n"
    assert chain.done and chain.failed() is None
    assert [p.returncode for p in chain.processes] == [0, 0]
    assert chain.ended_at >= max(e.at for e in chain.exits.values()) > 0
    assert chain.cpu_s >= 0


def test_a_failed_process_stops_the_wait_with_its_log(tmp_path: Path) -> None:
    receiver = pipelines.Chain([["sleep", "30"]], [tmp_path / "r.log"], "test")
    sender = pipelines.Chain(
        [["tar", "-c", "-f", "-", "-C", str(tmp_path / "missing"), "."], ["cat"]],
        [tmp_path / "t.log", tmp_path / "c.log"],
        "test",
    )
    receiver.start()
    sender.start()
    try:
        with pytest.raises(ToolError, match="tar exited with 2") as caught:
            pipelines.wait_both(sender, receiver, timeout_s=30)
        assert "missing" in str(caught.value.tail)
    finally:
        sender.stop()
        receiver.stop()
    assert receiver.processes[0].poll() is not None  # stopped, not left running


def test_a_pipeline_that_overruns_its_timeout_is_an_error(tmp_path: Path) -> None:
    chain = pipelines.Chain([["sleep", "30"]], [tmp_path / "s.log"], "test")
    chain.start()
    try:
        with pytest.raises(ToolError, match=r"did not finish within 0 s"):
            pipelines.wait_both(chain, pipelines.Chain([], [], "none"), timeout_s=0.1)
    finally:
        chain.stop()
    assert chain.processes[0].poll() is not None


def test_a_listener_stopped_after_the_copy_keeps_the_cpu_it_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The joiner's socat and rsync daemon run until stopped: stopping them must leave
    their reaping, and so their CPU, to their own thread, even when that thread comes late
    to the exit (as on a busy machine), never take it from it."""
    wait4 = os.wait4

    def late_wait4(pid: int, options: int) -> tuple[int, int, os.struct_rusage]:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
        time.sleep(0.3)
        return wait4(pid, options)

    monkeypatch.setattr(pipelines.os, "wait4", late_wait4)
    work = "i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done"  # a fixed amount of CPU
    chains = [
        pipelines.Chain([["sh", "-c", f"{work}; exec sleep 30"]], [tmp_path / f"{i}.log"], "t")
        for i in range(2)
    ]
    for chain in chains:
        chain.start()
    time.sleep(1.0)  # each has done its work and listens (sleeps)
    for chain in chains:
        chain.stop()
    assert [len(c.exits) for c in chains] == [1, 1]
    assert all(c.cpu_s > 0 for c in chains), [c.cpu_s for c in chains]


def test_a_chain_stopped_by_a_signal_inside_start_stops_its_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SIGTERM can land after a process started and before its reaping thread did: the
    stop that follows must still stop it, not fail for the missing thread."""

    class Interrupted(threading.Thread):
        def start(self) -> None:
            raise KeyboardInterrupt  # as the run's signal handler raises Interrupted

    monkeypatch.setattr(pipelines, "threading", SimpleNamespace(Thread=Interrupted))
    chain = pipelines.Chain([["sleep", "30"]], [tmp_path / "s.log"], "test")
    with pytest.raises(KeyboardInterrupt):
        chain.start()
    chain.stop()
    assert chain.processes[0].returncode is not None  # stopped and reaped


def test_a_listener_that_ends_before_listening_is_named_with_its_exit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even when its own thread comes late to the exit: the wait must not reap it first."""
    wait4 = os.wait4

    def late_wait4(pid: int, options: int) -> tuple[int, int, os.struct_rusage]:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        time.sleep(0.3)
        return wait4(pid, options)

    monkeypatch.setattr(pipelines.os, "wait4", late_wait4)
    chain = pipelines.Chain([["true"]], [tmp_path / "l.log"], "test")
    chain.start()
    try:
        with pytest.raises(ToolError, match="true exited with 0"):
            pipelines.wait_listening(chain)
    finally:
        chain.stop()


def test_the_page_cache_is_dropped_only_by_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert pipelines.drop_page_cache() == "not dropped (not root)"


def test_the_target_has_the_marker_table_or_the_run_fails(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"no sbtest/encbench_marker\.ibd"):
        pipelines.check_copied(tmp_path, "sbtest", "encbench_marker")
    (tmp_path / "sbtest").mkdir()
    (tmp_path / "sbtest" / "encbench_marker.frm").write_bytes(b"x" * 100)
    with pytest.raises(ToolError, match=r"it holds sbtest/encbench_marker\.frm\)"):
        pipelines.check_copied(tmp_path, "sbtest", "encbench_marker")
    # mariadb-backup's name for a table created since the last checkpoint
    (tmp_path / "sbtest" / "encbench_marker.new").write_bytes(b"x" * 16384)
    pipelines.check_copied(tmp_path, "sbtest", "encbench_marker")


# -- the proof's verdict, the limits, the report ----------------------------------------------
def found(hits: int, cipher: str = "", protocol: str = "") -> dict[str, object]:
    hellos = [{"protocol": protocol, "cipher": cipher}] if cipher else []
    return {
        "hits_by_port": {"4444": hits} if hits else {},
        "dropped": 0,
        "hellos": hellos,
        "payload_bytes": 10_000_000,
        "frames": 300,
        "bytes_by_port": {"4444": 10_000_000},
    }


FIELDS = {
    "link_rx_bytes": 10_000_000,
    "donor_transport": "socat openssl",
    "joiner_transport": "socat openssl",
    "sync_s": 1.0,
}


def test_an_encrypted_pipeline_must_negotiate_its_cells_suite() -> None:
    cell = SstCell("tar", "AES128-GCM", 1)
    ok = judge(cell, "encrypted", found(0, "ECDHE-RSA-AES128-GCM-SHA256", "TLSv1.2"), FIELDS)
    assert ok["cipher"] == "ECDHE-RSA-AES128-GCM-SHA256"
    with pytest.raises(ProofError, match="negotiated TLS_AES_256_GCM_SHA384, not ECDHE"):
        judge(cell, "encrypted", found(0, "TLS_AES_256_GCM_SHA384", "TLSv1.3"), FIELDS)
    with pytest.raises(ProofError, match="positive control failed"):
        judge(cell, "plain", found(0), FIELDS)


def test_a_pipelines_cipher_limit_is_one_stream_of_its_suite() -> None:
    cell = SstCell("xbstream", "CHACHA20", 4)
    assert limits.expected_suite(cell) == "ECDHE-RSA-CHACHA20-POLY1305"
    assert limits.streams(cell) == 1
    assert limits.cipher_cores(cell, cores=2) == 2


def record(variant: str, rnd: int, seconds: float) -> SstRecord:
    return SstRecord(
        cell=SstCell("tar", "AES128-GCM", 1),
        round=rnd,
        variant=variant,
        position=0,
        session="s",
        started_at="2026-11-23T17:00:00+00:00",
        wall_s=seconds + 1,
        sync_s=seconds,
        transfer_s=seconds * 0.9,
        link_rx_bytes=200 * 2**20,
        link_tx_bytes=2**20,
        donor_cpu_s=1.0,
        joiner_cpu_s=1.0,
        harness_cpu_s=0.01,
        other_cpu_s=0.0,
        steal_s=0.0,
        interference_pct=0.0,
        donor_transport="socat openssl" if variant == "encrypted" else "socat plain",
        joiner_transport="socat openssl" if variant == "encrypted" else "socat plain",
        stages={pipelines.SENDER_STAGE: seconds * 0.8, pipelines.SYNC_STAGE: seconds * 0.1},
    )


def test_the_report_shows_a_pipeline_row_and_says_what_it_timed() -> None:
    from encbench.report.tables import Document
    from encbench.studies.state_transfer import section as state_transfer_section
    from encbench.studies.state_transfer import summary as state_transfer

    profile = a_profile(
        '[state_transfer]\nmethods = ["tar"]\nciphers = ["AES128-GCM"]\nmin_rounds = 2\n'
    )
    runs = []
    for r in range(4):
        order = ("plain", "encrypted") if r in (0, 3) else ("encrypted", "plain")
        for v in order:
            runs.append(record(v, r + 1, 2.0 if v == "plain" else 3.0))
    setup = {
        "socat_buffer_kib": 1024,
        "page_cache": "dropped before each run (sync; echo 3 > /proc/sys/vm/drop_caches)",
        # As cluster.provision writes it.
        "donor": {"tar and rsync": "stopped", "xbstream": "running, idle (no load)"},
    }
    part = state_transfer.build(runs, profile, {"proofs": {}, "pipelines": setup})
    assert part.cells[0].comparisons["sync_s"].overhead_pct == pytest.approx(50.0)
    text = markdown.render(Document("t", state_transfer_section.sections(part)))
    assert "| pipeline tar, socat TLS 1.2 AES128-GCM, 1 thread |" in text
    assert "+50.0%" in text
    assert "mariadb-backup 10.11 has no encryption of its own" in text
    assert "socat's buffer (`-b`) 1024 KiB; the page cache dropped before each run" in text
    assert "the donor for tar and rsync stopped, for xbstream running, idle" in text
    # Without pipeline cells, neither the note nor the set-up line.
    sst_only = state_transfer.build([], a_profile(), {})
    assert sst_only.pipelines is None
    assert "pipeline" not in markdown.render(
        Document("t", state_transfer_section.sections(sst_only))
    )


# -- the rsync pipelines -----------------------------------------------------------------------
def a_datadir(root: Path) -> Path:
    data = root / "data"
    (data / "sbtest").mkdir(parents=True)
    (data / "mysql").mkdir()
    for name in ("ibdata1", "ib_logfile0", "sbtest/sbtest1.ibd", "sbtest/encbench_marker.ibd"):
        (data / name).write_bytes(b"x" * 4096)
    (data / "mysql" / "db.frm").write_bytes(b"y")
    return data


def test_rsync_per_directory_has_one_unit_per_directory_and_one_for_the_top_files(
    tmp_path: Path,
) -> None:
    data = a_datadir(tmp_path)
    assert pipeline_rsync.units(data, "dir") == [
        ["ib_logfile0", "ibdata1"],
        ["mysql/db.frm"],
        ["sbtest/encbench_marker.ibd", "sbtest/sbtest1.ibd"],
    ]
    assert len(pipeline_rsync.units(data, "file")) == 5
    assert ["sbtest/sbtest1.ibd"] in pipeline_rsync.units(data, "file")


def test_both_rsync_variants_go_through_socat_forking_per_connection() -> None:
    opt = sockopt(SstCell("rsync-file", "CHACHA20", 4))
    donor, joiner = pipeline_rsync.tunnel_argvs(ends(), "10.9.0.2", encrypted=True, sockopt=opt)
    assert donor[-2] == "TCP-LISTEN:4873,reuseaddr,fork,bind=10.9.0.2"
    assert donor[-1].startswith("OPENSSL-CONNECT:10.9.0.1:4444,cert=")
    assert donor[-1].endswith(",cipher=ECDHE-RSA-CHACHA20-POLY1305,max-version=TLS1.2")
    assert joiner[-2].startswith("OPENSSL-LISTEN:4444,reuseaddr,fork,bind=10.9.0.1,cert=")
    assert joiner[-1] == "TCP:10.9.0.1:4873"  # the daemon, on the joiner's own address
    donor, joiner = pipeline_rsync.tunnel_argvs(ends(), "10.9.0.2", encrypted=False, sockopt="")
    assert (donor[-1], joiner[-2]) == (
        "TCP:10.9.0.1:4444",
        "TCP-LISTEN:4444,reuseaddr,fork,bind=10.9.0.1",
    )
    argv = pipeline_rsync.rsync_argv(Path("/d"), Path("/l/1.txt"), "10.9.0.2")
    assert argv == [
        "rsync", "-a", "--whole-file", "--files-from=/l/1.txt", "/d/",
        "rsync://10.9.0.2:4873/target/",
    ]  # fmt: skip
    assert "uid = root" in pipeline_rsync.daemon_config(Path("/t"), Path("/l.log"))


def test_a_pool_runs_at_most_its_size_at_once_and_stops_at_a_failure(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    argvs = [
        ["sh", "-c", f"date +%s.%N > {marks}/{i}.a; sleep 0.3; date +%s.%N > {marks}/{i}.b"]
        for i in range(5)
    ]
    pool = pipeline_rsync.Pool(argvs, [tmp_path / f"{i}.log" for i in range(5)], size=2)
    pool.run(timeout_s=30)
    spans = [
        (float((marks / f"{i}.a").read_text()), float((marks / f"{i}.b").read_text()))
        for i in range(5)
    ]
    at_once = max(sum(a <= start < b for a, b in spans) for start, _ in spans)
    assert at_once == 2  # two at a time, never three
    assert len(pool.chains) == 5 and pool.cpu_s >= 0
    bad = pipeline_rsync.Pool([["true"], ["false"], ["sleep", "30"]], [tmp_path / "x"] * 3, 2)
    try:
        with pytest.raises(ToolError, match="false exited with 1"):
            bad.run(timeout_s=30)
    finally:
        bad.stop()
    assert all(c.processes[0].poll() is not None for c in bad.chains)


def test_rsync_pipelines_send_one_tls_stream_per_rsync() -> None:
    assert limits.streams(SstCell("rsync-file", "TLSv1.3", 4)) == 4
    assert limits.streams(SstCell("rsync-dir", "TLSv1.3", 2)) == 2
    assert (
        SstCell("rsync-dir", "TLSv1.3", 2).label == "pipeline rsync-dir, socat TLS 1.3, 2 threads"
    )


# -- the pipelines end to end on this host's loopback, without namespaces or servers ----------
@pytest.mark.parametrize(
    ("method", "threads", "encrypted"),
    [("tar", 1, False), ("tar", 1, True), ("rsync-dir", 2, True), ("rsync-file", 3, False)],
)
def test_a_pipeline_copies_a_directory_over_socat_on_the_loopback(
    method: str, threads: int, encrypted: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from encbench.servers import pki

    # Not the machine's page cache from a unit test.
    monkeypatch.setattr(pipelines, "drop_page_cache", lambda: "not dropped (a test)")
    certs = pki.generate(tmp_path, "rsa2048", server_ips=("127.0.0.1", "127.0.0.2"))
    data = a_datadir(tmp_path)
    cell = SstCell(method, "AES128-GCM", threads)
    logs = tmp_path / "logs"
    logs.mkdir()
    run = pipelines.Run(
        cell=cell,
        encrypted=encrypted,
        sockopt=sockopt(cell),
        ends=pipelines.Ends(
            [],
            [],
            "127.0.0.1",
            certs.server_cert,
            certs.server_key,
            certs.ca_cert,
            certs.client_cert,
            certs.client_key,
            64,
        ),
        datadir=data,
        backup=pipelines.BackupSource(tmp_path, tmp_path, "root", tmp_path / "w"),
        target=tmp_path / "target",
        logs=logs / "run",
        timeout_s=60,
    )
    prepared = prepare_pipeline(run, "127.0.0.2")
    try:
        done = prepared.measure()
    finally:
        prepared.stop()
    pipelines.check_copied(run.target, "sbtest", "encbench_marker")
    assert sorted(p.relative_to(run.target) for p in run.target.rglob("*")) == sorted(
        p.relative_to(data) for p in data.rglob("*")
    )
    want = "socat openssl" if encrypted else "socat plain"
    assert done.donor_transport == done.joiner_transport == want
    assert (done.protocol, done.cipher) == (
        ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256") if encrypted else ("", "")
    )
    assert done.sync_s >= done.transfer_s > 0
    assert done.donor_cpu_s > 0 and done.joiner_cpu_s > 0
    assert done.page_cache == "not dropped (a test)"


def test_the_rsyncs_join_only_the_donors_network_namespace() -> None:
    from encbench.net import netns

    # nsenter execs the program (the pid is rsync's) and makes no mount namespace per rsync.
    assert netns.net_prefix("encb-1-s") == ["nsenter", "--net=/run/netns/encb-1-s"]
    assert ends().donor_net_prefix == ()  # then the rsyncs start as the donor's other tools
