"""The in-transit study's runner: for each kind of server the profile measures, one server
(encbench's sandbox, or the user's: `--target`) reached over plain TCP and over TLS or a
tunnel; per cell, paired rounds of the same client over both routes.

Lifecycle: per kind, in the order of its cells: [two hosts, when one of the kind's cells
asks for a distance, joined by a link shaped by the kind's own section] → its side
(side.py) sets its server up on them → per cell: the side sets the server's TLS and opens
and proves both routes → warm-up → paired rounds until the interval is tight enough or the
budget ends.  Each run is timed here (its window's clocks, what else ran), its client run by
the side, and proven against what the side's server counted of it.  One kind's server and
hosts go before the next kind's come: each kind runs where it would alone.

One server for both variants, on purpose: the server is identical by construction, and the
only difference between the two runs of a round is the path the client takes.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.engine.clocks import Window
from encbench.engine.kind_turns import KindTurns
from encbench.engine.study import Run
from encbench.engine.study_base import Given, StudyBasics, load_fields
from encbench.errors import ToolError
from encbench.net import distance
from encbench.net.distance import Hosts
from encbench.servers import keys
from encbench.studies.definition import further_kind
from encbench.studies.in_transit import kind, study_record
from encbench.studies.in_transit.mariadb_server import MariaDbTransit
from encbench.studies.in_transit.options import transit_options
from encbench.studies.in_transit.records import TransitCell, TransitRecord
from encbench.studies.in_transit.side import Side, SideContext
from encbench.studies.in_transit.study_record import Book


def side_of(of: str) -> Callable[[SideContext], Side]:
    """How a kind's side is made: MariaDB's (the study's first kind) here, each further
    kind's as its KindCells in the study's definition says."""
    if of == kind.MARIADB:
        return MariaDbTransit
    made: Callable[[SideContext], Side] = further_kind(kind.NAME, of).side
    return made


class TransitStudy(StudyBasics):
    record_type = TransitRecord

    def __init__(self, given: Given) -> None:
        super().__init__(given)
        self.private = keys.private_dir(self.store.path)
        self.record: dict[str, Any] = study_record.read(self.store)
        self.sides: dict[str, Side] = {}
        self.turns = KindTurns()  # the kind whose server is up
        self._todo: Sequence[TransitCell] = ()

    def _save_record(self) -> None:
        self.store.write_json(study_record.RECORD_FILE, self.record)

    def side(self, of: str) -> Side:
        if of not in self.sides:
            book = Book(study_record.part_of(self.record, of), self._save_record)
            context = SideContext(self.store, self.profile, self.progress, book, self.private)
            self.sides[of] = side_of(of)(context)
        return self.sides[of]

    # -- the hosts and each kind's server ---------------------------------------------------
    @contextlib.contextmanager
    def setup(self, todo: Sequence[TransitCell]) -> Iterator[TransitStudy]:
        with contextlib.ExitStack() as stack:
            self._todo = todo
            # The server of the kind measured last stopped (and its routes' processes), then
            # its hosts removed.
            stack.callback(self.turns.close)
            yield self

    def _open_hosts(self, stack: contextlib.ExitStack, of: str) -> Hosts:
        """The kind's hosts: two where one of its cells asks for a distance — from every
        cell of the kind, not only those left, so a resumed run keeps the same topology and
        its loopback rows run on the same host (namespace) as before; the link's rate
        MariaDB's `[transit] rate_mbit` (PostgreSQL's link has none).  A target's: this
        host's own route to it."""
        if self.profile.target is not None:
            return Hosts(None, [], [])
        rate = transit_options(self.profile).rate_mbit if of == kind.MARIADB else None
        rtts = [c.rtt_ms for c in self.cells() if c.kind == of]
        hosts = distance.open_hosts(stack, rtts, rate, self.progress.log)
        link = hosts.link
        if link is not None:
            part = study_record.part_of(self.record, of)
            part["link"] = {
                "id": link.id,
                "client": link.client_addr,
                "server": link.server_addr,
                "rate_mbit": link.rate_mbit,
            }
            self._save_record()
        return hosts

    def _server_of(self, cell: TransitCell) -> Side:
        """The cell's kind's side, its server set up (the previous kind's stopped first)."""
        side = self.side(cell.kind)
        todo = [c for c in self._todo if c.kind == cell.kind]

        def open_(stack: contextlib.ExitStack) -> None:
            stack.enter_context(side.setup(self._open_hosts(stack, cell.kind), todo))

        self.turns.turn_to(cell.kind, open_)
        return side

    @contextlib.contextmanager
    def open_cell(self, cell: TransitCell) -> Iterator[Any]:
        with self._server_of(cell).open_cell(cell) as routes:
            yield routes

    # -- one run ---------------------------------------------------------------------------
    def warm_up(self, cell: TransitCell, variant: str, seconds: int, raw: Path) -> None:
        self.side(cell.kind).warm_up(cell, variant, seconds, raw)

    def measure(self, run: Run) -> TransitRecord:
        cell, side = run.cell, self.side(run.cell.kind)
        before = side.before_run(run)
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        start = side.clocks()
        got = side.run_client(run)
        window = Window.between(start, side.clocks(start))
        proof = side.after_run(run, got, before)
        if got.events <= 0 or got.rate <= 0:
            raise ToolError(
                f"{cell.label}, {run.variant} run: the client completed nothing "
                f"in {window.wall_s:.1f} s",
                phase="in-transit run",
                tail=proc.tail(run.raw),
            )
        return TransitRecord(
            **run.record_fields(started_at, window.wall_s),
            # The client's figures and the server's counts: each names its record field.
            **dataclasses.asdict(got),
            **dataclasses.asdict(proof),
            server_cpu_s=window.server_cpu_s if side.reads_server_cpu() else None,
            client_cpu_s=window.client_cpu_s,
            # A tunnel, like every process of this run, is not in other_cpu_s.
            **load_fields(window),
            raw_output=str(run.raw.relative_to(self.store.path)),
            usage=side.usage(cell, window, got.bytes),
        )

    def prove(self, record: TransitRecord) -> None:
        self.side(record.cell.kind).prove(record)
