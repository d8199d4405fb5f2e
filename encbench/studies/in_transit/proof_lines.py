"""Lines both kinds' setup-and-proof sections write alike: what each row's proof saw, and the
runs' counts a reader checks (errors a client went on after, transactions it failed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def negotiated(cells: Sequence[Any]) -> list[str]:
    """What the one proven connection of each route negotiated, row by row."""
    proofs = [
        f"{c.label}: {', '.join(f'{k} = {v}' for k, v in c.proof.items())}"
        for c in cells
        if c.proof
    ]
    return ["Negotiated: " + "; ".join(proofs) + "."] if proofs else []


def counted(cells: Sequence[Any], count: str, lead: str, encrypted: str) -> list[str]:
    """The rows whose variants counted some of `count` (a variant's field), each named with
    its side (`encrypted`: what the encrypted side is called), after `lead`."""
    found = [
        f"{c.label} {name} {getattr(v, count):,}"
        for c in cells
        if c.variants
        for name, v in (("plain", c.variants.plain), (encrypted, c.variants.encrypted))
        if getattr(v, count)
    ]
    return [f"{lead}: " + "; ".join(found) + "."] if found else []
