"""Instance shapes in a profile (`[[server.shapes]]`): the cells they make, the records and
summary cells that name them, every bad input refused in one line before anything starts,
and the report's "CPU per shape"."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.profiles import profile
from encbench.report.models import Estimate, Harness, Pair, Spread
from encbench.report.tables import Bullets, Table
from encbench.servers import sizing
from encbench.studies.at_rest import cells, pair, shapes_section
from encbench.studies.at_rest import needs as at_rest_needs
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary, AtRestVariant
from encbench.studies.at_rest.records import CellKey, RunRecord
from tests.helpers import encbench_here

BASE = 'name = "x"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["io-bound"]\n'
BASE += "threads = [1, 16]\n"
TWO = """\
[[server.shapes]]
name = "1cpu"
cpus = 1
memory_mib = 1024
[[server.shapes]]
name = "2cpu"
cpus = 2
"""


def parse(toml: str) -> profile.Profile:
    return profile.parse(BASE + toml, "p.toml")


def refusal(toml: str) -> str:
    with pytest.raises(BadInput) as caught:
        parse(toml)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_shapes_make_a_dimension_named_in_every_cell() -> None:
    found = cells.cells(parse(TWO))
    assert [(c.shape, c.threads) for c in found] == [
        ("1cpu", 1), ("1cpu", 16), ("2cpu", 1), ("2cpu", 16),
    ]  # fmt: skip
    assert found[0].label == "oltp_read_only io-bound shape 1cpu 1 thr"
    assert found[0].slug == "oltp_read_only-io-bound-shape-1cpu-t1"
    assert cells.shape(found[2], parse(TWO)) == parse(TWO).server.shapes[1]


def test_an_iops_cap_is_optional_named_in_words_and_needs_the_io_controller() -> None:
    capped = parse(TWO + '[[server.shapes]]\nname = "iops7k"\ncpus = 2\niops = 7000\n')
    one, two, cap = capped.server.shapes
    assert (one.iops, two.iops, cap.iops) == (None, None, 7000)
    assert cap.words == "iops7k (2 CPUs, 7,000 IOPS)"
    assert "io" not in pair.shape_limits(one).controllers
    limits = pair.shape_limits(cap)
    assert limits.iops == 7000 and "io" in limits.controllers
    assert limits.device == ""  # each server's own disk, at its start (shapes.on_device)


def test_an_iops_cap_with_the_results_on_no_disk_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    capped = parse('[[server.shapes]]\nname = "iops7k"\ncpus = 1\niops = 7000\n')
    monkeypatch.setattr(pair.shapes, "disk_of", lambda path: None)
    pair.check_iops_disk(parse(TWO), tmp_path)  # no cap: no disk needed
    with pytest.raises(BadInput) as caught:
        pair.check_iops_disk(capped, tmp_path)
    assert str(caught.value) == (
        "server.shapes: shape 'iops7k' caps the IOPS of the disk that holds the servers' "
        "data, and the results directory is on none (tmpfs, overlay); give --out a directory "
        "on a disk, or remove iops"
    )


def test_a_profile_without_shapes_names_no_shape() -> None:
    found = cells.cells(parse(""))
    assert {c.shape for c in found} == {""}
    assert cells.shape(found[0], parse("")) is None


def test_records_carry_their_shape_and_older_lines_read_as_unconfined() -> None:
    record = RunRecord(
        cell=CellKey("oltp_read_only", "io-bound", 1, shape="1cpu"), round=1, variant="plain",
        position=0, session="s", started_at="t", wall_s=1.0, tps=10.0, qps=100.0,
        transactions=10, ignored_errors=0, reconnects=0, latency_avg_ms=1.0, latency_p95_ms=2.0,
        latency_max_ms=3.0, server_cpu_s=0.1, cpu_ms_per_txn=10.0, harness_cpu_s=0.0,
        bp_read_requests=0, bp_reads=0, pages_read=0, pages_written=0, raw_output="raw/x",
        shape_cpus_allowed="0",
    )  # fmt: skip
    line = record.to_json()
    assert line["cell"]["shape"] == "1cpu" and line["shape_cpus_allowed"] == "0"
    assert RunRecord.from_json(line) == record
    del line["shape_cpus_allowed"]
    line["cell"].pop("shape")
    assert RunRecord.from_json(line).cell.shape == ""


def test_summary_cells_name_their_shape_in_the_setting() -> None:
    one = AtRestCell(workload="w", regime="io-bound", threads=1, rounds=0, measured_s=0, status="")
    assert "shape" not in one.model_dump(mode="json")
    shaped = one.model_copy(update={"shape": "1cpu"})
    assert shaped.setting == "io-bound, shape 1cpu"
    assert AtRestCell.model_validate(shaped.model_dump(mode="json")) == shaped


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\ncores = 2\n',
            "p.toml: server.shapes.0.cores: unknown key; check its spelling",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\ncpu_quota = 0\n',
            "p.toml: server.shapes.0.cpu_quota: 0 is no CPU budget: give the CPUs' worth of "
            "time the server may use per period, at least 0.01 (e.g. 1.5), or leave it out",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\ncpu_quota = -1.5\n',
            "p.toml: server.shapes.0.cpu_quota: -1.5 is no CPU budget",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\ncpu_quota = 1.5\n',
            'p.toml: server.shapes: shape "a": cpu_quota 1.5 is more than its 1 CPU(s) can '
            "run; give at most 1",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 0\n',
            "p.toml: server.shapes.0.cpus: 0 is out of range; use 1 to 4096",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\n[[server.shapes]]\nname = "a"\ncpus = 2\n',
            'p.toml: server.shapes: shape name "a" is used twice; give each shape its own name',
        ),
        (
            '[[server.shapes]]\nname = "a b"\ncpus = 1\n',
            'p.toml: server.shapes.0.name: "a b" cannot name a shape',
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\nmemory_mib = -5\n',
            "p.toml: server.shapes.0.memory_mib: -5 is out of range; use at least 1",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\niops = 0\n',
            "p.toml: server.shapes.0.iops: 0 is out of range; use 1 to 4294967295",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\niops = 4294967296\n',
            "p.toml: server.shapes.0.iops: 4294967296 is out of range; use 1 to 4294967295",
        ),
        (
            '[[server.shapes]]\nname = "a"\ncpus = 1\niops = "7000"\n',
            "p.toml: server.shapes.0.iops:",
        ),
    ],
)
def test_bad_shapes_are_refused_in_one_line(toml: str, message: str) -> None:
    assert refusal(toml).startswith(message)


def test_shapes_with_pinned_or_duet_rounds_are_refused() -> None:
    toml = TWO + '[measure]\nsharing = "duet"\n'
    with pytest.raises(BadInput) as caught:
        profile.parse('name = "x"\n' + toml, "p.toml")
    assert str(caught.value) == (
        'p.toml: measure.sharing = "duet" pins the servers to CPUs of its own, and '
        'server.shapes give each server its cpuset: use sharing = "sequential" with shapes'
    )


def test_shapes_with_a_target_are_refused() -> None:
    toml = TWO + '[target]\nhost = "db"\nuser = "u"\n'
    assert refusal(toml) == (
        "p.toml: server.shapes confine servers encbench starts, and a target is a server it "
        "did not start: remove server.shapes or the target"
    )


def test_shapes_without_the_at_rest_study_are_refused() -> None:
    with pytest.raises(BadInput, match='studies does not list "at-rest"'):
        profile.parse('name = "x"\nstudies = ["in-transit"]\n' + TWO, "p.toml")


NEED = (268, "a 140 MB buffer pool for the io-bound regime + 128 MB for the rest of the server")


def test_a_shape_larger_than_the_machine_is_named_with_what_it_has() -> None:
    prof = parse('[[server.shapes]]\nname = "big"\ncpus = 4\n')
    assert at_rest_needs.shape_problems(prof, (0, 1), 24_104, NEED) == [
        "server.shapes: shape 'big' asks for 4 CPUs and encbench may use 2 here (CPUs 0,1); "
        "give cpus = 2 or fewer"
    ]


def test_a_memory_budget_above_memtotal_or_below_the_buffer_pool_is_refused() -> None:
    prof = parse(
        '[[server.shapes]]\nname = "huge"\ncpus = 1\nmemory_mib = 30000\n'
        '[[server.shapes]]\nname = "tiny"\ncpus = 1\nmemory_mib = 200\n'
    )
    assert at_rest_needs.shape_problems(prof, (0, 1), 24_104, NEED) == [
        "server.shapes: shape 'huge' asks for 30,000 MiB and this machine has 24,104 MiB "
        "(MemTotal); give memory_mib = 24,104 or less",
        "server.shapes: shape 'tiny' gives the server 200 MiB and it needs about 268 (a 140 MB "
        "buffer pool for the io-bound regime + 128 MB for the rest of the server); raise "
        "memory_mib to 268 or use less data",
    ]
    assert at_rest_needs.shape_problems(parse(TWO), (0, 1), 24_104, NEED) == []


def test_the_memory_a_shape_needs_is_its_largest_regimes_pool_and_the_allowance() -> None:
    prof = profile.parse(
        'name = "x"\n[data]\ntables = 1\ntable_size = 10000\n'
        '[measure]\nregimes = ["in-memory", "io-bound"]\n',
        "p",
    )
    need, what = pair.shape_memory_mb(prof)
    pool = sizing.pool_mb(pair.estimated_data_mb(prof), "in-memory", prof.regime)
    assert need == pool + sizing.SERVER_ALLOWANCE_MB
    assert what.startswith(f"a {pool:,} MB buffer pool for the in-memory regime")


def test_the_command_line_refuses_a_shape_larger_than_the_machine_before_anything(
    tmp_path: Path,
) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text(
        BASE.replace('name = "x"', 'name = "big"')
        + '[[server.shapes]]\nname = "big"\ncpus = 4096\n'
    )
    out = tmp_path / "out"
    result = encbench_here("run", str(prof), "--out", str(out))
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "shape 'big' asks for 4096 CPUs" in line and "Traceback" not in result.stderr
    assert not out.exists()


# -- the report's CPU per shape --------------------------------------------------------------
def estimate(ratio: float, half: float, metric: str) -> Estimate:
    """As report/models.py makes it: a cost is fewer TPS, or more CPU."""
    low, high = ratio * math.exp(-half), ratio * math.exp(half)
    over = (1 - ratio, 1 - high, 1 - low) if metric == "tps" else (ratio - 1, low - 1, high - 1)
    return Estimate(
        n=6, ratio=ratio, ci_low=low, ci_high=high, halfwidth_pct=half * 100,
        overhead_pct=over[0] * 100, overhead_ci_pct=(over[1] * 100, over[2] * 100),
        verdict="", kind="cost",
    )  # fmt: skip


def variant(tps: float, cpu_ms: float) -> AtRestVariant:
    one = Spread(mean=1.0, stdev=0.0)
    return AtRestVariant(
        tps=Spread(mean=tps, stdev=1.0), qps=one, latency_avg_ms=one, latency_p95_ms=one,
        cpu_ms_per_txn=Spread(mean=cpu_ms, stdev=0.0), hit_ratio=one, pages_read_per_txn=one,
        pages_written_per_txn=one, errors=0, reconnects=0,
    )  # fmt: skip


def shaped(shape: str, threads: int, tps: float, cpu: float) -> AtRestCell:
    return AtRestCell(
        workload="oltp_read_only", regime="io-bound", threads=threads, shape=shape, rounds=12,
        measured_s=10, status="",
        variants=Pair[AtRestVariant](plain=variant(100, 1.0), encrypted=variant(100 * tps, cpu)),
        comparisons={"tps": estimate(tps, 0.02, "tps"), "cpu_ms_per_txn": estimate(cpu, 0.02, "c")},
    )  # fmt: skip


SERVERS = {"shapes": {"2cpu": {"shape": {"cpus": 2}}, "1cpu": {"shape": {"cpus": 1}}}}


def test_shapes_are_ordered_smallest_first_from_the_record() -> None:
    cells_ = [shaped("2cpu", 1, 0.99, 1.01), shaped("1cpu", 1, 0.95, 1.04)]
    assert shapes_section.ordered_shapes(cells_, SERVERS) == ["1cpu", "2cpu"]
    assert shapes_section.ordered_shapes(cells_, None) == ["2cpu", "1cpu"]  # as listed


def test_shapes_that_differ_only_in_their_iops_cap_order_and_read_by_it() -> None:
    servers = {
        "shapes": {
            "12k": {"shape": {"cpus": 2, "iops": 12000}},
            "7k": {"shape": {"cpus": 2, "iops": 7000}},
        }
    }
    cells_ = [shaped("12k", 1, 0.99, 1.01), shaped("7k", 1, 0.95, 1.04)]
    assert shapes_section.ordered_shapes(cells_, servers) == ["7k", "12k"]
    words = shapes_section.in_words(cells_, ["7k", "12k"], servers)
    assert words[0].startswith("**7k** (2 CPUs, 7,000 IOPS): encryption cost +5.00%")


def test_the_smaller_shape_pays_more_is_a_contrast_of_matched_cells() -> None:
    cells_ = [
        shaped("1cpu", 1, 0.95, 1.04), shaped("1cpu", 16, 0.97, 1.03),
        shaped("2cpu", 1, 0.99, 1.01), shaped("2cpu", 16, 0.99, 1.00),
    ]  # fmt: skip
    tps, cpu = shapes_section.smaller_pays_more(cells_, ["1cpu", "2cpu"])
    d = (-math.log(0.95) - math.log(0.97)) / 2 - (-math.log(0.99) - math.log(0.99)) / 2
    assert tps.compared == "throughput: 1cpu vs 2cpu" and tps.cells == (2, 2)
    assert tps.difference == pytest.approx(100 * d)
    assert tps.verdict == "holds"
    d_cpu = (math.log(1.04) + math.log(1.03)) / 2 - (math.log(1.01) + math.log(1.00)) / 2
    assert cpu.compared == "server CPU per transaction: 1cpu vs 2cpu"
    assert cpu.difference == pytest.approx(100 * d_cpu)


def test_the_report_has_a_cpu_per_shape_section_only_with_shapes() -> None:
    cells_ = [shaped("1cpu", 1, 0.95, 1.04), shaped("2cpu", 1, 0.99, 1.01)]
    part = AtRestSummary(
        target_halfwidth_pct=2, write_workload_state="", servers=SERVERS, crypto=None,
        harness=Harness.of(0, 1, 2), cells=cells_,
    )  # fmt: skip
    (section,) = shapes_section.sections(part)
    assert section.title == "CPU per shape"
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [r[3].text for r in table.rows] == ["1cpu", "2cpu"]
    words = next(b for b in section.blocks if isinstance(b, Bullets)).items
    assert words[0] == (
        "**1cpu** (1 CPU): encryption cost +5.00% of throughput and changed the server's CPU "
        "per transaction by +4.00% over 1 cell(s) (point estimates; the table gives each "
        "interval)."
    )
    assert [c.text for c in table.rows[0][4:]] == [
        "95.00 / 100.00", "+5.0% (+3.1 … +6.9)", "1.040 / 1.000", "+4.0% (+1.9 … +6.1)",
    ]  # fmt: skip
    plain = [c.model_copy(update={"shape": ""}) for c in cells_]
    unshaped = part.model_copy(update={"cells": plain})
    assert shapes_section.sections(unshaped) == []
