"""The replication study (engine/study.py): what Galera's own TLS (socket.ssl_*) costs a
write workload whose every commit is certified with, and replicated to, a second node.

Two 2-node clusters are up at once, each on its own pair of emulated hosts (Galera pairs,
servers/mariadb/galera_pair.py, made and loaded by engine/galera_pair_study.py): `plain` (no
socket.ssl) and `encrypted` (socket.ssl_key/cert/ca from the run's PKI).  Per cell — a sysbench
write workload at a thread count — the engine's paired rounds run the workload against node 1 of
one cluster, then of the other, while the idle cluster waits.  Two
clusters rather than one restarted per variant: a restart of both nodes (and node 2's state
transfer) per run would cost more than the run, and one restart per cell would leave the
variants unpaired in time.

- A run: sysbench against node 1's socket; then the wait until node 2 has applied every
  write set (`apply_wait_s`), so both nodes' CPU (their cgroups) counts the run's whole work;
  node 2's veth counters give the bytes between the nodes per transaction.
- The per-run proof: both nodes' wsrep_provider_options say socket.ssl = YES exactly in the
  encrypted cluster, and node 1 sees a cluster of 2 when the run ends.
- The per-cell proof (open_cell): per cluster, node 2's link captured (proof/wire.py) while
  node 2 rejoins (new connections, so the TLS cluster shows its handshake), marker rows are
  written on node 1 and the cell's workload runs for a few seconds: the plain link must carry
  the marker (the positive control), the TLS one must not, and must show a TLS ServerHello,
  whose protocol and suite are recorded in replication.json.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench.engine.clocks import timed
from encbench.engine.galera_pair_study import (
    MARKER_ROWS,
    GaleraPairStudy,
    PairOnHosts,
    read_capture,
)
from encbench.engine.study import Run
from encbench.engine.study_base import window_fields
from encbench.errors import ProofError
from encbench.proof import link_capture
from encbench.servers.mariadb import galera
from encbench.studies.replication.options import ReplicationSpec
from encbench.studies.replication.records import ReplicationCell, ReplicationRecord
from encbench.workloads import sysbench

PROOF_LOAD_S = 3


class ReplicationStudy(GaleraPairStudy):
    record_type = ReplicationRecord
    rule: ReplicationSpec

    def _invocation(
        self, cell: ReplicationCell, cluster: PairOnHosts, seconds: int, log: Path
    ) -> sysbench.Invocation:
        data = self.profile.data
        return sysbench.invocation(
            cluster.node1.endpoint(),
            cell.workload,
            threads=cell.threads,
            time_s=seconds,
            log=log,
            options=sysbench.oltp_options(data.tables, data.table_size),
        )

    def warm_up(self, cell: ReplicationCell, variant: str, seconds: int, raw: Path) -> None:
        cluster = self.cluster(variant)
        sysbench.run(self._invocation(cell, cluster, seconds, raw))
        cluster.wait_applied()

    # -- one run ---------------------------------------------------------------------------
    def measure(self, run: Run) -> ReplicationRecord:
        cluster = self.cluster(run.variant)
        node1, node2 = cluster.node1, cluster.node2
        began = time.monotonic()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        link_before = cluster.link_bytes()
        idle = self.cluster("plain" if run.variant == "encrypted" else "encrypted")
        idle_cpu = idle.cpu_seconds()
        cpu1, cpu2 = node1.cpu_seconds(), node2.cpu_seconds()
        with timed(self.device) as watch:
            result = sysbench.run(self._invocation(run.cell, cluster, run.seconds, run.raw))
            apply_wait_s = cluster.wait_applied()
        cpu1, cpu2 = node1.cpu_seconds() - cpu1, node2.cpu_seconds() - cpu2
        idle_cpu = idle.cpu_seconds() - idle_cpu
        link = cluster.link_bytes() - link_before
        return ReplicationRecord(
            **run.record_fields(started_at, time.monotonic() - began),
            **result.record_fields(),
            apply_wait_s=apply_wait_s,
            link_bytes=link,
            node1_cpu_s=cpu1,
            node2_cpu_s=cpu2,
            **window_fields(watch, self.device),
            node1_ssl=cluster.node_ssl(1),
            node2_ssl=cluster.node_ssl(2),
            cluster_size=cluster.cluster_size(),
            idle_cluster_cpu_s=idle_cpu,
            raw_output=str(run.raw.relative_to(self.store.path)),
        )

    def prove(self, record: ReplicationRecord) -> None:
        """Per run: socket.ssl on both nodes exactly in the encrypted cluster, and node 2
        still in the cluster (a run it left would have replicated to no one)."""
        prove_run(record)

    # -- the per-cell proof on the wire --------------------------------------------------------
    def prove_cell(self, cell: ReplicationCell, variant: str) -> dict[str, Any]:
        cluster = self.cluster(variant)
        marker = f"encbench-repl-marker-{secrets.token_hex(12)}"
        base = self.store.path / "raw" / f"replication-proof-{cell.slug}-{variant}"
        with link_capture.captured(
            cluster.node2_ns, cluster.node2_device, marker, base, "node 2's link"
        ) as capture:
            before = cluster.link_bytes()
            rejoin_s = cluster.rejoin()
            cluster.write_marker(marker, MARKER_ROWS)
            sysbench.run(
                self._invocation(cell, cluster, PROOF_LOAD_S, base.with_suffix(".sysbench.txt"))
            )
            cluster.wait_applied()
            copied = cluster.marker_rows(2, marker)
            crossed = cluster.link_bytes() - before
        verdict = judge(cell, variant, capture.findings, crossed, copied)
        return {**verdict, "rejoin_s": rejoin_s}


def prove_run(record: ReplicationRecord) -> None:
    want = "YES" if record.variant == "encrypted" else "NO"
    where = f"{record.cell.label} round {record.round}: the {record.variant} run"
    for n, got in ((1, record.node1_ssl), (2, record.node2_ssl)):
        # A plain node may leave socket.ssl out of its options altogether.
        if got != want and not (want == "NO" and got == ""):
            raise ProofError(
                f"{where}: node {n}'s wsrep_provider_options say socket.ssl = {got or 'nothing'}"
                f", not {want}"
            )
    if record.cluster_size != 2:
        raise ProofError(f"{where}: node 1 saw a cluster of {record.cluster_size}, not 2")


def judge(
    cell: ReplicationCell, variant: str, found: dict[str, Any], crossed: int, copied: int
) -> dict[str, Any]:
    """The per-cell proof's verdict on one captured rejoin and load; raises ProofError."""
    where = f"{cell.label}: the {variant} cluster's proof"
    proof = read_capture(where, found, crossed, copied)
    by_port, hits = proof["marker_hits_by_port"], proof["marker_hits"]
    hellos = found.get("hellos") or []
    if variant == "plain":
        if by_port.get(str(galera.GCOMM_PORT), 0) == 0:
            why = link_capture.dropped_words(proof)
            raise ProofError(
                f"{where}: node 1's marker rows were not seen on the replication port "
                f"{galera.GCOMM_PORT}{why}: the positive control failed, so the TLS "
                "cluster's 'not seen' would prove nothing"
            )
        if hellos:
            raise ProofError(f"{where}: a TLS handshake crossed a plain cluster's link")
    else:
        if hits:
            raise ProofError(
                f"{where}: node 1's marker crossed the link in plaintext {hits} times "
                f"(by port: {by_port})"
            )
        if not hellos:
            raise ProofError(f"{where}: no TLS ServerHello crossed the link")
    return proof
