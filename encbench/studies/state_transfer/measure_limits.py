"""Measuring the state-transfer study's limits (limits.py says what they are): once per
results directory, untimed, in set-up before the nodes start (the namespaces exist, nothing
else of the run is busy), into state-transfer.json's "limits" — so `--resume` keeps them
and measures only what is missing.  About 10 s by default: fio 2 × 2 s, iperf3 2 s
(`[state_transfer] limits_s`), openssl speed 3 × 1 s per cipher (`cipher_speed_repeats`).

A part that fails (a filesystem fio cannot use, iperf3 refused) is recorded with its error
instead of figures and the run goes on: the limits stand beside the results, they are not
the results; the report then says that limit was not measured and why, and a resumed run
tries it again."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from encbench import capacity
from encbench.capacity import disk, link
from encbench.errors import ToolError
from encbench.results.store import ResultStore
from encbench.studies.state_transfer import limits
from encbench.studies.state_transfer.records import SstCell


def usable_cores() -> int:
    """The CPUs this process may run on (both nodes inherit them)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _attempt(what: str, measure: Callable[[], dict[str, Any]], log: Callable[[str], None]) -> Any:
    log(f"state-transfer: measuring the {what} limit")
    try:
        return measure()
    except ToolError as exc:
        log(f"state-transfer: the {what} limit was not measured — {exc}")
        return {"error": str(exc)}


def _name(evp: str, accel: bool) -> str:
    return evp if accel else f"{evp} without AES-NI"


def measure_ciphers(
    record: dict[str, Any],
    evps: Iterable[tuple[str, bool]],
    log: Callable[[str], None],
    *,
    repeats: int,
) -> bool:
    """openssl speed of each (cipher, AES-NI on?) not yet in `record` (the "limits" part),
    at a TLS record's size, one core, encryption (GCM and ChaCha20-Poly1305 decrypt at the
    same speed), `repeats` runs of 1 s each; True when something was added."""
    part = record.setdefault("cipher", {"ciphers": []})
    have = {(entry.get("cipher"), bool(entry.get("accel"))) for entry in part.get("ciphers", [])}
    missing = sorted({(e, accel) for e, accel in evps if e} - have)
    if not missing:
        return False
    jobs = tuple(
        capacity.SpeedJob(evp, (limits.TLS_RECORD_BYTES,), accel=accel) for evp, accel in missing
    )
    plan = capacity.Plan(jobs, repeats=repeats, seconds=1, quick=True)
    names = [_name(evp, accel) for evp, accel in missing]
    log(f"state-transfer: measuring the cipher limit ({', '.join(names)}: openssl speed)")
    try:
        found, _ = capacity.measure_speeds(plan)
    except ToolError as exc:
        log(f"state-transfer: the cipher limit was not measured — {exc}")
        part.setdefault("errors", {}).update({name: str(exc) for name in names})
        return True
    part["ciphers"] = [*part.get("ciphers", []), *(c.to_json() for c in found)]
    part["plan"] = plan.to_json()
    for name in names:
        part.get("errors", {}).pop(name, None)
    return True


def measure(
    store: ResultStore,
    record: dict[str, Any],
    cells: Sequence[SstCell],
    *,
    link_ends: tuple[Sequence[str], Sequence[str], str],
    rate_mbit: float | None,
    seconds: int,
    cipher_repeats: int,
    log: Callable[[str], None],
) -> None:
    """Fill in what `record` (state-transfer.json) lacks of its "limits"; the caller
    writes it.
    `link_ends` are the receiver's (joiner's) launch prefix, the sender's (donor's), and
    the receiver's address on the SST's veth; fio takes `seconds` each way and iperf3
    `seconds`, openssl speed `cipher_repeats` runs of 1 s per cipher."""
    part: dict[str, Any] = record.setdefault("limits", {})
    part.setdefault("cores", usable_cores())
    raw = store.path / "raw" / "state-transfer-limits"
    if not limits.ok(part.get("disk")):
        part["disk"] = _attempt(
            "disk",
            lambda: {
                **disk.measure_disk(store.path / "sandbox", raw, seconds).to_json(),
                "where": "the sandbox, beside the nodes' data directories",
            },
            log,
        )
    if not limits.ok(part.get("link")):
        receiver, sender, address = link_ends
        part["link"] = _attempt(
            "link",
            lambda: {
                **link.measure_link(
                    receiver_prefix=receiver,
                    sender_prefix=sender,
                    receiver_addr=address,
                    log_dir=raw,
                    seconds=seconds,
                ).to_json(),
                "rate_mbit": rate_mbit,
                "direction": "donor → joiner",
            },
            log,
        )
    measure_ciphers(
        part,
        (
            (limits.evp_cipher(limits.expected_suite(c)) or "", c.aesni == "on")
            for c in cells
            if c.aesni != "seed-mask"  # not measured under the seed's mask (limits.py)
        ),
        log,
        repeats=cipher_repeats,
    )
