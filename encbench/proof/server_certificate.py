"""A server's certificate as OpenSSL's own client sees it: `openssl s_client -showcerts`
parsed (certificate, protocol, cipher, verification) and the key type in words.  Read by
both in-transit studies (MariaDB's and PostgreSQL's), on a server encbench did not start."""

from __future__ import annotations

import re
from dataclasses import dataclass

from encbench.errors import EncbenchError

_PEM = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


@dataclass(frozen=True)
class Handshake:
    """What `openssl s_client` (-starttls, as the server's kind speaks it) saw of the server:
    its certificate and the protocol and cipher OpenSSL's own client was given (the database
    clients' own sessions are proven separately, by the server's own view)."""

    certificate_pem: str
    protocol: str
    cipher: str
    verify: str


def parse_s_client(text: str) -> Handshake:
    """The server's certificate (the first PEM block), protocol, cipher and verification
    result from `openssl s_client -showcerts` output."""
    found = _PEM.search(text)
    if found is None:
        raise EncbenchError(
            "openssl s_client showed no server certificate: "
            + " | ".join(text.strip().splitlines()[-3:])
        )

    def field(pattern: str) -> str:
        match = re.search(pattern, text, re.M)
        return match[1].strip() if match else ""

    return Handshake(
        certificate_pem=found[0] + "\n",
        protocol=field(r"^\s*Protocol\s*:\s*(\S+)") or field(r"^New, (TLSv[\d.]+),"),
        cipher=field(r"^\s*Cipher\s*:\s*(\S+)") or field(r"^New, \S+, Cipher is (\S+)"),
        verify=field(r"^\s*Verify return code:\s*(.+)$"),
    )


def describe_key(certificate_text: str) -> str:
    """The certificate's key type in words, from `openssl x509 -text`: e.g.
    'rsaEncryption, 2048 bit', 'id-ecPublicKey, 256 bit (prime256v1)', 'ED25519'."""
    algorithm = re.search(r"Public Key Algorithm:\s*(\S+)", certificate_text)
    size = re.search(r"Public-Key:\s*\((\d+) bit\)", certificate_text)
    curve = re.search(r"ASN1 OID:\s*(\S+)", certificate_text)
    parts = [algorithm[1] if algorithm else "unknown key"]
    if size:
        parts.append(f"{size[1]} bit" + (f" ({curve[1]})" if curve else ""))
    return ", ".join(parts)
