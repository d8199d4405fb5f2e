"""What crossed a link, read off the wire: an AF_PACKET capture of one network device that
searches every TCP payload for a known plaintext marker and reads the first TLS ServerHello
(protocol and cipher suite as negotiated).

It runs as its own process inside the namespace that owns the device
(`ip netns exec NS python -m encbench.proof.wire …`: a Python process cannot enter a
namespace for one socket), writes its findings as JSON when it gets SIGTERM or SIGINT, and
holds no payload: each frame is searched where it stands plus the last bytes of the one
before (a marker split across two segments of one stream is still found).  The kernel's own
drop counter (PACKET_STATISTICS) is reported, so a capture that missed frames says so; a
marker absent from a capture with drops proves nothing, and the caller must say so.

Given `--port`, only TCP segments to or from that port are read, chosen by a filter in the
kernel (port_filter): a capture of a loopback device shared with other programs then holds
the one conversation it is meant for, and a busy host's other traffic neither costs it CPU
nor fills its buffer.  Beside
the marker and the hello it counts the segments that begin with a TLS record header (a TLS
stream's handshake and data) and PostgreSQL's SSLRequest (the 8 bytes a libpq client sends
before its TLS handshake, when its sslmode asks for TLS).

The capture is for proof runs only: in Python it costs CPU that a measured run must not pay.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import signal
import socket
import struct
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4  # sll_pkttype of a frame this host sent
# A veth passes segments of up to 64 KiB whole (GSO): a frame is read whole or not at all.
MAX_FRAME = 1 << 18
RECEIVE_BUFFER = 64 << 20  # set with SO_RCVBUFFORCE (root): a burst must not overflow it
TCP = 6
TLS_HANDSHAKE = 22
# A TLS record's payload is at most 2^14 bytes, plus 2,048 of expansion (RFC 5246 6.2.3).
MAX_TLS_RECORD = 2**14 + 2048
SERVER_HELLO = 2
SUPPORTED_VERSIONS = 43
# TLS record types: change_cipher_spec, alert, handshake, application_data.
TLS_RECORD_TYPES = range(20, 24)
# PostgreSQL's SSLRequest: length 8, then the code 1234 << 16 | 5679 (its protocol docs).
POSTGRES_SSL_REQUEST = b"\x00\x00\x00\x08\x04\xd2\x16\x2f"
TLS_VERSIONS = {0x0301: "TLSv1.0", 0x0302: "TLSv1.1", 0x0303: "TLSv1.2", 0x0304: "TLSv1.3"}
# The suites a report names (IANA numbers); any other is shown as its number.
CIPHER_SUITES = {
    0x1301: "TLS_AES_128_GCM_SHA256",
    0x1302: "TLS_AES_256_GCM_SHA384",
    0x1303: "TLS_CHACHA20_POLY1305_SHA256",
    0xC02F: "ECDHE-RSA-AES128-GCM-SHA256",
    0xC030: "ECDHE-RSA-AES256-GCM-SHA384",
    0xCCA8: "ECDHE-RSA-CHACHA20-POLY1305",
    0xC02B: "ECDHE-ECDSA-AES128-GCM-SHA256",
    0xC02C: "ECDHE-ECDSA-AES256-GCM-SHA384",
    0x009C: "AES128-GCM-SHA256",
    0x009D: "AES256-GCM-SHA384",
}


# RFC 8446 4.1.3: a HelloRetryRequest is a ServerHello whose random is this value (the
# SHA-256 of "HelloRetryRequest"): the server asks the client for a key share of another
# group, which costs the handshake one more round trip.
HELLO_RETRY_RANDOM = bytes.fromhex(
    "CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C"
)


@dataclass
class Hello:
    protocol: str
    cipher: str
    retry: bool = False  # a HelloRetryRequest, not the hello that settles the handshake


@dataclass
class Findings:
    frames: int = 0
    payload_bytes: int = 0
    marker_hits: int = 0
    dropped: int = 0
    hellos: list[dict[str, Any]] = field(default_factory=list)
    # Per service port (the lower of a segment's two): payload bytes and marker hits, so a
    # hit names the conversation it was in (the SST port, Galera's own 4567, …).
    bytes_by_port: dict[str, int] = field(default_factory=dict)
    hits_by_port: dict[str, int] = field(default_factory=dict)
    # Segments that begin with a TLS record header, and PostgreSQL SSLRequests.
    tls_records: int = 0
    postgres_ssl_requests: int = 0


@dataclass(frozen=True)
class Segment:
    source_port: int
    destination_port: int
    payload: bytes

    @property
    def service_port(self) -> int:
        """The listening side's port, as far as a segment can tell: the lower one."""
        return min(self.source_port, self.destination_port)


def tcp_segment(frame: bytes) -> Segment | None:
    """The TCP segment of an Ethernet + IPv4 frame, or None for anything else."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    if ip[0] >> 4 != 4 or ip[9] != TCP:
        return None
    ip_header = (ip[0] & 0x0F) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    tcp = ip[ip_header:total]
    if len(tcp) < 20:
        return None
    source, destination = struct.unpack("!HH", tcp[0:4])
    return Segment(source, destination, tcp[(tcp[12] >> 4) * 4 :])


def tcp_payload(frame: bytes) -> bytes | None:
    segment = tcp_segment(frame)
    return segment.payload if segment is not None else None


def server_hello(payload: bytes) -> Hello | None:
    """The negotiated protocol and suite, if the payload starts with a TLS ServerHello
    record (TLS 1.3 names its version in the supported_versions extension; the record and
    hello say TLS 1.2 for compatibility).

    Every field a real ServerHello fixes is checked, not only the two type bytes: a plain
    stream of ~375 MiB in ~8,600 segments once began with 0x16 … 0x02 by chance (odds of
    1 in 65,536 a segment) and failed a plain run's proof.  With the versions, lengths,
    session id and compression method checked, chance matches are about 2^-60 a segment."""
    if len(payload) < 44 or payload[0] != TLS_HANDSHAKE or payload[5] != SERVER_HELLO:
        return None
    record_version, record_len = struct.unpack("!HH", payload[1:5])
    hello_len = int.from_bytes(payload[6:9], "big")
    if not (
        0x0301 <= record_version <= 0x0304
        and record_len <= MAX_TLS_RECORD
        and 38 <= hello_len <= record_len - 4
    ):
        return None
    body = payload[9:]
    version = struct.unpack("!H", body[0:2])[0]
    at = 2 + 32  # version, random
    session_len = body[at]
    at += 1 + session_len
    # ServerHello.legacy_version is TLS 1.2 or older; the session id at most 32 bytes.
    if not 0x0300 <= version <= 0x0303 or session_len > 32 or len(body) < at + 3:
        return None
    suite = struct.unpack("!H", body[at : at + 2])[0]
    if body[at + 2] != 0:  # the compression method: "null", the only one TLS 1.3 allows
        return None
    at += 3  # suite, compression method
    if len(body) >= at + 2:
        end = at + 2 + struct.unpack("!H", body[at : at + 2])[0]
        at += 2
        while at + 4 <= min(end, len(body)):
            kind, size = struct.unpack("!HH", body[at : at + 4])
            if kind == SUPPORTED_VERSIONS and size == 2:
                version = struct.unpack("!H", body[at + 4 : at + 6])[0]
            at += 4 + size
    return Hello(
        TLS_VERSIONS.get(version, f"0x{version:04x}"),
        CIPHER_SUITES.get(suite, f"0x{suite:04x}"),
        retry=body[2:34] == HELLO_RETRY_RANDOM,
    )


def tls_record(payload: bytes) -> bool:
    """Whether the payload begins with a TLS record header: a known type, a record version
    of TLS 1.0 to 1.2 (TLS 1.3 keeps 1.2 there), a length a record may have."""
    if len(payload) < 5 or payload[0] not in TLS_RECORD_TYPES:
        return False
    version, length = struct.unpack("!HH", payload[1:5])
    return bool(0x0301 <= version <= 0x0303 and 0 < length <= MAX_TLS_RECORD)


class Search:
    """Counts a marker across a sequence of payloads, keeping only the last len-1 bytes of
    each conversation (a marker split between two of its segments is found once)."""

    def __init__(self, marker: bytes) -> None:
        self.marker = marker
        self.tails: dict[object, bytes] = {}

    def feed(self, payload: bytes, conversation: object = None) -> int:
        data = self.tails.get(conversation, b"") + payload
        hits = data.count(self.marker)
        keep = len(self.marker) - 1
        self.tails[conversation] = data[-keep:] if keep else b""
        return hits


def take(frame: bytes, found: Findings, search: Search, port: int | None = None) -> None:
    """One captured frame into the findings (only segments to or from `port`, if given)."""
    segment = tcp_segment(frame)
    if port is not None and (segment is None or port not in _ports(segment)):
        return
    found.frames += 1
    if segment is None or not segment.payload:
        return
    payload = segment.payload
    service = str(segment.service_port)
    found.payload_bytes += len(payload)
    found.bytes_by_port[service] = found.bytes_by_port.get(service, 0) + len(payload)
    hits = search.feed(payload, (segment.source_port, segment.destination_port))
    if hits:
        found.marker_hits += hits
        found.hits_by_port[service] = found.hits_by_port.get(service, 0) + hits
    found.tls_records += tls_record(payload)
    found.postgres_ssl_requests += payload == POSTGRES_SSL_REQUEST
    if len(found.hellos) < 8:
        hello = server_hello(payload)
        if hello is not None:
            found.hellos.append(asdict(hello))


def _ports(segment: Segment) -> tuple[int, int]:
    return segment.source_port, segment.destination_port


def _receive(
    sock: socket.socket, found: Findings, search: Search, port: int | None, loopback: bool
) -> None:
    """One frame off the socket into the findings.  On a loopback device every frame is seen
    twice, leaving and arriving: only its arrival is counted there."""
    frame, address = sock.recvfrom(MAX_FRAME)
    if loopback and address[2] == PACKET_OUTGOING:
        return
    take(frame, found, search, port)


# Classic BPF (linux/filter.h) for `port_filter`: the instructions' codes.
_LD_W_ABS, _LDH_ABS, _LDB_ABS, _LDH_IND, _LDXB_MSH = 0x20, 0x28, 0x30, 0x48, 0xB1
_JEQ, _JSET, _RET = 0x15, 0x45, 0x06
_SKF_AD_PKTTYPE = 0xFFFFF000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE: the frame's direction
SO_ATTACH_FILTER = 26


def port_filter(port: int, skip_outgoing: bool) -> list[tuple[int, int, int, int]]:
    """The kernel's filter for TCP segments to or from `port`, over IPv6 and IPv4 (as
    `tcpdump -dd 'tcp port N'` compiles it for Ethernet framing, a loopback device's too),
    and on a loopback device without the frames this host sends (each is seen again as it
    arrives).  The kernel drops every other frame before it reaches the socket: on a busy
    host's loopback the capture then reads its one conversation, not all the host's traffic,
    and its drop counter counts only the frames it was meant to see."""
    body = [
        (_LDH_ABS, 0, 0, 12),  # 0 the ethertype
        (_JEQ, 0, 6, 0x86DD),  # 1 IPv6? else 8
        (_LDB_ABS, 0, 0, 20),  # 2 its next header
        (_JEQ, 0, 15, TCP),  # 3 TCP? else drop
        (_LDH_ABS, 0, 0, 54),  # 4 source port
        (_JEQ, 12, 0, port),  # 5 → keep
        (_LDH_ABS, 0, 0, 56),  # 6 destination port
        (_JEQ, 10, 11, port),  # 7 → keep, else drop
        (_JEQ, 0, 10, 0x0800),  # 8 IPv4? else drop
        (_LDB_ABS, 0, 0, 23),  # 9 its protocol
        (_JEQ, 0, 8, TCP),  # 10 TCP? else drop
        (_LDH_ABS, 0, 0, 20),  # 11 flags and fragment offset
        (_JSET, 6, 0, 0x1FFF),  # 12 a later fragment (no TCP header): drop
        (_LDXB_MSH, 0, 0, 14),  # 13 X = the IPv4 header's length
        (_LDH_IND, 0, 0, 14),  # 14 source port
        (_JEQ, 2, 0, port),  # 15 → keep
        (_LDH_IND, 0, 0, 16),  # 16 destination port
        (_JEQ, 0, 1, port),  # 17 → keep, else drop
        (_RET, 0, 0, MAX_FRAME),  # 18 keep, whole
        (_RET, 0, 0, 0),  # 19 drop
    ]
    if not skip_outgoing:
        return body
    # Outgoing (4): jump to the last instruction, the drop.
    return [(_LD_W_ABS, 0, 0, _SKF_AD_PKTTYPE), (_JEQ, len(body) - 1, 0, PACKET_OUTGOING), *body]


def _attach(sock: socket.socket, program: list[tuple[int, int, int, int]]) -> None:
    """SO_ATTACH_FILTER takes a struct sock_fprog: the count and a pointer to the program
    (the kernel copies it during the call)."""
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HL", len(program), ctypes.addressof(buffer))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


def capture(device: str, marker: bytes, out: Path, port: int | None = None) -> None:
    stop = False
    loopback = device == "lo"

    def finish(signum: int, frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    found = Findings()
    search = Search(marker)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        try:
            sock.setsockopt(socket.SOL_SOCKET, 33, RECEIVE_BUFFER)  # SO_RCVBUFFORCE
        except OSError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        if port is not None:
            _attach(sock, port_filter(port, skip_outgoing=loopback))
        sock.bind((device, 0))
        sock.settimeout(0.2)
        # Ready: the caller waits for this file before it starts the transfer.
        out.with_suffix(".ready").write_text("ready\n")
        while not stop:
            try:
                _receive(sock, found, search, port, loopback)
            except (TimeoutError, InterruptedError):
                continue
        # Told to stop: what the kernel has queued still crossed the link; read it all.
        sock.setblocking(False)
        while True:
            try:
                _receive(sock, found, search, port, loopback)
            except (BlockingIOError, InterruptedError):
                break
        stats = sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        found.dropped = struct.unpack("II", stats)[1]
    finally:
        sock.close()
    out.write_text(json.dumps(asdict(found)) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", required=True)
    parser.add_argument("--marker-file", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    capture(args.device, args.marker_file.read_bytes().strip(), args.out, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
