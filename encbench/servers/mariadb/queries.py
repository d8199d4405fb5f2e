"""What a MariaDB or MySQL server answers, read alike whoever started it: a statement's rows
and its global status, over the class's own `cursor` (the sandbox's and the user's server's
differ in how they connect and name a failure, not in this)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any


class Queries:
    """`query` and `global_status` for a class with a `cursor` and a `status_timeout_s`."""

    status_timeout_s: float

    def cursor(
        self, database: str | None = None, timeout_s: float | None = None
    ) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def query(
        self, sql: str, args: Any = None, *, timeout_s: float | None = None
    ) -> list[tuple[Any, ...]]:
        with self.cursor(timeout_s=timeout_s) as cur:
            cur.execute(sql, args)
            return list(cur.fetchall())

    def global_status(self) -> dict[str, str]:
        rows = self.query("SHOW GLOBAL STATUS", timeout_s=self.status_timeout_s)
        return {str(k): str(v) for k, v in rows}
