"""The state-transfer study end to end through the CLI (profile smoke-sst): a real 2-node
Galera cluster on two network namespaces, real SSTs by mariadb-backup (socat, TLS 1.3), the
proof on the wire, the limits beside them (fio on the sandbox's disk, iperf3 across the
namespaces, openssl speed), the report's tables, and nothing left behind — on success, and
after a SIGTERM while the limits are measured.  Its rsync cell (stunnel), three nodes, the
A/A calibration and a SIGTERM mid-transfer are in test_state_transfer_cluster_run.py: two
files, so that two workers of `--dist loadfile` share them.  Needs root (namespaces)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest

from encbench.servers import registry
from encbench.servers.mariadb import galera
from tests.helpers import encbench, namespaces_left, processes_owned_by
from tests.integration.state_transfer_checks import assert_each_cell_is_set_against_the_limits

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or galera.provider() is None,
    reason="needs root (network namespaces) and galera-4 (scripts/setup.sh)",
)


def test_the_smoke_sst_profile_measures_mariabackup_proves_the_wire_and_leaves_nothing(
    tmp_path: Path, state_dir: Path
) -> None:
    # smoke-sst's mariabackup cell: its rsync cell (stunnel) runs, with the same checks, in
    # the three-node test (test_state_transfer_cluster_run.py), which needs rsync anyway (a
    # unit test proves smoke-sst makes both cells).  And no round measured again for the
    # machine's other load (mechanics, not noise, as tests/helpers.tiny_profile): on a busy
    # machine each would add a transfer (mariabackup's at least 10 s).  Nothing below counts
    # the rounds.  With a light load on the donor during each transfer, and every node
    # encrypted at rest.
    profile = tmp_path / "smoke-sst-mariabackup.toml"
    smoke = (files("encbench.profiles.builtin") / "smoke-sst.toml").read_text()
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
    # as long as smoke-sst says (limits_s, cipher_speed_repeats), and the record says so
    assert limits["disk"]["seconds"] == 1 and round(limits["link"]["seconds"]) == 1
    assert limits["cipher"]["plan"]["repeats"] == 1

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
