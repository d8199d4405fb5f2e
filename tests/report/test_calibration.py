"""The A/A calibration without servers: the profile switch and the CLI's bad input, the twin
options and proofs, the calibration's report from a fake runs file (false-positive rate, its
Clopper–Pearson interval against a hand computation, noise floor), and the noise-floor
statement of an ordinary report — measured, or "none measured"."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from encbench.commands import rendering
from encbench.errors import BadInput, ProofError
from encbench.profiles import profile as profiles
from encbench.proof.at_rest import prove_twins
from encbench.report import calibration, calibration_section, markdown, noise_floor
from encbench.report.calibration_section import NONE_MEASURED
from encbench.report.models import Calibration, CalibrationCell
from encbench.report.tables import Document
from encbench.results.store import ResultStore
from encbench.servers.mariadb.options import SandboxPaths, server_options
from encbench.servers.variants import EncryptionSpec
from encbench.studies.at_rest import summary as at_rest
from encbench.studies.at_rest.records import CellKey, RunRecord
from encbench.studies.in_transit.checks import check_run
from encbench.studies.in_transit.records import TransitCell
from encbench.studies.in_transit.routes import Hosts, RouteMaker
from tests.results.test_store import record
from tests.studies.in_transit.test_transit_plan_and_report import record as transit_record
from tests.test_cli_bad_input import assert_one_line_error

AA_TOML = (
    'name = "aa"\ncalibration = true\n[measure]\nworkloads = ["oltp_read_only"]\n'
    'regimes = ["in-memory"]\nthreads = [1, 2, 4]\nmin_rounds = 12\nmax_rounds = 12\n'
)
ORDINARY_TOML = AA_TOML.replace("calibration = true\n", "")
# B/A per round of each cell (threads 1, 2, 4): only threads 2 moves consistently, so only its
# 95% interval excludes 1 — one false positive in three cells.
# Twelve rounds (six blocks, A B then B A) per cell.
RATIOS = {1: (1.01, 0.99, 1.00) * 4, 2: (1.10, 1.11, 1.12) * 4, 4: (0.95, 1.05, 1.00) * 4}


@pytest.fixture(autouse=True)
def machine_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private per-machine state: the tests never read or write the user's calibration."""
    path = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(path))
    return path


# -- the profile switch and the command line --------------------------------------------------
def test_the_switch_is_a_strict_boolean() -> None:
    assert profiles.parse(AA_TOML, "aa.toml").calibration
    assert not profiles.parse(ORDINARY_TOML, "p.toml").calibration
    with pytest.raises(BadInput, match=r"p.toml: calibration: expected true or false, got 1"):
        profiles.parse(ORDINARY_TOML.replace('"aa"\n', '"aa"\ncalibration = 1\n'), "p.toml")


def test_calibrate_turns_a_profile_into_its_a_a_twin_and_keeps_that_in_its_text() -> None:
    prof = profiles.parse(ORDINARY_TOML, "p.toml")
    aa, text = profiles.as_calibration(prof, ORDINARY_TOML, "p.toml")
    assert aa.calibration and aa.measure == prof.measure
    assert profiles.parse(text, "again").calibration  # what --resume and `report` read back
    explicit_no = ORDINARY_TOML.replace('"aa"\n', '"aa"\ncalibration = false\n')
    with pytest.raises(BadInput, match="calibration = false"):
        profiles.as_calibration(profiles.parse(explicit_no, "p.toml"), explicit_no, "p.toml")


def test_the_built_in_calibration_has_at_least_40_cells_of_fixed_rounds() -> None:
    from encbench.studies.at_rest.cells import cells as at_rest_cells
    from encbench.studies.in_transit.cells import cells as transit_cells

    prof, _ = profiles.load("calibrate")
    assert prof.calibration
    assert len(at_rest_cells(prof)) + len(transit_cells(prof)) >= 40
    for rule in (prof.measure, prof.transit):
        assert rule.min_rounds == rule.max_rounds  # a fixed-size test per cell


def test_the_tiny_calibration_has_two_cells_of_12_fixed_rounds() -> None:
    """The built-in test calibration, by the real parser (its integration test runs one of
    the two cells: tests/integration/test_calibration_run.py)."""
    from encbench.studies.at_rest import cells

    tiny, _ = profiles.load("calibrate-tiny")
    assert tiny.calibration is True
    assert [c.threads for c in cells.cells(tiny)] == [1, 2]
    assert tiny.measure.min_rounds == tiny.measure.max_rounds == 12


def test_calibrate_with_an_unknown_profile_is_one_line(tmp_path: Path) -> None:
    from tests.helpers import encbench_here

    result = encbench_here("calibrate", "nosuch", cwd=tmp_path)
    assert_one_line_error(result, "unknown profile 'nosuch'", "calibrate")
    assert not (tmp_path / "results").exists()


def test_calibrate_refuses_a_profile_that_says_calibration_false(tmp_path: Path) -> None:
    from tests.helpers import encbench_here

    path = tmp_path / "p.toml"
    path.write_text(ORDINARY_TOML.replace('"aa"\n', '"aa"\ncalibration = false\n'))
    result = encbench_here("calibrate", str(path), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "calibration = false", "remove that line")
    assert not (tmp_path / "out").exists()


def test_a_non_boolean_switch_is_one_line(tmp_path: Path) -> None:
    from tests.helpers import encbench_here

    path = tmp_path / "p.toml"
    path.write_text(ORDINARY_TOML.replace('"aa"\n', '"aa"\ncalibration = "yes"\n'))
    assert_one_line_error(encbench_here("run", str(path)), "calibration: expected true or false")


# -- the twins ----------------------------------------------------------------------------------
def _paths(root: Path) -> SandboxPaths:
    return SandboxPaths(root / "d", root / "t", root / "s.sock", root / "p.pid", root / "e.log")


def test_in_a_calibration_the_encrypted_role_gets_exactly_plains_options(tmp_path: Path) -> None:
    spec = EncryptionSpec(scope="all")
    common = {"buffer_pool_mb": 64, "key_file": tmp_path / "k", "run_as_root": False}
    plain = server_options("plain", spec, _paths(tmp_path / "a"), port=1, **common)  # type: ignore[arg-type]
    twin = server_options(
        "encrypted",
        spec,
        _paths(tmp_path / "b"),
        port=2,
        calibration=True,
        **common,  # type: ignore[arg-type]
    )
    prove_twins(plain, twin)  # nothing but paths and port differ
    assert not any("encrypt" in key or "key_management" in key for key in twin)
    encrypted = server_options("encrypted", spec, _paths(tmp_path / "b"), port=2, **common)  # type: ignore[arg-type]
    with pytest.raises(ProofError, match="innodb_encrypt_tables"):
        prove_twins(plain, encrypted)


def test_in_transit_the_twin_route_is_plain_tcp_to_the_same_place(tmp_path: Path) -> None:
    maker = RouteMaker(
        tmp_path, Hosts(None, [], []), 3306, "db", "TLSv1.3", lambda k: None, {}, calibration=True
    )  # type: ignore[arg-type, return-value]
    with maker.routes(TransitCell("oltp_point_select", "tls", "rsa2048", "", 0, 4)) as routes:
        assert routes["encrypted"] == routes["plain"]
        assert not routes["encrypted"].ssl and routes["encrypted"].tunnel is None


def test_a_twin_run_with_a_tls_handshake_is_refused_and_one_without_passes() -> None:
    cell = TransitCell("connect", "tls", "rsa2048", "", 0, 1)
    twin = transit_record(cell, 0, "encrypted", 100, events=100, tls_handshakes=0)
    check_run(twin, calibration=True)
    with pytest.raises(ProofError, match="expected 0"):
        check_run(replace(twin, tls_handshakes=100), calibration=True)
    with pytest.raises(ProofError, match="0 TLS handshakes for 100"):
        check_run(twin)  # the same run, claimed encrypted, is no TLS run


# -- the calibration's report from a fake runs file --------------------------------------------
def _fake_calibration(path: Path, toml: str = AA_TOML) -> tuple[ResultStore, profiles.Profile]:
    prof = profiles.parse(toml, "aa.toml")
    store = ResultStore.create(path, prof.name, toml, calibration=prof.calibration)
    for threads, ratios in RATIOS.items():
        cell = CellKey("oltp_read_only", "in-memory", threads)
        for n, ratio in enumerate(ratios):
            first = n % 2  # A B, B A, …
            a = replace(
                record(n, "plain", 200.0), cell=cell, started_at=f"2026-01-{n + 1:02d}",
                position=first,
            )  # fmt: skip
            b = replace(
                record(n, "encrypted", 200.0 * ratio), cell=cell, started_at="2026",
                position=1 - first,
            )  # fmt: skip
            store.append(a)
            store.append(b)
    store.write_json("at-rest.json", {"regimes": {}, "sides": {"plain": "A (plain)"}})
    return store, prof


def _binomial_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def _clopper_pearson_by_hand(k: int, n: int) -> tuple[float, float]:
    """The exact interval from its definition: P(X ≥ k | low) = P(X ≤ k | high) = 2.5%,
    each solved by bisection on the binomial distribution."""

    def solve(f: object, target: float) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if f(mid) < target:  # type: ignore[operator]
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda p: 1 - _binomial_cdf(k - 1, n, p), 0.025)
    high = 1.0 if k == n else solve(lambda p: -_binomial_cdf(k, n, p), -0.025)
    return low, high


def test_the_false_positive_rate_and_its_exact_interval(tmp_path: Path) -> None:
    store, prof = _fake_calibration(tmp_path / "aa")
    summary = rendering.build_summary(store, prof)
    c = summary.calibration
    assert c is not None and summary.noise_floor is None
    assert [cell.false_positive for cell in c.cells] == [False, True, False]
    assert (c.cells_tested, c.false_positives) == (3, 1)
    assert c.false_positive_rate == pytest.approx(1 / 3)
    low, high = _clopper_pearson_by_hand(1, 3)
    assert low == pytest.approx(1 - 0.975 ** (1 / 3))  # P(X ≥ 1) = 1 − (1 − p)³
    assert c.false_positive_ci == pytest.approx((low, high), abs=1e-9)
    assert c.measured_at == "2026-01-12"  # the last run's start


def test_clopper_pearson_over_40_cells_matches_the_hand_computation() -> None:
    for k in (0, 2, 5):
        assert calibration.clopper_pearson(k, 40) == pytest.approx(
            _clopper_pearson_by_hand(k, 40), abs=1e-9
        )


def test_the_noise_floor_is_the_median_per_round_spread_and_half_width(tmp_path: Path) -> None:
    store, prof = _fake_calibration(tmp_path / "aa")
    c = rendering.build_summary(store, prof).calibration
    assert c is not None
    spreads = [100 * statistics.stdev([math.log(r) for r in rs]) for rs in RATIOS.values()]
    assert [cell.round_spread_pct for cell in c.cells] == pytest.approx(spreads)
    assert c.round_spread_pct == pytest.approx(statistics.median(spreads))
    # Each cell's half-width is what an ordinary run reports for the same runs.
    ordinary = profiles.parse(ORDINARY_TOML, "o.toml")
    part = at_rest.build(store.runs(RunRecord), ordinary, None, None)
    reported = [cell.comparisons["tps"].halfwidth_pct for cell in part.cells]
    assert [cell.halfwidth_pct for cell in c.cells] == pytest.approx(reported)
    (group,) = c.groups
    assert (group.group, group.cells, group.false_positives) == ("oltp_read_only, in-memory", 3, 1)
    assert group.halfwidth_pct == pytest.approx(statistics.median(x.halfwidth_pct for x in c.cells))


def test_the_calibration_report_names_the_sides_and_never_encryption(tmp_path: Path) -> None:
    store, prof = _fake_calibration(tmp_path / "aa")
    text = markdown.render(rendering.document(rendering.build_summary(store, prof)))
    assert "A/A calibration" in text and "A (plain)" in text and "B (plain twin)" in text
    assert "1 of 3 cells (33.3%, 95% CI 0.8–90.6%, Clopper–Pearson)" in text
    assert (
        f"Too few cells to judge against the nominal 5%: fewer than {calibration.ENOUGH_CELLS}"
        in text
    )
    assert "false positive: the interval excludes no difference" in text
    assert "encrypt" not in text.lower() and "overhead" not in text.lower()


def test_a_cell_of_one_round_has_no_interval_and_is_not_counted() -> None:
    one = CalibrationCell(
        study="at-rest",
        group="g",
        label="l",
        metric="tps",
        rounds=1,
        a_mean=1,
        b_mean=1,
        ratio=1,
        ci_low=None,
        ci_high=None,
        halfwidth_pct=None,
        round_spread_pct=None,
        false_positive=None,
    )
    c = calibration.summarize("p", [one])
    assert (c.cells_tested, c.false_positive_rate, c.false_positive_ci) == (0, None, None)


# -- what an ordinary report states --------------------------------------------------------------
def test_an_ordinary_report_says_when_no_calibration_was_measured(tmp_path: Path) -> None:
    store, prof = _fake_calibration(tmp_path / "run", ORDINARY_TOML)
    noise_floor.snapshot_noise_floor(store, prof)  # as `encbench run` does before measuring
    summary = rendering.build_summary(store, prof)
    assert summary.calibration is None
    assert summary.noise_floor is not None and summary.noise_floor.latest is None
    assert NONE_MEASURED in markdown.render(rendering.document(summary))


def test_an_ordinary_report_states_the_machines_latest_calibration(
    tmp_path: Path, machine_state: Path
) -> None:
    aa_store, aa_prof = _fake_calibration(tmp_path / "aa")
    result = rendering.build_summary(aa_store, aa_prof).calibration
    assert result is not None
    where = noise_floor.record_finished(aa_store, result)
    assert where == machine_state / "encbench" / "calibration.json"
    assert (aa_store.path / "calibration.json").exists()

    store, prof = _fake_calibration(tmp_path / "run", ORDINARY_TOML)
    noise_floor.snapshot_noise_floor(store, prof)  # as `encbench run` does before measuring
    text = markdown.render(rendering.document(rendering.build_summary(store, prof)))
    assert "The latest A/A calibration of this machine (profile `aa`" in text
    assert "1 of 3 cells (33.3%" in text
    # The run's report keeps the calibration it began with, whatever comes later.
    where.unlink()
    again = markdown.render(rendering.document(rendering.build_summary(store, prof)))
    assert again == text
    assert "whose floor may differ" not in text  # both sequential


def test_a_floor_measured_with_other_rounds_says_so(tmp_path: Path, machine_state: Path) -> None:
    aa_store, aa_prof = _fake_calibration(tmp_path / "aa")
    result = rendering.build_summary(aa_store, aa_prof).calibration
    assert result is not None and result.sharing == "sequential"
    noise_floor.record_finished(aa_store, result)
    floor = noise_floor.read_machine()
    same = markdown.render(
        Document("t", [calibration_section.noise_floor_section(floor, "sequential")])
    )
    assert "whose floor may differ" not in same
    other = markdown.render(Document("t", [calibration_section.noise_floor_section(floor, "duet")]))
    assert '`measure.sharing = "sequential"`' in other
    assert "this run's rounds at rest were `duet`, whose floor may differ" in other
    # It names the servers it was measured with (this host's MariaDB here).
    assert result.servers == "MariaDB"
    assert "; MariaDB servers): false-positive rate" in same


def test_a_calibration_names_the_install_its_servers_ran_from() -> None:
    from encbench.report.calibration import servers_of

    mysql = profiles.parse('name = "aa"\n[server]\ninstall = "mysql"\n', "test")
    assert servers_of(mysql) == "MySQL (the mysql root)"


def _calibrated(study: str, when: str) -> Calibration:
    cell = CalibrationCell(
        study=study,
        group="g",
        label="l",
        metric="m",
        rounds=12,
        a_mean=1,
        b_mean=1,
        ratio=1.0,
        ci_low=0.98,
        ci_high=1.02,
        halfwidth_pct=2.0,
        round_spread_pct=3.0,
        false_positive=False,
    )
    return calibration.summarize(f"aa-{study}", [cell], measured_at=when)


def test_calibrating_one_study_keeps_the_floor_of_the_others() -> None:
    noise_floor.write_machine(_calibrated("at-rest", "t1"))
    noise_floor.write_machine(_calibrated("state-transfer", "t2"))
    floor = noise_floor.read_machine()
    assert floor.latest is not None and floor.latest.profile == "aa-state-transfer"
    assert [c.profile for c in floor.others] == ["aa-at-rest"]
    text = markdown.render(Document("t", [calibration_section.noise_floor_section(floor)]))
    assert "For at-rest, which the latest did not measure: the calibration of t1" in text
    # A new calibration of at rest replaces the old one and keeps the state transfer's.
    noise_floor.write_machine(_calibrated("at-rest", "t3"))
    floor = noise_floor.read_machine()
    assert floor.latest is not None and floor.latest.measured_at == "t3"
    assert [c.measured_at for c in floor.others] == ["t2"]


def test_a_calibration_of_other_servers_keeps_this_hosts_floor_and_is_not_quoted_for_it() -> None:
    mariadb = _calibrated("at-rest", "t1")
    mysql = _calibrated("at-rest", "t2").model_copy(update={"servers": "MySQL (the mysql root)"})
    noise_floor.write_machine(mariadb)
    noise_floor.write_machine(mysql)
    floor = noise_floor.read_machine()
    # Both stay: the newest is MySQL's; MariaDB's at-rest floor is not replaced by it.
    assert floor.latest is not None and floor.latest.measured_at == "t2"
    assert [c.measured_at for c in floor.others] == ["t1"]
    # A run states only the floor of its own servers (a calibration from before servers were
    # recorded counts as this host's MariaDB).
    as_mariadb = noise_floor.for_servers(floor, "MariaDB")
    assert as_mariadb.latest is not None and as_mariadb.latest.measured_at == "t1"
    assert as_mariadb.others == []
    old = noise_floor.for_servers(
        floor.model_copy(update={"others": [mariadb.model_copy(update={"servers": None})]}),
        "MariaDB",
    )
    assert old.latest is not None and old.latest.measured_at == "t1"
    as_mysql = noise_floor.for_servers(floor, "MySQL (the mysql root)")
    assert as_mysql.latest is not None and as_mysql.latest.measured_at == "t2"
    assert noise_floor.for_servers(floor, "MariaDB (the mariadb-11.8 root)").latest is None
    # A new MySQL calibration replaces MySQL's and keeps MariaDB's.
    noise_floor.write_machine(
        _calibrated("at-rest", "t3").model_copy(update={"servers": "MySQL (the mysql root)"})
    )
    floor = noise_floor.read_machine()
    assert floor.latest is not None and floor.latest.measured_at == "t3"
    assert [c.measured_at for c in floor.others] == ["t1"]


def test_a_duet_calibration_records_its_rounds_as_duet(tmp_path: Path) -> None:
    """Its rounds' sharing is the calibration's (it was once recorded as sequential
    whatever the rounds were, and an ordinary duet run then called its floor another's)."""
    aa_store, aa_prof = _fake_calibration(tmp_path / "aa")
    for path in (aa_store.path / "at-rest.jsonl",):
        lines = path.read_text().splitlines()
        path.write_text(
            "".join(line.replace('"sharing":"sequential"', '"sharing":"duet"') + "\n"
                    for line in lines)
        )  # fmt: skip
    assert '"sharing":"duet"' in (aa_store.path / "at-rest.jsonl").read_text()
    result = rendering.build_summary(aa_store, aa_prof).calibration
    assert result is not None and result.sharing == "duet"
