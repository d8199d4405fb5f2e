"""The state-transfer study end to end through the CLI (profile smoke-sst): a real 2-node
Galera cluster on two network namespaces, real SSTs by mariadb-backup (socat, TLS 1.3; and
rsync by stunnel in the three-node test), the proof on the wire, the limits beside them
(fio on the sandbox's disk, iperf3 across the namespaces, openssl speed), the report's
tables, and nothing left behind — on success, and after a SIGTERM in the middle of a
transfer.  Needs root (namespaces)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest

from encbench.capacity import NO_AESNI_IA32CAP
from encbench.servers import galera, registry
from encbench.studies.state_transfer.cluster import environment_of
from tests.helpers import encbench, namespaces_left, processes_owned_by

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or galera.provider() is None,
    reason="needs root (network namespaces) and galera-4 (scripts/setup.sh)",
)


def assert_each_cell_is_set_against_the_limits(cells: list[dict]) -> None:  # type: ignore[type-arg]
    for c in cells:
        assert set(c["limits"]) == {"plain", "encrypted"}
        assert set(c["limits"]["plain"]["limits_mib_per_s"]) == {"disk read", "disk write", "link"}
        assert "cipher" in c["limits"]["encrypted"]["limits_mib_per_s"]
        for side in c["limits"].values():
            assert side["pct_of_limit"] > 0 and side["reading"]


def test_the_smoke_sst_profile_measures_mariabackup_proves_the_wire_and_leaves_nothing(
    tmp_path: Path, state_dir: Path
) -> None:
    # smoke-sst's mariabackup cell: its rsync cell (stunnel) runs, with the same checks, in
    # the three-node test below, which needs rsync anyway (a unit test proves smoke-sst makes
    # both cells).  And no round measured again for the machine's other load (mechanics, not
    # noise, as tests/helpers.tiny_profile): on a busy machine each would add a transfer
    # (mariabackup's at least 10 s).  Nothing below counts the rounds.  With a light load on
    # the donor during each transfer, and every node encrypted at rest.
    profile = tmp_path / "smoke-sst-mariabackup.toml"
    smoke = (files("encbench.profiles") / "smoke-sst.toml").read_text()
    methods = 'methods = ["mariabackup", "rsync"]\n'
    assert smoke.count("[state_transfer]\n") == 1 and methods in smoke
    profile.write_text(
        smoke.replace('"smoke-sst"', '"smoke-sst-mariabackup"')
        .replace(
            "[state_transfer]\n",
            "[state_transfer]\ninterference_max_pct = 100\ndonor_load_threads = 1\n"
            "donor_load_rate = 100\ndonor_load_before_s = 2\ndonor_encrypted_at_rest = true\n",
        )
        .replace(methods, 'methods = ["mariabackup"]\n')
    )
    out = tmp_path / "out"
    result = encbench(
        "run", str(profile), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)}
    )
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "state-transfer.jsonl").read_text().splitlines()]
    by_method: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for run in runs:
        by_method.setdefault(run["cell"]["method"], []).append(run)
    assert set(by_method) == {"mariabackup"}
    want = {
        ("mariabackup", "plain"): "socat plain",
        ("mariabackup", "encrypted"): "socat openssl",
    }
    record = json.loads((out / "state-transfer.json").read_text())
    size = record["data"]["database_bytes"]
    for method, method_runs in by_method.items():
        assert {r["variant"] for r in method_runs} == {"plain", "encrypted"}
        for r in method_runs:
            assert r["joiner_transport"] == r["donor_transport"] == want[(method, r["variant"])]
            assert r["sync_s"] > r["transfer_s"] > 0
            # the donor's tables crossed the link (InnoDB files are sent whole)
            assert r["link_rx_bytes"] > size > 0
            assert r["donor_cpu_s"] > 0 and r["joiner_cpu_s"] > 0
            # the donor served its load before and during the transfer (10 s at least)
            assert r["donor_tps_before"] > 0 and r["donor_tps_during"] > 0
            assert r["donor_p95_before_ms"] > 0 and r["donor_p95_during_ms"] > 0
            assert 0 < r["sync_less_pause_s"] < r["sync_s"]
    # the donor's tables were encrypted at rest; every run's joiner read them back encrypted
    assert record["at_rest"]["donor_tables_encrypted"] == record["at_rest"]["tables"] == 2
    assert record["donor_load"]["threads"] == 1
    proofs = record["proofs"]
    assert set(proofs) == {"mariabackup-tlsv13-t1"}
    for proof in proofs.values():
        assert proof["plain"]["marker_hits"] > 0  # the positive control
        assert proof["encrypted"]["marker_hits"] == 0
        assert proof["encrypted"]["protocol"].startswith("TLSv1.")
    assert proofs["mariabackup-tlsv13-t1"]["encrypted"]["protocol"] == "TLSv1.3"

    # The limits, measured once before the nodes started: fio on the sandbox's filesystem,
    # iperf3 between the namespaces, openssl speed of TLS 1.3's cipher.
    limits = record["limits"]
    assert limits["disk"]["read_mib_per_s"] > 0 and limits["disk"]["write_mib_per_s"] > 0
    assert limits["link"]["mib_per_s"] > 0 and limits["link"]["direction"] == "donor → joiner"
    assert "aes-256-gcm" in [c["cipher"] for c in limits["cipher"]["ciphers"]]
    assert (out / "raw" / "state-transfer-limits" / "disk-limit.fio.json").exists()

    summary = json.loads((out / "summary.json").read_text())
    cells = summary["studies"]["state-transfer"]["cells"]
    assert [c["method"] for c in cells] == ["mariabackup"]
    assert_each_cell_is_set_against_the_limits(cells)
    report = (out / "report.md").read_text()
    assert "State transfer (Galera SST): plain against encrypted" in report
    assert "| mariabackup, socat TLS 1.3, 1 thread |" in report
    assert "State transfer: against this machine's limits" in report
    assert "| mariabackup, socat TLS 1.3, 1 thread | encrypted |" in report
    assert "The best encrypted pipeline" in report
    assert "The donor's own clients while it serves the transfer" in report
    assert "Encrypted at rest, both variants" in report
    assert "less the donor's fixed pause" in report
    # report.html plots the study: times and stream rates against the limits, and the cost.
    page = (out / "report.html").read_text()
    assert "time to Synced and the donor&#x27;s stream rate per transfer" in page
    assert 'aria-label="State transfer: cost of encryption, per row"' in page
    # nothing left behind: nodes, sandboxes, namespaces, keys and certificates
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []
    assert not (out / "private").exists()


@pytest.mark.parametrize("during", ["fio", "iperf3"])
def test_a_sigterm_while_the_limits_are_measured_leaves_nothing(
    during: str, tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", "smoke-sst", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    # The measuring tool is running once one of its processes belongs to the run.
    while time.monotonic() < deadline and child.poll() is None:
        if any(during in p for p in processes_owned_by(child.pid)):
            break
        time.sleep(0.05)
    assert child.poll() is None, child.stderr.read() if child.stderr else ""
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode in (130, 143), stderr
    assert "Traceback" not in stderr
    # Stopped inside the measurement: its record was never written.
    assert not (out / "state-transfer.json").exists()
    assert processes_owned_by(child.pid) == []
    assert not (out / "sandbox").exists()  # fio's test file with it
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []


def socat_masks(owner_pid: int) -> dict[int, str]:
    """OPENSSL_ia32cap of each socat the run has running now, by pid."""
    found = {}
    for line in processes_owned_by(owner_pid):
        pid, _, cmdline = line.partition(" ")
        program, *arguments = cmdline.split() or [""]
        # The SST script's `socat -V` (a version check) is not a stream's end.
        if program.endswith("socat") and arguments != ["-V"]:
            mask = environment_of(int(pid), "OPENSSL_ia32cap")
            # A socat may have exited between the listing and this read: a zombie's or a
            # reaped process's environment reads as empty, which says nothing of its mask.
            if mask or still_running(int(pid)):
                found[int(pid)] = mask
    return found


def still_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_sigterm_during_a_transfer_leaves_nothing(tmp_path: Path, state_dir: Path) -> None:
    """smoke-sst with AES-NI off: the donor restarts with the mask, and the socat that its
    SST script starts, and the joiner's, carry it; then a SIGTERM mid-transfer."""
    profile = tmp_path / "smoke-sst-aesni-off.toml"
    smoke = (files("encbench.profiles") / "smoke-sst.toml").read_text()
    assert smoke.rstrip().splitlines()[-1].startswith("cell_budget_s")  # [state_transfer] last
    profile.write_text(smoke.replace('"smoke-sst"', '"smoke-sst-aesni-off"') + 'aesni = ["off"]\n')
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(profile), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    joiner_log = out / "sandbox" / "galera-joiner" / "error.log"
    deadline = time.monotonic() + 240
    masks: dict[int, str] = {}
    # A transfer is under way once the joiner's SST script has spoken and both ends' socat
    # run (the joiner's listens through the donor's 10 s pause before it streams).
    while time.monotonic() < deadline and child.poll() is None:
        masks.update(socat_masks(child.pid))
        spoken = joiner_log.exists() and "WSREP_SST" in joiner_log.read_text(errors="replace")
        if spoken and len(masks) >= 2:
            break
        time.sleep(0.1)
    assert child.poll() is None, child.stderr.read() if child.stderr else ""
    assert len(masks) >= 2 and set(masks.values()) == {NO_AESNI_IA32CAP}, masks
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=180)
    assert child.returncode in (130, 143), stderr
    assert "Traceback" not in stderr
    assert processes_owned_by(child.pid) == []
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []


def test_an_aa_calibration_streams_both_sides_plain_on_the_wire(
    tmp_path: Path, state_dir: Path
) -> None:
    """The A/A twin on real nodes: B's rsync SST goes by rsync's own daemon, not stunnel, its
    capture shows the marker, and the calibration lands in the machine's file."""
    prof = tmp_path / "aa.toml"
    prof.write_text(
        'name = "aa-sst"\nstudies = ["state-transfer"]\n[data]\ntables = 1\ntable_size = 2000\n'
        '[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\nmax_rounds = 2\n'
        # Mechanics, not noise: no transfer repeated for the machine's other load.
        "interference_max_pct = 100\n"
    )
    out = tmp_path / "out"
    result = encbench("calibrate", str(prof), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "proving the B (plain twin) stream" in result.stderr
    runs = [json.loads(line) for line in (out / "state-transfer.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    assert {r["donor_transport"] for r in runs} == {"rsync plain"}
    assert {r["joiner_transport"] for r in runs} == {"rsync plain"}
    record = json.loads((out / "state-transfer.json").read_text())
    assert record["calibration"] is True
    twin = record["proofs"]["rsync-t1"]["encrypted"]
    assert twin["marker_hits"] > 0 and twin["protocol"] == ""
    # Nothing encrypted: no cipher limit measured.
    assert record["limits"].get("cipher", {}).get("ciphers", []) == []
    machine = json.loads((state_dir / "encbench" / "calibration.json").read_text())
    # Two rounds give no interval (that needs 12): the cell is listed, not yet judged.
    assert [c["study"] for c in machine["calibration"]["cells"]] == ["state-transfer"]
    assert namespaces_left(state_dir) == []
    assert processes_owned_by(os.getpid()) == []


def test_a_three_node_cluster_keeps_its_peer_and_every_transfer_comes_from_the_donor(
    tmp_path: Path, state_dir: Path
) -> None:
    """nodes = 3: the peer joins once and stays; the joiner joins both, its SST pinned to the
    donor; the donor, restarted for the AES-NI-off cell, rejoins through the peer instead
    of bootstrapping a second cluster."""
    prof = tmp_path / "three.toml"
    prof.write_text(
        'name = "three"\nstudies = ["state-transfer"]\n[state_transfer]\nmethods = ["rsync"]\n'
        'aesni = ["off"]\nnodes = 3\ntables = 1\ntable_size = 2000\nmin_rounds = 2\n'
        # Mechanics, not noise: no round measured again for other load (the count of
        # transfers below is exact), as in tests/helpers.tiny_profile.
        "max_rounds = 2\ninterference_max_pct = 100\n"
    )
    out = tmp_path / "out"
    result = encbench("run", str(prof), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)})
    assert result.returncode == 0, result.stderr
    assert "the third node joins" in result.stderr
    assert "restarting the donor with AES-NI off" in result.stderr
    record = json.loads((out / "state-transfer.json").read_text())
    assert record["nodes"] == 3 and set(record["cluster"]) == {"donor", "joiner", "peer"}
    assert "switch" in record["link"]["method"]
    runs = [json.loads(line) for line in (out / "state-transfer.jsonl").read_text().splitlines()]
    assert len(runs) == 4  # 2 rounds × 2 variants
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    size = record["data"]["database_bytes"]
    for run in runs:
        # The donor's own SST log carried each stream: the peer donated none of them.
        want = "stunnel" if run["variant"] == "encrypted" else "rsync plain"
        assert run["donor_transport"] == run["joiner_transport"] == want
        # rsync's SST as the smoke test checks mariabackup's (this is the suite's rsync cell)
        assert run["sync_s"] > run["transfer_s"] > 0
        # the donor's tables crossed the link (InnoDB files are sent whole)
        assert run["link_rx_bytes"] > size > 0
        assert run["donor_cpu_s"] > 0 and run["joiner_cpu_s"] > 0
    assert set(record["proofs"]) == {"rsync-t1-noaesni"}
    proof = record["proofs"]["rsync-t1-noaesni"]
    assert proof["plain"]["marker_hits"] > 0 and proof["encrypted"]["marker_hits"] == 0
    assert proof["encrypted"]["protocol"].startswith("TLSv1.")
    cells = json.loads((out / "summary.json").read_text())["studies"]["state-transfer"]["cells"]
    assert [c["method"] for c in cells] == ["rsync"]
    assert_each_cell_is_set_against_the_limits(cells)
    assert "| rsync, stunnel, 1 thread, AES-NI off |" in (out / "report.md").read_text()
    # Galera's own account, in the donor's log: each of the joiner's 6 transfers (2 proof
    # transfers and 4 runs) came from the donor; the restarted donor rejoined through the peer.
    donor_log = (out / "logs" / "state-transfer" / "donor-error.log").read_text(errors="replace")
    requests = [line for line in donor_log.splitlines() if "requested state transfer" in line]
    joiner = [line for line in requests if "(joiner) requested" in line]
    # "Selected I.S (donor)": I is the donor's index among the members, which Galera orders
    # by their random UUIDs, so only the name is the donor's (1.0 in one run, 0.0 in another).
    chose_donor = re.compile(r"Selected \d+\.\d+ \(donor\)")
    assert len(joiner) == 6 and all(chose_donor.search(line) for line in joiner), joiner
    assert any("(donor) requested" in line and "(peer)(SYNCED)" in line for line in requests)
    assert namespaces_left(state_dir) == []
    assert registry.entries() == []
    assert processes_owned_by(os.getpid()) == []
