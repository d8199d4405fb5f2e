"""The state-transfer study end to end through the CLI on more than smoke-sst's one cell: a
SIGTERM in the middle of a transfer (AES-NI off, the socats' masks read), the A/A calibration
on real nodes, and a three-node cluster whose rsync SSTs (stunnel) all come from the donor —
and nothing left behind.  Apart from test_state_transfer_run.py so that two workers of
`--dist loadfile` share the study's tests.  Needs root (namespaces)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest

from encbench.capacity import NO_AESNI_IA32CAP
from encbench.servers import registry
from encbench.servers.mariadb import galera
from encbench.studies.state_transfer.cluster import environment_of
from tests.helpers import encbench, namespaces_left, processes_owned_by, terminated_leaving_nothing
from tests.integration.state_transfer_checks import assert_each_cell_is_set_against_the_limits

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or galera.provider() is None,
    reason="needs root (network namespaces) and galera-4 (scripts/setup.sh)",
)


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
    smoke = (files("encbench.profiles.builtin") / "smoke-sst.toml").read_text()
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
    terminated_leaving_nothing(child, out, state_dir)


def test_an_aa_calibration_streams_both_sides_plain_on_the_wire(
    tmp_path: Path, state_dir: Path
) -> None:
    """The A/A twin on real nodes: B's rsync SST goes by rsync's own daemon, not stunnel, its
    capture shows the marker, and the calibration lands in the machine's file."""
    prof = tmp_path / "aa.toml"
    prof.write_text(
        'name = "aa-sst"\nstudies = ["state-transfer"]\n[data]\ntables = 1\ntable_size = 2000\n'
        '[state_transfer]\nmethods = ["rsync"]\nmin_rounds = 2\nmax_rounds = 2\n'
        # The path, not the limits' figures: fio and iperf3 1 s each, as smoke-sst.
        "limits_s = 1\n"
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
        # The path, not the limits' figures: as smoke-sst, one openssl speed run of the
        # cipher, and fio and iperf3 1 s each.
        'name = "three"\nstudies = ["state-transfer"]\ncipher_speed_repeats = 1\n'
        '[state_transfer]\nlimits_s = 1\nmethods = ["rsync"]\n'
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
