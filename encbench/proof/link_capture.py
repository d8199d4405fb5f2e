"""A link captured while something crosses it: proof/wire.py's capture process started in
the namespace that owns the device, waited for until it listens, stopped (SIGTERM, then what
the kernel queued is read) when the block ends, and its findings read back.

Every per-cell wire proof (an SST stream, Galera's replication, a node's rejoin) is the same
sequence around a different transfer; this is that sequence, once."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import ProofError, ToolError
from encbench.net import netns

READY_S = 30.0
# A capture that saw less of what crossed (its kernel buffer overran) cannot vouch that the
# marker was not in the rest.
MIN_SEEN_SHARE = 0.5
STOP = ((15, 60.0),)  # SIGTERM, then up to a minute to read what is queued


@dataclass
class Capture:
    """What the capture found (proof/wire.py's Findings as JSON), filled in when the block
    that captured ends."""

    findings: dict[str, Any] = field(default_factory=dict)


@contextmanager
def captured(
    namespace: str, device: str, marker: str, base: Path, what: str, port: int | None = None
) -> Iterator[Capture]:
    """Capture `device` in `namespace` ("": this process's own, e.g. its loopback), searching
    for `marker`, over the `with` block; given `port`, only the segments to or from it.  Files
    go beside `base` (.marker, .capture.json, .capture.log); `what` names the link in errors
    ("node 2's link")."""
    base.parent.mkdir(parents=True, exist_ok=True)
    marker_file = base.with_suffix(".marker")
    marker_file.write_text(marker + "\n")
    out = base.with_suffix(".capture.json")
    ready = out.with_suffix(".ready")
    for stale in (out, ready):
        stale.unlink(missing_ok=True)
    argv = [
        *(netns.exec_prefix(namespace) if namespace else []),
        sys.executable, "-m", "encbench.proof.wire",
        "--device", device, "--marker-file", str(marker_file), "--out", str(out),
        *(["--port", str(port)] if port is not None else []),
    ]  # fmt: skip
    log = base.with_suffix(".capture.log")
    phase = f"capture {what}"
    capture = proc.spawn(argv, phase=phase, log=log)
    result = Capture()
    try:
        deadline = time.monotonic() + READY_S
        while not ready.exists():
            if capture.poll() is not None or time.monotonic() > deadline:
                raise ToolError(
                    f"the capture of {what} did not start",
                    argv=argv,
                    returncode=capture.poll(),
                    phase=phase,
                    tail=proc.tail(log),
                )
            time.sleep(0.05)
        yield result
    finally:
        proc.stop_group(capture, STOP)
    if not out.exists():
        raise ToolError(
            f"the capture of {what} wrote no findings", argv=argv, phase=phase, tail=proc.tail(log)
        )
    result.findings = json.loads(out.read_text())


def vouch(where: str, found: dict[str, Any], crossed: int, what: str = "link") -> int:
    """The payload bytes the capture saw (its findings), if they are at least MIN_SEEN_SHARE
    of the `crossed` bytes the link's counters say crossed; else a ProofError: it cannot
    vouch for the `what` ("link", "stream")."""
    seen = int(found["payload_bytes"])
    if seen < crossed * MIN_SEEN_SHARE:
        raise ProofError(
            f"{where}: the capture saw {seen:,} payload bytes of the {crossed:,} that crossed "
            f"the link ({int(found['dropped'])} frames dropped): it cannot vouch for the {what}"
        )
    return seen


def dropped_words(found: dict[str, Any]) -> str:
    """Why a positive control may have missed its marker: the frames the capture dropped
    (its findings, or a proof that kept their "dropped")."""
    dropped = int(found["dropped"])
    return f" (the capture dropped {dropped} frames)" if dropped else ""
