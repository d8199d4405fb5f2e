"""A userspace delay relay: emulates a link's round-trip time where the kernel has no netem.

`python -m encbench.net.delay --listen HOST:PORT --connect HOST:PORT --rtt-ms R` accepts
connections on --listen and relays each one to --connect.  The client dials the relay instead
of the server; run inside the client's namespace (netns.exec_prefix), the relay's upstream leg
still crosses the veth, so the server sees the client host's address and any tbf rate limit.

Why it behaves as it does:

* Every chunk read from one side is written to the other R/2 after it was read, in order per
  direction.  Reading never waits for the delay: chunks queue with their due time, so bytes in
  flight are pipelined as on a real link, where a request and its answer each pay one half.
* TCP's handshake costs time too.  On a real link of RTT R, connect() returns after R (SYN,
  SYN-ACK), the server accepts when the ACK lands at 1.5R, and a greeting sent at once (MySQL:
  the server speaks first) reaches the client at 2R.  Against the relay connect() returns at
  once, so the relay opens its upstream connection 1.5R after accepting and delays the
  greeting by R/2 like any chunk: 2R in total.  A client that speaks first gets the same
  answer: its data, due at R/2, waits for the upstream connection at 1.5R, which is when it
  would reach a real server, and the reply is back at 2R.
* EOF (a half-close) is forwarded R/2 after it was read, behind the data before it, so a
  client's QUIT and the server's close arrive when they would.  A reset, refused connection or
  other error on either side closes both at once: neither peer can use the connection anyway.
* Memory is bounded: a direction stops reading while more than 4 MiB are queued in it, and TCP
  flow control then slows the sender.  This cap (and the relay's fast legs) means bulk
  throughput over a long fat link is not emulated faithfully; latency of handshakes and
  request/response exchanges, what the transit study measures, is.
* SIGTERM and SIGINT end it with exit 0; open connections are simply dropped.  It prints nothing
  per connection, so its log holds only real trouble.  Bad arguments exit 2 with one line.
* asyncio sets TCP_NODELAY on both legs, so the relay adds no Nagle delay of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

from encbench.errors import BadInput
from encbench.net import netns, tunnels
from encbench.servers import keys

CHUNK = 64 * 1024
HIGH_WATER = 4 * 1024 * 1024
CONNECT_RTTS = 1.5


class _Direction:
    """One direction of one connection: chunks (b"" for EOF) with the loop time they are due."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()
        self.queued = 0
        self.room = asyncio.Event()

    async def read(self, reader: asyncio.StreamReader) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while self.queued > HIGH_WATER:
                self.room.clear()
                await self.room.wait()
            data = await reader.read(CHUNK)
            self.queued += len(data)
            self.chunks.put_nowait((loop.time() + self.delay_s, data))
            if not data:
                return

    async def write(self, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due, data = await self.chunks.get()
            await asyncio.sleep(due - loop.time())
            if not data:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(data)
            await writer.drain()
            self.queued -= len(data)
            self.room.set()


async def _session(
    client_r: asyncio.StreamReader,
    client_w: asyncio.StreamWriter,
    upstream: tuple[str, int],
    rtt_s: float,
) -> None:
    loop = asyncio.get_running_loop()
    accepted = loop.time()
    up, down = _Direction(rtt_s / 2), _Direction(rtt_s / 2)
    server_w: asyncio.StreamWriter | None = None
    failed = True
    try:
        async with asyncio.TaskGroup() as tasks:
            # The client may speak first: its data queues while the upstream connect waits.
            tasks.create_task(up.read(client_r))
            await asyncio.sleep(accepted + CONNECT_RTTS * rtt_s - loop.time())
            server_r, server_w = await asyncio.open_connection(*upstream)
            tasks.create_task(down.read(server_r))
            tasks.create_task(up.write(server_w))
            tasks.create_task(down.write(client_w))
        failed = False
    except* OSError:
        pass  # a reset or refused connection: both sides are closed below, quietly
    except* asyncio.CancelledError:
        pass  # shutting down; Python 3.11's streams would log a cancelled session as an error
    finally:
        for writer in (client_w, server_w):
            if writer is None:
                continue
            if failed:
                writer.transport.abort()
            else:
                writer.close()


async def _serve(listen: tuple[str, int], upstream: tuple[str, int], rtt_s: float) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    server = await asyncio.start_server(
        lambda r, w: _session(r, w, upstream, rtt_s), *listen, reuse_address=True
    )
    await stop.wait()
    # No wait_closed(): open sessions are cancelled by asyncio.run on the way out.
    server.close()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line, no usage block: the caller shows it as the reason the relay did not start.
        self.exit(2, f"{self.prog}: {message}\n")


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def _rtt(text: str) -> float:
    try:
        return netns.check_delay(float(text))
    except (ValueError, BadInput) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="encbench.net.delay", description="TCP relay adding a delay")
    parser.add_argument("--listen", type=_address, required=True)
    parser.add_argument("--connect", type=_address, required=True)
    parser.add_argument("--rtt-ms", type=_rtt, required=True)
    args = parser.parse_args(argv)
    try:
        asyncio.run(_serve(args.listen, args.connect, args.rtt_ms / 1000))
    except OSError as exc:
        print(f"encbench.net.delay: cannot listen on {args.listen}: {exc}", file=sys.stderr)
        return 1
    return 0


@contextlib.contextmanager
def relay(
    run_dir: Path,
    *,
    upstream: tuple[str, int],
    rtt_ms: float,
    prefix: Sequence[str] = (),
) -> Iterator[tuple[str, int]]:
    """Run a relay to `upstream` (inside a namespace when prefix is netns.exec_prefix(ns)) and
    yield the loopback address clients dial; it is stopped on every way out."""
    netns.check_delay(rtt_ms)
    directory = keys.private_dir(run_dir) / "delay"
    directory.mkdir(mode=0o700, exist_ok=True)
    # Free on the host's loopback; inside a fresh namespace every port is free.
    listen = ("127.0.0.1", tunnels.free_port())
    argv = [*prefix, sys.executable, "-m", "encbench.net.delay"]
    argv += ["--listen", f"{listen[0]}:{listen[1]}", "--connect", f"{upstream[0]}:{upstream[1]}"]
    argv += ["--rtt-ms", repr(float(rtt_ms))]
    daemon = tunnels.Daemon("delay relay", argv, directory / f"relay-{listen[1]}.log", listen[1])
    with tunnels.running(daemon):
        yield listen


if __name__ == "__main__":
    sys.exit(main())
