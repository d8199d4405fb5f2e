"""The cipher's part of each unit where the server's differs from the run's: on another host
(its own `openssl speed`, read over the same ssh as its CPU) or with another cipher (the
server's `file_key_management_encryption_algorithm`).

  unit there = unit − cipher part here + cipher part there

Only the cipher's part is rescaled: the rest of a unit (the context set-up per page, the
kernel, locks and copies, the handshake's other work) is this machine's, and the estimate
says so.  Both parts are measured now with the same command (one second each, one core),
so the difference is the hosts' (or ciphers'), not the day's.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from encbench import capacity, proc
from encbench.capacity.plan import SpeedJob
from encbench.errors import EncbenchError
from encbench.estimate.numbers import significant
from encbench.estimate.units import CipherOp, Unit
from encbench.report.models import Model

SPEED_SECONDS = 1
REPEATS = 2
SPEED_TIMEOUT_S = 30.0

# One `openssl speed` invocation's output, given its argv (the first item: openssl).
Speed = Callable[[list[str]], str]


class Resolved(Model):
    """A unit as the estimate uses it: its cost for this server, and how it got there."""

    unit: Unit
    us: float
    low_us: float
    high_us: float
    rescaled: bool
    how: str  # in words: "measured here; not rescaled: …" / "cipher part 2.3 → 3.1 µs …"


def argv(op: CipherOp) -> list[str]:
    job = SpeedJob(
        op.algorithm,
        (op.block_bytes,) if op.block_bytes else (),
        direction="decrypt" if op.direction == "decrypt" else "encrypt",
    )
    return capacity.speed_argv(job, op.block_bytes or None, SPEED_SECONDS)


def op_us(op: CipherOp, speed: Speed) -> float:
    """µs of one unit's cipher work, by `openssl speed` through `speed`."""
    text = speed(argv(op))
    try:
        if op.direction == "sign":
            found = [a for a in capacity.parse_asym_speed(text) if a.algorithm == op.algorithm]
            per_op = 1e6 / found[0].sign_per_s
        else:
            mb_per_s = capacity.parse_evp_speed(text).mb_per_s[op.block_bytes]
            per_op = op.block_bytes / mb_per_s  # MB/s = bytes per µs
    except (ValueError, KeyError, IndexError, ZeroDivisionError) as exc:
        raise EncbenchError(f"could not read `openssl speed` for {op.algorithm}: {exc}") from exc
    return per_op * op.count


def local_speed(command: list[str]) -> str:
    """This machine's openssl, with AES-NI as the machine has it (an inherited
    OPENSSL_ia32cap cleared, as `encbench crypto` does)."""
    return proc.run(
        command,
        phase="openssl speed",
        timeout_s=SPEED_TIMEOUT_S,
        env={"OPENSSL_ia32cap": capacity.FULL_IA32CAP},
    ).stdout


def remote_speed(ask: Callable[[str, float], str]) -> Speed:
    """The server's host's openssl, through its open ssh shell (remote_cpu.SshCpu.ask)."""

    def run(command: list[str]) -> str:
        return ask(shlex.join(["openssl", *command[1:]]), SPEED_TIMEOUT_S)

    return run


@dataclass
class Hosts:
    """Where the cipher parts are measured: this machine, and the server's host where it is
    another and can be reached (None: it cannot; `why_not` says why)."""

    here: Speed
    there: Speed | None
    same_host: bool
    why_not: str = ""
    # One comparison per pair of operations: units that share one are measured once.
    measured: dict[tuple[str, str, str], tuple[float, float]] = field(default_factory=dict)

    def compare(self, op: CipherOp, target: CipherOp, there: bool) -> tuple[float, float]:
        """µs of `op` here and of `target` here or there, per unit: each the fastest of
        REPEATS one-second runs, the two sides alternating, so that a burst of other load
        or a drift slows one run, not one side."""
        one, other_one = (
            op.model_copy(update={"count": 1.0}),
            target.model_copy(update={"count": 1.0}),
        )
        key = (one.model_dump_json(), other_one.model_dump_json(), "there" if there else "here")
        if key not in self.measured:
            other = self.there if there else self.here
            assert other is not None, "measured there only when there is reachable"
            here_us, there_us = [], []
            for _ in range(REPEATS):
                here_us.append(op_us(one, self.here))
                there_us.append(op_us(other_one, other))
            self.measured[key] = (min(here_us), min(there_us))
        here_us_one, there_us_one = self.measured[key]
        return here_us_one * op.count, there_us_one * target.count


def server_op(unit: Unit, server_cipher: str | None) -> CipherOp | None:
    """The unit's cipher work as the server would do it: at rest with its own cipher."""
    op = unit.cipher
    if op is None or server_cipher is None or unit.name not in PAGE_AND_LOG:
        return op
    return op.model_copy(update={"algorithm": server_cipher})


PAGE_AND_LOG = frozenset({"page_read", "page_written", "log_mib"})


def _as_measured(unit: Unit, how: str) -> Resolved:
    low, high = unit.ci_us
    return Resolved(unit=unit, us=unit.us, low_us=low, high_us=high, rescaled=False, how=how)


def resolve(unit: Unit, hosts: Hosts, server_cipher: str | None) -> Resolved:
    """The unit for this server: its cipher part scaled by the speed of the server's host
    (or cipher) against this machine's where either differs; as measured otherwise, with
    the reason.  The cipher part is what the unit's own run measured of the cipher (the
    report's cipher floor; the whole of a cipher-only unit), else what `openssl speed`
    takes here now — never more than the unit (a busy moment here slows openssl, not the
    unit measured earlier).  The ratio is measured now, both sides alike."""
    op = unit.cipher
    target = server_op(unit, server_cipher)
    if op is None or target is None:
        return _as_measured(unit, "not rescaled: its cipher part is not known")
    other_cipher = target.algorithm != op.algorithm
    other_host = not hosts.same_host and hosts.there is not None
    host_words = (
        "" if other_host or hosts.same_host
        else f"not rescaled to the server's host: {hosts.why_not}"
    )  # fmt: skip
    if not other_host and not other_cipher:
        return _as_measured(unit, host_words or "the server runs on this machine")
    try:
        here, there = hosts.compare(op, target, other_host)
    except EncbenchError as exc:
        return _as_measured(unit, f"not rescaled: {exc}")
    # The part: all of a cipher-only unit; the run's own cipher floor where it measured
    # it; else openssl here now.
    measured_part = unit.cipher_us if unit.cipher_us is not None else here
    part = unit.us if unit.kind == "cipher only" else min(measured_part, unit.us)
    ratio = there / here
    shift = part * (ratio - 1.0)
    low, high = unit.ci_us
    where = "the server's host" if other_host else "this machine"
    cipher = f" ({op.algorithm} → {target.algorithm})" if other_cipher else ""
    return Resolved(
        unit=unit,
        us=max(unit.us + shift, 0.0),
        low_us=max(low + shift, 0.0),
        high_us=max(high + shift, 0.0),
        rescaled=True,
        how=(
            f"cipher part{cipher} {significant(part)} µs × {ratio:.2f} (openssl speed on "
            f"{where} against this machine, fastest of {REPEATS} × 1 s) = "
            f"{significant(part * ratio)} µs; "
            "the rest as measured here" + (f"; {host_words}" if host_words else "")
        ),
    )
