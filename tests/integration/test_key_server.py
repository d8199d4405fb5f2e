"""The key server, real: OpenBao started by encbench in production mode on the run's own CA,
initialized, unsealed, its keys written as MariaDB's hashicorp_key_management plugin reads
them, and a token limited by policy to reading them; its secrets 0600 and in no process's
arguments; nothing left once stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from encbench import proc
from encbench.errors import ProofError
from encbench.servers import key_server, keys, pki, registry
from tests.helpers import processes_owned_by, run_cli

pytestmark = pytest.mark.integration


def test_openbao_serves_the_keys_to_a_token_that_can_only_read_them(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    made = pki.generate(tmp_path, "ecdsa-p256")
    server = key_server.KeyServer(private / "key-server", made)
    try:
        server.start()
        assert server.process is not None
        pid = server.process.pid
        server.initialize((1, 2))
        assert server.write_key(1, "ab" * 32) == 2  # a second version of key 1
        proven = server.prove(1)
        assert "version 2" in proven["key"] and "nothing else" in proven["token"]
        assert server.key_reads(1) == 1  # the proof's own read, in the audit log
        assert stat.S_IMODE(server.audit_log.stat().st_mode) == 0o600
        token = server.token_file.read_text()
        unseal = (server.root / "unseal-key").read_text().strip()
        for secret in (server.token_file, server.root / "unseal-key", server.root / "openbao.hcl"):
            assert stat.S_IMODE(secret.stat().st_mode) == 0o600, secret
        assert stat.S_IMODE(server.root.stat().st_mode) == 0o700
        arguments = " ".join(
            " ".join(p.info["cmdline"] or []) for p in psutil.process_iter(["cmdline"])
        )
        assert token not in arguments and unseal not in arguments
        assert token not in server.log.read_text() and unseal not in server.log.read_text()
        # A token that may write keys is no key reader's: the proof refuses it.
        assert server._root_token is not None
        keys.write_secret(server.token_file, server._root_token)
        with pytest.raises(ProofError, match="more than read keys"):
            server.prove(1)
    finally:
        server.stop()
    assert proc.wait_gone(pid, 10)


PROFILE = """name = "key-server-tiny"
studies = ["at-rest"]
[server]
key_provider = "key-server"
[data]
tables = 1
table_size = 2000
[measure]
workloads = ["oltp_read_write"]
regimes = ["in-memory"]
threads = [1]
warmup_s = 0
run_s = 1
min_rounds = 2
max_rounds = {rounds}
cell_budget_s = {budget}
interference_max_pct = 100
"""


def _profile(tmp_path: Path, rounds: int = 2, budget: int = 30) -> Path:
    path = tmp_path / "key-server-tiny.toml"
    path.write_text(PROFILE.format(rounds=rounds, budget=budget))
    return path


def test_an_at_rest_run_reads_its_keys_from_the_key_server_and_leaves_none_of_it(
    tmp_path: Path, state_dir: Path
) -> None:
    """`[server] key_provider = "key-server"`: the run starts OpenBao on its own CA, the
    encrypted server's hashicorp_key_management plugin reads its tables' key from it, the
    proof (the plugin active, the tablespaces' key id and version, the key server's audit
    log's reads) is recorded and reported; the token is in no file the run keeps, and
    nothing of the key server is left."""
    out = tmp_path / "out"
    result, pid = run_cli("run", str(_profile(tmp_path)), "--out", str(out), state_dir=state_dir)
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "at-rest.json").read_text())
    enc = record["encryption"]
    assert (enc["key_provider"], enc["algorithm"]) == ("key-server", "AES_CBC")
    proven = enc["key_server"]
    assert proven["plugin"] == "hashicorp_key_management ACTIVE"
    assert proven["tablespaces"] and all(n > 0 for n in proven["key_server_reads"].values())
    assert record["option_difference"]["hashicorp_key_management_token"].startswith("<token")
    report = (out / "report.md").read_text()
    assert "Keys: from OpenBao" in report and "audit log shows its reads" in report
    # Nothing the run keeps holds a token (OpenBao's start with "s." or "hvs."), and its
    # private directory, with the key server's files, is gone.
    kept = [f for f in out.rglob("*") if f.is_file()]
    assert not any(re.search(rb"\b(hvs|s)\.[A-Za-z0-9]{20,}", f.read_bytes()) for f in kept)
    assert not (out / "private").exists()
    assert processes_owned_by(pid) == []


def test_an_interrupted_run_leaves_no_key_server_and_no_database_server(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", str(_profile(tmp_path, 400, 300)),
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state_dir)},
    )  # fmt: skip
    deadline = time.monotonic() + 180
    measuring = False
    while time.monotonic() < deadline and child.poll() is None and not measuring:
        owned = processes_owned_by(child.pid)
        measuring = any("bao" in p for p in owned) and (out / "at-rest.jsonl").exists()
        time.sleep(0.2)
    assert measuring, child.stderr.read() if child.stderr else "no measuring within 180 s"
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert processes_owned_by(child.pid) == []
    assert registry.entries() == []
    assert (out / "at-rest.jsonl").read_text().strip()  # what was measured is kept
    # Kept for --resume, as every run's secrets are until it is complete: the key server's
    # files private, each 0600 in directories of 0700.
    wrong = [
        (str(path), oct(stat.S_IMODE(path.stat().st_mode)))
        for path in (out / "private" / "key-server").rglob("*")
        if stat.S_IMODE(path.stat().st_mode) not in ((0o700,) if path.is_dir() else (0o600,))
    ]
    assert wrong == []
