"""The replication study end to end through the CLI (profile smoke-replication): two real
2-node Galera clusters up at once on their own network namespaces, one plain and one with
Galera's own TLS (socket.ssl_*), a sysbench write workload paired between them, the proof on
the wire, and nothing left behind — on success, and after a SIGTERM during a run.  Needs root
(namespaces)."""

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
from tests.helpers import encbench, namespaces_left, terminated_leaving_nothing

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or galera.provider() is None,
    reason="needs root (network namespaces) and galera-4 (scripts/setup.sh)",
)


def smoke_replication_for_mechanics(directory: Path) -> Path:
    """smoke-replication with 2 s rounds instead of 5 after a 1 s warm-up instead of 2, and
    no round measured again for the machine's other load (as tests/helpers.tiny_profile:
    tests/engine/test_engine.py proves the re-measuring): on a busy machine that added up to four
    rejoins.  What is asserted below holds of any round or warm-up length (every figure is
    per transaction or a lower bound)."""
    smoke = (files("encbench.profiles.builtin") / "smoke-replication.toml").read_text()
    for line in ("[replication]\n", "[rejoin]\n", "\nrun_s = 5\n", "\nwarmup_s = 2\n"):
        assert smoke.count(line) == 1, line
    profile = directory / "smoke-replication-mechanics.toml"
    profile.write_text(
        smoke.replace('"smoke-replication"', '"smoke-replication-mechanics"')
        .replace("[replication]\n", "[replication]\ninterference_max_pct = 100\n")
        .replace("[rejoin]\n", "[rejoin]\ninterference_max_pct = 100\n")
        .replace("\nrun_s = 5\n", "\nrun_s = 2\n")
        .replace("\nwarmup_s = 2\n", "\nwarmup_s = 1\n")
    )
    return profile


def test_the_smoke_replication_profile_pairs_plain_and_tls_clusters_and_leaves_nothing(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    profile = smoke_replication_for_mechanics(tmp_path)
    result = encbench(
        "run", str(profile), "--out", str(out), env={"XDG_STATE_HOME": str(state_dir)}
    )
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "replication.jsonl").read_text().splitlines()]
    rounds = {r["round"] for r in runs}
    assert len(rounds) >= 2  # more when a round was measured again
    assert {(r["variant"], r["round"]) for r in runs} == {
        (v, n) for v in ("plain", "encrypted") for n in rounds
    }
    for r in runs:
        # a plain node's wsrep_provider_options leave socket.ssl out (galera 26.4)
        want = {"YES"} if r["variant"] == "encrypted" else {"", "NO"}
        assert r["node1_ssl"] in want and r["node2_ssl"] in want
        assert r["cluster_size"] == 2
        assert r["tps"] > 0 and r["transactions"] > 0
        # every transaction's write set crossed the link: more than a few bytes each
        assert r["link_bytes_per_txn"] > 100
        assert r["node1_cpu_s"] > 0 and r["node2_cpu_s"] > 0
        # the idle cluster costs little beside the loaded one
        assert 0 <= r["idle_cluster_cpu_s"] < (r["node1_cpu_s"] + r["node2_cpu_s"]) / 4

    record = json.loads((out / "replication.json").read_text())
    assert record["clusters"]["encrypted"]["socket_ssl"] is True
    assert record["clusters"]["plain"]["socket_ssl"] is False
    proof = record["proofs"]["oltp_write_only-t2"]
    assert proof["plain"]["marker_hits_by_port"].get("4567", 0) > 0  # the positive control
    assert proof["plain"]["protocol"] == ""
    assert proof["encrypted"]["marker_hits"] == 0
    assert proof["encrypted"]["protocol"].startswith("TLSv1.")
    assert proof["encrypted"]["cipher"]

    # Rejoin: node 2 came back by the cell's transfer, as its own log says
    rejoins = [json.loads(line) for line in (out / "rejoin.jsonl").read_text().splitlines()]
    assert {(r["cell"]["transfer"], r["variant"]) for r in rejoins} == {  # every cell, both sides
        (t, v) for t in ("ist", "sst") for v in ("plain", "encrypted")
    }
    for r in rejoins:
        assert r["transport"] == r["cell"]["transfer"].upper()
        assert r["sync_s"] > 0 and r["link_bytes"] > 0
    sst = [r["link_bytes"] for r in rejoins if r["cell"]["transfer"] == "sst"]
    ist = [r["link_bytes"] for r in rejoins if r["cell"]["transfer"] == "ist"]
    assert min(sst) > max(ist)  # a full copy moves more than 500 write sets
    proofs = json.loads((out / "rejoin.json").read_text())["proofs"]
    # IST crosses Galera's own port 4568: in plaintext without socket.ssl, hidden with it
    assert proofs["ist-m500"]["plain"]["marker_hits_by_port"].get("4568", 0) > 0
    assert proofs["ist-m500"]["encrypted"]["marker_hits"] == 0
    assert proofs["ist-m500"]["encrypted"]["protocol"].startswith("TLSv1.")
    # the rsync SST stream (4444) is not socket.ssl's: only Galera's ports must be clean
    hits = proofs["sst-m500"]["encrypted"]["marker_hits_by_port"]
    assert hits.get("4567", 0) == hits.get("4568", 0) == 0
    # report.html plots both studies: throughput per workload, and time to Synced per rejoin.
    page = (out / "report.html").read_text()
    assert 'aria-label="throughput per workload, plain cluster against the TLS cluster"' in page
    assert 'aria-label="time to Synced per transfer, plain cluster against the TLS cluster"' in page
    # nothing left behind: nodes, sandboxes, namespaces, keys and certificates
    assert not (out / "sandbox").exists()
    assert registry.entries() == []
    assert namespaces_left(state_dir) == []
    assert not (out / "private").exists()


def test_a_sigterm_during_a_run_leaves_nothing(tmp_path: Path, state_dir: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "XDG_STATE_HOME": str(state_dir)}
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", "smoke-replication", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 240
    # A measured run is under way once its sysbench output exists.
    while time.monotonic() < deadline and child.poll() is None:
        if list((out / "raw").glob("replication-*-r0*-*.txt")):
            break
        time.sleep(0.1)
    assert child.poll() is None, child.stderr.read() if child.stderr else ""
    terminated_leaving_nothing(child, out, state_dir)
