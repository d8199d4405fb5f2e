"""A network path's TCP throughput, measured with iperf3: the ceiling a stream across it (a
state transfer) cannot pass.

The server runs where the data is received and the client where it is sent, each behind a
launch prefix the caller gives (`ip netns exec NS`: this module knows nothing of
namespaces), so the measured direction is the stream's.  One TCP stream, as one SST stream
is, for a few seconds; the figure is what the receiver got (`end.sum_received`), not what
the sender pushed into its socket buffer.  The server is started first and waited for by its
listening socket (read from its own /proc/PID/net, which shows its namespace's sockets); it
answers one test (`-1`) and is stopped by pid on every exit.  `parse_iperf3_json` is pure
and unit-tested on a captured output (tests/golden/limits/)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import ToolError

MIB = 2**20
IPERF3_HINT = "apt-get install iperf3 (or `make setup`)"
PORT = 5201  # iperf3's own; the Galera nodes use 3306-like, 4444, 4567 and 4568
SECONDS = 2  # unless the caller says otherwise
READY_S = 10.0
STOP = ((15, 5.0),)  # SIGTERM, then SIGKILL after 5 s


@dataclass(frozen=True)
class LinkSpeed:
    """MiB/s (2^20 bytes per second) of one TCP stream, as its receiver counted them."""

    mib_per_s: float
    sent_mib_per_s: float
    seconds: float
    streams: int
    retransmits: int | None  # None where the kernel does not report them
    iperf3_version: str

    def __post_init__(self) -> None:
        if self.mib_per_s <= 0 or self.seconds <= 0:
            raise ValueError(f"impossible link speed: {self.mib_per_s} MiB/s")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_iperf3_json(text: str) -> LinkSpeed:
    """A client's `iperf3 -J` document.  iperf3 reports a failure inside its JSON (`error`,
    e.g. "unable to connect to server"): a ValueError carrying its words."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON document in iperf3's output")
    data, _ = json.JSONDecoder().raw_decode(text, start)
    if data.get("error"):
        raise ValueError(str(data["error"]))
    end = data.get("end") or {}
    received, sent = end.get("sum_received"), end.get("sum_sent")
    if not received or not sent:
        raise ValueError("iperf3's JSON has no end.sum_received / end.sum_sent")
    test = (data.get("start") or {}).get("test_start") or {}
    retransmits = sent.get("retransmits")
    return LinkSpeed(
        mib_per_s=float(received["bits_per_second"]) / 8 / MIB,
        sent_mib_per_s=float(sent["bits_per_second"]) / 8 / MIB,
        seconds=float(received["seconds"]),
        streams=int(test.get("num_streams", len(end.get("streams", [])) or 1)),
        retransmits=int(retransmits) if retransmits is not None else None,
        iperf3_version=str((data.get("start") or {}).get("version", "")),
    )


def _wait_listening(server: subprocess.Popen[str], argv: list[str], log: Path) -> None:
    deadline = time.monotonic() + READY_S
    while not proc.listening(server.pid, PORT):
        if server.poll() is not None or time.monotonic() > deadline:
            raise ToolError(
                f"the iperf3 server did not listen on port {PORT}",
                argv=argv,
                returncode=server.poll(),
                phase="link limit (iperf3)",
                tail=proc.tail(log),
                hint=IPERF3_HINT,
            )
        time.sleep(0.05)


def measure_link(
    *,
    receiver_prefix: Sequence[str],
    sender_prefix: Sequence[str],
    receiver_addr: str,
    log_dir: Path,
    seconds: int = SECONDS,
) -> LinkSpeed:
    """One TCP stream from the sender's side to `receiver_addr` for `seconds` (whole
    seconds: iperf3's -t).  The launch prefixes must exec the program (as `ip netns exec`
    does), so the pid is iperf3's."""
    iperf3 = proc.which("iperf3")
    if iperf3 is None:
        raise ToolError("iperf3 not found", phase="link limit", hint=IPERF3_HINT)
    log_dir.mkdir(parents=True, exist_ok=True)
    server_log = log_dir / "link-limit.iperf3-server.log"
    client_out = log_dir / "link-limit.iperf3.json"
    server_argv = [*receiver_prefix, iperf3, "-s", "-1", "-B", receiver_addr, "-p", str(PORT)]
    client_argv = [
        *sender_prefix, iperf3, "-c", receiver_addr, "-p", str(PORT),
        "-t", str(seconds), "-P", "1", "-J",
    ]  # fmt: skip
    server = proc.spawn(server_argv, phase="link limit (iperf3 server)", log=server_log)
    try:
        _wait_listening(server, server_argv, server_log)
        result = proc.run(
            client_argv,
            phase="link limit (iperf3 client)",
            timeout_s=seconds + 30,
            stdout_path=client_out,
            stderr_path=log_dir / "link-limit.iperf3-client.err",
            check=False,
        )
    finally:
        proc.stop_group(server, STOP)
    try:
        return parse_iperf3_json(result.stdout)
    except (ValueError, KeyError) as exc:
        raise ToolError(
            f"iperf3 measured nothing: {exc}",
            argv=client_argv,
            returncode=result.returncode,
            phase="link limit (iperf3)",
            tail="\n".join(result.stdout.splitlines()[-15:]),
        ) from exc
