"""What MariaDB's SST scripts say about one state transfer, read from a node's error log.

The scripts write `WSREP_SST: [INFO] message (YYYYMMDD HH:MM:SS.mmm)` to the server's
stderr, which is its error log.  From the lines one transfer wrote (the log from an offset
taken before it) come:

- the stages, in seconds between the scripts' own marker lines (millisecond timestamps), and
  with `[sst] time=1` mariabackup's own "NOTE: <stage> took N seconds" (whole seconds);
- the donor's stream: mariabackup from "Streaming the backup to joiner" to "Total time on
  donor" (after its fixed 10 s pause), rsync from "Tables flushed" to "Transfer of data done";
- how the stream was carried, the per-run proof: mariabackup logs "Using openssl based
  encryption with socat" when it encrypts, rsync "Using stunnel for SSL encryption".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

LINE = re.compile(
    r"^WSREP_SST: \[(?P<level>[A-Z]+)\] (?P<text>.*) \((?P<at>\d{8} \d\d:\d\d:\d\d\.\d{3})\)\s*$"
)
NOTE = re.compile(r"^NOTE: (?P<stage>.+) took (?P<seconds>\d+) seconds$")

# mariabackup's donor script's fixed sleep before it streams (SstRecord.sync_less_pause_s).
PAUSE_STAGE = "donor pause before streaming"
# (stage name, the line that opens it, the line that closes it), per method and role.
STAGES: dict[tuple[str, str], tuple[tuple[str, str, str], ...]] = {
    ("mariabackup", "donor"): (
        (PAUSE_STAGE, "Sleeping before data transfer", "Streaming the backup"),
        ("donor stream", "Streaming the backup to joiner", "Total time on donor"),
    ),
    ("mariabackup", "joiner"): (
        ("joiner wait and receive", "Proceeding with SST", "Preparing the backup at"),
        ("joiner prepare", "Preparing the backup at", "Moving the backup to"),
        ("joiner move", "Moving the backup to", "Total time on joiner"),
    ),
    ("rsync", "donor"): (
        ("donor flush tables", "rsync SST started on donor", "Tables flushed"),
        ("donor stream", "Tables flushed", "Transfer of data done"),
    ),
    ("rsync", "joiner"): (),
}
STREAM_STAGE = "donor stream"
ENCRYPTED_MARKS = {
    "mariabackup": "Using openssl based encryption with socat",
    "rsync": "Using stunnel for SSL encryption",
}
PLAIN_MARKS = {"mariabackup": "Using socat as streamer", "rsync": "rsync SST started on"}
TRANSPORTS = {
    ("mariabackup", True): "socat openssl",
    ("mariabackup", False): "socat plain",
    ("rsync", True): "stunnel",
    ("rsync", False): "rsync plain",
    # The raw pipelines (pipelines.py) have no SST script: socat's own log (-d -d) says.
    ("tar", True): "socat openssl",
    ("tar", False): "socat plain",
    ("xbstream", True): "socat openssl",
    ("xbstream", False): "socat plain",
    ("rsync-dir", True): "socat openssl",
    ("rsync-dir", False): "socat plain",
    ("rsync-file", True): "socat openssl",
    ("rsync-file", False): "socat plain",
}


@dataclass(frozen=True)
class Entry:
    level: str
    text: str
    at: datetime


@dataclass
class SstLog:
    entries: list[Entry] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str) -> SstLog:
        found = []
        for line in text.splitlines():
            m = LINE.match(line)
            if m:
                at = datetime.strptime(m["at"], "%Y%m%d %H:%M:%S.%f")
                found.append(Entry(m["level"], m["text"], at))
        return cls(found)

    def first(self, start: str) -> Entry | None:
        return next((e for e in self.entries if e.text.startswith(start)), None)

    def errors(self) -> list[str]:
        return [e.text for e in self.entries if e.level == "ERROR"]

    def stages(self, method: str, role: str) -> dict[str, float]:
        """Each stage the log shows both ends of, in seconds; and mariabackup's own whole-
        second notes, as "<role>: <stage> (time=1)"."""
        out: dict[str, float] = {}
        for name, opens, closes in STAGES.get((method, role), ()):
            a, b = self.first(opens), self.first(closes)
            if a is not None and b is not None and b.at >= a.at:
                out[name] = (b.at - a.at).total_seconds()
        for e in self.entries:
            m = NOTE.match(e.text)
            if m:
                out[f"{role}: {m['stage']} (time=1)"] = float(m["seconds"])
        return out

    def transport(self, method: str) -> str:
        """How the script says it carried the stream; "" when it did not say (no SST ran)."""
        if self.first(ENCRYPTED_MARKS[method]) is not None:
            return TRANSPORTS[(method, True)]
        if self.first(PLAIN_MARKS[method]) is not None:
            return TRANSPORTS[(method, False)]
        return ""


def expected_transport(method: str, encrypted: bool) -> str:
    return TRANSPORTS[(method, encrypted)]
