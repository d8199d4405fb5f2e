"""The target interface: a sandbox fills all of it; a target without a readable data
directory (a user's own server, a remote node) is proven by what it can give, and the proof
says plainly what it could not check instead of passing silently."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import ProofError
from encbench.proof import at_rest as proof
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection, Needs, Target
from encbench.servers.variants import EncryptionSpec


@dataclass
class RemoteTarget:
    """A server encbench reaches only over SQL: no pid, no data directory."""

    scheme: int  # what INNODB_TABLESPACES_ENCRYPTION reports for every table
    name: str = "remote"
    database: str = "encbench_run"

    def endpoint(self) -> Connection:
        return Connection.tcp("127.0.0.1", 3306, "u", self.database)

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        if "COUNT(*)" in sql:
            return [(0,)]  # background encryption finished
        names = [proof.PROOF_TABLE, "sbtest1", "sbtest2"]
        return [(f"{self.database}/{n}", self.scheme) for n in names]

    @contextmanager
    def cursor(self, database: str | None = None) -> Iterator[Any]:
        class Cursor:
            def execute(self, sql: str, args: Any = None) -> None:
                pass

        yield Cursor()

    def global_status(self) -> dict[str, str]:
        return {}

    @property
    def pid(self) -> int | None:
        return None

    @property
    def datadir(self) -> Path | None:
        return None


def as_target(target: Target) -> Target:
    return target


def test_a_target_without_its_files_is_proven_by_the_server_and_says_what_was_not_checked() -> None:
    result = proof.prove(as_target(RemoteTarget(scheme=1)), "encrypted", EncryptionSpec(), 2)
    assert result.passed
    assert result.files_scanned == []
    assert result.not_proven == [
        "the raw-file witness (marker and sysbench rows in the data files) was not checked: "
        "the server's data directory is not readable from here, so its files cannot be scanned"
    ]
    assert "not checked" in result.explanation


def test_the_server_witness_still_refuses_a_false_claim_without_the_files() -> None:
    with pytest.raises(ProofError, match="not encrypted per the server"):
        proof.prove(RemoteTarget(scheme=0), "encrypted", EncryptionSpec(), 2)
    with pytest.raises(ProofError, match="encrypted per the server"):
        proof.prove(RemoteTarget(scheme=1), "plain", EncryptionSpec(), 2)


def test_needs_name_each_missing_capability() -> None:
    cpu = Needs("server CPU per transaction", ("pid",))
    assert cpu.missing(RemoteTarget(scheme=0)) == [
        "server CPU per transaction was not checked: the server's process is not on this "
        "host, so its CPU time cannot be read"
    ]


def test_a_sandbox_is_a_target_with_every_capability(tmp_path: Path) -> None:
    server = SandboxServer("plain", tmp_path / "plain")
    target: Target = server
    assert target.datadir == server.paths.datadir
    assert target.endpoint().socket == server.paths.socket
