"""The state-transfer study's raw pipelines end to end through the CLI (profile
smoke-pipelines): a real donor node on its own namespace; real `mariadb-backup
--stream=xbstream` (--parallel 1 and 2) and `tar` streams, and rsync per directory (1 and 2
at a time), over socat to the joiner's namespace, plain against socat's openssl address with
a TLS 1.2 suite; the proof on the wire, the limits, the report — and nothing left behind, on
success and after a SIGTERM in the middle of a pipeline.  Needs root (namespaces)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.resources import files
from pathlib import Path

import pytest

from encbench.servers import registry
from encbench.servers.mariadb import galera
from tests.helpers import encbench, namespaces_left, processes_owned_by, terminated_leaving_nothing

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or galera.provider() is None,
    reason="needs root (network namespaces) and galera-4 (scripts/setup.sh)",
)
SUITE = "ECDHE-RSA-AES128-GCM-SHA256"


def smoke_pipelines_at_two_threads(directory: Path) -> Path:
    """smoke-pipelines with backup_threads = [2] alone: each real pipeline once (xbstream
    --parallel 2, tar, rsync per directory two at a time).  A thread count only changes the
    cells the profile makes, mariadb-backup's --parallel and the rsync pool's size, which
    tests/studies/state_transfer/test_sst_pipelines.py proves with the real parser, argv and pool
    (1 thread: the
    cells test; rsync-dir and tar on the loopback), so one count here is enough.  No round
    is measured again for the machine's other load (mechanics, not noise, as
    tests/helpers.tiny_profile): nothing below counts the rounds."""
    smoke = (files("encbench.profiles.builtin") / "smoke-pipelines.toml").read_text()
    assert "\nbackup_threads = [1, 2]\n" in smoke
    assert smoke.count("[state_transfer]\n") == 1
    profile = directory / "smoke-pipelines-t2.toml"
    profile.write_text(
        smoke.replace('"smoke-pipelines"', '"smoke-pipelines-t2"')
        .replace("\nbackup_threads = [1, 2]\n", "\nbackup_threads = [2]\n")
        .replace("[state_transfer]\n", "[state_transfer]\ninterference_max_pct = 100\n")
    )
    return profile


def test_the_smoke_pipelines_profile_streams_tar_and_xbstream_proves_the_wire_and_leaves_nothing(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    profile = smoke_pipelines_at_two_threads(tmp_path)
    result = encbench(
        "run", str(profile), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)}
    )
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "state-transfer.jsonl").read_text().splitlines()]
    slugs = {r["cell"]["method"] + f"-t{r['cell']['backup_threads']}" for r in runs}
    assert slugs == {"xbstream-t2", "tar-t1", "rsync-dir-t2"}
    record = json.loads((out / "state-transfer.json").read_text())
    size = record["data"]["database_bytes"]
    for r in runs:
        want = "socat openssl" if r["variant"] == "encrypted" else "socat plain"
        assert r["donor_transport"] == r["joiner_transport"] == want
        # sender's start → receiver's exit, then the sync: every stage inside the whole
        assert r["sync_s"] >= r["transfer_s"] > 0
        assert r["stages"]["pipeline: sync -f of the target"] >= 0
        assert r["link_rx_bytes"] > size > 0  # the donor's tables crossed the link
        assert r["donor_cpu_s"] > 0 and r["joiner_cpu_s"] > 0
    setup = record["pipelines"]
    assert setup["socat_buffer_kib"] == 1024
    assert setup["page_cache"].startswith("dropped before each run")
    proofs = record["proofs"]
    assert set(proofs) == {"xbstream-aes128-gcm-t2", "tar-aes128-gcm-t1", "rsync-dir-aes128-gcm-t2"}
    for proof in proofs.values():
        assert proof["plain"]["marker_hits"] > 0  # the positive control
        assert proof["encrypted"]["marker_hits"] == 0
        assert proof["encrypted"]["protocol"] == "TLSv1.2"
        assert proof["encrypted"]["cipher"] == SUITE
    assert "aes-128-gcm" in [c["cipher"] for c in record["limits"]["cipher"]["ciphers"]]

    summary = json.loads((out / "summary.json").read_text())
    cells = summary["studies"]["state-transfer"]["cells"]
    assert [c["method"] for c in cells] == ["xbstream", "tar", "rsync-dir"]
    for c in cells:
        assert "cipher" in c["limits"]["encrypted"]["limits_mib_per_s"]
    report = (out / "report.md").read_text()
    assert "| pipeline tar, socat TLS 1.2 AES128-GCM, 1 thread |" in report
    assert "| pipeline xbstream, socat TLS 1.2 AES128-GCM, 2 threads |" in report
    assert "| pipeline rsync-dir, socat TLS 1.2 AES128-GCM, 2 threads |" in report
    assert "mariadb-backup 10.11 has no encryption of its own" in report
    # nothing left behind: nodes, pipelines, sandboxes, namespaces, keys and certificates
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []
    assert not (out / "private").exists()


def test_a_sigterm_during_a_pipeline_leaves_nothing(tmp_path: Path, state_dir: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", "smoke-pipelines", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 240
    # A pipeline is under way once its receiving socat or mbstream belongs to the run.
    while time.monotonic() < deadline and child.poll() is None:
        if any("mbstream" in p or "socat" in p for p in processes_owned_by(child.pid)):
            break
        time.sleep(0.02)
    assert child.poll() is None, child.stderr.read() if child.stderr else ""
    terminated_leaving_nothing(child, out, state_dir)
