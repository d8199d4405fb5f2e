"""This machine's A/A calibration file, $XDG_STATE_HOME/encbench/calibration.json: written
when a calibration finishes, read when an ordinary run starts (its snapshot,
noise-floor.json in the results directory, is what its report states).  The report itself
reads only the results directory (report/calibration.py)."""

from __future__ import annotations

import json
from pathlib import Path

from encbench import state
from encbench.profiles.profile import Profile
from encbench.report.calibration import SNAPSHOT, SYSTEM_SERVERS, servers_of, studies_of
from encbench.report.models import Calibration, NoiseFloor
from encbench.results import store as results_store
from encbench.results.store import ResultStore

MACHINE_FILE_SCHEMA = 1
RESULT = "calibration.json"  # a finished calibration's result in its results directory


def machine_file() -> Path:
    """Beside the sandbox registry (servers/registry.py): this machine's (and user's) state."""
    return state.base() / "calibration.json"


def read_machine() -> NoiseFloor:
    """This machine's latest calibration, and the newest of each study it does not cover;
    an unreadable or foreign file counts as none."""
    path = machine_file()
    latest, others = None, []
    try:
        data = json.loads(path.read_text())
        if isinstance(data, dict) and data.get("schema") == MACHINE_FILE_SCHEMA:
            latest = Calibration.model_validate(data["calibration"])
            others = [Calibration.model_validate(c) for c in data.get("others") or []]
    except (OSError, ValueError, KeyError):
        latest, others = None, []
    return NoiseFloor(file=str(path), latest=latest, others=others)


def _servers(c: Calibration) -> str:
    # A calibration from before servers were recorded ran this host's MariaDB.
    return c.servers or SYSTEM_SERVERS


def write_machine(result: Calibration) -> Path:
    """`result` becomes the latest; an earlier calibration stays beside it for studies
    `result` did not measure (calibrating the state transfer alone keeps the at-rest floor),
    and for other servers (calibrating MySQL's sandboxes keeps MariaDB's floor)."""
    path = machine_file()
    before = read_machine()
    earlier = [c for c in (before.latest, *before.others) if c is not None]
    covered = studies_of(result)
    kept = [
        c
        for c in earlier
        if studies_of(c) and (not studies_of(c) & covered or _servers(c) != _servers(result))
    ]
    data = {
        "schema": MACHINE_FILE_SCHEMA,
        "calibration": result.model_dump(mode="json"),
        "others": [c.model_dump(mode="json") for c in kept],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    results_store.write_json(path, data)
    return path


def record_finished(store: ResultStore, result: Calibration) -> Path:
    """A complete calibration: its result into the results directory and the machine file."""
    store.write_json(RESULT, result.model_dump(mode="json"))
    return write_machine(result)


def for_servers(floor: NoiseFloor, servers: str) -> NoiseFloor:
    """The machine's calibrations of these servers only, as a run of them states its noise
    floor: the newest as the latest, and beside it the newest of each study it does not
    cover (a floor measured on another server's sandboxes says nothing of these)."""
    mine = [c for c in (floor.latest, *floor.others) if c is not None and _servers(c) == servers]
    mine.sort(key=lambda c: c.measured_at or "", reverse=True)
    if not mine:
        return NoiseFloor(file=floor.file, latest=None, others=[])
    latest, covered, others = mine[0], studies_of(mine[0]), []
    for c in mine[1:]:
        if studies_of(c) - covered:
            others.append(c)
            covered |= studies_of(c)
    return NoiseFloor(file=floor.file, latest=latest, others=others)


def snapshot_noise_floor(store: ResultStore, profile: Profile) -> None:
    """An ordinary run keeps the machine's calibration of its servers as it was when the run
    began; a directory from before snapshots gets the machine's calibration as it is now,
    when it is re-rendered (what its report said then)."""
    if store.read_json(SNAPSHOT) is None:
        floor = for_servers(read_machine(), servers_of(profile))
        store.write_json(SNAPSHOT, floor.model_dump(mode="json"))
