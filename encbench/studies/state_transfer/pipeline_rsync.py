"""The seed's rsync pipelines (issue #10 item 3), without Galera: the donor's data directory
(the donor stopped, as for tar) copied by rsync into an rsync daemon on the joiner's host,
N rsync processes at a time, each over its own socat connection:

    rsync-dir:  one rsync per top-level directory of the data directory, and one for its
                top-level files — wsrep_sst_rsync's way (`xargs -P`), which leaves one
                stream for the largest directory;
    rsync-file: one rsync per file — the seed's "rsync_improved".

    (donor) rsync ×N → socat TCP-LISTEN,fork ══ 4444 ══ socat LISTEN,fork → rsync daemon (joiner)

Both variants go through socat, so they differ only in the link: plain, socat over TCP;
encrypted, socat's openssl address with the run's certificate and the cell's cipher, the
same options as the other pipelines (pipelines.socat_argv).  socat, not stunnel: the same
tool, options and per-run proof (its own log) as tar and xbstream, so the rows compare; and
socat forks a process per connection at each end, so N parallel rsyncs are N TLS streams
spread over the cores, as the seed found.  rsync runs with --whole-file (no delta search:
the target is empty) and without compression.

Untimed before the run: the daemon and both socats started and listening.  Timed: from the
first rsync's start to the last one's exit (each exits once the daemon has the file), then
`sync -f` of the target.  The CPU: the rsyncs and the donor's socat (with the children it
forked and reaped) are the donor's; the daemon and the joiner's socat the joiner's, read
when they are stopped after the run."""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from encbench import proc, stopping
from encbench.errors import ToolError
from encbench.studies.state_transfer import pipelines

DAEMON_PORT = 4873  # rsync's own, on each host's link address: never crosses the link
MODULE = "target"
EXIT_WAIT_S = 0.5  # how long the pool sleeps when no rsync has exited meanwhile


def units(datadir: Path, per: str) -> list[list[str]]:
    """The rsync invocations' file lists, relative to the data directory: per "dir" one per
    top-level directory and one for the top-level files, per "file" one per file."""
    files = sorted(str(path.relative_to(datadir)) for path in datadir.rglob("*") if path.is_file())
    if per == "file":
        return [[f] for f in files]
    groups: dict[str, list[str]] = {}
    for f in files:
        top = f.split("/", 1)[0] if "/" in f else "."
        groups.setdefault(top, []).append(f)
    return [groups[key] for key in sorted(groups)]


def daemon_config(target: Path, log: Path) -> str:
    """Runs as root (encbench does) and writes as root: the files keep their owners."""
    return (
        "use chroot = no\n"
        "numeric ids = yes\n"
        f"log file = {log}\n"
        f"[{MODULE}]\n"
        f"    path = {target}\n"
        "    read only = no\n"
        "    uid = root\n"
        "    gid = root\n"
    )


def daemon_argv(config: Path, address: str) -> list[str]:
    return [
        "rsync",
        "--daemon",
        "--no-detach",
        f"--config={config}",
        f"--address={address}",
        f"--port={DAEMON_PORT}",
    ]


def tunnel_argvs(
    ends: pipelines.Ends, donor_addr: str, *, encrypted: bool, sockopt: str
) -> tuple[list[str], list[str]]:
    """(the donor's socat, the joiner's): each forks a child per rsync connection."""
    base = ["socat", "-b", str(ends.buffer_kib * 1024), "-d", "-d"]
    listen = f"{pipelines.PORT},reuseaddr,fork,bind={ends.joiner_addr}"
    to_joiner = f"{ends.joiner_addr}:{pipelines.PORT}"
    if encrypted:
        near = f"OPENSSL-LISTEN:{listen},{ends.tls(connect=False, sockopt=sockopt)}"
        far = f"OPENSSL-CONNECT:{to_joiner},{ends.tls(connect=True, sockopt=sockopt)}"
    else:
        near, far = f"TCP-LISTEN:{listen}", f"TCP:{to_joiner}"
    donor = [*base, f"TCP-LISTEN:{DAEMON_PORT},reuseaddr,fork,bind={donor_addr}", far]
    joiner = [*base, near, f"TCP:{ends.joiner_addr}:{DAEMON_PORT}"]
    return donor, joiner


def rsync_argv(datadir: Path, file_list: Path, donor_addr: str) -> list[str]:
    return [
        "rsync",
        "-a",
        "--whole-file",
        f"--files-from={file_list}",
        f"{datadir}/",
        f"rsync://{donor_addr}:{DAEMON_PORT}/{MODULE}/",
    ]


class Pool:
    """Run one rsync per unit, `size` at a time; each in its own Chain (its exit and CPU)."""

    def __init__(self, argvs: Sequence[Sequence[str]], logs: Sequence[Path], size: int) -> None:
        self.waiting = deque(zip(argvs, logs, strict=True))
        self.size = size
        self.exited = threading.Event()
        self.chains: list[pipelines.Chain] = []

    def run(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        running: list[pipelines.Chain] = []
        while self.waiting or running:
            while self.waiting and len(running) < self.size:
                argv, log = self.waiting.popleft()
                chain = pipelines.Chain([argv], [log], "rsync pipeline", self.exited)
                self.chains.append(chain)
                chain.start()
                running.append(chain)
            self.exited.wait(EXIT_WAIT_S)
            self.exited.clear()
            for chain in [c for c in running if c.done]:
                bad = chain.failed()
                if bad is not None:
                    raise chain.error(bad)
                running.remove(chain)
            if time.monotonic() > deadline:
                raise ToolError(
                    f"the rsync pipeline did not finish within {timeout_s:.0f} s",
                    phase="rsync pipeline",
                )

    @stopping.whole
    def stop(self) -> None:
        for chain in self.chains:
            chain.stop()

    @property
    def cpu_s(self) -> float:
        return sum(c.cpu_s for c in self.chains)


class Prepared:
    """One rsync pipeline run: set up untimed (the daemon and both socats listening), the
    timed copy, then every process stopped (their CPU is read as they are reaped)."""

    def __init__(self, run: pipelines.Run, donor_addr: str) -> None:
        self.run = run
        per = "file" if run.cell.method == "rsync-file" else "dir"
        pipelines.empty_dir(run.target)
        # Per file, hundreds of lists and logs: deleted after a run that succeeded.
        self.lists = lists = run.logs.with_name(run.logs.name + ".lists")
        pipelines.empty_dir(lists)
        argvs, logs = [], []
        prefix = run.ends.donor_net_prefix or run.ends.donor_prefix
        for i, unit in enumerate(units(run.datadir, per)):
            file_list = lists / f"{i:05d}.txt"
            file_list.write_text("".join(f"{name}\n" for name in unit))
            argvs.append([*prefix, *rsync_argv(run.datadir, file_list, donor_addr)])
            logs.append(lists / f"{i:05d}.log")
        config = run.logs.with_name(run.logs.name + ".rsyncd.conf")
        config.write_text(daemon_config(run.target, pipelines.log_path(run.logs, "rsyncd")))
        donor_socat, joiner_socat = tunnel_argvs(
            run.ends, donor_addr, encrypted=run.encrypted, sockopt=run.sockopt
        )
        self.daemon = pipelines.Chain(
            [[*run.ends.joiner_prefix, *daemon_argv(config, run.ends.joiner_addr)]],
            [pipelines.log_path(run.logs, "rsync-daemon")],
            "rsync daemon",
        )
        self.receiver = pipelines.Chain(
            [[*run.ends.joiner_prefix, *joiner_socat]],
            [pipelines.log_path(run.logs, "receiver-socat")],
            "rsync pipeline: the joiner's socat",
        )
        self.sender = pipelines.Chain(
            [[*run.ends.donor_prefix, *donor_socat]],
            [pipelines.log_path(run.logs, "sender-socat")],
            "rsync pipeline: the donor's socat",
        )
        self.pool = Pool(argvs, logs, run.cell.backup_threads)
        self.page_cache = pipelines.drop_page_cache()
        try:
            for chain, port in (
                (self.daemon, DAEMON_PORT),
                (self.receiver, pipelines.PORT),
                (self.sender, DAEMON_PORT),
            ):
                chain.start()
                pipelines.wait_listening(chain, port)
        except BaseException:
            self.stop()
            raise

    def measure(self) -> pipelines.Timed:
        run = self.run
        try:
            began = time.perf_counter()
            self.pool.run(run.timeout_s)
            received = max(c.ended_at for c in self.pool.chains)
            proc.run(
                ["sync", "-f", str(run.target)],
                phase="sync the target",
                timeout_s=pipelines.SYNC_TIMEOUT_S,
            )
            synced = time.perf_counter()
        finally:
            self.stop()
        shutil.rmtree(self.lists, ignore_errors=True)
        sent_log = self.sender.logs[0].read_text(errors="replace")
        got_log = self.receiver.logs[0].read_text(errors="replace")
        protocol, cipher = pipelines.negotiated(got_log)
        return pipelines.Timed(
            sync_s=synced - began,
            transfer_s=received - began,
            stages={
                pipelines.SENDER_STAGE: received - began,
                pipelines.SYNC_STAGE: synced - received,
            },
            donor_cpu_s=self.pool.cpu_s + self.sender.cpu_s,
            joiner_cpu_s=self.receiver.cpu_s + self.daemon.cpu_s,
            donor_transport=pipelines.transport(sent_log),
            joiner_transport=pipelines.transport(got_log),
            protocol=protocol,
            cipher=cipher,
            page_cache=self.page_cache,
            logs=(*self.sender.logs, *self.receiver.logs, *self.daemon.logs),
        )

    @stopping.whole
    def stop(self) -> None:
        self.pool.stop()
        for chain in (self.sender, self.receiver, self.daemon):
            chain.stop()
