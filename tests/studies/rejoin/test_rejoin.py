"""The rejoin study's own parts without servers: how node 2's log says it got the state, the
per-run and per-cell proofs' verdicts, its record, its cells and profile checks, and the
clusters it measures on, set by the replication study's section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from encbench.engine.galera_pair_study import pairs_options
from encbench.errors import BadInput, ProofError
from encbench.profiles.profile import parse
from encbench.studies.rejoin import cells, study
from encbench.studies.rejoin.records import RejoinCell, RejoinRecord
from encbench.studies.rejoin.study import judge, prove_run
from tests.helpers import GOLDEN_ROOT
from tests.studies.replication.test_replication import HELLO, found

GOLDEN = GOLDEN_ROOT / "replication"


def test_node_2s_own_log_says_whether_it_rejoined_by_sst_or_ist() -> None:
    first = (GOLDEN / "node2-first-join-sst.log").read_text()
    again = (GOLDEN / "node2-rejoin-ist.log").read_text()
    assert study.transport(first) == "SST"
    assert study.transport(again) == "IST"
    assert study.ist_writesets(again) == 2
    assert study.transport("2026-11-23 17:14:46 0 [Note] WSREP: Shifting CLOSED -> OPEN") == ""


def rejoin_record(transfer: str, transport: str, writesets: int) -> Any:
    return RejoinRecord(
        cell=RejoinCell(transfer, 2000),
        round=1,
        variant="encrypted",
        position=0,
        session="s",
        started_at="2026-11-23T00:00:00+00:00",
        wall_s=5.0,
        sync_s=2.0,
        link_bytes=10_000,
        node1_cpu_s=0.5,
        node2_cpu_s=1.0,
        harness_cpu_s=0.01,
        other_cpu_s=0.0,
        steal_s=0.0,
        interference_pct=0.0,
        transport=transport,
        ist_writesets=writesets,
    )


def test_a_rejoin_is_proven_by_how_node_2_got_the_state() -> None:
    prove_run(rejoin_record("ist", "IST", 2000))
    prove_run(rejoin_record("sst", "SST", 0))
    with pytest.raises(ProofError, match="rejoined by SST, not IST"):
        prove_run(rejoin_record("ist", "SST", 2000))
    with pytest.raises(ProofError, match="1999 write sets by IST, fewer than the 2000"):
        prove_run(rejoin_record("ist", "IST", 1999))
    r = rejoin_record("sst", "SST", 0)
    assert RejoinRecord.from_json(r.to_json()) == r
    assert r.cell.label == "rejoin by SST, 2,000 transactions missed"


def test_a_tls_rejoin_may_carry_the_marker_on_the_sst_port_only() -> None:
    cell = RejoinCell("sst", 10)
    with pytest.raises(ProofError, match="positive control failed"):
        judge(cell, "plain", found({}, []), 1200, 4)
    assert judge(cell, "plain", found({"4568": 4}, []), 1200, 4)["marker_hits"] == 4
    with pytest.raises(ProofError, match="crossed Galera's own ports in plaintext 4 times"):
        judge(cell, "encrypted", found({"4568": 4}, HELLO), 1200, 4)
    with pytest.raises(ProofError, match="no TLS ServerHello"):
        judge(cell, "encrypted", found({"4444": 4}, []), 1200, 4)
    # rsync's SST stream is [sst]'s, not socket.ssl's: recorded, not judged
    ok = judge(cell, "encrypted", found({"4444": 4}, HELLO), 1200, 4)
    assert ok["marker_hits_by_port"] == {"4444": 4} and ok["protocol"] == "TLSv1.3"
    with pytest.raises(ProofError, match="holds 0 of node 1's 4 marker rows"):
        judge(cell, "encrypted", found({}, HELLO), 1200, 0)


def test_rejoin_cells_and_their_bad_input() -> None:
    profile = parse(
        'name = "r"\nstudies = ["rejoin"]\n[rejoin]\ntransfers = ["ist", "sst"]\n'
        "missed_transactions = 500\n",
        "p.toml",
    )
    assert [c.slug for c in cells.cells(profile)] == ["ist-m500", "sst-m500"]
    with pytest.raises(BadInput, match='choose from "ist", "sst"'):
        parse('name = "r"\n[rejoin]\ntransfers = ["xtrabackup"]\n', "p.toml")
    with pytest.raises(BadInput, match=r"rejoin\.missed_transactions"):
        parse('name = "r"\n[rejoin]\nmissed_transactions = 0\n', "p.toml")
    with pytest.raises(BadInput, match="20001 is out of range; use 1 to 20000"):
        parse('name = "r"\n[rejoin]\nmissed_transactions = 20001\n', "p.toml")


def test_its_clusters_are_set_by_the_replication_section() -> None:
    profile = parse(
        'name = "r"\nstudies = ["rejoin"]\n[replication]\nkey_type = "rsa4096"\nrate_mbit = 100\n',
        "p.toml",
    )
    spec = pairs_options(profile)
    assert (spec.key_type, spec.rate_mbit) == ("rsa4096", 100)


def test_the_runner_is_made_with_the_rule_and_cells_its_definition_reads(tmp_path: Path) -> None:
    from encbench.engine.progress import RunProgress
    from encbench.results.store import ResultStore
    from encbench.studies import definition, replication
    from encbench.studies import rejoin as rejoin_study

    profile = parse(
        'name = "r"\nstudies = ["rejoin", "replication"]\n[rejoin]\ntransfers = ["sst"]\n'
        "missed_transactions = 700\n[replication]\nthreads = [3]\n",
        "p.toml",
    )
    store = ResultStore.create(tmp_path / "o", "r", "")
    rejoin: Any = definition.runner(rejoin_study.STUDY, store, profile, RunProgress(0))
    assert rejoin.rule.missed_transactions == 700
    assert [c.slug for c in rejoin.cells()] == ["sst-m700"]
    replicating: Any = definition.runner(replication.STUDY, store, profile, RunProgress(0))
    assert replicating.rule.threads == [3]
    assert {c.threads for c in replicating.cells()} == {3}


def test_its_report_and_compare_name_the_servers_its_clusters_ran() -> None:
    """The clusters' versions, as the study's record (rejoin.json) keeps them, reach
    summary.json, the report's set-up and compare's set-up table."""
    from encbench.report.cell_summary import GALERA_SETUP
    from encbench.studies.rejoin import report, summary

    profile = parse('name = "r"\nstudies = ["rejoin"]\n[rejoin]\ntransfers = ["ist"]\n', "p.toml")
    record = {"mariadb_version": "10.11.14-MariaDB", "galera_version": "26.4.21(r0)"}
    part = summary.build([rejoin_record("ist", "IST", 2000)], profile, record)
    assert part.model_dump()["galera_version"] == "26.4.21(r0)"
    assert report.PART.compare_setup(part) == {
        "MariaDB": "10.11.14-MariaDB",
        "Galera": "26.4.21(r0)",
    }
    assert report.PART.setup is not None
    assert report.PART.setup(part).server_version == "10.11.14-MariaDB"
    older = summary.build([], profile, None)  # a results directory without rejoin.json
    assert report.PART.compare_setup(older) == {}
    # A part written before the study copied its servers' versions still reads back (what
    # `compare` does with each study's part of summary.json).
    written = part.model_dump(mode="json")
    for name in GALERA_SETUP:
        del written[name]
    assert report.PART.compare_setup(report.PART.model.model_validate(written)) == {}


def test_without_namespaces_the_refusal_names_the_study_that_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextlib import contextmanager

    from encbench.engine import galera_pair_study
    from encbench.net import netns

    @contextmanager
    def no_hosts(*args: object) -> Any:
        raise netns.NetnsUnavailable("network namespaces need root")
        yield

    monkeypatch.setattr(galera_pair_study.netns, "two_hosts", no_hosts)
    pair = galera_pair_study.PairOnHosts(
        "plain", tmp_path, pool_mb=16, rate_mbit=None, made=None, log=print, study="rejoin"
    )
    with pytest.raises(BadInput, match=r"^rejoin: network namespaces need root; run as root$"):
        pair.__enter__()
