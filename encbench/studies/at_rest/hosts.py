"""Where the at-rest study's two variants live: the seam between the study and its servers.

Two designs fill it.  `ServerPair` (pair.py): two sandboxed servers, identical but for the
encryption options; each variant has its own server, on this host, so its CPU can be
counted and a regime is made by restarting it with another buffer pool.  `TableSets`
(table_sets.py): one server encbench did not start (the user's), two sets of the same
sysbench tables in databases encbench creates, one ENCRYPTED=YES and one ENCRYPTED=NO;
its process may be on another host and it is never restarted.

The study asks only this protocol: how a variant's clients connect, which server answers
for it (status counters, proofs), and — where there is one — the local server process whose
CPU is counted (and which is flushed and profiled).  What a design cannot give is said by
what it returns (None, False), and the study and the report say it in words.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from encbench.profiles.profile import ShapeSpec
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.remote_cpu import SshCpu
from encbench.servers.target import Connection, Target
from encbench.servers.variants import EncryptionSpec
from encbench.studies.at_rest.dialects import Dialect


class VariantHost(AbstractContextManager["VariantHost"], Protocol):
    """Where the variants `plain` and `encrypted` live; closed on any exit."""

    # What at-rest.json records of the design, the data and the proofs.
    record: dict[str, Any]
    # The servers' family's SQL and what they count (MySQL: no pages through the cipher).
    dialect: Dialect

    def target(self, variant: str) -> Target:
        """The server that answers for this variant: status counters, proofs, health."""
        ...

    def connection(self, variant: str) -> Connection:
        """How the variant's clients (sysbench) reach its tables."""
        ...

    def client_env(self) -> dict[str, str] | None:
        """The environment sysbench needs to authenticate (MYSQL_PWD), or None."""
        ...

    def local_server(self, variant: str) -> SandboxServer | None:
        """The variant's own server process on this host — its CPU is counted, its pages
        flushed and profiled — or None where there is none (a shared or remote server)."""
        ...

    def remote_cpu(self) -> SshCpu | None:
        """Where there is no local server: the server's CPU read on its host over ssh, if
        the user allows it (servers/remote_cpu.py), else None."""
        ...

    def provision(self, log: Callable[[str], None]) -> None:
        """Create, fill and prove both variants, once."""
        ...

    def use(self, spec: EncryptionSpec, log: Callable[[str], None]) -> None:
        """Make both variants ready for a cell's encryption configuration (algorithm, scope
        and layer, when the profile lists several: a fresh pair per configuration)."""
        ...

    def use_shape(self, shape: ShapeSpec | None, log: Callable[[str], None]) -> None:
        """Confine both variants' servers to this instance shape from the next configure()
        on (None: unconfined).  Only a design of local servers can; a target has none."""
        ...

    def unavailable(self, regime: str) -> str | None:
        """Why this regime cannot be measured here (the cell is skipped with it), or None."""
        ...

    def settle(self, variant: str, regime: str) -> None:
        """Just before a run's window opens: what the design needs of the variant's server
        then (the page cache of its files dropped, io-bound on images); nothing else."""
        ...

    def configure(self, regime: str, log: Callable[[str], None]) -> None:
        """Make both variants ready for a regime (restart, prove again, preload)."""
        ...

    def renew(self) -> bool:
        """New server processes for the next block, as configure() left them; False where
        the design cannot (a target's server is never restarted)."""
        ...

    def close(self) -> None: ...
