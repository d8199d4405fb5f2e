"""Unit costs for the estimate's tests: of the size this machine measures, stored without a
measured run."""

from __future__ import annotations

from encbench.estimate import units

PAGE = units.CipherOp(algorithm="aes-256-ctr", direction="decrypt", block_bytes=16384, count=1)
SIGN = units.CipherOp(algorithm="rsa2048", direction="sign", block_bytes=0, count=1)
GCM = units.CipherOp(algorithm="aes-256-gcm", direction="encrypt", block_bytes=16384, count=64)


def unit(
    name: units.UnitName,
    us: float,
    op: units.CipherOp | None,
    *,
    kind: str = "measured",
    spread: float = 0.2,
) -> units.Unit:
    """A unit of `us` µs, its interval ±`spread` of it."""
    return units.Unit.model_validate(
        {
            "name": name, "us": us, "ci_us": ((1 - spread) * us, (1 + spread) * us),
            "kind": kind, "configuration": "AES_CTR, scope tables", "basis": "a test's",
            "cells": ["a"], "rounds": 12, "cipher": op, "source": "/nonexistent",
            "measured_on": "2026-01-01",
        }
    )  # fmt: skip


def typical() -> dict[str, units.Unit]:
    encrypt = PAGE.model_copy(update={"direction": "encrypt"})
    return {
        "page_read": unit("page_read", 10.0, PAGE),
        "page_written": unit("page_written", 20.0, encrypt),
        "log_mib": unit("log_mib", 170.0, encrypt.model_copy(update={"count": 64}),
                        kind="cipher only"),
        "handshake": unit("handshake", 2000.0, SIGN),
        "tls_mib": unit("tls_mib", 400.0, GCM),
    }  # fmt: skip


def typical_pg() -> dict[str, units.Unit]:
    """typical() and PostgreSQL's units on fscrypt (no cipher part known: not rescaled)."""
    return typical() | {
        "fs_block_read": unit("fs_block_read", 5.0, None),
        "fs_block_written": unit("fs_block_written", 8.0, None),
    }
