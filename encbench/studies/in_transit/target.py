"""In transit against a server encbench did not start ([target]): plain TCP and TLS from
this host to the user's own server, with the user's CA and client certificate.

Only what needs nothing beside the server is measured: MariaDB's own TLS with the server's
certificate, whatever its key type (recorded as proof), and the TLS version and cipher the
server negotiates (its Ssl_version/Ssl_cipher per proof connection, as for a sandbox).  The
rows that need our own processes or settings on the server's side — stunnel and ssh tunnels,
emulated distances, other key types, a TLS 1.2 cipher chosen by ssl_cipher — are skipped
with the reason (cells.target_skip_reason).

The clients need a database: one encbench creates, names with the run id and marks as its
own (servers/owned.py, as the at-rest table sets are), holding sysbench's table and
the bulk table as the profile's tests need them, dropped at the end unless `keep`.

sysbench 1.0.20 has only `--mysql-ssl=on`, with which it always presents the client
certificate and key it finds in its working directory (client-cert.pem, client-key.pem):
without them libmariadb cannot start TLS at all, and a made-up certificate is refused by a
server that verifies client certificates against its CA.  So the TLS rows need the user's
`ssl_cert` and `ssl_key` (signed by a CA the server trusts) beside `ssl_ca`; without them
they are skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from encbench import proc
from encbench.errors import BadInput
from encbench.profiles.profile import Profile, TargetSpec
from encbench.proof.server_certificate import Handshake, describe_key, parse_s_client
from encbench.results.store import ResultStore
from encbench.servers import keys, pki
from encbench.servers.mariadb import prerequisites
from encbench.servers.mariadb.user_server import UserServer
from encbench.servers.owned import PLACEHOLDER_KEY, OwnedDatabases, ownership, run_key
from encbench.servers.target import Connection
from encbench.studies.in_transit.cells import TARGET_KEY, cells, target_skip_reason
from encbench.studies.in_transit.needs import TARGET_NEEDS
from encbench.workloads import bulk, sysbench

S_CLIENT_TIMEOUT_S = 30


def database_name(store_path: str) -> str:
    return f"encbench_{run_key(store_path)}_transit"


def tls_unavailable(spec: TargetSpec, variables: Mapping[str, str]) -> str | None:
    """Why the TLS rows cannot be measured on this target, or None."""
    if spec.socket:
        return "the target is given as a unix socket: in transit needs TCP (give host and port)"
    if not spec.ssl_ca:
        return (
            "no CA for the server's certificate: give [target] ssl_ca (or ?ssl-ca= in the "
            "DSN) to measure its TLS"
        )
    if not spec.ssl_cert:
        return (
            "sysbench 1.0.20 presents a client certificate whenever it uses TLS: give "
            "[target] ssl_cert and ssl_key (or ?ssl-cert=&ssl-key= in the DSN), signed by a "
            "CA the server trusts"
        )
    return prerequisites.tls_missing(variables)


class TransitTarget(OwnedDatabases):
    """The user's server for the in-transit study: checks, encbench's own database on it
    (the clients' current one; dropped on close unless keep: OwnedDatabases), the server's
    certificate and the client's PKI."""

    spec: TargetSpec  # the whole [target]: its TLS files too

    def __init__(self, store: ResultStore, profile: Profile) -> None:
        assert profile.target is not None, "encbench's databases on a target need [target]"
        super().__init__(store, profile.target)
        self.database = database_name(str(store.path.absolute()))
        self.server = self.server.on(self.database)
        self.tls_missing: str | None = None

    def connection(self) -> Connection:
        return self.server.endpoint()

    def check(self) -> dict[str, Any]:
        """Refuse, before anything is created, a read-only server or missing privileges on
        encbench's database; returns what the record keeps of the server."""
        facts = prerequisites.read_facts(self.server)
        if prerequisites.read_only(facts.variables):
            raise BadInput(prerequisites.READ_ONLY)
        prerequisites.refuse(facts.privilege_problems([self.database], TARGET_NEEDS))
        ownership(self.server, self.database, self.marker)
        for name in ("ssl_ca", "ssl_cert", "ssl_key"):
            path = getattr(self.spec, name)
            if path and not Path(path).is_file():
                raise BadInput(f"target: {name} {path} is not a readable file; check the path")
        self.tls_missing = tls_unavailable(self.spec, facts.variables)
        return {
            "server": self.server.name,
            "version": facts.variables.get("version", ""),
            "family": prerequisites.family(facts.variables),
            "have_ssl": facts.variables.get("have_ssl", ""),
        }

    def provision(
        self, tests: set[str], table_size: int, bulk_mb: int, log: Callable[[str], None]
    ) -> bulk.BulkTable | None:
        """encbench's database with what the tests read; returns the bulk table, if made."""
        log(f"in-transit: creating {self.database} on the {self.server.name}")
        self.create(self.database)
        if tests & {"oltp_point_select", "oltp_read_only"}:
            log(f"in-transit: loading 1 × {table_size:,} rows into {self.database}")
            sysbench.prepare(
                self.connection(),
                tables=1,
                table_size=table_size,
                log=self.store.path / "logs" / "prepare-transit.log",
                env=self.server.client_env(),
            )
        if tests & {"bulk", "dump"}:
            log(f"in-transit: creating a {bulk_mb} MB table to stream in {self.database}")
            return bulk.create_table(self.server, self.database, bulk_mb)
        return None

    # -- TLS ---------------------------------------------------------------------------------
    def handshake(self) -> Handshake:
        """The server's certificate and OpenSSL's view of one TLS session, verified against
        the user's CA (the result is recorded, not required: the MariaDB clients verify)."""
        spec = self.spec
        argv = ["openssl", "s_client", "-starttls", "mysql", "-showcerts"]
        argv += ["-connect", f"{spec.host}:{spec.port}", "-CAfile", spec.ssl_ca]
        argv += ["-cert", spec.ssl_cert, "-key", spec.ssl_key]
        out = proc.run(
            argv,
            phase="the server's certificate (openssl s_client -starttls mysql)",
            timeout_s=S_CLIENT_TIMEOUT_S,
            hint=pki.INSTALL_HINT,
            check=False,
        ).stdout
        return parse_s_client(out)

    def prepare_tls(self, record: dict[str, Any]) -> pki.Pki:
        """The client's PKI (the user's CA and client certificate, the server's certificate
        as fetched) and the key-type proof in the record."""
        spec = self.spec
        private = keys.private_dir(self.store.path)
        seen = self.handshake()
        server_cert = private / "target-server-cert.pem"
        server_cert.write_text(seen.certificate_pem)
        text = proc.run(
            ["openssl", "x509", "-in", str(server_cert), "-noout", "-text"],
            phase="describe the server's certificate",
            timeout_s=30,
            hint=pki.INSTALL_HINT,
        ).stdout
        record["pki"][TARGET_KEY] = {
            "server_key": describe_key(text),
            "chain": "the server's own certificate, verified against the given CA "
            f"(openssl: {seen.verify or '?'}); openssl s_client negotiated "
            f"{seen.protocol or '?'} {seen.cipher or '?'}",
        }
        return pki.Pki(
            key_type=TARGET_KEY,
            directory=private,
            ca_cert=Path(spec.ssl_ca).absolute(),
            server_cert=server_cert,
            server_key=Path("/nonexistent"),  # the user's, never seen here
            client_cert=Path(spec.ssl_cert).absolute(),
            client_key=Path(spec.ssl_key).absolute(),
            server_ips=(),
        )


def plan_lines(profile: Profile) -> list[str]:
    """`encbench plan`: the in-transit study's part against a target, read-only."""
    assert profile.target is not None
    spec = profile.target
    server = UserServer.of_target(spec)
    rows = server.query(
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('have_ssl', 'ssl_cert', 'tls_version')"
    )
    tls_missing = tls_unavailable(spec, {str(k): str(v) for k, v in rows})
    todo = cells(profile)
    db = f"encbench_{PLACEHOLDER_KEY}_transit"
    out = [f"in transit: {len(todo)} cells, plain TCP and TLS to the target"]
    out.append(f"  CREATE DATABASE `{db}` (marked as encbench's), with the tables the tests read")
    out.append(
        "  the server's certificate: openssl s_client -starttls mysql (its key type recorded)"
    )
    for c in todo:
        why = target_skip_reason(c) or tls_missing
        out.append(f"  cell {c.label}: " + (f"skipped — {why}" if why else "measured"))
    if not spec.keep:
        out.append(f"  at the end: DROP DATABASE `{db}`")
    return out
