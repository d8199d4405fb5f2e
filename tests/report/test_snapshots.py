"""Snapshots: summary.json, report.md and crypto.md built from fixed, committed inputs must not
change unnoticed.  After an intended change, rewrite them and review the diff:

    ENCBENCH_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report/test_snapshots.py
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import rendering
from encbench.report import crypto, markdown
from tests.report.test_html_report import GOLDEN, golden_cells, golden_crypto, golden_summary

UPDATE = os.environ.get("ENCBENCH_UPDATE_SNAPSHOTS") == "1"


def _check(path: Path, actual: str) -> str | None:
    """None when the snapshot matched (or was rewritten); else the snapshot's text."""
    if UPDATE:
        path.write_text(actual)
        return None
    if not path.exists():
        pytest.fail(f"no snapshot {path.name}: make it with ENCBENCH_UPDATE_SNAPSHOTS=1")
    expected = path.read_text()
    return None if expected == actual else expected


def _differences(actual: Any, expected: Any, where: str = "") -> list[str]:
    """Paths where two JSON values differ; floats may differ in the last bits, since numpy's
    log and mean take other code paths (SIMD or not) on other CPUs."""
    if isinstance(actual, float) and isinstance(expected, float | int):
        same = math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12)
        return [] if same else [f"{where}: {actual!r} != {expected!r}"]
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            return [f"{where}: keys {sorted(actual)} != {sorted(expected)}"]
        return [d for k in actual for d in _differences(actual[k], expected[k], f"{where}/{k}")]
    if isinstance(actual, list) and isinstance(expected, list):
        if len(actual) != len(expected):
            return [f"{where}: {len(actual)} items != {len(expected)}"]
        pairs = zip(actual, expected, strict=True)
        return [d for i, (a, e) in enumerate(pairs) for d in _differences(a, e, f"{where}/{i}")]
    return [] if actual == expected else [f"{where}: {actual!r} != {expected!r}"]


def test_summary_json_matches_its_snapshot() -> None:
    data = golden_summary().to_json()
    text = json.dumps(data, indent=2) + "\n"
    expected = _check(GOLDEN / "summary.json", text)
    if expected is not None:
        diffs = _differences(data, json.loads(expected))
        assert not diffs, "summary.json changed (ENCBENCH_UPDATE_SNAPSHOTS=1 to accept):\n" + (
            "\n".join(diffs[:20])
        )


def test_summary_json_reads_back_into_the_same_summary() -> None:
    summary = golden_summary()
    assert rendering.read_summary(json.loads(json.dumps(summary.to_json())), "golden") == summary


def test_report_md_matches_its_snapshot() -> None:
    text = markdown.render(rendering.document(golden_summary()))
    expected = _check(GOLDEN / "report.md", text)
    assert expected is None or text == expected, (
        "report.md changed (ENCBENCH_UPDATE_SNAPSHOTS=1 to accept)"
    )


def test_crypto_md_matches_its_snapshot() -> None:
    text = crypto.render_markdown(golden_crypto())
    expected = _check(GOLDEN / "crypto.md", text)
    assert expected is None or text == expected, (
        "what `encbench crypto` prints changed (ENCBENCH_UPDATE_SNAPSHOTS=1 to accept)"
    )


def test_the_fixture_holds_every_kind_of_cell() -> None:
    verdicts = [c.comparisons["tps"].verdict for c in golden_cells() if c.rounds]
    statuses = [c.status for c in golden_cells()]
    assert any(v.startswith("no difference beyond ±2%") for v in verdicts)
    assert any(v.startswith("no difference detected") for v in verdicts)
    assert any(v.startswith("no verdict: 1 round, an interval needs") for v in verdicts)
    assert any(c.rounds_rejected for c in golden_cells())
    assert any("faster" in v for v in verdicts)
    assert any("slower" in v for v in verdicts)
    tps = [c.comparisons["tps"] for c in golden_cells() if c.rounds]
    assert any(e.implausible_gain for e in tps), "an encrypted side faster: flagged"
    assert any(e.differs_holm for e in tps), "a cell that survives Holm"
    assert any(e.kind == "cost" and not e.differs_holm for e in tps), "one that does not"
    assert "not measured" in statuses
    assert any(s.startswith("incomplete") for s in statuses)
