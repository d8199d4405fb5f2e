"""MariaDB's TLS options for one run, and the proof that a connection was (or was not) encrypted.

The proof is the server's own view: `SHOW SESSION STATUS` run on the connection being judged
reports the protocol and cipher the server negotiated for it (empty for a plain connection),
and the global `Ssl_finished_accepts` counter grows by one per completed TLS handshake, so a
run's delta says how many of its connections were encrypted without trusting the client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from encbench import proc
from encbench.errors import BadInput, ProofError
from encbench.servers.pki import Pki

# TLS 1.0 and 1.1 are left out on purpose: Debian's OpenSSL 3 refuses them at its default
# security level, so a server configured for them would start and then fail every handshake.
TLS_VERSIONS = ("TLSv1.2", "TLSv1.3")
CLIENT_HINT = "install it: apt-get install mariadb-client"


def check_tls_version(version: str) -> str:
    if version not in TLS_VERSIONS:
        raise BadInput(
            f"TLS version {version!r} is not usable with this server: choose one of "
            f"{', '.join(TLS_VERSIONS)}"
        )
    return version


# The TLS 1.3 suites a MariaDB client offers: libmariadb (sysbench, mariadb, mariadb-dump)
# sets none of its own, so it offers OpenSSL 3's default list, `openssl ciphers -s -tls1_3`.
# MariaDB 10.11 passes ssl_cipher to SSL_CTX_set_ciphersuites as well as to
# SSL_CTX_set_cipher_list, so a server can be limited to one of them; the CCM suites are
# never offered by these clients, and a server limited to one fails every handshake.
TLS13_SUITES = ("TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256")


# The suites MySQL 8.0.35 and later (9.7 too) run with: its approved lists (MySQL's
# include/tls_ciphers.h, default_tls12_ciphers and default_tls13_ciphers).  A server limited to
# any other refuses to start ("contains cipher … that is blocked"), the 2013 study's
# DHE-RSA-AES256-SHA among them.
MYSQL_SUITES = frozenset(
    {
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
        "ECDHE-ECDSA-AES256-CCM",
        "ECDHE-ECDSA-AES128-CCM",
        "DHE-RSA-AES128-GCM-SHA256",
        "DHE-RSA-AES256-GCM-SHA384",
        "DHE-RSA-AES256-CCM",
        "DHE-RSA-AES128-CCM",
        "DHE-RSA-CHACHA20-POLY1305",
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_AES_128_CCM_SHA256",
    }
)


def mysql_refuses(suite: str) -> str | None:
    """Why a MySQL server cannot be limited to `suite` ("" : its default), or None."""
    if not suite or suite in MYSQL_SUITES:
        return None
    return (
        f"MySQL refuses to run with {suite} (not among the suites it permits since 8.0.35: "
        "forward secrecy, SHA-2 and an AEAD mode)"
    )


def suite_version(suite: str) -> str:
    """The protocol a suite name belongs to: TLS 1.3's are IANA names (TLS_AES_…); OpenSSL
    names TLS 1.2 suites without that prefix (ECDHE-RSA-AES256-GCM-SHA384)."""
    return "TLSv1.3" if suite.startswith("TLS_") else "TLSv1.2"


def check_suite(suite: str, tls_version: str, version_key: str = "tls_version") -> str:
    """A suite the server can be limited to at `tls_version`: one line naming the fix when
    not, since a server limited to a suite of the other version (or one no client offers)
    starts and then fails, or ignores it, on every connection."""
    version = suite_version(suite)
    if version == "TLSv1.3" and suite not in TLS13_SUITES:
        raise BadInput(
            f"TLS 1.3 suite {suite!r} is not offered by MariaDB's clients: choose one of "
            f"{', '.join(TLS13_SUITES)}"
        )
    if version != tls_version:
        raise BadInput(
            f"{suite!r} is a {version[:3]} {version[4:]} suite: it needs {version_key} = "
            f'"{version}", not "{tls_version}"'
        )
    return suite


def server_options(
    pki: Pki,
    *,
    tls_version: str = "TLSv1.3",
    cipher: str | None = None,
    require_secure_transport: bool = False,
    mysql: bool = False,
) -> dict[str, str]:
    """Options to merge into a sandbox's option dict (as servers/mariadb/options.py renders
    them).

    `cipher` is one suite the server is limited to: an OpenSSL TLS 1.2 name (e.g.
    DHE-RSA-AES256-SHA, the 2013 study's) with TLSv1.2, or a TLS 1.3 one (TLS13_SUITES) with
    TLSv1.3; a suite of the other version is refused rather than silently ignored.  MariaDB
    takes either in ssl_cipher; MySQL limits TLS 1.3 by tls_ciphersuites alone (its
    ssl_cipher is TLS 1.2's), so a `mysql` server gets a 1.3 suite there."""
    check_tls_version(tls_version)
    options = {
        "ssl_cert": str(pki.server_cert),
        "ssl_key": str(pki.server_key),
        "ssl_ca": str(pki.ca_cert),
        "tls_version": tls_version,
    }
    if cipher is not None:
        suite = check_suite(cipher, tls_version)
        options[suite_option(suite, mysql=mysql)] = suite
    if require_secure_transport:
        # Makes a plain connection fail instead of quietly measuring the wrong thing.
        options["require_secure_transport"] = "ON"
    return options


def suite_option(suite: str, *, mysql: bool) -> str:
    """The server option that limits the server to `suite` (server_options)."""
    return "tls_ciphersuites" if mysql and suite_version(suite) == "TLSv1.3" else "ssl_cipher"


SERVER_TLS_SQL = "SELECT @@GLOBAL.have_ssl, @@GLOBAL.tls_version, @@GLOBAL.ssl_cipher"
# MySQL 8.4+ has no have_ssl: a server whose certificate failed to load runs without TLS and
# reports no certificate dates; its suite limit for TLS 1.3 is tls_ciphersuites.
MYSQL_CERT_SQL = "SHOW GLOBAL STATUS LIKE 'Ssl_server_not_after'"
MYSQL_TLS_SQL = "SELECT @@GLOBAL.tls_version, @@GLOBAL.ssl_cipher, @@GLOBAL.tls_ciphersuites"


class Queried(Protocol):
    def query(self, sql: str) -> list[tuple[Any, ...]]: ...


def server_tls(server: Queried, *, mysql: bool) -> tuple[str, str, str]:
    """What the server says it was started with, as check_server_tls reads it: (TLS on:
    "YES" or why not, its TLS versions, the suite it is limited to, "" for none)."""
    if not mysql:
        (row,) = server.query(SERVER_TLS_SQL)
        have_ssl, version, suite = (str(v or "") for v in row)
        return have_ssl, version, suite
    loaded = server.query(MYSQL_CERT_SQL)
    on = "YES" if loaded and loaded[0][1] else "DISABLED (no certificate loaded)"
    (row,) = server.query(MYSQL_TLS_SQL)
    version, tls12, tls13 = (str(v or "") for v in row)
    return on, version, tls13 if version == "TLSv1.3" else tls12


def check_server_tls(row: Sequence[object], tls_version: str, cipher: str | None) -> None:
    """The server's own account of what it was started with (server_tls): TLS on, the
    one version and, where a suite was asked for, that suite alone.  A server whose TLS set-up
    failed keeps running without it (MariaDB: have_ssl DISABLED), and one limited to a suite
    accepts no other, so with this and a handshake counted per connection every run
    negotiated the suite."""
    have_ssl, version, suite = (str(v or "") for v in row)
    if have_ssl != "YES":
        raise ProofError(f"the server's TLS is {have_ssl or 'off'}, not on")
    if version != tls_version:
        raise ProofError(f"the server runs tls_version {version!r}, not {tls_version!r}")
    if cipher and suite != cipher:
        raise ProofError(f"the server is limited to suite {suite!r}, not {cipher!r}")


@dataclass(frozen=True)
class SessionTls:
    """What the server negotiated for one connection; empty strings for a plain one."""

    version: str
    cipher: str

    @property
    def encrypted(self) -> bool:
        return bool(self.cipher)


def parse_session(text: str) -> SessionTls:
    """Read Ssl_version and Ssl_cipher from `name=value` lines (connect.lua --proof) or from
    the mariadb client's tab-separated `SHOW SESSION STATUS` output."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        for sep in ("=", "\t"):
            name, found, value = line.partition(sep)
            if found and name.strip() in ("Ssl_version", "Ssl_cipher"):
                values[name.strip()] = value.strip()
                break
    if set(values) != {"Ssl_version", "Ssl_cipher"}:
        raise ProofError("the server's Ssl_version/Ssl_cipher were not in the probe's output")
    return SessionTls(values["Ssl_version"], values["Ssl_cipher"])


def prove(session: SessionTls, *, encrypted: bool, what: str) -> None:
    if encrypted and not session.encrypted:
        raise ProofError(f"{what}: the server reports a plain connection, expected TLS")
    if not encrypted and session.encrypted:
        raise ProofError(
            f"{what}: the server reports {session.version} {session.cipher}, expected plain"
        )


PROOF_SQL = "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"


def client_session(
    host: str,
    port: int,
    user: str,
    password: str,
    pki: Pki | None,
    workdir: Path,
    prefix: Sequence[str] = (),
) -> SessionTls:
    """Connect with the mariadb client (TLS when `pki` is given, verifying the server
    certificate against the run's CA) and ask the server what it negotiated.  The password
    travels in MYSQL_PWD, not argv, where every local user could read it."""
    argv = [proc.which("mariadb") or "mariadb", "--no-defaults", f"-h{host}", f"-P{port}"]
    argv += [f"-u{user}", "--batch", "--skip-column-names"]
    if pki is None:
        argv.append("--skip-ssl")
    else:
        argv += ["--ssl", f"--ssl-ca={pki.ca_cert}", "--ssl-verify-server-cert"]
        argv += [f"--ssl-cert={pki.client_cert}", f"--ssl-key={pki.client_key}"]
    out = proc.run(
        [*prefix, *argv, "-e", PROOF_SQL],
        phase="TLS proof (mariadb client)",
        timeout_s=60,
        cwd=workdir,
        env={"MYSQL_PWD": password},
        hint=CLIENT_HINT,
    ).stdout
    return parse_session(out)


@dataclass(frozen=True)
class TlsCounters:
    """Server-wide handshake and session-resumption counters (MariaDB 10.11 names).
    Ssl_sessions_reused is left out on purpose: it is a per-connection value, so read on the
    harness's own (plain) connection it is always 0; resumption shows in the cache hits."""

    accepts: int
    finished_accepts: int
    session_cache_hits: int
    session_cache_misses: int

    def minus(self, before: TlsCounters) -> TlsCounters:
        return TlsCounters(
            accepts=self.accepts - before.accepts,
            finished_accepts=self.finished_accepts - before.finished_accepts,
            session_cache_hits=self.session_cache_hits - before.session_cache_hits,
            session_cache_misses=self.session_cache_misses - before.session_cache_misses,
        )


COUNTERS = {
    "accepts": "Ssl_accepts",
    "finished_accepts": "Ssl_finished_accepts",
    "session_cache_hits": "Ssl_session_cache_hits",
    "session_cache_misses": "Ssl_session_cache_misses",
}


def counters(status: Mapping[str, str]) -> TlsCounters:
    """From SHOW GLOBAL STATUS; a server without TLS reports no such rows, read as zero."""
    return TlsCounters(**{field: int(status.get(name) or 0) for field, name in COUNTERS.items()})


def client_env(password: str) -> dict[str, str]:
    """Environment for sysbench, connloop and the mariadb client: libmariadb reads MYSQL_PWD
    when no password is given, which keeps it out of argv (only the same user can read a
    process's environment)."""
    return {"MYSQL_PWD": password, "HOME": os.environ.get("HOME", "/")}
