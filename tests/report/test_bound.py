"""What bound a cell (report/bound.py): the stated rule on what its runs used."""

from __future__ import annotations

from encbench.report.bound import bound_by
from encbench.results.schema import Usage


def _usage(cores_busy: float, disk_busy: float | None = None, **more: float) -> Usage:
    return Usage(
        cores=2.0,
        cores_busy=cores_busy,
        disk_device="vda" if disk_busy is not None else "",
        disk_busy_pct=disk_busy,
        disk_iops=1200.0 if disk_busy is not None else None,
        disk_queue=2.5 if disk_busy is not None else None,
        disk_read_mib_s=10.0 if disk_busy is not None else None,
        disk_write_mib_s=1.0 if disk_busy is not None else None,
        **more,
    )


def test_full_cores_are_cpu_bound_and_say_how_full() -> None:
    found = bound_by([_usage(1.96, 20.0)] * 3, [_usage(1.95, 18.0)] * 3)
    assert found is not None
    assert found.variants.encrypted.kinds == ["CPU"]
    assert found.words == (
        "CPU — CPU 1.96 / 1.95 of 2 cores, disk 20% / 18% busy, 1,200 / 1,200 IO/s, queue 2.5 / 2.5"
    )


def test_a_busy_device_is_disk_bound_with_its_queue() -> None:
    found = bound_by([_usage(1.2, 98.0)] * 3, [_usage(1.1, 97.0)] * 3)
    assert found is not None
    assert found.words.startswith("disk — CPU 1.20 / 1.10 of 2 cores, disk 98% / 97% busy")


def test_medians_decide_not_one_burst() -> None:
    # One run of three with full cores (other load) does not make the cell CPU-bound.
    found = bound_by(
        [_usage(0.6, 10.0), _usage(2.0, 10.0), _usage(0.7, 10.0)], [_usage(0.6, 10.0)] * 3
    )
    assert found is not None
    assert found.variants.encrypted.kinds == []
    assert found.words.startswith("none — CPU 0.70 / 0.60 of 2 cores, disk 10% / 10% busy")


def test_variants_bound_differently_are_named_each() -> None:
    found = bound_by([_usage(1.9, 50.0)] * 2, [_usage(1.0, 95.0)] * 2)
    assert found is not None
    assert found.words.startswith("encrypted CPU, no encryption disk — CPU 1.90 / 1.00")


def test_a_shaped_server_is_bound_by_its_allowance() -> None:
    runs = [_usage(1.0, server_cores=0.95, server_cores_allowed=1.0)] * 2
    found = bound_by(runs, runs)
    assert found is not None
    assert found.words == "CPU — CPU 1.00 / 1.00 of 2 cores, server 0.95 / 0.95 of 1"


def _capped(cores_busy: float, reads: float, writes: float, cap: float = 50.0) -> Usage:
    # A throttled server leaves the device nearly idle: 4% busy.
    return _usage(cores_busy, 4.0, server_read_iops=reads, server_write_iops=writes, iops_cap=cap)


def test_a_server_at_its_iops_cap_is_bound_by_it_though_the_device_idles() -> None:
    found = bound_by([_capped(0.3, 49.0, 2.0)] * 3, [_capped(0.3, 48.0, 1.0)] * 3)
    assert found is not None
    assert found.variants.encrypted.kinds == found.variants.plain.kinds == ["IOPS cap"]
    assert found.words == (
        "IOPS cap — CPU 0.30 / 0.30 of 2 cores, disk 4% / 4% busy, 1,200 / 1,200 IO/s, "
        "queue 2.5 / 2.5, IOPS cap 50: the server's reads 49 / 48, writes 2 / 1 a second"
    )


def test_the_cap_holds_for_reads_and_writes_each() -> None:
    # 30 reads and 30 writes a second under a cap of 50 each: neither is throttled.
    below = bound_by([_capped(0.3, 30.0, 30.0)] * 2, [_capped(0.3, 30.0, 30.0)] * 2)
    assert below is not None and below.variants.encrypted.kinds == []
    writes = bound_by([_capped(0.3, 5.0, 46.0)] * 2, [_capped(0.3, 5.0, 44.0)] * 2)
    assert writes is not None
    assert writes.variants.encrypted.kinds == ["IOPS cap"]
    assert writes.variants.plain.kinds == []
    assert writes.words.startswith("encrypted IOPS cap, no encryption none — ")


def test_a_full_link_is_link_bound() -> None:
    runs = [_usage(0.4, link_mib_s=11.9, link_capacity_mib_s=12.5)] * 2
    found = bound_by(runs, runs)
    assert found is not None and found.words == (
        "link — CPU 0.40 / 0.40 of 2 cores, link 11.9 / 11.9 of 12.5 MiB/s"
    )


def test_runs_without_usage_say_nothing() -> None:
    assert bound_by([None, _usage(1.0)], [_usage(1.0)] * 2) is None
    assert bound_by([], []) is None


def _compared(threads: int, found: object) -> object:
    from encbench.report.parts import Compared

    return Compared(
        key=("toy", threads),
        group="toy workload",
        row_header="Threads",
        label=str(threads),
        name=f"toy {threads} thr",
        threads=threads,
        rounds=12,
        comparisons={},
        bound=found,  # type: ignore[arg-type]
    )


def test_each_cell_gets_a_row_and_the_sweep_a_plot() -> None:
    from encbench.report import bound_section
    from encbench.report.tables import Plot, Table

    cpu = bound_by([_usage(1.96, 20.0)] * 2, [_usage(1.95, 18.0)] * 2)
    disk = bound_by([_usage(1.0, 97.0)] * 2, [_usage(0.9, 96.0)] * 2)
    section = bound_section.section("toy", [_compared(1, disk), _compared(16, cpu)])  # type: ignore[list-item]
    assert section is not None
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [r[1].text.split(" — ")[0] for r in table.rows] == ["disk", "CPU"]
    plot = next(b for b in section.blocks if isinstance(b, Plot))
    svg = plot.draw()
    assert svg is not None and svg.startswith("<svg") and "disk busy" in svg


def test_no_section_without_usage() -> None:
    from encbench.report import bound_section

    assert bound_section.section("toy", [_compared(1, None)]) is None  # type: ignore[list-item]
