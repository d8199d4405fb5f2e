"""The state-transfer study's own parts without servers: its cells and profile checks, the
SST scripts' logs (real ones, tests/golden/sst/), the capture's parsing of frames and TLS
ServerHellos, the proof's verdicts, the Galera node's options, its record and its part of
the report."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from encbench import studies
from encbench.commands import rendering
from encbench.errors import BadInput, ProofError
from encbench.profiles.profile import Profile, TargetSpec, parse
from encbench.proof import wire
from encbench.report import markdown
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.options import render_cnf
from encbench.studies import STUDIES
from encbench.studies.state_transfer import cells, sstlog
from encbench.studies.state_transfer.cluster import sockopt
from encbench.studies.state_transfer.records import SstCell, SstRecord
from encbench.studies.state_transfer.study import judge
from tests.helpers import GOLDEN_ROOT, encbench_here
from tests.test_cli_bad_input import assert_one_line_error


def sst_runner(store: Any, prof: Profile) -> Any:
    """The study's runner as the engine makes it (its definition's reading of the profile)."""
    from encbench.engine.progress import RunProgress
    from encbench.studies import definition, state_transfer

    return definition.runner(state_transfer.STUDY, store, prof, RunProgress(0))


GOLDEN = GOLDEN_ROOT / "sst"


def a_profile(extra: str = "") -> Profile:
    return parse(f'name = "sst"\nstudies = ["state-transfer"]\n{extra}', "p.toml")


# -- cells and the profile ---------------------------------------------------------------------
def test_mariabackup_has_a_cell_per_cipher_and_rsync_one() -> None:
    profile = a_profile(
        '[state_transfer]\nmethods = ["mariabackup", "rsync"]\n'
        'ciphers = ["TLSv1.3", "CHACHA20"]\nbackup_threads = [1, 4]\n'
    )
    assert [c.label for c in cells.cells(profile)] == [
        "mariabackup, socat TLS 1.3, 1 thread",
        "mariabackup, socat TLS 1.3, 4 threads",
        "mariabackup, socat TLS 1.2 CHACHA20, 1 thread",
        "mariabackup, socat TLS 1.2 CHACHA20, 4 threads",
        "rsync, stunnel, 1 thread",
        "rsync, stunnel, 4 threads",
    ]
    assert cells.cells(parse('name = "x"\n', "p.toml")) == []
    assert SstCell("mariabackup", "TLSv1.3", 1).slug == "mariabackup-tlsv13-t1"


def test_the_smoke_sst_profile_makes_a_mariabackup_and_an_rsync_cell() -> None:
    """The built-in smoke profile's cells, by the real parser: its integration test runs the
    mariabackup cell (tests/integration/test_state_transfer_run.py), the three-node test an
    rsync cell (tests/integration/test_state_transfer_cluster_run.py)."""
    from encbench.profiles import profile as profiles

    smoke, _ = profiles.load("smoke-sst")
    assert [c.slug for c in cells.cells(smoke)] == ["mariabackup-tlsv13-t1", "rsync-t1"]


def test_aes_ni_off_is_a_cell_of_its_own_beside_each_on_and_an_old_record_is_on() -> None:
    profile = a_profile(
        '[state_transfer]\nmethods = ["mariabackup", "tar"]\nciphers = ["CHACHA20"]\n'
        'aesni = ["on", "off"]\n'
    )
    assert [c.label for c in cells.cells(profile)] == [
        "mariabackup, socat TLS 1.2 CHACHA20, 1 thread",
        "mariabackup, socat TLS 1.2 CHACHA20, 1 thread, AES-NI off",
        "pipeline tar, socat TLS 1.2 CHACHA20, 1 thread",
        "pipeline tar, socat TLS 1.2 CHACHA20, 1 thread, AES-NI off",
    ]
    off = SstCell("mariabackup", "CHACHA20", 1, "off")
    assert off.slug == "mariabackup-chacha20-t1-noaesni"
    seed = SstCell("tar", "CHACHA20", 1, "seed-mask")
    assert seed.label == (
        "pipeline tar, socat TLS 1.2 CHACHA20, 1 thread, AES-NI off (the 2017 study's mask)"
    )
    assert seed.slug == "tar-chacha20-t1-seedmask"
    # The mask's name after its study reads as its first name, the one cells carry.
    named = a_profile('[state_transfer]\nmethods = ["tar"]\naesni = ["percona-2017-mask"]\n')
    older = a_profile('[state_transfer]\nmethods = ["tar"]\naesni = ["seed-mask"]\n')
    assert cells.cells(named) == cells.cells(older)
    assert [c.aesni for c in cells.cells(named)] == ["seed-mask"]
    # Records written before the setting existed read back as AES-NI on.
    data = record("plain", 1, 4.0).to_json()
    data["cell"].pop("aesni")
    assert SstRecord.from_json(data).cell.aesni == "on"


def test_every_process_of_a_transfer_gets_the_cells_mask_and_the_proof_checks_it() -> None:
    from encbench.capacity import FULL_IA32CAP, NO_AESNI_IA32CAP
    from encbench.studies.state_transfer.cluster import env_prefix, openssl_env
    from encbench.studies.state_transfer.study import judge_masks

    # "on" sets a mask that clears nothing: an inherited value cannot slow that side.
    assert openssl_env("on") == {"OPENSSL_ia32cap": FULL_IA32CAP}
    assert openssl_env("seed-mask") == {"OPENSSL_ia32cap": "~0x200000200000000"}  # as written
    assert env_prefix("off") == ["env", f"OPENSSL_ia32cap={NO_AESNI_IA32CAP}"]
    off = SstCell("mariabackup", "CHACHA20", 1, "off")
    both = {"donor": NO_AESNI_IA32CAP, "joiner": NO_AESNI_IA32CAP}
    assert judge_masks(off, "encrypted", both) == both
    with pytest.raises(ProofError, match="donor ran with OPENSSL_ia32cap=\\(unset\\)"):
        judge_masks(off, "encrypted", {"joiner": NO_AESNI_IA32CAP})
    with pytest.raises(ProofError, match="joiner ran with OPENSSL_ia32cap=~0:~0, not"):
        judge_masks(off, "plain", {"donor": NO_AESNI_IA32CAP, "joiner": FULL_IA32CAP})


def test_a_processs_environment_is_read_as_it_started(tmp_path: Path) -> None:
    import subprocess
    import sys

    from encbench.studies.state_transfer.cluster import environment_of

    child = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(30)"],
        env={"OPENSSL_ia32cap": "~0x200000200000000:~0", "OTHER": "x"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "up\n"  # exec'd: /proc shows its own environment
        assert environment_of(child.pid, "OPENSSL_ia32cap") == "~0x200000200000000:~0"
        assert environment_of(child.pid, "MISSING") == ""
    finally:
        child.kill()
        child.wait()
    assert environment_of(child.pid, "OPENSSL_ia32cap") == ""  # gone


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('methods = ["xtrabackup"]', '"xtrabackup" is not one of .* "rsync-dir", "rsync-file"'),
        ('ciphers = ["RC4"]', "unknown SST cipher 'RC4'"),
        ("nodes = 4", "4 nodes is out of range"),
        ("nodes = 1", "use 2 .* or 3"),
        ('methods = ["tar", "xbstream"]\nnodes = 3', "nodes = 3 needs an SST method"),
        ("backup_threads = [0]", "0 backup threads is out of range"),
        ("rate_mbit = 0", "0 is out of range; use above 0 and at most 100000"),
        ('aesni = ["of"]', 'did you mean "off"\\? choose from "on", "off", "seed-mask"'),
        ("min_rounds = 8\nmax_rounds = 4", "min_rounds is larger than"),
        ("limits_s = 0", "limits_s"),
        ("limits_s = 61", "limits_s"),
    ],
)
def test_bad_state_transfer_settings_are_refused(line: str, fragment: str) -> None:
    with pytest.raises(BadInput, match=fragment):
        a_profile(f"[state_transfer]\n{line}\n")


def test_bad_input_from_the_command_line_is_one_line(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text('name = "s"\nstudies = ["state-transfer"]\n[state_transfer]\nnodes = 5\n')
    out = tmp_path / "o"
    result = encbench_here("run", str(prof), "--out", str(out))
    assert_one_line_error(result, "state_transfer.nodes", "5 nodes is out of range")
    assert not out.exists()


def test_data_larger_than_the_disk_counts_every_node(tmp_path: Path) -> None:
    prof = tmp_path / "huge.toml"
    prof.write_text(
        'name = "huge"\nstudies = ["state-transfer"]\n'
        "[data]\ntables = 1000\ntable_size = 500000000\n"
    )
    out = tmp_path / "o"
    result = encbench_here("run", str(prof), "--out", str(out))
    assert_one_line_error(result, "not enough disk", "GiB")
    assert not out.exists()


def test_missing_galera_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench.commands import preflight

    monkeypatch.setattr(galera, "provider", lambda: None)
    with pytest.raises(BadInput, match=r"libgalera_smm.so\) not found: apt-get install galera-4"):
        preflight.require_tools(a_profile())


def test_missing_socat_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench import proc
    from encbench.commands import preflight

    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name == "socat" else real(name))
    monkeypatch.setattr(galera, "provider", lambda: Path("/x.so"))
    with pytest.raises(BadInput, match="socat not found: apt-get install socat"):
        preflight.require_tools(a_profile())


def test_the_study_may_size_its_own_data_and_falls_back_to_data() -> None:
    own = a_profile("[data]\ntables = 8\n[state_transfer]\ntable_size = 10000\n")
    assert own.state_transfer.data(own.data).model_dump() == {"tables": 8, "table_size": 10000}
    plain = a_profile("[data]\ntables = 3\ntable_size = 7\n")
    assert plain.state_transfer.data(plain.data) == plain.data


def test_an_optional_study_this_machine_cannot_run_is_left_out_with_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    monkeypatch.setattr(galera, "provider", lambda: None)
    both = parse(
        'name = "q"\nstudies = ["at-rest", "state-transfer"]\n[state_transfer]\noptional = true\n',
        "p.toml",
    )
    why = studies.unavailable_studies(both)
    assert list(why) == ["state-transfer"]
    assert "libgalera_smm.so) not found: apt-get install galera-4" in why["state-transfer"]
    here = both.without(why)
    assert here.studies == ["at-rest"]
    # Nothing of it is required any more.
    assert not any(c.name.startswith("Galera") for c in studies.needs(here))
    # What a run leaves out: this, and the studies a target cannot take.
    from encbench.studies import left_out

    target = both.model_copy(update={"target": TargetSpec(host="db", user="u")})
    # A target's reason wins: installing galera-4 would not bring the study back.
    assert left_out(target, why)["state-transfer"].startswith("against a target only at rest")
    assert left_out(both, why) == why
    # Not optional: refused, as before.
    assert studies.unavailable_studies(a_profile()) == {}
    # Nothing left to run: one line that says why.
    alone = a_profile("[state_transfer]\noptional = true\n")
    with pytest.raises(BadInput, match=r"no study that can run here — state-transfer: Galera"):
        alone.without(studies.unavailable_studies(alone))


def test_plan_names_the_optional_study_this_machine_would_leave_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from encbench import cli

    monkeypatch.setattr(galera, "provider", lambda: None)
    printed = CliRunner().invoke(cli.main, ["plan", "quick"])
    assert printed.exit_code == 0, printed.output
    assert "state-transfer: left out here — Galera provider (libgalera_smm.so) not found" in (
        printed.output
    )


def test_a_run_with_only_an_optional_study_that_cannot_run_is_refused(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text('name = "s"\nstudies = ["state-transfer"]\n[state_transfer]\noptional = true\n')
    out = tmp_path / "o"
    # No tool on the PATH: the SST scripts' helper and `ip` are missing.
    result = encbench_here("run", str(prof), "--out", str(out), env={"PATH": str(tmp_path)})
    assert_one_line_error(result, "no study that can run here", "wsrep_sst_common not found")
    assert not out.exists()


def test_an_optional_study_without_room_is_left_out_and_a_required_one_refused(
    tmp_path: Path,
) -> None:
    from encbench.studies import check_disk, without_room

    huge = "[state_transfer]\ntables = 1000\ntable_size = 500000000\n"
    optional = parse(
        f'name = "q"\nstudies = ["at-rest", "state-transfer"]\n{huge}optional = true\n', "p"
    )
    why = without_room(tmp_path, optional)
    assert list(why) == ["state-transfer"] and "not enough disk" in why["state-transfer"]
    check_disk(tmp_path, optional.without(why))  # the rest fits
    required = parse(f'name = "q"\nstudies = ["at-rest", "state-transfer"]\n{huge}', "p")
    assert without_room(tmp_path, required) == {}


def test_a_resume_that_leaves_a_study_out_keeps_what_it_measured(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    prof = a_profile('[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\n')
    store = ResultStore.create(tmp_path / "o", "sst", "")
    for v in ("plain", "encrypted"):
        store.append(record(v, 1, 4.0))
    store.write_not_measured({"state-transfer": "root privileges missing: run as root"})
    summary = rendering.build_summary(store, prof)
    assert summary.part("state-transfer") is not None
    assert summary.part("state-transfer").cells[0].rounds == 1
    text = markdown.render(rendering.document(summary))
    assert "**state-transfer**: measured in part; the rest was left out: root privileges" in text


def test_an_optional_study_without_namespaces_as_root_is_left_out_at_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from encbench.engine.study import CellSkipped
    from encbench.net import netns
    from encbench.results.store import ResultStore

    def no_namespaces(*_: object) -> None:
        raise netns.NetnsUnavailable("cannot create network namespaces here (EPERM)")

    monkeypatch.setattr(netns, "clean_stale", lambda: [])
    monkeypatch.setattr(netns, "two_hosts", no_namespaces)
    store = ResultStore.create(tmp_path / "o", "sst", "")
    optional = sst_runner(store, a_profile("[state_transfer]\noptional = true\n"))
    with optional.setup(optional.cells()) as cluster:
        assert cluster is None
        with (
            pytest.raises(CellSkipped, match="cannot create network namespaces"),
            optional.open_cell(optional.cells()[0]),
        ):
            pass
    assert "EPERM" in store.not_measured()["state-transfer"]
    required = sst_runner(store, a_profile())
    with pytest.raises(BadInput, match="run as root"), required.setup(required.cells()):
        pass


def test_a_calibrations_twin_is_configured_and_proven_plain(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from encbench.results.store import ResultStore
    from encbench.studies.state_transfer.cluster import Cluster

    store = ResultStore.create(tmp_path / "o", "sst", "")
    aa = a_profile('calibration = true\n[state_transfer]\nmethods = ["rsync"]\n')
    ab = a_profile('[state_transfer]\nmethods = ["rsync"]\n')
    certs = SimpleNamespace(server_cert="c", server_key="k", ca_cert="a")
    for prof, want in ((aa, "DISABLED"), (ab, "REQUIRED")):
        cluster = Cluster(store, prof, lambda _: None)
        cluster.pki = certs  # type: ignore[assignment]
        got = cluster.sst_sections(SstCell("rsync"), "encrypted")["sst"]["ssl-mode"]
        assert got == want
    twin = record("plain", 1, 4.0)
    twin = SstRecord.from_json({**twin.to_json(), "variant": "encrypted"})  # its log: plain
    sst_runner(store, aa).prove(twin)
    with pytest.raises(ProofError, match="carried the stream by rsync plain, not stunnel"):
        sst_runner(store, ab).prove(twin)


def test_a_study_left_out_is_named_in_the_report_and_not_built(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    prof = parse('name = "q"\nstudies = ["state-transfer"]\n', "p.toml")
    store = ResultStore.create(tmp_path / "o", "q", "")
    store.write_not_measured({"state-transfer": "root privileges missing: run as root"})
    summary = rendering.build_summary(store, prof)
    assert summary.part("state-transfer") is None
    assert summary.to_json()["not_measured"] == {
        "state-transfer": "root privileges missing: run as root"
    }
    text = markdown.render(rendering.document(summary))
    assert "## Not measured" in text
    assert "**state-transfer**: root privileges missing: run as root." in text
    # An A/A calibration's report says so too.
    aa = parse('name = "q"\ncalibration = true\nstudies = ["state-transfer"]\n', "p.toml")
    text = markdown.render(rendering.document(rendering.build_summary(store, aa)))
    assert "**state-transfer**: root privileges missing" in text


# -- the Galera node's option file ------------------------------------------------------------
def test_a_node_joins_its_peers_on_its_own_address_and_ports() -> None:
    donor, joiner = galera.Node("donor", "10.0.0.2"), galera.Node("joiner", "10.0.0.1")
    options = galera.wsrep_options(
        joiner,
        cluster="c",
        peers=(donor,),
        sst_method="mariabackup",
        user="root",
        provider_path=Path("/usr/lib/galera/libgalera_smm.so"),
    )
    assert options["wsrep_cluster_address"] == "gcomm://10.0.0.2:4567"
    assert options["wsrep_sst_receive_address"] == "10.0.0.1:4444"
    assert "ist.recv_addr=10.0.0.1:4568" in options["wsrep_provider_options"]
    boot = galera.wsrep_options(
        donor, cluster="c", peers=(), sst_method="rsync", user="root", provider_path=Path("/p")
    )
    assert boot["wsrep_cluster_address"] == "gcomm://"
    assert "wsrep_sst_donor" not in options and "wsrep_sst_donor" not in boot


def test_with_a_third_node_the_joiner_joins_both_and_takes_its_sst_from_the_donor_only() -> None:
    donor, joiner = galera.Node("donor", "10.0.0.2"), galera.Node("joiner", "10.0.0.1")
    peer = galera.Node("peer", "10.0.0.3")
    options = galera.wsrep_options(
        joiner,
        cluster="c",
        peers=(donor, peer),
        sst_method="rsync",
        user="root",
        provider_path=Path("/p"),
        sst_donor="donor",
    )
    assert options["wsrep_cluster_address"] == "gcomm://10.0.0.2:4567,10.0.0.3:4567"
    # No trailing comma: Galera may not fall back to the peer, whose transfer the donor's
    # SST log (the per-run proof) would not show.
    assert options["wsrep_sst_donor"] == "donor"


class FakeProcess:
    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode

    def poll(self) -> int | None:
        return self.returncode


class FakeNode:
    def __init__(self, process: FakeProcess | None) -> None:
        self.process = process
        self.paths = type("Paths", (), {"error_log": Path("/x/error.log")})()


def test_the_donor_bootstraps_first_and_rejoins_a_live_peer_but_a_dead_peer_stops_the_run(
    tmp_path: Path,
) -> None:
    from encbench.errors import ServerError
    from encbench.results.store import ResultStore
    from encbench.studies.state_transfer.cluster import Cluster

    store = ResultStore.create(tmp_path / "o", "sst", "")
    cluster = Cluster(store, a_profile("[state_transfer]\nnodes = 3\n"), lambda _: None)
    donor, joiner, peer = (galera.Node(n, f"10.0.0.{i}") for i, n in enumerate(cluster.roots))
    cluster.hosts = {"donor": donor, "joiner": joiner, "peer": peer}
    fake: Any = FakeNode(None)
    cluster.nodes = {"peer": fake}
    assert cluster._peers("donor") == ()  # the first node up bootstraps the cluster
    assert cluster._peers("peer") == (donor,)
    fake.process = FakeProcess(None)  # the peer runs
    assert cluster._peers("donor") == (peer,)  # a restarted donor rejoins it
    assert cluster._peers("joiner") == (donor, peer)
    fake.process = FakeProcess(-9)  # the peer died
    for role in ("donor", "joiner"):
        with pytest.raises(ServerError, match=r"the third node .* stopped"):
            cluster._peers(role)
    two = Cluster(store, a_profile(), lambda _: None)
    two.hosts = {"donor": donor, "joiner": joiner}
    assert two._peers("donor") == () and two._peers("joiner") == (donor,)


def test_the_sst_group_is_written_after_mariadbd_and_plain_names_no_certificate() -> None:
    paths = {"cert": Path("/c.pem"), "key": Path("/k.pem"), "ca": Path("/ca.pem")}
    plain = galera.sst_section(encrypted=False, **paths)
    enc = galera.sst_section(encrypted=True, sockopt=",cipher=X,max-version=TLS1.2", **paths)
    assert plain["ssl-mode"] == "DISABLED" and "tcert" not in plain and "sockopt" not in plain
    assert enc["ssl-mode"] == "REQUIRED" and enc["tkey"] == "/k.pem"
    text = render_cnf({"port": "1"}, {"sst": enc})
    assert text.index("[mariadbd]") < text.index("[sst]")
    assert 'sockopt=",cipher=X,max-version=TLS1.2"' in text


def test_a_tls12_suite_pins_the_version_and_tls13_leaves_socat_its_default() -> None:
    assert sockopt(SstCell("mariabackup", "TLSv1.3")) == ""
    assert sockopt(SstCell("mariabackup", "AES128-GCM")) == (
        ",cipher=ECDHE-RSA-AES128-GCM-SHA256,max-version=TLS1.2"
    )
    assert sockopt(SstCell("rsync", "")) == ""


# -- the SST scripts' logs --------------------------------------------------------------------
def test_stages_and_transport_of_a_real_encrypted_mariabackup_transfer() -> None:
    donor = sstlog.SstLog.parse((GOLDEN / "mariabackup-encrypted-donor.log").read_text())
    joiner = sstlog.SstLog.parse((GOLDEN / "mariabackup-encrypted-joiner.log").read_text())
    assert donor.transport("mariabackup") == "socat openssl"
    assert joiner.transport("mariabackup") == "socat openssl"
    stages = donor.stages("mariabackup", "donor")
    assert 9.5 < stages["donor pause before streaming"] < 11
    assert stages[sstlog.STREAM_STAGE] > 0
    assert any(name.endswith("(time=1)") for name in stages)
    joined = joiner.stages("mariabackup", "joiner")
    assert {"joiner wait and receive", "joiner prepare", "joiner move"} <= set(joined)
    assert donor.errors() == []


def test_a_plain_rsync_transfer_is_rsync_plain() -> None:
    donor = sstlog.SstLog.parse((GOLDEN / "rsync-plain-donor.log").read_text())
    assert donor.transport("rsync") == "rsync plain"
    assert donor.stages("rsync", "donor")[sstlog.STREAM_STAGE] > 0


def test_a_log_without_sst_lines_says_nothing() -> None:
    log = sstlog.SstLog.parse("2026-11-23 10:00:00 0 [Note] mariadbd: ready for connections.\n")
    assert log.transport("rsync") == ""
    assert log.stages("mariabackup", "donor") == {}


# -- the capture -------------------------------------------------------------------------------
def frame(payload: bytes) -> bytes:
    ip_len = 20 + 20 + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 6, 0, bytes(4), bytes(4))
    tcp = struct.pack("!HHIIBBHHH", 1, 2, 0, 0, 5 << 4, 0x18, 0, 0, 0)
    return bytes(12) + b"\x08\x00" + ip + tcp + payload


def server_hello(version: int, suite: int, tls13: bool) -> bytes:
    ext = struct.pack("!HHH", 43, 2, 0x0304) if tls13 else b""
    body = struct.pack("!H", version) + bytes(32) + b"\x00" + struct.pack("!HB", suite, 0)
    body += struct.pack("!H", len(ext)) + ext
    hs = b"\x02" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x03" + struct.pack("!H", len(hs)) + hs


def test_a_tcp_payload_is_found_and_other_frames_are_not() -> None:
    assert wire.tcp_payload(frame(b"hello")) == b"hello"
    assert wire.tcp_payload(bytes(12) + b"\x86\xdd" + bytes(60)) is None  # IPv6


def test_the_negotiated_protocol_and_suite_come_from_the_server_hello() -> None:
    tls13 = wire.server_hello(server_hello(0x0303, 0x1302, tls13=True))
    assert tls13 == wire.Hello("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    tls12 = wire.server_hello(server_hello(0x0303, 0xCCA8, tls13=False))
    assert tls12 == wire.Hello("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305")
    assert wire.server_hello(b"\x17\x03\x03" + bytes(60)) is None  # application data


def test_plain_data_that_starts_like_a_server_hello_is_not_one() -> None:
    import random

    # What a plain tar stream's segment once was read as: a "hello" of version 0x2486 and
    # suite 0xc370, which failed that run's plain proof.
    fake = bytearray(server_hello(0x2486, 0xC370, tls13=False))
    assert wire.server_hello(bytes(fake)) is None
    # Random bytes with the two type bytes forced: the odds the old check gave.
    rng = random.Random(7)
    for _ in range(20_000):
        payload = bytearray(rng.randbytes(1448))
        payload[0], payload[5] = wire.TLS_HANDSHAKE, wire.SERVER_HELLO
        assert wire.server_hello(bytes(payload)) is None
    # A hello with an impossible record length, session id or compression is refused too.
    real = server_hello(0x0303, 0xCCA8, tls13=False)
    assert wire.server_hello(real[:3] + b"\xff\xff" + real[5:]) is None
    assert wire.server_hello(real[:43] + b"\x21" + real[44:]) is None  # 33-byte session id
    assert wire.server_hello(real[:46] + b"\x01" + real[47:]) is None  # compression 1


def test_a_marker_split_across_two_segments_is_found_once() -> None:
    search = wire.Search(b"MARKER-123")
    assert search.feed(b"....MARK") == 0
    assert search.feed(b"ER-123....MARKER-123") == 2
    assert search.feed(b"ER-123") == 0
    # conversations are searched apart: two streams' halves are no marker
    assert search.feed(b"..MARK", (1, 2)) == 0
    assert search.feed(b"ER-123", (3, 4)) == 0


# -- the proof's verdicts ----------------------------------------------------------------------
def found(
    hits: int, hellos: list[dict[str, str]], seen: int = 1000, ist_hits: int = 8
) -> dict[str, Any]:
    """A capture's findings: `hits` in the SST stream (4444), `ist_hits` in Galera's own
    write-set preload after it (4568), which [sst] does not encrypt."""
    by_port = {k: v for k, v in (("4444", hits), ("4568", ist_hits)) if v}
    return {
        "marker_hits": hits + ist_hits,
        "hits_by_port": by_port,
        "dropped": 0,
        "hellos": hellos,
        "payload_bytes": seen,
        "frames": 9,
    }


FIELDS = {"link_rx_bytes": 1200, "donor_transport": "t", "joiner_transport": "t", "sync_s": 1.0}
HELLO = [{"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"}]


def test_a_plain_transfer_without_the_marker_fails_the_positive_control() -> None:
    cell = SstCell("mariabackup", "TLSv1.3")
    with pytest.raises(ProofError, match="positive control failed"):
        judge(cell, "plain", found(0, []), FIELDS)
    assert judge(cell, "plain", found(4, []), FIELDS)["marker_hits"] == 4


def test_an_encrypted_transfer_must_hide_the_marker_and_show_its_suite() -> None:
    cell = SstCell("mariabackup", "AES128-GCM")
    with pytest.raises(ProofError, match="in plaintext 1 times"):
        judge(cell, "encrypted", found(1, HELLO), FIELDS)
    with pytest.raises(ProofError, match="no TLS ServerHello"):
        judge(cell, "encrypted", found(0, []), FIELDS)
    with pytest.raises(ProofError, match="not ECDHE-RSA-AES128-GCM-SHA256"):
        judge(cell, "encrypted", found(0, HELLO), FIELDS)
    ok = judge(SstCell("mariabackup", "TLSv1.3"), "encrypted", found(0, HELLO), FIELDS)
    assert ok["protocol"] == "TLSv1.3"
    tls12 = [{"protocol": "TLSv1.2", "cipher": "ECDHE-RSA-AES256-GCM-SHA384"}]
    with pytest.raises(ProofError, match=r"not TLS 1\.3"):
        judge(SstCell("mariabackup", "TLSv1.3"), "encrypted", found(0, tls12), FIELDS)
    # Galera's own IST preload carries the marker in both variants: recorded, not the verdict
    assert ok["marker_hits_other_ports"] == {"4568": 8}


def test_an_aa_calibrations_twin_is_judged_as_the_plain_stream_it_is() -> None:
    from encbench.studies.state_transfer.cluster import stream_encrypted

    assert stream_encrypted("encrypted", calibration=False)
    assert not stream_encrypted("encrypted", calibration=True)
    assert not stream_encrypted("plain", calibration=False)
    cell = SstCell("rsync")
    # The twin must show the marker (it is plain) and no handshake.
    twin = judge(cell, "encrypted", found(4, []), FIELDS, encrypted=False)
    assert twin["marker_hits"] == 4
    with pytest.raises(ProofError, match="positive control failed"):
        judge(cell, "encrypted", found(0, HELLO), FIELDS, encrypted=False)
    with pytest.raises(ProofError, match="TLS handshake crossed"):
        judge(cell, "encrypted", found(4, HELLO), FIELDS, encrypted=False)


def test_a_state_transfer_calibration_reads_its_cells_b_against_a(tmp_path: Path) -> None:
    from encbench.report import calibration
    from encbench.results.store import ResultStore

    prof = a_profile('calibration = true\n[state_transfer]\nmethods = ["rsync"]\n')
    store = ResultStore.create(tmp_path / "o", "sst", "")
    for r in range(12):
        order = ("plain", "encrypted") if r % 4 in (0, 3) else ("encrypted", "plain")
        for v in order:
            store.append(record(v, r + 1, 4.0 + 0.01 * (r % 3)))
    cells_ = calibration.cells_of(store, prof, STUDIES)
    assert [(c.study, c.group, c.label, c.rounds) for c in cells_] == [
        ("state-transfer", "rsync", "rsync, 1 thr", 12)
    ]
    assert cells_[0].false_positive is False
    assert calibration.last_start(store, prof, STUDIES) == "2026-11-23T00:00:00+00:00"


def test_a_capture_that_saw_too_little_vouches_for_nothing() -> None:
    with pytest.raises(ProofError, match="cannot vouch"):
        judge(SstCell("rsync"), "encrypted", found(0, HELLO, seen=100), FIELDS)


# -- the record and the report -----------------------------------------------------------------
def record(variant: str, round_: int, sync_s: float) -> SstRecord:
    return SstRecord(
        cell=SstCell("rsync"),
        round=round_,
        variant=variant,
        position=0,
        session="s",
        started_at="2026-11-23T00:00:00+00:00",
        wall_s=sync_s + 1,
        sync_s=sync_s,
        transfer_s=sync_s / 2,
        link_rx_bytes=100 * 2**20,
        link_tx_bytes=2**20,
        donor_cpu_s=1.0,
        joiner_cpu_s=2.0,
        harness_cpu_s=0.01,
        other_cpu_s=0.0,
        steal_s=0.0,
        interference_pct=0.0,
        donor_transport="stunnel" if variant == "encrypted" else "rsync plain",
        joiner_transport="stunnel" if variant == "encrypted" else "rsync plain",
        stages={"donor stream": sync_s / 2},
    )


def test_a_record_refuses_an_impossible_time_and_round_trips() -> None:
    with pytest.raises(ValueError, match="impossible run"):
        record("plain", 1, 0.0)
    r = record("plain", 1, 4.0)
    data = r.to_json()
    assert data["mib_per_s"] == pytest.approx(50.0)
    assert SstRecord.from_json(data) == r


def test_the_report_shows_the_cost_of_each_cell(tmp_path: Path) -> None:
    from encbench.report.tables import Document
    from encbench.studies.state_transfer import section as state_transfer_section
    from encbench.studies.state_transfer import summary as state_transfer

    profile = a_profile('[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\n')
    runs = []
    for r in range(4):
        order = ("plain", "encrypted") if r in (0, 3) else ("encrypted", "plain")
        for v in order:
            runs.append(record(v, r + 1, 4.0 if v == "plain" else 5.0))
    part = state_transfer.build(runs, profile, {"proofs": {}})
    cell = part.cells[0]
    assert cell.rounds == 4
    assert cell.comparisons["sync_s"].overhead_pct == pytest.approx(25.0)
    text = markdown.render(Document("t", state_transfer_section.sections(part)))
    assert "rsync, stunnel, 1 thread" in text
    assert "+25.0%" in text
    assert "AES-NI off" not in text  # no cell has it: nothing to explain
    assert "Cluster: 2 Galera nodes" in text and "the peer" not in text  # an old record: 2
    three = state_transfer.build(runs, profile, {"proofs": {}, "nodes": 3})
    text = markdown.render(Document("t", state_transfer_section.sections(three)))
    assert "Cluster: 3 Galera nodes" in text and "joined by a switch" in text
    assert "pinned to the donor (`wsrep_sst_donor`)" in text


def test_the_report_says_what_aes_ni_off_was_and_what_each_end_ran_with() -> None:
    from encbench.capacity import NO_AESNI_IA32CAP
    from encbench.report.tables import Document
    from encbench.studies.state_transfer import section as state_transfer_section
    from encbench.studies.state_transfer import summary as state_transfer

    profile = a_profile('[state_transfer]\nmethods = ["rsync"]\naesni = ["off"]\nmin_rounds = 2\n')
    off = SstCell("rsync", "", 1, "off")
    runs = [
        SstRecord.from_json({**record(v, r, 4.0).to_json(), "cell": {**off.__dict__}})
        for r in (1, 2)
        for v in ("plain", "encrypted")
    ]
    masks = {"donor": NO_AESNI_IA32CAP, "joiner": NO_AESNI_IA32CAP}
    proof = {
        "plain": {"marker_hits": 3, "payload_bytes": 2**20, "dropped": 0},
        "encrypted": {"marker_hits": 0, "payload_bytes": 2**20, "dropped": 0,
                      "openssl_ia32cap": masks},
    }  # fmt: skip
    part = state_transfer.build(runs, profile, {"proofs": {off.slug: proof}})
    assert part.cells[0].aesni == "off"
    text = markdown.render(Document("t", state_transfer_section.sections(part)))
    assert "rsync, stunnel, 1 thread, AES-NI off" in text
    assert (
        f"OPENSSL_ia32cap read back from each node: donor `{NO_AESNI_IA32CAP}`, "
        f"joiner `{NO_AESNI_IA32CAP}`."
    ) in text
    assert f"ran with `OPENSSL_ia32cap={NO_AESNI_IA32CAP}`" in text
