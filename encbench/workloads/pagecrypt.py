"""pagecrypt.c, compiled at use: CPU µs per 16 KiB page for MariaDB's per-page OpenSSL call
pattern (a new EVP context per page) against one context reused over many pages (what
`openssl speed` measures), with AES-NI on and off.  The difference is what the cipher's floor
(report/floor.py) leaves out by construction: the per-page context set-up."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from encbench import proc
from encbench.capacity.parse import FULL_IA32CAP, NO_AESNI_IA32CAP
from encbench.errors import BadInput

C_SOURCE = Path(__file__).with_name("pagecrypt.c")
CC_HINT = "install a C compiler and the OpenSSL headers: apt-get install gcc libssl-dev"
_LINE = re.compile(r"^pattern=(\S+) pages=(\d+) seconds=([\d.]+) us_per_page=([\d.]+)$", re.M)


@dataclass(frozen=True)
class PageCost:
    cipher: str  # ctr | cbc (AES-256)
    direction: str  # encrypt | decrypt
    accel: bool
    pattern: str  # per-page | reused
    pages: int
    us_per_page: float


def parse(text: str, cipher: str, direction: str, accel: bool) -> list[PageCost]:
    found = [
        PageCost(cipher, direction, accel, m[1], int(m[2]), float(m[4]))
        for m in _LINE.finditer(text)
    ]
    if {p.pattern for p in found} != {"per-page", "reused"}:
        raise ValueError(f"pagecrypt printed no per-page and reused lines: {text[-300:]!r}")
    return found


def build(workdir: Path) -> Path:
    cc = proc.which("cc")
    if cc is None or not Path("/usr/include/openssl/evp.h").exists():
        raise BadInput(f"pagecrypt.c cannot be compiled here: {CC_HINT}")
    binary = workdir / "pagecrypt"
    proc.run(
        [cc, "-O2", "-o", str(binary), str(C_SOURCE), "-lcrypto"],
        phase="compile pagecrypt.c",
        timeout_s=120,
        hint=CC_HINT,
    )
    return binary


def measure(seconds: float = 0.5) -> list[PageCost]:
    """Both patterns for AES-256-CTR and -CBC, both directions, AES-NI on and off."""
    out: list[PageCost] = []
    with tempfile.TemporaryDirectory(prefix="encbench-pagecrypt-") as tmp:
        binary = build(Path(tmp))
        for cipher in ("ctr", "cbc"):
            for direction in ("decrypt", "encrypt"):
                for accel in (True, False):
                    text = proc.run(
                        [str(binary), cipher, direction, f"{seconds:g}"],
                        phase="pagecrypt",
                        timeout_s=60 + 4 * seconds,
                        env={"OPENSSL_ia32cap": FULL_IA32CAP if accel else NO_AESNI_IA32CAP},
                    ).stdout
                    out += parse(text, cipher, direction, accel)
    return out
