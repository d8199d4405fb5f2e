"""MariaDB's TLS (servers/mariadb/tls.py): its server options for one run, the server's own
account of its TLS, and the proof that a connection was (or was not) encrypted."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from encbench.errors import BadInput, ProofError
from encbench.servers.mariadb import tls
from tests.helpers import GOLDEN_ROOT
from tests.net.test_building_blocks import fake_pki

GOLDEN = GOLDEN_ROOT / "transit"


def test_tls_options_name_the_generated_files_and_the_version(tmp_path: Path) -> None:
    options = tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.2", cipher="AES256-SHA")
    assert options["ssl_cert"].endswith("server-cert.pem")
    assert options["ssl_key"].endswith("server-key.pem")
    assert options["ssl_ca"].endswith("ca-cert.pem")
    assert options["tls_version"] == "TLSv1.2"
    assert options["ssl_cipher"] == "AES256-SHA"
    assert "require_secure_transport" not in options


@pytest.mark.parametrize("version", ["TLSv1.0", "TLSv1.1", "SSLv3", "tls1.3"])
def test_a_tls_version_the_server_cannot_use_is_refused_in_one_line(
    tmp_path: Path, version: str
) -> None:
    with pytest.raises(BadInput, match=r"TLSv1\.2, TLSv1\.3") as e:
        tls.server_options(fake_pki(tmp_path), tls_version=version)
    assert "\n" not in str(e.value)


def test_a_cipher_with_tls13_is_refused_rather_than_silently_ignored(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"TLSv1\.2"):
        tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.3", cipher="AES256-SHA")


def test_the_lua_probe_output_proves_tls_and_plain() -> None:
    encrypted = tls.parse_session((GOLDEN / "sysbench_connect_proof_tls.txt").read_text())
    assert encrypted == tls.SessionTls("TLSv1.3", "TLS_AES_256_GCM_SHA384")
    tls.prove(encrypted, encrypted=True, what="tls run")
    plain = tls.parse_session((GOLDEN / "sysbench_connect_proof_plain.txt").read_text())
    assert not plain.encrypted
    tls.prove(plain, encrypted=False, what="plain run")
    with pytest.raises(ProofError, match="expected plain"):
        tls.prove(encrypted, encrypted=False, what="plain run")
    with pytest.raises(ProofError, match="expected TLS"):
        tls.prove(plain, encrypted=True, what="tls run")


def test_the_mariadb_client_output_parses_like_the_lua_probe() -> None:
    text = (GOLDEN / "mariadb_client_proof_tls.txt").read_text()
    assert tls.parse_session(text) == tls.SessionTls("TLSv1.3", "TLS_AES_256_GCM_SHA384")


def test_output_without_the_ssl_rows_is_no_proof() -> None:
    with pytest.raises(ProofError):
        tls.parse_session("SQL statistics:\n")


def test_tls_counters_read_missing_rows_as_zero_and_subtract() -> None:
    before = tls.counters({"Ssl_accepts": "3", "Ssl_finished_accepts": "3"})
    after = tls.counters({"Ssl_accepts": "13", "Ssl_finished_accepts": "12"})
    delta = after.minus(before)
    assert (delta.accepts, delta.finished_accepts, delta.session_cache_hits) == (10, 9, 0)


@pytest.mark.parametrize("suite", tls.TLS13_SUITES)
def test_a_tls13_suite_is_set_on_a_tls13_server_and_refused_on_a_tls12_one(
    tmp_path: Path, suite: str
) -> None:
    options = tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.3", cipher=suite)
    assert options["ssl_cipher"] == suite and options["tls_version"] == "TLSv1.3"
    with pytest.raises(BadInput, match=r'needs tls_version = "TLSv1\.3", not "TLSv1\.2"'):
        tls.server_options(fake_pki(tmp_path), tls_version="TLSv1.2", cipher=suite)


def test_a_tls13_suite_the_clients_never_offer_is_refused_naming_those_they_do(
    tmp_path: Path,
) -> None:
    with pytest.raises(BadInput, match="TLS_AES_256_GCM_SHA384, TLS_CHACHA20") as e:
        tls.server_options(
            fake_pki(tmp_path), tls_version="TLSv1.3", cipher="TLS_AES_128_CCM_SHA256"
        )
    assert "\n" not in str(e.value)


def test_the_servers_own_tls_settings_must_be_those_asked_for() -> None:
    tls.check_server_tls(("YES", "TLSv1.2", "DHE-RSA-AES256-SHA"), "TLSv1.2", "DHE-RSA-AES256-SHA")
    tls.check_server_tls(("YES", "TLSv1.3", ""), "TLSv1.3", None)  # the server's default suite
    with pytest.raises(ProofError, match="TLS is DISABLED"):
        tls.check_server_tls(("DISABLED", "TLSv1.2", "DHE-RSA-AES256-SHA"), "TLSv1.2", "x")
    with pytest.raises(ProofError, match=re.escape("tls_version 'TLSv1.2,TLSv1.3', not 'TLSv1.2'")):
        tls.check_server_tls(("YES", "TLSv1.2,TLSv1.3", ""), "TLSv1.2", None)
    with pytest.raises(ProofError, match="suite 'AES256-SHA', not 'DHE-RSA-AES256-SHA'"):
        tls.check_server_tls(("YES", "TLSv1.2", "AES256-SHA"), "TLSv1.2", "DHE-RSA-AES256-SHA")


def test_mysql_limits_tls13_by_tls_ciphersuites_and_tls12_by_ssl_cipher(tmp_path: Path) -> None:
    tls13 = tls.server_options(
        fake_pki(tmp_path), tls_version="TLSv1.3", cipher="TLS_AES_256_GCM_SHA384", mysql=True
    )
    assert tls13["tls_ciphersuites"] == "TLS_AES_256_GCM_SHA384" and "ssl_cipher" not in tls13
    tls12 = tls.server_options(
        fake_pki(tmp_path), tls_version="TLSv1.2", cipher="ECDHE-RSA-AES128-GCM-SHA256", mysql=True
    )
    assert tls12["ssl_cipher"] == "ECDHE-RSA-AES128-GCM-SHA256"


class _Answers:
    """A server that answers the TLS queries with what it was given."""

    def __init__(self, cert_dates: str, row: tuple[str, ...]) -> None:
        self.cert_dates, self.row = cert_dates, row

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        if sql == tls.MYSQL_CERT_SQL:
            return [("Ssl_server_not_after", self.cert_dates)]
        assert sql == tls.MYSQL_TLS_SQL
        return [self.row]


def test_a_mysql_servers_tls_is_on_when_it_loaded_a_certificate_and_its_suite_per_version() -> None:
    loaded = "Nov 30 20:04:27 2026 GMT"
    row = ("TLSv1.3", "ECDHE-RSA-AES128-GCM-SHA256", "TLS_AES_256_GCM_SHA384")
    assert tls.server_tls(_Answers(loaded, row), mysql=True) == (
        "YES",
        "TLSv1.3",
        "TLS_AES_256_GCM_SHA384",
    )
    tls12 = ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", "")
    assert tls.server_tls(_Answers(loaded, tls12), mysql=True)[2] == "ECDHE-RSA-AES128-GCM-SHA256"
    off = tls.server_tls(_Answers("", row), mysql=True)
    with pytest.raises(ProofError, match="no certificate loaded"):
        tls.check_server_tls(off, "TLSv1.3", None)


def test_mysql_refuses_the_2013_suite_but_not_its_own_nor_its_default() -> None:
    refused = tls.mysql_refuses("DHE-RSA-AES256-SHA")
    assert refused is not None and "refuses to run with DHE-RSA-AES256-SHA" in refused
    assert tls.mysql_refuses("ECDHE-RSA-AES256-GCM-SHA384") is None
    assert tls.mysql_refuses("TLS_AES_256_GCM_SHA384") is None
    assert tls.mysql_refuses("") is None  # the server's default suite
