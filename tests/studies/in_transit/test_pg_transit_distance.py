"""The PostgreSQL in-transit study at emulated distances, without a server: its cells per
round-trip time, the plan's time, the report's rows by distance, and the capture of the wire
read from made-up frames and judged per side.  The run itself: tests/integration/
test_pg_transit_run.py."""

from __future__ import annotations

import dataclasses
import itertools
import json
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import plan
from encbench.errors import BadInput, ProofError
from encbench.profiles import profile as profiles
from encbench.proof import wire
from encbench.report import markdown
from encbench.report.tables import Document
from encbench.studies import in_transit
from encbench.studies.in_transit import cells as transit_cells
from encbench.studies.in_transit import postgresql_needs as needs
from encbench.studies.in_transit import postgresql_proof as proof
from encbench.studies.in_transit import postgresql_section, section
from encbench.studies.in_transit import report as pg_report
from encbench.studies.in_transit import summary as pg_summary
from encbench.studies.in_transit.models import InTransitSummary
from encbench.studies.in_transit.records import TransitCell, TransitRecord, from_pg_transit
from tests.helpers import GOLDEN_ROOT
from tests.studies.in_transit.pg_records import pg_cell, run_record


def load(body: str) -> profiles.Profile:
    return profiles.parse(
        'name = "t"\nstudies = ["in-transit"]\n[server]\nkinds = ["postgresql"]\n'
        f"[pg_transit]\n{body}",
        "t",
    )


FAR = (
    'tests = ["connect_select1", "select_only"]\nkey_types = ["rsa2048", "ecdsa-p256"]\n'
    'tls_versions = ["TLSv1.3", "TLSv1.2"]\nquery_clients = [1]\n'
)


# -- cells and plan -----------------------------------------------------------------------------
def test_the_distance_tests_run_at_every_rtt_and_the_others_on_loopback() -> None:
    near = transit_cells.postgresql_cells(load(FAR))
    far = transit_cells.postgresql_cells(load(FAR + "rtt_ms = [0, 1, 40]\n"))
    assert {c.rtt_ms for c in near} == {0}
    by = Counter((c.test, c.rtt_ms) for c in far)
    # connect_select1 (2 keys × 2 versions) at each distance; select_only on loopback only.
    assert by == {
        ("connect_select1", 0): 4,
        ("connect_select1", 1): 4,
        ("connect_select1", 40): 4,
        ("select_only", 0): 2,
    }
    # Still one server configuration after another: a distance is not a restart.
    groups = [transit_cells.pg_server_tls(c) for c in far]
    assert [k for k, _ in itertools.groupby(groups)] == list(dict.fromkeys(groups))
    assert len({c.slug for c in far}) == len(far)
    both = transit_cells.postgresql_cells(
        load(FAR + 'rtt_ms = [0, 10]\ndistance_tests = ["select_only"]\n')
    )
    assert {c.rtt_ms for c in both if c.test == "select_only"} == {0, 10}
    assert {c.rtt_ms for c in both if c.test == "connect_select1"} == {0}


def test_a_loopback_cell_keeps_its_label_and_slug_and_a_far_one_names_its_rtt() -> None:
    near = pg_cell("connect_select1", "require", "rsa2048", "TLSv1.3", 1)
    far = pg_cell("connect_select1", "require", "rsa2048", "TLSv1.3", 1, 40.0)
    assert near.slug == "connect_select1-require-rsa2048-tlsv1.3-c1"
    assert far.slug == "connect_select1-require-rsa2048-tlsv1.3-rtt40-c1"
    assert "RTT 40 ms" in far.label and "RTT" not in near.label
    # A line of PostgreSQL's results file from before distances existed reads as loopback.
    lines = (GOLDEN_ROOT / "pg-in-transit" / "pg-in-transit.jsonl").read_text().splitlines()
    old = json.loads(lines[0])
    old["cell"].pop("rtt_ms", None)
    assert TransitRecord.from_json(from_pg_transit(old)).cell.rtt_ms == 0


def test_the_plan_counts_every_distance_cell_in_its_time() -> None:
    def total(body: str) -> float:
        [study] = [p for p in plan.study_plans(load(body)) if p.study.name == "in-transit"]
        return study.measuring_s

    near, far = total(FAR), total(FAR + "rtt_ms = [0, 1, 40]\n")
    cells_near = len(transit_cells.postgresql_cells(load(FAR)))
    assert far == pytest.approx(near * (cells_near + 8) / cells_near)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("rtt_ms = [0, 20000]\n", "round-trip time 20000 ms is out of range"),
        ("rtt_ms = [-1]\n", "out of range"),
        ('distance_tests = ["copy"]\n', "distance_tests names copy"),
    ],
)
def test_a_bad_distance_is_refused_in_one_line(body: str, words: str) -> None:
    with pytest.raises(BadInput, match=words):
        load(FAR + body)


def test_only_a_distance_needs_root() -> None:
    assert needs.root(load(FAR)) is None
    assert needs.root(load(FAR + 'rtt_ms = [0, 1]\ndistance_tests = ["select_only"]\n'))
    need = in_transit.STUDY.here.root(load(FAR + "rtt_ms = [0, 1]\n"))
    assert need is not None and need.what == "network namespaces"


def test_the_built_in_profiles_measure_distances_where_they_say() -> None:
    tiny = transit_cells.postgresql_cells(profiles.load("postgresql-tiny")[0])
    assert sorted(c.tls_version for c in tiny if c.rtt_ms > 0) == ["TLSv1.2", "TLSv1.3"]
    distance = transit_cells.postgresql_cells(profiles.load("postgresql-distance")[0])
    assert {c.rtt_ms for c in distance} == {0, 1, 10, 40}
    # The postgresql profile stays on loopback, within its time.
    assert {c.rtt_ms for c in transit_cells.postgresql_cells(profiles.load("postgresql")[0])} == {0}


# -- report ---------------------------------------------------------------------------------------
REPORTED = load(
    'tests = ["connect_select1", "select_only"]\nkey_types = ["rsa2048"]\n'
    'tls_versions = ["TLSv1.3"]\nquery_clients = [1]\nrtt_ms = [0, 10]\n'
)


def far_part() -> InTransitSummary:
    runs = []
    for cell in transit_cells.postgresql_cells(REPORTED):
        # Further away, a connection's TLS share shrinks: more of it is round trips.
        cost = 0.3 if cell.rtt_ms == 0 else 0.1
        base = 400.0 if cell.rtt_ms == 0 else 20.0
        for r in range(12):
            for variant in ("plain", "encrypted"):
                factor = 1 - cost if variant == "encrypted" else 1.0
                noise = 1 + 0.002 * ((r * 7 + len(variant)) % 5 - 2)
                runs.append(run_record(cell, variant, r, base * factor * noise))
    wire_words = {"plain": "query text in clear", "encrypted": "SSLRequest, then TLS"}
    record: dict[str, Any] = {
        "postgresql": {
            "proofs": {},
            "wire": {c.slug: wire_words for c in transit_cells.postgresql_cells(REPORTED)},
            "delay_method": {"10": "relay"},
        },
        "link": {"client": "10.213.1.1", "server": "10.213.1.2"},
    }
    return pg_summary.build(runs, REPORTED, record)


def test_the_report_groups_the_rows_by_distance() -> None:
    part = far_part()
    far = [c for c in part.cells if c.rtt_ms]
    assert [c.rtt_ms for c in far] == [10]
    assert far[0].comparisons["rate"].overhead_pct == pytest.approx(10, abs=2)
    text = markdown.render(Document("t", section.sections(part)))
    assert postgresql_section.DISTANCE_TITLE in text
    assert "| RTT 0 ms | RTT 10 ms |" in text  # the table by distance
    assert "At a distance: New connections" in text and "| RTT ms |" in text
    assert "delay relay" in text and "10 ms by relay" in text
    assert "On the wire:" in text and "SSLRequest, then TLS" in text
    # The loopback tables hold the loopback rows only.
    loopback = text.split(postgresql_section.DISTANCE_TITLE)[0]
    assert "RTT" not in loopback.split("### New connections")[1]
    keys = [c.key for c in pg_report.PART.compared(part)]
    far_key = ("connect_select1", "tls", "rsa2048", "", 10.0, 1, False, "postgresql")
    assert ("in-transit", *far_key, "require", "TLSv1.3") in keys
    assert len(set(keys)) == len(keys)


# -- the wire -------------------------------------------------------------------------------------
SERVER_PORT = 5433


def frame(payload: bytes, source: int = 40000, destination: int = SERVER_PORT) -> bytes:
    """An Ethernet + IPv4 + TCP frame carrying `payload` (as a capture reads it)."""
    ip_len = 20 + 20 + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 6, 0, bytes(4), bytes(4))
    tcp = struct.pack("!HHIIBBHHH", source, destination, 0, 0, 5 << 4, 0x18, 0, 0, 0)
    return bytes(12) + b"\x08\x00" + ip + tcp + payload


def server_hello(tls13: bool, retry: bool = False) -> bytes:
    ext = struct.pack("!HHH", 43, 2, 0x0304) if tls13 else b""
    random = wire.HELLO_RETRY_RANDOM if retry else bytes(32)
    body = struct.pack("!H", 0x0303) + random + b"\x00" + struct.pack("!HB", 0x1302, 0)
    body += struct.pack("!H", len(ext)) + ext
    hs = b"\x02" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x03" + struct.pack("!H", len(hs)) + hs


MARKER = b"encbench-wire-0123456789abcdef"
QUERY = b"Q\x00\x00\x00\x40/* " + MARKER + b" */ SELECT s.ssl FROM pg_stat_ssl s\x00"


def capture_file(tmp_path: Path, frames: list[bytes], port: int | None = SERVER_PORT) -> Path:
    """What the capture process writes (.capture.json), from these frames."""
    found, search = wire.Findings(), wire.Search(MARKER)
    for one in frames:
        wire.take(one, found, search, port)
    path = tmp_path / "x.capture.json"
    path.write_text(json.dumps(dataclasses.asdict(found)))
    return path


def plain_frames() -> list[bytes]:
    startup = b"\x00\x00\x00\x30\x00\x03\x00\x00user\x00encbench_bench\x00\x00"
    ready = b"R\x00\x00\x00\x08\x00\x00\x00\x00"
    return [frame(startup), frame(ready, SERVER_PORT, 40000), frame(QUERY)]


def tls_frames(tls13: bool = True) -> list[bytes]:
    application = b"\x17\x03\x03\x00\x40" + bytes(64)
    return [
        frame(wire.POSTGRES_SSL_REQUEST),
        frame(b"S", SERVER_PORT, 40000),
        frame(b"\x16\x03\x01\x00\x20" + bytes(32)),  # the ClientHello's record
        frame(server_hello(tls13), SERVER_PORT, 40000),
        frame(application),
        frame(application, SERVER_PORT, 40000),
    ]


CELL = pg_cell("connect_select1", "require", "rsa2048", "TLSv1.3", 1, 10.0)


def judge(path: Path, variant: str, cell: TransitCell = CELL) -> str:
    return proof.judge_wire(cell, variant, json.loads(path.read_text()))


def test_a_capture_of_the_plain_route_shows_the_query_in_clear(tmp_path: Path) -> None:
    path = capture_file(tmp_path, plain_frames())
    found = json.loads(path.read_text())
    assert found["marker_hits"] == 1 and found["postgres_ssl_requests"] == 0
    assert found["tls_records"] == 0 and found["hellos"] == []
    assert "query text in clear (1 marker hits" in judge(path, "plain")
    # The same connection over TLS is no TLS connection at all.
    with pytest.raises(ProofError, match="no PostgreSQL SSLRequest"):
        judge(path, "encrypted")


def test_a_capture_of_the_tls_route_shows_the_sslrequest_the_handshake_and_no_query(
    tmp_path: Path,
) -> None:
    path = capture_file(tmp_path, tls_frames())
    found = json.loads(path.read_text())
    assert found["postgres_ssl_requests"] == 1 and found["marker_hits"] == 0
    assert found["tls_records"] == 4
    words = judge(path, "encrypted")
    assert "SSLRequest, then TLS (TLSv1.3 TLS_AES_256_GCM_SHA384, 4 TLS record" in words
    with pytest.raises(ProofError, match="marker is not in clear"):
        judge(path, "plain")


def test_a_hello_retry_request_is_named_as_the_round_trip_it_costs(tmp_path: Path) -> None:
    # PostgreSQL 15 offers prime256v1 alone; OpenSSL 3's client sends an X25519 key share:
    # the server answers with a HelloRetryRequest (a ServerHello with RFC 8446's random),
    # then the ServerHello that settles the handshake.
    frames = tls_frames()
    frames[3:3] = [
        frame(server_hello(True, retry=True), SERVER_PORT, 40000),
        frame(b"\x16\x03\x03\x00\x20" + bytes(32)),  # the second ClientHello
    ]
    path = capture_file(tmp_path, frames)
    hellos = json.loads(path.read_text())["hellos"]
    assert [h["retry"] for h in hellos] == [True, False]
    words = judge(path, "encrypted")
    assert "TLSv1.3 TLS_AES_256_GCM_SHA384, after a HelloRetryRequest" in words
    assert "HelloRetryRequest" not in judge(capture_file(tmp_path, tls_frames()), "encrypted")


def test_a_tls_capture_that_fails_a_check_is_refused(tmp_path: Path) -> None:
    tls12 = capture_file(tmp_path, tls_frames(tls13=False))
    with pytest.raises(ProofError, match=r"TLSv1\.2, not TLSv1\.3"):
        judge(tls12, "encrypted")
    leaked = capture_file(tmp_path, [*tls_frames(), frame(QUERY)])
    with pytest.raises(ProofError, match="crossed in clear"):
        judge(leaked, "encrypted")
    dropped = json.loads(capture_file(tmp_path, tls_frames()).read_text()) | {"dropped": 3}
    with pytest.raises(ProofError, match="dropped 3 frames"):
        proof.judge_wire(CELL, "encrypted", dropped)
    with pytest.raises(ProofError, match="no payload"):
        judge(capture_file(tmp_path, []), "encrypted")
    asked = capture_file(tmp_path, [frame(wire.POSTGRES_SSL_REQUEST), *plain_frames()])
    with pytest.raises(ProofError, match="asked for TLS"):
        judge(asked, "plain")


def test_a_capture_keeps_to_its_port(tmp_path: Path) -> None:
    """Another program's TLS on the same loopback is not this route's."""
    others = [frame(server_hello(True), 443, 50000), frame(QUERY, 50001, 6000)]
    kept = json.loads(capture_file(tmp_path, [*plain_frames(), *others]).read_text())
    assert kept["hellos"] == [] and kept["marker_hits"] == 1 and kept["frames"] == 3
    everything = json.loads(capture_file(tmp_path, [*plain_frames(), *others], None).read_text())
    assert len(everything["hellos"]) == 1 and everything["marker_hits"] == 2


def test_a_tls_record_header_is_told_from_postgresqls_own_messages() -> None:
    assert wire.tls_record(b"\x17\x03\x03\x00\x40" + bytes(64))
    assert not wire.tls_record(QUERY)
    assert not wire.tls_record(b"\x00\x00\x00\x08\x04\xd2\x16\x2f")
    assert not wire.tls_record(b"\x17\x03\x03\x00\x00")  # an empty record
    assert not wire.tls_record(b"\x16\x03\x03\xff\xff")  # longer than a record may be
