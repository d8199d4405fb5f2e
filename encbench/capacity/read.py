"""Reading the JSON form of `CryptoCapacity` (`cipher_entry`, `cipher_mb_per_s`), so that
stored results can be used without re-measuring. The tables `encbench crypto` prints are
built in report/crypto.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from encbench.capacity.parse import Direction


def cipher_entry(
    cap_json: Mapping[str, Any],
    cipher: str,
    block_bytes: int,
    accel: bool,
    cores: int,
    direction: str,
) -> dict[str, Any] | None:
    """The measured entry for exactly this cipher (openssl's lower-case name), block size,
    acceleration, core count and direction; None if not measured."""
    for entry in cap_json.get("ciphers", []):
        if (
            entry.get("cipher") == cipher
            and entry.get("block_bytes") == block_bytes
            and bool(entry.get("accel")) == accel
            and entry.get("cores") == cores
            and entry.get("direction", "encrypt") == direction
        ):
            return dict(entry)
    return None


def cipher_mb_per_s(
    cap_json: Mapping[str, Any],
    cipher: str,
    block_bytes: int,
    accel: bool = True,
    cores: int = 1,
    direction: Direction = "encrypt",
) -> float | None:
    """Mean MB/s measured for exactly this cipher, block size, acceleration and core count;
    None if not measured.

    Asked for decryption where only encryption was measured, GCM, CTR and ChaCha20-Poly1305
    answer with the encryption figure (both directions run the same keystream and MAC work);
    CBC does not, since its decryption parallelises and its encryption cannot."""
    wanted = cipher.lower()

    def find(want_direction: str) -> float | None:
        entry = cipher_entry(cap_json, wanted, block_bytes, accel, cores, want_direction)
        value = entry.get("mb_per_s_mean") if entry else None
        return float(value) if value is not None else None

    found = find(direction)
    if found is None and direction == "decrypt" and "cbc" not in wanted:
        found = find("encrypt")
    return found
