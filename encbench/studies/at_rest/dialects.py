"""The SQL the per-table design sends, per server family: MariaDB, and MySQL 8 / Percona
Server 8, which encrypt a table differently.

MariaDB: `ENCRYPTED=YES|NO` per table with a key management plugin (file_key_management…);
the proof is INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION (ENCRYPTION_SCHEME 1 or 0);
each run's Innodb_num_pages_encrypted/decrypted say that pages went through the cipher.

MySQL 8 (and Percona Server 8, which follows it since 8.0.31 removed its own
innodb_encrypt_tables, ENCRYPTION='KEYRING' and page counters): `ENCRYPTION='Y'|'N'` per
table with a keyring component (performance_schema.keyring_component_status, 8.0.24+) or
plugin (INFORMATION_SCHEMA.PLUGINS, keyring_*); the proof is the ENCRYPTION column ('Y' or
'N') of INFORMATION_SCHEMA.INNODB_TABLESPACES (8.0.13+; PROCESS needed).  A database has a
default encryption (`DEFAULT ENCRYPTION`, defaulting to default_table_encryption), so each
of encbench's databases is created with its set's own: a table then never differs from its
schema's default.  Where table_encryption_privilege_check is ON, a schema default that
differs from default_table_encryption needs TABLE_ENCRYPTION_ADMIN (servers/mariadb/prerequisites.py
says so).  MySQL has no per-page cipher counters: its runs are proven by the tablespaces alone,
and the report says that.

Written from the MySQL 8.0/8.4 Reference Manual and Percona Server 8.0 documentation and
tested against recorded answers (tests/studies/in_transit/test_dialects.py) and a live MySQL 9.7
(tests/integration/test_mysql_target.py, a server from machine/roots.py's private root); no
Percona server has been met live (no such package reaches this project's machines).
"""

from __future__ import annotations

from dataclasses import dataclass

from encbench.servers.mariadb.logs import MARIADB_LOGS, MYSQL_LOGS, LogFiles

MARIADB = "MariaDB"
MYSQL_FAMILIES = ("MySQL", "Percona Server")


@dataclass(frozen=True)
class Dialect:
    family: str

    @property
    def mariadb(self) -> bool:
        return self.family == MARIADB

    def table_option(self, variant: str) -> str:
        """The ALTER TABLE option that makes a set plain or encrypted."""
        encrypted = variant == "encrypted"
        if self.mariadb:
            return "ENCRYPTED=YES" if encrypted else "ENCRYPTED=NO"
        return "ENCRYPTION='Y'" if encrypted else "ENCRYPTION='N'"

    def database_option(self, variant: str) -> str:
        """CREATE DATABASE's option: MySQL's schema default encryption, set to the set's own
        so that its tables never differ from it (module doc); MariaDB has none."""
        if self.mariadb:
            return ""
        return " DEFAULT ENCRYPTION='Y'" if variant == "encrypted" else " DEFAULT ENCRYPTION='N'"

    @property
    def proof_view(self) -> str:
        if self.mariadb:
            return "INFORMATION_SCHEMA.INNODB_TABLESPACES_ENCRYPTION"
        return "INFORMATION_SCHEMA.INNODB_TABLESPACES (ENCRYPTION)"

    @property
    def proof_sql(self) -> str:
        """(NAME, 1 when encrypted else 0) of the tablespaces whose NAME is LIKE %s."""
        if self.mariadb:
            return (
                "SELECT NAME, ENCRYPTION_SCHEME FROM information_schema."
                "INNODB_TABLESPACES_ENCRYPTION WHERE NAME LIKE %s"
            )
        return (
            "SELECT NAME, IF(ENCRYPTION = 'Y', 1, 0) FROM information_schema.INNODB_TABLESPACES "
            "WHERE NAME LIKE %s"
        )

    @property
    def logs(self) -> LogFiles:
        """Where its server keeps the logs scope `all` encrypts (the proof scans them)."""
        return MARIADB_LOGS if self.mariadb else MYSQL_LOGS

    @property
    def page_counters(self) -> bool:
        """Whether the server counts the pages its cipher encrypted and decrypted
        (Innodb_num_pages_encrypted/decrypted), the per-run proof."""
        return self.mariadb


def dialect_for(family: str) -> Dialect:
    return Dialect(family if family in (MARIADB, *MYSQL_FAMILIES) else "MySQL")


MARIADB_DIALECT = Dialect(MARIADB)
