"""ServerPair's fresh servers per block (measure.restart): when it restarts, and which design
a resumed run keeps.  The restart itself is a real server's (tests/integration); here it is
replaced by a note of the call."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench.profiles.profile import load
from encbench.results.store import ResultStore
from encbench.studies.at_rest.pair import ServerPair


def a_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record: dict | None = None):
    store = ResultStore.create(tmp_path / "out", "quick", "")
    if record is not None:
        store.write_json("at-rest.json", record)
    pair = ServerPair(store, load("quick")[0])
    restarts: list[str] = []

    def restart(regime: str, bp: int) -> None:
        restarts.append(regime)
        pair.fresh = True  # as _restart leaves it

    monkeypatch.setattr(pair, "_restart", restart)
    monkeypatch.setattr(pair, "buffer_pool_mb", lambda regime: 64)
    return pair, restarts


def test_servers_just_started_serve_their_first_block_and_every_later_block_gets_new_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pair, restarts = a_pair(tmp_path, monkeypatch)
    assert pair.restart == "block"
    assert not pair.renew(), "no regime yet: nothing to renew"
    pair.configure("in-memory", lambda line: None)
    assert restarts == ["in-memory"]
    assert pair.renew() and restarts == ["in-memory"], "not twice in a row"
    assert pair.renew() and restarts == ["in-memory", "in-memory"]
    assert pair.renew() and len(restarts) == 3


def test_a_resumed_run_that_began_restarting_per_regime_keeps_that_design(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # at-rest.json of a version without `restart`: that run restarted per regime only.
    pair, restarts = a_pair(tmp_path, monkeypatch, {"regimes": {"in-memory": {}}})
    assert pair.restart == "regime"
    pair.configure("in-memory", lambda line: None)
    pair.fresh = False
    assert not pair.renew() and restarts == ["in-memory"]
    assert pair.record["restart"] == "regime", "the report says how it was run"
