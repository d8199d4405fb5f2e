"""The rejoin study (engine/study.py): how long node 2 of a 2-node cluster takes to come back
after missing some transactions — by IST (its data directory kept: Galera sends only the
write sets it missed, from node 1's gcache) or by a full SST (its data directory emptied:
rsync copies node 1's, then IST sends what came meanwhile) — on the same two clusters as the
replication study (Galera pairs, servers/mariadb/galera_pair.py, made again for it by
engine/galera_pair_study.py), plain against Galera's own TLS (socket.ssl_*).  IST travels over
Galera's own connection, so socket.ssl is the only thing that encrypts it; the rsync SST
stream is `[sst]`'s, plain in both clusters here.

- A run: node 2 stopped (and emptied, for SST), node 1 commits the cell's transactions
  (sysbench oltp_write_only, one write set each) — untimed; then node 2 started and timed
  until Synced.  Bytes: node 2's veth, both directions, over that time; CPU: node 1's over
  it, node 2's since its start.
- The per-run proof: node 2's log says how it got the state ("rsync SST completed" for SST,
  "rsync IST completed" for IST) and that the IST carried at least the missed write sets.
- The per-cell proof: one rejoin per cluster with node 2's link captured, marker rows
  written on node 1 while node 2 was down: in the plain cluster the marker must cross the
  link (the positive control), in the TLS cluster it must not cross Galera's ports (4567,
  4568) and a ServerHello must; hits on the SST port (4444, rsync) are recorded, not judged:
  socket.ssl does not cover it.
"""

from __future__ import annotations

import re
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
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
from encbench.studies.rejoin.options import RejoinSpec
from encbench.studies.rejoin.records import REJOIN_TRANSFERS, RejoinCell, RejoinRecord
from encbench.workloads import sysbench

MISSED_THREADS = 2

SST_DONE = "rsync SST completed on joiner"
IST_DONE = "rsync IST completed on joiner"
IST_WRITESETS = re.compile(r"Receiving IST: (\d+) writesets")


def transport(log: str) -> str:
    """How node 2 got the state, by its own log since its start: "SST" (rsync copied the
    data directory), "IST" (write sets only), "" (it does not say)."""
    if SST_DONE in log:
        return "SST"
    if IST_DONE in log or IST_WRITESETS.search(log):
        return "IST"
    return ""


def ist_writesets(log: str) -> int:
    return sum(int(n) for n in IST_WRITESETS.findall(log))


class RejoinStudy(GaleraPairStudy):
    record_type = RejoinRecord
    rule: RejoinSpec

    def warm_up(self, cell: RejoinCell, variant: str, seconds: int, raw: Path) -> None:
        """None (warmup_s = 0): every rejoin starts from a stopped node 2."""

    def _miss(self, cluster: PairOnHosts, cell: RejoinCell, log: Path) -> None:
        """Node 2 down, node 1 commits the cell's transactions without it (untimed)."""
        cluster.stop_node2(empty=cell.transfer == "sst")
        data = self.profile.data
        sysbench.run(
            sysbench.invocation(
                cluster.node1.endpoint(),
                "oltp_write_only",
                threads=MISSED_THREADS,
                time_s=0,
                events=cell.missed,
                log=log,
                options=sysbench.oltp_options(data.tables, data.table_size),
            )
        )

    def _rejoin(self, cluster: PairOnHosts) -> dict[str, Any]:
        """Node 2 started and timed until Synced; what it cost and how it came back."""
        node1, node2 = cluster.node1, cluster.node2
        offset = proc.log_size(node2.paths.error_log)
        link_before = cluster.link_bytes()
        cpu1 = node1.cpu_seconds()
        with timed(self.device) as watch:
            cluster.start_node2()
        cpu1 = node1.cpu_seconds() - cpu1
        cpu2 = node2.cpu_seconds()  # its cgroup was made at its start
        link = cluster.link_bytes() - link_before
        text = proc.log_since(node2.paths.error_log, offset)
        return {
            "sync_s": watch.seconds,
            "link_bytes": link,
            "node1_cpu_s": cpu1,
            "node2_cpu_s": cpu2,
            **window_fields(watch, self.device),
            "transport": transport(text),
            "ist_writesets": ist_writesets(text),
            "log": text,
        }

    # -- one run ---------------------------------------------------------------------------
    def measure(self, run: Run) -> RejoinRecord:
        cluster = self.cluster(run.variant)
        began = time.monotonic()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._miss(cluster, run.cell, run.raw.with_suffix(".missed.txt"))
        fields = self._rejoin(cluster)
        run.raw.write_text(fields.pop("log"))
        return RejoinRecord(
            **run.record_fields(started_at, time.monotonic() - began),
            raw_output=str(run.raw.relative_to(self.store.path)),
            **fields,
        )

    def prove(self, record: RejoinRecord) -> None:
        prove_run(record)

    # -- the per-cell proof on the wire --------------------------------------------------------
    def prove_cell(self, cell: RejoinCell, variant: str) -> dict[str, Any]:
        cluster = self.cluster(variant)
        marker = f"encbench-rejoin-marker-{secrets.token_hex(12)}"
        base = self.store.path / "raw" / f"rejoin-proof-{cell.slug}-{variant}"
        self._miss(cluster, cell, base.with_suffix(".missed.txt"))
        cluster.write_marker(marker, MARKER_ROWS)  # while node 2 is down: it comes by IST/SST
        with link_capture.captured(
            cluster.node2_ns, cluster.node2_device, marker, base, "node 2's link"
        ) as capture:
            fields = self._rejoin(cluster)
            copied = cluster.marker_rows(2, marker)
        base.with_suffix(".node2.log").write_text(fields["log"])
        verdict = judge(cell, variant, capture.findings, fields["link_bytes"], copied)
        return {**verdict, "transport": fields["transport"], "sync_s": fields["sync_s"]}


def prove_run(record: RejoinRecord) -> None:
    want = REJOIN_TRANSFERS[record.cell.transfer]
    where = f"{record.cell.label} round {record.round}: the {record.variant} run"
    if record.transport != want:
        raise ProofError(
            f"{where}: node 2's log says it rejoined by {record.transport or 'nothing it logged'}"
            f", not {want}"
        )
    if want == "IST" and record.ist_writesets < record.cell.missed:
        raise ProofError(
            f"{where}: node 2 received {record.ist_writesets} write sets by IST, fewer than "
            f"the {record.cell.missed} it missed"
        )


def judge(
    cell: RejoinCell, variant: str, found: dict[str, Any], crossed: int, copied: int
) -> dict[str, Any]:
    """The per-cell proof's verdict on one captured rejoin; raises ProofError."""
    where = f"{cell.label}: the {variant} cluster's proof"
    proof = read_capture(where, found, crossed, copied)
    by_port = proof["marker_hits_by_port"]
    galera_ports = (str(galera.GCOMM_PORT), str(galera.IST_PORT))
    on_galera = sum(by_port.get(p, 0) for p in galera_ports)
    if variant == "plain":
        if not by_port:
            why = link_capture.dropped_words(proof)
            raise ProofError(
                f"{where}: the marker rows node 2 missed were not seen on the link{why}: the "
                "positive control failed, so the TLS cluster's 'not seen' would prove nothing"
            )
    else:
        if on_galera:
            raise ProofError(
                f"{where}: node 1's marker crossed Galera's own ports in plaintext "
                f"{on_galera} times (by port: {by_port})"
            )
        if not found.get("hellos"):
            raise ProofError(f"{where}: no TLS ServerHello crossed the link")
    return proof
