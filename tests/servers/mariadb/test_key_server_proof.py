"""That a server's keys came from the key server, read of both (the live case is
tests/integration/test_key_server.py): its plugin active, its tablespaces' key ids and
versions, and the key server's audit log's reads of those keys."""

from __future__ import annotations

from typing import Any

import pytest

from encbench.errors import ProofError
from encbench.servers.mariadb import key_server_proof


class Server:
    def __init__(self, plugin: list[tuple[Any, ...]], spaces: list[tuple[Any, ...]]) -> None:
        self.answers = [plugin, spaces]

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        return self.answers.pop(0)


class KeyServer:
    def __init__(self, reads: dict[int, int]) -> None:
        self.reads = reads

    def key_reads(self, key_id: int) -> int:
        return self.reads.get(key_id, 0)

    def prove(self, key_id: int) -> dict[str, str]:
        return {"server": "OpenBao", "token": "reads keys only", "key": f"key {key_id}"}


def prove(server: Server, reads: dict[int, int]) -> dict[str, Any]:
    return key_server_proof.prove(server, KeyServer(reads), "sbtest", "encrypted")  # type: ignore[arg-type]


def test_keys_read_from_the_key_server_are_proven_with_their_reads() -> None:
    found = prove(Server([("ACTIVE",)], [(1, 3, 4)]), {1: 2})
    assert found["tablespaces"] == {"key 1 version 3": 4}
    assert found["key_server_reads"] == {"key 1": 2} and found["key"] == "key 1"


@pytest.mark.parametrize(
    ("server", "reads", "words"),
    [
        (Server([], [(1, 1, 1)]), {1: 1}, "plugin .* is not active"),
        (Server([("ACTIVE",)], []), {1: 1}, "no tablespace of sbtest is encrypted"),
        (Server([("ACTIVE",)], [(1, 1, 2)]), {}, "no read of key 1"),
    ],
)
def test_a_server_whose_keys_did_not_come_from_the_key_server_fails(
    server: Server, reads: dict[int, int], words: str
) -> None:
    with pytest.raises(ProofError, match=words):
        prove(server, reads)
