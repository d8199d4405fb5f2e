"""The in-transit study end to end through the CLI: native TLS, stunnel and an SSH tunnel on
one host and at an emulated distance, every run proven; and an interrupted run that leaves
no server, tunnel, relay or namespace behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from encbench import proc
from encbench.servers import registry
from tests.helpers import namespaces_left, processes_owned_by, run_cli, skip_unless_ci


def transit_profile(path: Path, **settings: str) -> Path:
    values = {
        "tests": '["connect", "bulk"]',
        "methods": '["tls"]',
        "connect_threads": "[1]",
        "rtt_ms": "[0]",
        "bulk_mb": "8",
        "warmup_s": "0",
        "min_rounds": "2",
        "max_rounds": "2",
        "interference_max_pct": "100",  # mechanics, not noise: see tests/helpers.tiny_profile
    }
    values.update(settings)
    body = "\n".join(f"{k} = {v}" for k, v in values.items())
    path.write_text(f'name = "tiny-transit"\nstudies = ["in-transit"]\n[transit]\n{body}\n')
    return path


def records(out: Path) -> list[dict]:  # type: ignore[type-arg]
    path = out / "in-transit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_short_transit_run_proves_and_pairs_every_run(tmp_path: Path, state_dir: Path) -> None:
    needed = [n for n in ("stunnel4", "sshd") if proc.which(n) is None]
    if needed:
        skip_unless_ci(f"{', '.join(needed)} not installed: run scripts/setup-test-extras.sh")
    prof = transit_profile(
        tmp_path / "t.toml", methods='["tls", "stunnel", "ssh"]', stunnel_resume="[false, true]"
    )
    out = tmp_path / "out"
    result, pid = run_cli("run", str(prof), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr

    runs = records(out)
    # connect and bulk, each through tls, stunnel (without and with resumption) and ssh:
    # 8 cells × 2 rounds × 2 variants
    assert len(runs) == 8 * 2 * 2
    for run in runs:
        cell = run["cell"]
        if run["variant"] == "plain":
            assert run["tls_handshakes"] == 0 and run["tunnel_handshakes"] == 0
        elif cell["method"] == "tls":
            assert run["tls_handshakes"] >= (run["events"] if cell["test"] == "connect" else 1)
        else:  # MariaDB sees plain TCP from the tunnel; the tunnel did the handshakes
            assert run["tls_handshakes"] == 0 and run["tunnel_handshakes"] >= 1
        if cell["method"] == "stunnel" and run["variant"] == "encrypted":
            if cell["resume"] and cell["test"] == "connect":
                assert run["tunnel_resumed"] > 0  # stunnel's client resumes when allowed
            if not cell["resume"]:
                assert run["tunnel_resumed"] == 0

    def mean_rate(method: str, variant: str) -> float:
        rates = [
            r["rate"]
            for r in runs
            if r["cell"]["test"] == "connect"
            and r["cell"]["method"] == method
            and not r["cell"]["resume"]
            and r["variant"] == variant
        ]
        return sum(rates) / len(rates)

    # An RSA handshake per connection costs far more than a plain connect, on any machine.
    assert mean_rate("tls", "encrypted") < mean_rate("tls", "plain") / 2

    summary = json.loads((out / "summary.json").read_text())
    proofs = {c["label"]: c["proof"] for c in summary["studies"]["in-transit"]["cells"]}
    assert all(p and p["plain"] == "plain" for p in proofs.values())
    assert proofs["connect tls rsa2048 1 thr"]["encrypted"].startswith("TLSv1.3 TLS_")
    ssh = proofs["connect ssh rsa2048 aes128-gcm@openssh.com 1 thr"]["encrypted"]
    # AEAD: no MAC of its own; the key exchange is named, once per tunnel
    assert ssh.startswith("ssh: aes128-gcm@openssh.com (key exchange ")
    assert proofs["connect stunnel rsa2048 1 thr"]["encrypted"].startswith(
        "stunnel: TLSv1.3 ciphersuite: TLS_"
    )
    report = (out / "report.md").read_text()
    heading = "### Connection setup per new connection over loopback: connect, SELECT 1, disconnect"
    assert heading in report and "a connection pool" in report
    assert "| method | threads | plain conn/s (95% CI) |" in report
    assert "Ssl_session_cache_hits" in report and "cannot be measured with reuse" in report
    assert {r["rate_unit"] for r in runs} == {"conn/s", "MiB/s"}
    assert not (out / "private").exists(), "a finished run keeps no keys or passwords"
    assert processes_owned_by(pid) == []
    assert registry.entries() == []
    assert not (out / "sandbox").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_a_distance_is_measured_through_two_namespaces_and_removed(
    tmp_path: Path, state_dir: Path
) -> None:
    prof = transit_profile(tmp_path / "t.toml", tests='["connect"]', rtt_ms="[0, 30]")
    out = tmp_path / "out"
    result, pid = run_cli("run", str(prof), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr
    far = [r for r in records(out) if r["cell"]["rtt_ms"] == 30]
    near = [r for r in records(out) if r["cell"]["rtt_ms"] == 0]
    assert far and near
    # At 30 ms a connection takes several round trips: the rate is bounded by the distance.
    assert max(r["rate"] for r in far) < 1000 / 30
    assert min(r["rate"] for r in near) > 1000 / 30
    report = (out / "report.md").read_text()
    assert "### Rate lost to encryption, by network distance" in report
    assert "RTT 30 ms" in report
    assert namespaces_left(state_dir) == []
    assert processes_owned_by(pid) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_a_dhe_connect_row_and_tunnels_and_queries_at_a_distance_are_proven(
    tmp_path: Path, state_dir: Path
) -> None:
    needed = [n for n in ("stunnel4", "sshd") if proc.which(n) is None]
    if needed:
        skip_unless_ci(f"{', '.join(needed)} not installed: run scripts/setup-test-extras.sh")
    prof = transit_profile(
        tmp_path / "t.toml",
        tests='["connect", "oltp_point_select"]',
        distance_tests='["connect", "oltp_point_select"]',
        methods='["tls", "stunnel", "ssh"]',
        tls_version='"TLSv1.2"',
        ciphers='["DHE-RSA-AES256-SHA"]',
        ssh_ciphers='["aes128-ctr"]',
        query_threads="[1]",
        table_size="1000",
        rtt_ms="[20]",
    )
    out = tmp_path / "out"
    result, pid = run_cli("run", str(prof), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr

    runs = records(out)
    # connect through TLS (DHE), stunnel and ssh, and point selects over TLS: all at 20 ms
    assert len(runs) == 4 * 2 * 2 and {r["cell"]["rtt_ms"] for r in runs} == {20}
    for run in runs:
        cell = run["cell"]
        # every path, the tunnels' included, crossed the delayed link: a connection takes a
        # few round trips of 20 ms, a point select one
        assert run["rate"] < 1000 / 20, (cell, run["variant"], run["rate"])
        if run["variant"] == "encrypted" and cell["method"] != "tls":
            assert run["tunnel_handshakes"] >= run["events"] and run["tls_handshakes"] == 0
    # The tunnels' CPU is read across both namespaces (a run's alone may be under one tick).
    tunneled = [r for r in runs if r["variant"] == "encrypted" and r["cell"]["method"] != "tls"]
    assert sum(r["tunnel_cpu_s"] for r in tunneled) > 0
    summary = json.loads((out / "summary.json").read_text())
    proofs = {c["label"]: c["proof"] for c in summary["studies"]["in-transit"]["cells"]}
    dhe = "connect tls rsa2048 DHE-RSA-AES256-SHA rtt 20 ms 1 thr"
    assert proofs[dhe]["encrypted"] == "TLSv1.2 DHE-RSA-AES256-SHA"
    ssh = proofs["connect ssh rsa2048 aes128-ctr rtt 20 ms 1 thr"]["encrypted"]
    assert ssh.startswith("ssh: aes128-ctr (MAC ") and "key exchange" in ssh
    stunnel = proofs["connect stunnel rsa2048 rtt 20 ms 1 thr"]["encrypted"]
    assert stunnel.startswith("stunnel: TLSv1.2 ciphersuite: ")
    assert proofs["oltp_point_select tls rsa2048 rtt 20 ms 1 thr"]["encrypted"].startswith(
        "TLSv1.2 "
    )
    report = (out / "report.md").read_text()
    assert "### The SSH tunnel's cost on new connections" in report
    assert "SSH tunnel, new connections at RTT 20 ms (1 thr): aes128-ctr" in report
    assert "Rates at a distance: Per query on persistent connections: oltp_point_select" in report
    assert processes_owned_by(pid) == [] and namespaces_left(state_dir) == []
    assert registry.entries() == []


def test_an_interrupted_transit_run_leaves_no_server_tunnel_relay_or_namespace(
    tmp_path: Path, state_dir: Path
) -> None:
    # SIGTERM; SIGINT and SIGHUP go through the same handler (tests/test_stop_signals.py).
    sig = signal.SIGTERM
    if proc.which("stunnel4") is None:
        skip_unless_ci("stunnel4 not installed: run scripts/setup-test-extras.sh")
    rtts = "[0, 20]" if os.geteuid() == 0 else "[0]"
    prof = transit_profile(
        tmp_path / "t.toml",
        tests='["connect"]',
        methods='["stunnel", "tls"]',
        rtt_ms=rtts,
        # Short native cells, then stunnel cells long enough to be interrupted in (at 8 s a
        # busy machine's full suite once let the whole run end before the signal came).
        max_rounds="100",
        cell_budget_s="12",
    )
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(prof), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )
    deadline = time.monotonic() + 180
    # Wait until a tunnel is up and measuring (stunnel runs after the first native cells).
    tunnel_up = False
    while time.monotonic() < deadline and child.poll() is None and not tunnel_up:
        tunnel_up = any("stunnel" in p for p in processes_owned_by(child.pid))
        tunnel_up = tunnel_up and bool(records(out))
        time.sleep(0.2)
    assert tunnel_up, child.stderr.read() if child.stderr else "no stunnel within 180 s"
    child.send_signal(sig)
    _, stderr = child.communicate(timeout=120)

    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert processes_owned_by(child.pid) == []
    assert namespaces_left(state_dir) == []
    assert registry.entries() == []
    assert not (out / "sandbox").exists()
    kept = records(out)
    assert kept  # what was measured is kept
    assert (out / "report.md").exists()

    resumed, pid = run_cli("run", "--resume", str(out), state_dir=state_dir)
    assert resumed.returncode == 0, resumed.stderr
    after = records(out)
    assert after[: len(kept)] == kept  # nothing measured was lost or rewritten
    summary = json.loads((out / "summary.json").read_text())
    assert all(c["rounds"] >= 2 for c in summary["studies"]["in-transit"]["cells"])
    assert processes_owned_by(pid) == [] and namespaces_left(state_dir) == []
