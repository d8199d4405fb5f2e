"""The limits beside every state-transfer result, without servers: fio's and iperf3's JSON
(real outputs captured on this machine, tests/golden/limits/), which cipher and how many
cores stand for a cell, the percentage of the lowest limit and the binding resource, the
record a resumed run keeps, preflight, and the report's section."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from encbench import capacity
from encbench.capacity import disk, link
from encbench.errors import BadInput, ToolError
from encbench.profiles.profile import Profile, parse
from encbench.report import markdown
from encbench.servers.mariadb import galera
from encbench.studies.state_transfer import limits, measure_limits
from encbench.studies.state_transfer.records import SstCell, SstRecord
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "limits"
MIB = 2**20
# The captured fixtures' own figures: fio's bw_bytes per job, iperf3's receiver bits/s.
FIO_GOLDEN_MIB_PER_S = {"write": 598961703 / MIB, "read": 1566313675 / MIB}
IPERF3_GOLDEN_MIB_PER_S = 20550126543.36882 / 8 / MIB
TLS13 = SstCell("mariabackup", "TLSv1.3", 1)
RSYNC = SstCell("rsync", "", 1)


# -- fio ---------------------------------------------------------------------------------------
def test_fio_gives_each_jobs_direction_in_mib_per_s() -> None:
    # Written by capacity/disk.py's own argv (fio_argv) on this machine's ext4, direct I/O.
    version, speeds = disk.parse_fio_json((GOLDEN / "fio-seq-direct.json").read_text())
    assert version.startswith("fio-3")
    assert set(speeds) == {"write", "read"}
    assert speeds == pytest.approx(FIO_GOLDEN_MIB_PER_S, rel=1e-9)


def test_fio_text_before_its_json_is_skipped_and_a_failed_job_refused() -> None:
    text = (GOLDEN / "fio-seq-direct.json").read_text()
    _, speeds = disk.parse_fio_json("fio: note: both iodepth and ... \n" + text)
    assert speeds == pytest.approx(FIO_GOLDEN_MIB_PER_S, rel=1e-9)
    failed = text.replace('"error" : 0', '"error" : 22', 1)
    with pytest.raises(ValueError, match="failed with error 22"):
        disk.parse_fio_json(failed)
    with pytest.raises(ValueError, match="no JSON"):
        disk.parse_fio_json("fio: pid=1, err=22/file:filesetup.c")


def test_fio_runs_the_write_before_the_read_on_one_file(tmp_path: Path) -> None:
    argv = disk.fio_argv("fio", tmp_path / "f", tmp_path / "o.json", direct=True)
    assert argv.index("--name=write") < argv.index("--name=read") < argv.index("--stonewall")
    assert "--direct=1" in argv and "--end_fsync=0" in argv
    assert "--end_fsync=1" in disk.fio_argv("fio", tmp_path / "f", tmp_path / "o", direct=False)
    assert "--runtime=2" in argv  # each way, unless the profile's limits_s says otherwise
    short = disk.fio_argv("fio", tmp_path / "f", tmp_path / "o", direct=True, seconds=1)
    assert "--runtime=1" in short


def test_an_impossible_disk_speed_is_refused() -> None:
    with pytest.raises(ValueError, match="impossible disk speed"):
        disk.DiskSpeed(0.0, 100.0, True, 256, "1M", 2, "fio-3")


# -- iperf3 ------------------------------------------------------------------------------------
def test_iperf3_counts_what_the_receiver_got() -> None:
    # One TCP stream between two network namespaces over a veth pair (capacity/link.py).
    speed = link.parse_iperf3_json((GOLDEN / "iperf3-veth.json").read_text())
    assert speed.mib_per_s == pytest.approx(IPERF3_GOLDEN_MIB_PER_S, rel=1e-9)
    assert 0 < speed.mib_per_s <= speed.sent_mib_per_s * 1.01
    assert speed.streams == 1
    assert speed.iperf3_version.startswith("iperf 3")


def test_iperf3_reports_its_failure_in_its_json() -> None:
    # A real client's answer when nothing listened on the port.
    with pytest.raises(ValueError, match="unable to connect"):
        link.parse_iperf3_json((GOLDEN / "iperf3-refused.json").read_text())


# -- which cipher, how many cores -------------------------------------------------------------
@pytest.mark.parametrize(
    ("suite", "evp"),
    [
        ("TLS_AES_256_GCM_SHA384", "aes-256-gcm"),
        ("TLS_AES_128_GCM_SHA256", "aes-128-gcm"),
        ("TLS_CHACHA20_POLY1305_SHA256", "chacha20-poly1305"),
        ("ECDHE-RSA-AES128-GCM-SHA256", "aes-128-gcm"),
        ("ECDHE-RSA-AES256-GCM-SHA384", "aes-256-gcm"),
        ("ECDHE-RSA-CHACHA20-POLY1305", "chacha20-poly1305"),
        ("0x1304", None),
    ],
)
def test_each_negotiated_suite_stands_for_one_measured_cipher(suite: str, evp: str | None) -> None:
    assert limits.evp_cipher(suite) == evp


def test_a_cell_expects_its_tls12_suite_and_otherwise_openssls_tls13_default() -> None:
    chacha = SstCell("mariabackup", "CHACHA20", 1)
    assert limits.expected_suite(chacha) == "ECDHE-RSA-CHACHA20-POLY1305"
    assert limits.expected_suite(TLS13) == "TLS_AES_256_GCM_SHA384"
    assert limits.expected_suite(RSYNC) == "TLS_AES_256_GCM_SHA384"


def test_one_socat_stream_whatever_the_threads_and_one_stunnel_per_rsync() -> None:
    assert limits.cipher_cores(SstCell("mariabackup", "TLSv1.3", 8), cores=16) == 2
    assert limits.cipher_cores(SstCell("rsync", "", 4), cores=16) == 8
    assert limits.cipher_cores(SstCell("rsync", "", 4), cores=2) == 2
    assert limits.cipher_cores(TLS13, cores=1) == 1


def cipher_json(mb_per_s: float, evp: str = "aes-256-gcm") -> dict[str, Any]:
    return {
        "ciphers": [
            {"cipher": evp, "accel": True, "cores": 1, "direction": "encrypt",
             "block_bytes": 16384, "mb_per_s_mean": mb_per_s, "mb_per_s_stdev": 1.0, "n": 3}
        ]
    }  # fmt: skip


def test_the_cipher_limit_pays_encryption_and_decryption_on_the_cores_it_has() -> None:
    # 2000 MB/s each way = 1907.35 MiB/s; both ends on one core: half of it; on two: all.
    per_core = 2000 * 1e6 / MIB
    assert limits.cipher_mib_per_s(cipher_json(2000), "aes-256-gcm", 1) == pytest.approx(
        per_core / 2
    )
    assert limits.cipher_mib_per_s(cipher_json(2000), "aes-256-gcm", 2) == pytest.approx(per_core)
    assert limits.cipher_mib_per_s(cipher_json(2000), "aes-128-gcm", 2) is None


def a_record(**parts: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cores": 2,
        "disk": {"read_mib_per_s": 900.0, "write_mib_per_s": 400.0},
        "link": {"mib_per_s": 2500.0},
        "cipher": cipher_json(300 * MIB / 1e6),  # 300 MiB/s a core
    }
    base.update(parts)
    return base


def test_the_plain_side_has_no_cipher_limit_and_the_encrypted_side_its_own() -> None:
    plain = limits.limits_for(a_record(), TLS13, "plain")
    assert plain.mib_per_s == {"disk read": 900.0, "disk write": 400.0, "link": 2500.0}
    enc = limits.limits_for(a_record(), TLS13, "encrypted", "TLS_AES_256_GCM_SHA384")
    assert enc.mib_per_s["cipher"] == pytest.approx(300.0)  # 2 cores ÷ (1/300 + 1/300)
    assert enc.cipher == "aes-256-gcm × 2 cores"
    # A suite whose cipher was not measured gives no cipher limit, not a guess.
    chacha = limits.limits_for(a_record(), TLS13, "encrypted", "TLS_CHACHA20_POLY1305_SHA256")
    assert "cipher" not in chacha.mib_per_s


def test_a_limit_that_failed_is_left_out() -> None:
    record = a_record(disk={"error": "fio failed"}, link=None)
    assert limits.limits_for(record, RSYNC, "plain").mib_per_s == {}
    assert limits.bound(50.0, limits.limits_for(record, RSYNC, "plain")) is None


@pytest.mark.parametrize(
    ("mib_per_s", "binding", "reading"),
    [
        (380.0, "disk write", "bound by the disk write"),
        (360.0, "disk write", "bound by the disk write"),  # exactly 90%
        (300.0, "", "below every limit (nearest: the disk write)"),
        (150.0, "", "far below every limit: none bound it"),
    ],
)
def test_a_result_is_set_against_its_lowest_limit(
    mib_per_s: float, binding: str, reading: str
) -> None:
    found = limits.bound(mib_per_s, limits.limits_for(a_record(), TLS13, "plain"))
    assert found is not None
    assert found.resource == "disk write" and found.limit_mib_per_s == 400.0
    assert found.pct == pytest.approx(mib_per_s / 4)
    assert found.binding == binding
    assert found.reading == reading


def test_the_cipher_binds_where_it_is_the_lowest() -> None:
    record = a_record(cipher=cipher_json(100 * MIB / 1e6))  # 100 MiB/s a core
    found = limits.bound(95.0, limits.limits_for(record, TLS13, "encrypted"))
    assert found is not None and found.binding == "cipher" and found.pct == pytest.approx(95.0)


def test_a_cell_without_aes_ni_is_set_against_the_cipher_measured_without_it() -> None:
    cipher = cipher_json(3000 * MIB / 1e6)  # 3000 MiB/s a core with AES-NI
    off = {**cipher["ciphers"][0], "accel": False, "mb_per_s_mean": 150 * MIB / 1e6}
    cipher["ciphers"].append(off)
    record = a_record(cipher=cipher)
    on = limits.limits_for(record, TLS13, "encrypted")
    without = limits.limits_for(record, replace(TLS13, aesni="off"), "encrypted")
    assert on.mib_per_s["cipher"] == pytest.approx(3000.0)  # 2 cores, encrypt + decrypt
    assert without.mib_per_s["cipher"] == pytest.approx(150.0)
    assert without.cipher == "aes-256-gcm without AES-NI × 2 cores"
    # Under the seed's mask openssl speed is not measured: no cipher limit, and it says so.
    seed = limits.limits_for(record, replace(TLS13, aesni="seed-mask"), "encrypted")
    assert "cipher" not in seed.mib_per_s
    assert seed.cipher == "aes-256-gcm under the 2017 study's mask (not measured)"
    # Never measured without AES-NI: no cipher limit rather than the accelerated one.
    alone = limits.limits_for(a_record(), replace(TLS13, aesni="off"), "encrypted")
    assert "cipher" not in alone.mib_per_s


# -- measuring once, keeping it on --resume ------------------------------------------------------
class FakeStore:
    def __init__(self, path: Path) -> None:
        self.path = path


def test_a_resumed_run_measures_only_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    called: list[str] = []
    # What each tool was asked for: fio's and iperf3's seconds, openssl speed's runs.
    lengths: list[tuple[str, int]] = []

    def fio(directory: Path, log_dir: Path, seconds: int) -> disk.DiskSpeed:
        called.append("fio")
        lengths.append(("fio", seconds))
        return disk.DiskSpeed(800.0, 300.0, True, 256, "1M", seconds, "fio-3.33")

    def iperf3(**kwargs: Any) -> link.LinkSpeed:
        called.append("iperf3")
        lengths.append(("iperf3", kwargs["seconds"]))
        raise ToolError("iperf3 measured nothing: unable to connect", phase="link limit")

    def speeds(plan: capacity.Plan) -> tuple[list[capacity.CipherResult], list[Any]]:
        called.append("openssl " + ",".join(j.algorithm for j in plan.jobs))
        lengths.append(("openssl", plan.repeats))
        stat = capacity.Stat(1500.0, 10.0, 3)
        return [capacity.CipherResult(j.algorithm, j.accel, 1, "encrypt", 16384, stat)
                for j in plan.jobs], []  # fmt: skip

    monkeypatch.setattr(disk, "measure_disk", fio)
    monkeypatch.setattr(link, "measure_link", iperf3)
    monkeypatch.setattr(capacity, "measure_speeds", speeds)
    record: dict[str, Any] = {}
    cells = [TLS13, SstCell("mariabackup", "CHACHA20", 1), RSYNC]

    def measure() -> None:
        measure_limits.measure(
            FakeStore(tmp_path),  # type: ignore[arg-type]
            record,
            cells,
            link_ends=(["r"], ["s"], "10.0.0.1"),
            rate_mbit=None,
            seconds=3,  # [state_transfer] limits_s
            cipher_repeats=4,  # cipher_speed_repeats
            log=lambda _: None,
        )

    measure()
    assert called == ["fio", "iperf3", "openssl aes-256-gcm,chacha20-poly1305"]
    assert lengths == [("fio", 3), ("iperf3", 3), ("openssl", 4)]
    part = record["limits"]
    assert part["disk"]["write_mib_per_s"] == 300.0 and part["disk"]["seconds"] == 3
    assert part["cipher"]["plan"]["repeats"] == 4  # the record says how it was measured
    assert "unable to connect" in part["link"]["error"]  # noted, and the run goes on
    called.clear()
    measure()  # --resume: the failed link again, nothing else
    assert called == ["iperf3"]

    def cipher(evp: str, accel: bool) -> bool:
        return measure_limits.measure_ciphers(part, [(evp, accel)], lambda _: None, repeats=1)

    assert cipher("aes-256-gcm", True) is False
    assert cipher("aes-128-gcm", True) is True
    assert called == ["iperf3", "openssl aes-128-gcm"]
    assert lengths[-1] == ("openssl", 1)
    # The same cipher without AES-NI is another measurement, made once.
    assert cipher("aes-128-gcm", False) is True
    assert cipher("aes-128-gcm", False) is False
    assert called == ["iperf3", "openssl aes-128-gcm", "openssl aes-128-gcm"]


# -- preflight ---------------------------------------------------------------------------------
def sst_profile() -> Profile:
    return parse('name = "sst"\nstudies = ["state-transfer"]\n', "p.toml")


@pytest.mark.parametrize("tool", ["fio", "iperf3"])
def test_missing_fio_or_iperf3_names_the_package(
    tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from encbench import proc
    from encbench.commands import preflight

    real = proc.which
    monkeypatch.setattr(proc, "which", lambda name: None if name == tool else real(name))
    monkeypatch.setattr(galera, "provider", lambda: Path("/x.so"))
    with pytest.raises(BadInput, match=f"^{tool} not found: apt-get install {tool} "):
        preflight.require_tools(sst_profile())


# -- the report --------------------------------------------------------------------------------
def run(variant: str, round_: int, stream_s: float) -> SstRecord:
    """100 MiB over the donor's stream: 100 / stream_s MiB/s."""
    return SstRecord(
        cell=RSYNC, round=round_, variant=variant, position=0, session="s",
        started_at="2026-11-23T00:00:00+00:00", wall_s=stream_s + 5, sync_s=stream_s + 4,
        transfer_s=stream_s, link_rx_bytes=100 * MIB, link_tx_bytes=MIB, donor_cpu_s=1.0,
        joiner_cpu_s=1.0, harness_cpu_s=0.01, other_cpu_s=0.0, steal_s=0.0,
        interference_pct=0.0,
        donor_transport="stunnel" if variant == "encrypted" else "rsync plain",
        joiner_transport="stunnel" if variant == "encrypted" else "rsync plain",
        stages={},
    )  # fmt: skip


def report_of(plain_s: float, encrypted_s: float, record: dict[str, Any]) -> tuple[Any, str]:
    from encbench.report.tables import Document
    from encbench.studies.state_transfer import section as state_transfer_section
    from encbench.studies.state_transfer import summary as state_transfer

    profile = parse(
        'name = "s"\nstudies = ["state-transfer"]\n[state_transfer]\nmethods = ["rsync"]\n'
        "min_rounds = 2\n",
        "p.toml",
    )
    runs = [run(v, r, plain_s if v == "plain" else encrypted_s)
            for r in (1, 2) for v in ("plain", "encrypted")]  # fmt: skip
    proof = {"rsync-t1": {"encrypted": {"cipher": "TLS_AES_256_GCM_SHA384"}, "plain": {}}}
    part = state_transfer.build(runs, profile, {"proofs": proof, "limits": record})
    return part, markdown.render(Document("t", state_transfer_section.sections(part)))


def test_the_report_names_the_resource_that_bound_each_result() -> None:
    # plain 100 MiB in 0.27 s = 370 MiB/s: 93% of the disk write (400); encrypted 100 MiB
    # in 0.35 s = 286 MiB/s: 95% of the cipher (300).
    part, text = report_of(0.27, 0.35, a_record())
    cell = part.cells[0]
    assert cell.limits["plain"].binding == "disk write"
    assert cell.limits["encrypted"].binding == "cipher"
    assert "cipher" not in cell.limits["plain"].limits_mib_per_s
    dumped = part.model_dump(mode="json")
    assert dumped["cells"][0]["limits"]["encrypted"]["pct_of_limit"] == pytest.approx(
        100 / 0.35 / 300 * 100
    )
    assert dumped["limits"]["disk"]["write_mib_per_s"] == 400.0
    assert "State transfer: against this machine's limits" in text
    assert (
        "| rsync, stunnel, 1 thread | encrypted | 286 | cipher 300 (aes-256-gcm × 2 cores) "
        "| 95% | bound by the cipher |"
    ) in text
    assert "| rsync, stunnel, 1 thread | plain | 370 | disk write 400 | 93% |" in text
    assert "within 10% of it: the cipher bound it" in text


def test_the_report_says_when_no_limit_bound_the_transfer() -> None:
    part, text = report_of(4.0, 5.0, a_record())  # 25 and 20 MiB/s
    assert all(not found.binding for found in part.cells[0].limits.values())
    assert "far below every limit: none bound it" in text
    assert "none of them bound it" in text and "does not measure" in text


def test_the_report_says_which_limit_was_not_measured_and_why() -> None:
    _, text = report_of(4.0, 5.0, a_record(link={"error": "link limit: iperf3 failed"}))
    assert "Link: not measured (link limit: iperf3 failed)." in text
    assert "Disk: sequential read **900 MiB/s**, write **400 MiB/s**" in text


def test_the_report_names_the_cipher_speeds_measured_without_aes_ni() -> None:
    cipher = cipher_json(300 * MIB / 1e6)
    cipher["ciphers"].append({**cipher["ciphers"][0], "accel": False, "mb_per_s_mean": 50.0})
    _, text = report_of(4.0, 5.0, a_record(cipher=cipher))
    assert "aes-256-gcm 300 MiB/s; aes-256-gcm without AES-NI 48 MiB/s" in text


def test_a_run_without_limits_has_no_limits_section() -> None:
    from encbench.studies.state_transfer import summary as state_transfer

    profile = parse('name = "s"\nstudies = ["state-transfer"]\n', "p.toml")
    part = state_transfer.build([], profile, {})
    assert part.limits is None
