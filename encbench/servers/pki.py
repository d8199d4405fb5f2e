"""A real, throwaway PKI for one run, made with the `openssl` CLI: a private CA, a server
certificate and a client certificate, all with the same key type.

The seed study used 4096-bit keys everywhere ("all keys used are 4096 bits"), so the key type
applies to the whole chain: the CA signature the client verifies and the client certificate
the server verifies cost as much as the server key itself.  Keys have no passphrase (a server
must start unattended) and live only in the run's private directory (0700), created 0600
before openssl writes into them so they are never readable by others, even for an instant.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.errors import BadInput
from encbench.servers import keys

INSTALL_HINT = "install it: apt-get install openssl"

# genpkey arguments per key type.  ed25519 needs TLS 1.3 or TLS 1.2 with EdDSA sigalgs on both
# ends; whether MariaDB accepts it is measured by the tests, not assumed.
KEY_TYPES: dict[str, tuple[str, ...]] = {
    "rsa1024": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"),
    "rsa2048": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"),
    "rsa3072": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072"),
    "rsa4096": ("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096"),
    "ecdsa-p256": ("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"),
    "ecdsa-p384": ("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"),
    "ed25519": ("-algorithm", "ED25519"),
}

# The names sysbench 1.0.20's MariaDB driver hard-codes for its TLS (servers/mariadb/sysbench.py:
# relative to its working directory; it has no option naming them).
SYSBENCH_FILES = ("cacert.pem", "client-cert.pem", "client-key.pem")


@dataclass(frozen=True)
class Pki:
    key_type: str
    directory: Path
    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    server_ips: tuple[str, ...]


def check_key_type(key_type: str) -> str:
    if key_type not in KEY_TYPES:
        raise BadInput(f"unknown TLS key type {key_type!r}: choose one of {', '.join(KEY_TYPES)}")
    return key_type


def _openssl(args: list[str], phase: str) -> None:
    if proc.which("openssl") is None:
        raise BadInput(f"openssl not found: {INSTALL_HINT}")
    proc.run(["openssl", *args], phase=phase, timeout_s=120)


def _new_key(path: Path, key_type: str) -> None:
    keys.write_secret(path, "")
    _openssl(["genpkey", *KEY_TYPES[key_type], "-out", str(path)], f"generate {key_type} key")
    os.chmod(path, 0o600)


def _sign(
    directory: Path,
    name: str,
    subject: str,
    key: Path,
    ca: tuple[Path, Path] | None,
    extensions: list[str],
) -> Path:
    """A certificate for `key`: self-signed when `ca` (cert, key) is None, else signed by it."""
    cert = directory / f"{name}-cert.pem"
    if ca is None:
        args = ["req", "-x509", "-new", "-key", str(key), "-subj", subject, "-days", "2"]
        args += [arg for line in extensions for arg in ("-addext", line)]
        _openssl([*args, "-out", str(cert)], f"sign {name} certificate")
        return cert
    csr = directory / f"{name}.csr"
    _openssl(
        ["req", "-new", "-key", str(key), "-subj", subject, "-out", str(csr)],
        f"request {name} certificate",
    )
    ext_file = directory / f"{name}.ext"
    ext_file.write_text("[v3]\n" + "\n".join(extensions) + "\n")
    ca_cert, ca_key = ca
    args = ["x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key)]
    args += ["-CAcreateserial", "-days", "2", "-extfile", str(ext_file), "-extensions", "v3"]
    _openssl([*args, "-out", str(cert)], f"sign {name} certificate")
    return cert


def generate(
    run_dir: Path,
    key_type: str,
    *,
    server_ips: tuple[str, ...] = ("127.0.0.1",),
    peer: bool = False,
) -> Pki:
    """Make CA, server and client certificates under run_dir/private/tls-<key_type>/.

    The server certificate names every address the client may dial (loopback and the
    namespace server address), so a verifying client accepts it whichever path is measured.
    With `peer`, it also serves as a client's (extendedKeyUsage clientAuth): a Galera node
    both listens and dials with one certificate, and OpenSSL refuses a serverAuth-only one
    at the dialling end ("unsupported certificate")."""
    check_key_type(key_type)
    run_dir.mkdir(parents=True, exist_ok=True)
    directory = keys.private_dir(run_dir) / f"tls-{key_type}"
    directory.mkdir(mode=0o700, exist_ok=True)
    ca_key, server_key, client_key = (
        directory / f"{n}-key.pem" for n in ("ca", "server", "client")
    )
    for key in (ca_key, server_key, client_key):
        _new_key(key, key_type)

    ca_ext = ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"]
    sans = ",".join([*(f"IP:{ip}" for ip in server_ips), "DNS:localhost"])
    server_ext = [
        "basicConstraints=CA:FALSE",
        "extendedKeyUsage=serverAuth,clientAuth" if peer else "extendedKeyUsage=serverAuth",
        f"subjectAltName={sans}",
    ]
    client_ext = ["basicConstraints=CA:FALSE", "extendedKeyUsage=clientAuth"]

    ca_cert = _sign(directory, "ca", "/CN=encbench test CA", ca_key, None, ca_ext)
    pki = Pki(
        key_type=key_type,
        directory=directory,
        ca_cert=ca_cert,
        server_cert=directory / "server-cert.pem",
        server_key=server_key,
        client_cert=directory / "client-cert.pem",
        client_key=client_key,
        server_ips=tuple(server_ips),
    )
    ca = (ca_cert, ca_key)
    _sign(directory, "server", "/CN=localhost", server_key, ca, server_ext)
    _sign(directory, "client", "/CN=encbench client", client_key, ca, client_ext)
    return pki


def sysbench_dir(pki: Pki, workdir: Path) -> Path:
    """Copy the client's CA, certificate and key under the names sysbench 1.0.20 reads from its
    working directory; returns workdir, to be passed as sysbench's cwd."""
    workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(workdir, 0o700)
    (workdir / "cacert.pem").write_bytes(pki.ca_cert.read_bytes())
    (workdir / "client-cert.pem").write_bytes(pki.client_cert.read_bytes())
    keys.write_secret(workdir / "client-key.pem", pki.client_key.read_text())
    return workdir


def describe(cert: Path) -> str:
    """openssl's one-line public-key summary, e.g. 'Public-Key: (2048 bit)', for the record."""
    out = proc.run(
        ["openssl", "x509", "-in", str(cert), "-noout", "-text"],
        phase="describe certificate",
        timeout_s=30,
        hint=INSTALL_HINT,
    ).stdout
    for line in out.splitlines():
        if "Public-Key:" in line or "ED25519 Public-Key" in line:
            return line.strip()
    return ""


# OpenSSL 3 (Debian 12) runs at security level 2, which refuses RSA keys under 2048 bits on
# both ends ("Unable to get certificate" on the server).  The seed measured 1024-bit keys, so
# for those the run lowers the level to 1 (RSA >= 1024) through a private OPENSSL_CONF that
# the server and the clients load; every other key type runs with the system's settings.
WEAK_KEY_TYPES = frozenset({"rsa1024"})
LOW_SECLEVEL_CNF = """openssl_conf = default_conf
[default_conf]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
CipherString = DEFAULT:@SECLEVEL=1
"""


def openssl_env(made: Pki) -> dict[str, str]:
    """Environment that the server and clients need for this PKI's key type ({} for most)."""
    if made.key_type not in WEAK_KEY_TYPES:
        return {}
    conf = made.directory / "openssl-seclevel1.cnf"
    conf.write_text(LOW_SECLEVEL_CNF)
    return {"OPENSSL_CONF": str(conf)}
