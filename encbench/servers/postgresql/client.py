"""The one way encbench itself talks SQL to a PostgreSQL server, its sandbox's or a user's:
psycopg, the driver PostgreSQL's users know (its own libpq inside; the measured clients,
pgbench and psql, stay programs of their own).

- `rows` answers one statement with every column as the server's text (what `psql -A -t`
  printed: "t" for true, "" for NULL), so that what callers parse did not change with the
  driver.
- `execute` runs statements one after the other, each in its own transaction (autocommit):
  CREATE DATABASE and VACUUM refuse to run inside one.
- A connection's settings are given whole (`settings`, libpq's keywords), and no PG*
  variable of the user's environment reaches libpq meanwhile: a PGSSLMODE or PGSERVICE of
  theirs must not change what encbench checks or creates.
- A failure is a ToolError whose tail is libpq's or the server's own words, as psql's were;
  a statement that outlasts `timeout_s` is cancelled by the server (statement_timeout).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence

import psycopg
from psycopg import pq
from psycopg.conninfo import make_conninfo

from encbench.errors import ToolError

# libpq's environment variables, each with the keyword it stands for (PGSSLMODE → sslmode).
_KEYWORD_OF_VARIABLE = {
    option.envvar.decode(): option.keyword.decode()
    for option in pq.Conninfo.get_defaults()
    if option.envvar
}


def settings_of(variables: Mapping[str, str]) -> dict[str, str]:
    """libpq's keywords for the PG* variables a child would be given (pgbench's and psql's
    environment): one description of a connection serves both.  An empty value is no value,
    as libpq reads an empty variable."""
    return {
        _KEYWORD_OF_VARIABLE[name]: value
        for name, value in variables.items()
        if value and name in _KEYWORD_OF_VARIABLE
    }


@contextlib.contextmanager
def _without_user_variables() -> Iterator[None]:
    """The user's PG* variables out of this process's environment while libpq reads it (at
    connect), then back."""
    saved = {name: os.environ.pop(name) for name in list(os.environ) if name.startswith("PG")}
    try:
        yield
    finally:
        os.environ.update(saved)


def _words(exc: psycopg.Error) -> str:
    """libpq's or the server's message on one line."""
    return " ".join(str(exc).split())


@contextlib.contextmanager
def connected(
    settings: Mapping[str, str], timeout_s: float, phase: str
) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """A connection in autocommit, its statements limited to `timeout_s`; closed after."""
    options = f"-c statement_timeout={max(1, round(timeout_s * 1000))}"
    try:
        with _without_user_variables():
            conninfo = make_conninfo(**settings, options=options)
            connection = psycopg.connect(conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise ToolError("could not connect", phase=phase, tail=_words(exc)) from None
    with connection:
        yield connection


def _as_text(result: pq.abc.PGresult | None) -> list[list[str]]:
    """Every row of a result, each column the server's text form ("" for NULL)."""
    if result is None or result.status != pq.ExecStatus.TUPLES_OK:
        return []
    return [
        [(result.get_value(r, c) or b"").decode() for c in range(result.nfields)]
        for r in range(result.ntuples)
    ]


def rows(settings: Mapping[str, str], sql: str, timeout_s: float, phase: str) -> list[list[str]]:
    """The rows of one statement, every column as text."""
    with connected(settings, timeout_s, phase) as connection:
        try:
            # Text, not binary: the values as the server writes them, which callers parse.
            cursor = connection.execute(sql.encode(), binary=False)
        except psycopg.Error as exc:
            raise ToolError("the statement failed", phase=phase, tail=_words(exc)) from None
        return _as_text(cursor.pgresult)


def execute(
    settings: Mapping[str, str], statements: Sequence[str], timeout_s: float, phase: str
) -> None:
    """Each statement in turn, each its own transaction; the first failure stops them."""
    with connected(settings, timeout_s, phase) as connection:
        for statement in statements:
            try:
                connection.execute(statement.encode())
            except psycopg.Error as exc:
                raise ToolError("the statement failed", phase=phase, tail=_words(exc)) from None
