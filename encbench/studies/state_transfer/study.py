"""The state-transfer study (engine/study.py): a 2-node Galera cluster on two emulated hosts
(or 3 with a peer that stays in the cluster: cluster.py),
and per cell — an SST method, the encrypted stream's cipher, mariadb-backup's threads — one
full state transfer of the joiner per variant and round, plain against encrypted, in the
engine's blocks with its intervals and stopping rule.

- A run: the joiner stopped and its data directory emptied, both nodes' [sst] set for the
  variant (untimed); then the joiner started and timed until it is Synced.  Measured beside:
  the donor's stream and every stage the SST scripts log, the bytes that crossed the link
  (the joiner's veth counters), and the donor's and joiner's CPU (their cgroups, which hold
  the SST scripts and their tools).
- The per-run proof: both nodes' SST logs say how the stream was carried — socat's openssl
  address or stunnel for `encrypted`, plain socat or rsync for `plain`.
- The per-cell proof (open_cell): one transfer per variant with the joiner's link captured
  (proof/wire.py): the plain stream must show the donor's marker rows (the positive control)
  and the encrypted one must not, and must show a TLS ServerHello, whose protocol and suite
  are recorded (the scripts run socat without -d and stunnel at debug = warning, so the
  tools' own logs do not name them).
- The limits (limits.py, measure_limits.py): in set-up, before the nodes start, the disk's
  (fio), the link's (iperf3 across the namespaces) and the ciphers' (openssl speed) MiB/s,
  once per results directory; a cell's proof adds the cipher its stream negotiated if new.
- A raw pipeline's cell (tar, xbstream: pipelines.py) has the same variants, rounds, limits
  and wire proof, without Galera: a run streams the donor's data directory to an empty
  directory on the joiner's host; its per-run proof is socat's own log at both ends.  A tar
  cell stops the donor when it opens (tar reads a stopped server's files, as the seed did)
  and starts it again when it closes.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import timed
from encbench.engine.study import CellSkipped, Run
from encbench.engine.study_base import Given, StudyBasics, window_fields
from encbench.errors import BadInput, ProofError
from encbench.net import netns
from encbench.net.netns import NetnsUnavailable, link_counters
from encbench.proof import link_capture
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.galera_cluster import MARKER_TABLE
from encbench.servers.variants import side_name
from encbench.studies.state_transfer import (
    donor_load,
    limits,
    measure_limits,
    pipeline_rsync,
    pipelines,
    sstlog,
)
from encbench.studies.state_transfer.cluster import (
    MASK_VARIABLE,
    RECORD,
    Cluster,
    openssl_env,
    stream_encrypted,
)
from encbench.studies.state_transfer.options import (
    PIPELINES,
    SOCAT_METHODS,
    SST_CIPHERS,
    STOPPED_DONOR,
    StateTransferSpec,
)
from encbench.studies.state_transfer.records import SstCell, SstRecord


class StateTransferStudy(StudyBasics):
    record_type = SstRecord
    rule: StateTransferSpec

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.cluster: Cluster | None = None
        # Why an optional study could not set up here (then every cell is skipped).
        self.left_out: str | None = None

    @contextmanager
    def setup(self, todo: Sequence[SstCell]) -> Iterator[Cluster | None]:
        with ExitStack() as stack:
            try:
                cluster = stack.enter_context(Cluster(self.store, self.profile, self.progress.log))
            except BadInput as exc:
                if not (self.rule.optional and isinstance(exc.__cause__, NetnsUnavailable)):
                    raise
                # Root, but no namespaces (a container without CAP_NET_ADMIN): an optional
                # study is left out here too, as preflight leaves it out without root.
                self.left_out = str(exc)
                self.store.write_not_measured({**self.store.not_measured(), self.name: str(exc)})
                yield None
                return
            self._measure_limits(cluster)
            cluster.provision()
            self.cluster = cluster
            try:
                yield cluster
            finally:
                self.cluster = None

    def _measure_limits(self, cluster: Cluster) -> None:
        """The disk's, the link's and the ciphers' limits (limits.py), once per results
        directory: before the nodes start, so nothing else of the run is busy."""
        assert cluster.link is not None
        ends = (
            netns.exec_prefix(cluster.link.client_ns),  # the joiner receives
            netns.exec_prefix(cluster.link.server_ns),  # the donor sends
            cluster.link.client_addr,
        )
        measure_limits.measure(
            self.store,
            cluster.record,
            # An A/A calibration encrypts no stream: no cipher to measure.
            () if self.profile.calibration else self.cells(),
            link_ends=ends,
            rate_mbit=self.rule.rate_mbit,
            seconds=self.rule.limits_s,
            cipher_repeats=self.profile.cipher_speed_repeats,
            log=self.progress.log,
        )
        self.store.write_json(RECORD, cluster.record)

    def _cluster(self) -> Cluster:
        assert self.cluster is not None, "a cell is measured inside setup()"
        return self.cluster

    @contextmanager
    def open_cell(self, cell: SstCell) -> Iterator[None]:
        if self.left_out is not None:
            raise CellSkipped(self.left_out)
        cluster = self._cluster()
        if cell.method in STOPPED_DONOR:
            self.progress.log(f"state-transfer: {cell.label}: stopping the donor")
            cluster.stop_donor()
        self._prove_cell(cell)
        yield
        # Not on an error: the set-up's teardown removes the donor anyway.
        if cell.method in STOPPED_DONOR:
            cluster.start_donor()

    def _prove_cell(self, cell: SstCell) -> None:
        proofs = {}
        for variant in ("plain", "encrypted"):
            # An A/A calibration's sides are A and its plain twin B, never "encrypted".
            side = side_name(variant, self.profile.calibration)
            self.progress.log(f"state-transfer: {cell.label}: proving the {side} stream")
            proofs[variant] = self._proof_transfer(cell, variant)
        cluster = self._cluster()
        cluster.record.setdefault("proofs", {})[cell.slug] = proofs
        # The cipher limit stands for the suite the stream really negotiated.
        negotiated = limits.evp_cipher(proofs["encrypted"].get("cipher", ""))
        if negotiated and cell.aesni != "seed-mask":
            measure_limits.measure_ciphers(
                cluster.record.setdefault("limits", {}),
                [(negotiated, cell.aesni == "on")],
                self.progress.log,
                repeats=self.profile.cipher_speed_repeats,
            )
        self.store.write_json(RECORD, cluster.record)

    def warm_up(self, cell: SstCell, variant: str, seconds: int, raw: Path) -> None:
        """None (warmup_s = 0): every transfer starts from an empty joiner."""

    # -- one run ---------------------------------------------------------------------------
    def measure(self, run: Run) -> SstRecord:
        began = time.monotonic()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        fields = self._transfer(run.cell, run.variant, run.raw)
        return SstRecord(
            **run.record_fields(started_at, time.monotonic() - began),
            raw_output=str(run.raw.relative_to(self.store.path)),
            **fields,
        )

    def _donor_load(self, raw: Path) -> AbstractContextManager[donor_load.Load | None]:
        """The profile's light load on the donor (donor_load.py), or none."""
        rule = self.rule
        if not rule.donor_load_threads:
            return nullcontext()
        data = rule.data(self.profile.data)
        command = donor_load.argv(
            self._cluster().donor.endpoint(),
            rule.donor_load_workload,
            threads=rule.donor_load_threads,
            rate=rule.donor_load_rate,
            tables=data.tables,
            table_size=data.table_size,
        )
        return donor_load.running(
            command, before_s=rule.donor_load_before_s, log=raw.with_suffix(".load.txt")
        )

    def _transfer(
        self, cell: SstCell, variant: str, raw: Path, *, loaded: bool = True
    ) -> dict[str, Any]:
        """One transfer; `loaded`: with the profile's load on the donor, if it has one (the
        per-cell proof's transfers go without)."""
        if cell.method in PIPELINES:
            return self._pipeline(cell, variant, raw)
        cluster = self._cluster()
        donor, joiner = cluster.donor, cluster.joiner
        cluster.reset_joiner(cell, variant)
        donor_offset = proc.log_size(donor.paths.error_log)
        joiner_offset = proc.log_size(joiner.paths.error_log)
        with self._donor_load(raw) if loaded else nullcontext() as load:
            link_before = link_counters(cluster.joiner_ns, cluster.joiner_device)
            donor_cpu = donor.cpu_seconds()
            with load.transferring() if load else nullcontext(), timed(self.device) as watch:
                cluster.join(cell)
            joiner_cpu = joiner.cpu_seconds()
            donor_cpu = donor.cpu_seconds() - donor_cpu
            served = load.fields() if load else {}
        link_after = link_counters(cluster.joiner_ns, cluster.joiner_device)
        cluster.check_marker_copied()
        donor_text = proc.log_since(donor.paths.error_log, donor_offset)
        joiner_text = proc.log_since(joiner.paths.error_log, joiner_offset)
        raw.write_text(
            "# donor\n" + donor_text + "\n# joiner\n" + joiner_text,
        )
        donor_log, joiner_log = sstlog.SstLog.parse(donor_text), sstlog.SstLog.parse(joiner_text)
        stages = {
            **donor_log.stages(cell.method, "donor"),
            **joiner_log.stages(cell.method, "joiner"),
        }
        joiner.stop()  # untimed; the next run starts from an empty joiner anyway
        return {
            "sync_s": watch.seconds,
            "transfer_s": stages.get(sstlog.STREAM_STAGE, 0.0),
            "link_rx_bytes": link_after.rx_bytes - link_before.rx_bytes,
            "link_tx_bytes": link_after.tx_bytes - link_before.tx_bytes,
            "donor_cpu_s": donor_cpu,
            "joiner_cpu_s": joiner_cpu,
            **window_fields(watch, self.device),
            "donor_transport": donor_log.transport(cell.method),
            "joiner_transport": joiner_log.transport(cell.method),
            "stages": stages,
            **served,
        }

    def _pipeline(self, cell: SstCell, variant: str, raw: Path) -> dict[str, Any]:
        """One raw pipeline transfer (pipelines.py); the same fields as an SST's."""
        cluster = self._cluster()
        run = cluster.pipeline_run(cell, variant, raw.with_suffix(""))
        prepared = prepare_pipeline(run, cluster.donor_addr)  # untimed
        try:
            link_before = link_counters(cluster.joiner_ns, cluster.joiner_device)
            with timed(self.device) as watch:
                done = prepared.measure()
        finally:
            prepared.stop()
        link_after = link_counters(cluster.joiner_ns, cluster.joiner_device)
        cluster.record.setdefault("pipelines", {})["page_cache"] = done.page_cache
        pipelines.check_copied(run.target, cluster.donor.database, MARKER_TABLE)
        raw.write_text(
            "".join(f"# {log.name}\n{log.read_text(errors='replace')}\n" for log in done.logs)
        )
        return {
            "sync_s": done.sync_s,
            "transfer_s": done.transfer_s,
            "link_rx_bytes": link_after.rx_bytes - link_before.rx_bytes,
            "link_tx_bytes": link_after.tx_bytes - link_before.tx_bytes,
            "donor_cpu_s": done.donor_cpu_s,
            "joiner_cpu_s": done.joiner_cpu_s,
            **window_fields(watch, self.device),
            "donor_transport": done.donor_transport,
            "joiner_transport": done.joiner_transport,
            "stages": done.stages,
        }

    def prove(self, record: SstRecord) -> None:
        """Per run, the SST scripts' (or a raw pipeline's socat's) own account on both ends:
        the stream went through socat's openssl address or stunnel exactly when the variant
        encrypts it (`encrypted`, but not an A/A calibration's plain twin)."""
        encrypted = stream_encrypted(record.variant, self.profile.calibration)
        want = sstlog.expected_transport(record.cell.method, encrypted)
        for role, got in (("donor", record.donor_transport), ("joiner", record.joiner_transport)):
            if got != want:
                raise ProofError(
                    f"{record.cell.label} round {record.round}: the {record.variant} run's "
                    f"{role} carried the stream by {got or 'nothing it logged'}, not {want} "
                    "(its SST log)"
                )

    # -- the per-cell proof on the wire --------------------------------------------------------
    def _proof_transfer(self, cell: SstCell, variant: str) -> dict[str, Any]:
        cluster = self._cluster()
        base = self.store.path / "raw" / f"state-transfer-proof-{cell.slug}-{variant}"
        with link_capture.captured(
            cluster.joiner_ns, cluster.joiner_device, cluster.marker, base, "the joiner's link"
        ) as capture:
            fields = self._transfer(cell, variant, base.with_suffix(".sst.txt"), loaded=False)
        encrypted = stream_encrypted(variant, self.profile.calibration)
        proof = judge(cell, variant, capture.findings, fields, encrypted=encrypted)
        if cell.method in PIPELINES:
            # Set by the pipeline's launcher (cluster.pipeline_run), not read back from its
            # processes, which have exited by now: recorded, not proven.
            proof["openssl_ia32cap_set"] = openssl_env(cell.aesni)[MASK_VARIABLE]
        else:
            proof["openssl_ia32cap"] = judge_masks(cell, variant, cluster.masks())
        return proof


def prepare_pipeline(run: pipelines.Run, donor_addr: str) -> pipelines.Prepared:
    """Untimed: the target emptied, the page cache dropped, the listening end ready — by
    the rsync pipelines' pool of rsyncs (pipeline_rsync.py) or tar's and xbstream's one
    stream (pipelines.py)."""
    if run.cell.method in ("rsync-dir", "rsync-file"):
        return pipeline_rsync.Prepared(run, donor_addr)
    return pipelines.Stream(run)


def judge_masks(cell: SstCell, variant: str, masks: dict[str, str]) -> dict[str, str]:
    """Both ends of the proof transfer ran with the cell's OpenSSL mask (AES-NI on or off);
    returns them; raises ProofError."""
    want = openssl_env(cell.aesni)[MASK_VARIABLE]
    for role in ("donor", "joiner"):
        got = masks.get(role, "")
        if got != want:
            raise ProofError(
                f"{cell.label}: the {variant} proof transfer's {role} ran with "
                f"OPENSSL_ia32cap={got or '(unset)'}, not {want} (AES-NI {cell.aesni})"
            )
    return masks


def judge(
    cell: SstCell,
    variant: str,
    found: dict[str, Any],
    fields: dict[str, Any],
    *,
    encrypted: bool | None = None,
) -> dict[str, Any]:
    """The per-cell proof's verdict on one captured transfer; raises ProofError.  `encrypted`:
    whether the stream should be (default: the `encrypted` variant's; an A/A calibration's
    twin is plain)."""
    encrypted = variant == "encrypted" if encrypted is None else encrypted
    where = f"{cell.label}: the {variant} proof transfer"
    sst = str(galera.SST_PORT)
    by_port = {str(k): int(v) for k, v in (found.get("hits_by_port") or {}).items()}
    # The verdict is the SST stream's (port 4444), which [sst] encrypts.  Hits elsewhere are
    # a finding, not a failure: Galera itself sends the joiner recent write sets from its
    # gcache over the IST port (4568) after an SST, in plaintext unless Galera's own TLS
    # (socket.ssl_*) is on — which [sst] does not touch.
    hits, dropped = by_port.get(sst, 0), int(found["dropped"])
    elsewhere = {port: n for port, n in by_port.items() if port != sst}
    hellos = found.get("hellos") or []
    link_capture.vouch(where, found, int(fields["link_rx_bytes"]), "stream")
    if not encrypted:
        if hits == 0:
            why = link_capture.dropped_words(found)
            raise ProofError(
                f"{where}: the donor's marker rows were not seen in the SST stream{why}: the "
                "positive control failed, so an encrypted stream's 'not seen' would prove nothing"
            )
        if hellos:
            raise ProofError(f"{where}: a TLS handshake crossed the link of a plain transfer")
    else:
        if hits:
            raise ProofError(
                f"{where}: the donor's marker crossed the SST stream (port {sst}) in "
                f"plaintext {hits} times"
            )
        if not hellos:
            raise ProofError(f"{where}: no TLS ServerHello crossed the link")
        suite = SST_CIPHERS.get(cell.cipher, "") if cell.method in SOCAT_METHODS else ""
        if suite and hellos[0]["cipher"] != suite:
            raise ProofError(f"{where}: the stream negotiated {hellos[0]['cipher']}, not {suite}")
        tls13 = cell.method in SOCAT_METHODS and cell.cipher == "TLSv1.3"
        if tls13 and hellos[0]["protocol"] != "TLSv1.3":
            raise ProofError(f"{where}: the stream negotiated {hellos[0]['protocol']}, not TLS 1.3")
    return {
        "marker_hits": hits,
        "marker_hits_other_ports": elsewhere,
        "bytes_by_port": found.get("bytes_by_port") or {},
        "payload_bytes": int(found["payload_bytes"]),
        "frames": int(found["frames"]),
        "dropped": dropped,
        "protocol": hellos[0]["protocol"] if hellos else "",
        "cipher": hellos[0]["cipher"] if hellos else "",
        "donor_transport": fields["donor_transport"],
        "joiner_transport": fields["joiner_transport"],
        "sync_s": fields["sync_s"],
    }
