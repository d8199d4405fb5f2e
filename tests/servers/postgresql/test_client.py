"""encbench's own SQL client of PostgreSQL (psycopg): one description of a connection for
it and for the measured clients, the user's PG* variables kept from libpq, libpq's words in
its failures."""

from __future__ import annotations

import os

import pytest

from encbench.errors import ToolError
from encbench.servers.postgresql import client
from encbench.servers.postgresql.sandbox import clean_env
from encbench.servers.postgresql.target import PgTarget


def test_a_childs_variables_are_the_same_connection_in_libpqs_keywords() -> None:
    variables = clean_env({"PGHOST": "db", "PGPORT": "5433", "PGSSLMODE": "require"})
    variables["NOT_LIBPQ"] = "x"
    assert client.settings_of(variables) == {"host": "db", "port": "5433", "sslmode": "require"}


def test_the_users_pg_variables_are_out_of_the_environment_while_libpq_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PGSSLMODE", "verify-full")
    monkeypatch.setenv("PGSERVICE", "theirs")
    with client._without_user_variables():
        assert not [name for name in os.environ if name.startswith("PG")]
    assert (os.environ["PGSSLMODE"], os.environ["PGSERVICE"]) == ("verify-full", "theirs")


def test_a_server_that_is_not_there_fails_in_libpqs_words_and_the_target_names_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A PGSERVICE of the user's names a service no file defines: read, it would fail first.
    monkeypatch.setenv("PGSERVICE", "none-such")
    settings = {"host": "127.0.0.1", "port": "1", "user": "u", "dbname": "d"}
    with pytest.raises(ToolError) as failed:
        client.rows({**settings, "connect_timeout": "5"}, "SELECT 1", 5, "a check")
    assert "Connection refused" in failed.value.tail
    assert "none-such" not in failed.value.tail
    target = PgTarget.__new__(PgTarget)
    target.name = "target 127.0.0.1:1"
    refusal = target.failure(failed.value)
    assert "check the target's host and port" in str(refusal)
