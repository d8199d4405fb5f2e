"""report.html's plots of the state-transfer, operations, replication and rejoin studies,
from summaries built of synthetic records: each measured study draws its plots, named for a
screen reader, with its units and what the bars are; a study without a measured cell draws
none; drawn twice, a plot is the same bytes."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

from encbench.commands import rendering
from encbench.profiles.profile import parse
from encbench.report import documents, markdown
from encbench.report import html as html_report
from encbench.report.models import Model, Summary
from encbench.studies.operations import cells as operation_cells
from encbench.studies.operations import rotation
from encbench.studies.operations import summary as operations
from encbench.studies.rejoin import cells as rejoin_cells
from encbench.studies.rejoin import summary as rejoin
from encbench.studies.replication import cells as replication_cells
from encbench.studies.replication import summary as replication
from encbench.studies.state_transfer import cells as sst_cells
from encbench.studies.state_transfer import plots as sst_plots
from encbench.studies.state_transfer import summary as state_transfer
from tests.studies.operations import test_operations
from tests.studies.rejoin import test_rejoin
from tests.studies.replication import test_replication
from tests.studies.state_transfer import test_sst_limits

SST_LABEL = "time to Synced and the donor's stream rate per transfer, plain against encrypted"
SST_COST_LABEL = "State transfer: cost of encryption, per row"
OPERATIONS_LABEL = "each operation's time, plain against encrypted"
REPLICATION_LABEL = "throughput per workload, plain cluster against the TLS cluster"
REJOIN_LABEL = "time to Synced per transfer, plain cluster against the TLS cluster"


def page_of(name: str, part: object) -> str:
    summary = documents.summarize(name, None, {name: part})
    return html_report.render(rendering.document(summary))


def svg_labelled(page: str, label: str) -> str:
    """The one `<svg>` of the page with this aria-label."""
    start = page.find(f'<svg role="img" aria-label="{html.escape(label)}"')
    assert start >= 0, label
    return page[start : page.index("</svg>", start)]


# -- state transfer ----------------------------------------------------------------------------
def state_transfer_summary(rounds: int = 4) -> Summary:
    profile = parse(
        'name = "s"\nstudies = ["state-transfer"]\n[state_transfer]\n'
        'methods = ["rsync", "mariabackup"]\nciphers = ["TLSv1.3"]\nmin_rounds = 2\n',
        "p.toml",
    )
    runs = []
    for i, cell in enumerate(sst_cells.cells(profile)):
        for r in range(1, rounds + 1):
            for variant in ("plain", "encrypted"):
                stream_s = (0.3 + 0.1 * i) * (1.3 if variant == "encrypted" else 1) * (1 + r / 50)
                runs.append(
                    dataclasses.replace(test_sst_limits.run(variant, r, stream_s), cell=cell)
                )
    proof = {"encrypted": {"cipher": "TLS_AES_256_GCM_SHA384"}, "plain": {}}
    record = {
        "proofs": {c.slug: proof for c in sst_cells.cells(profile)},
        "limits": test_sst_limits.a_record(),
    }
    part = state_transfer.build(runs, profile, record)
    return documents.summarize("s", None, {"state-transfer": part})


def test_state_transfer_plots_times_and_rates_of_both_variants_against_the_limits() -> None:
    page = html_report.render(rendering.document(state_transfer_summary()))
    assert page.count("<svg") == 2
    svg = svg_labelled(page, SST_LABEL)
    for text in ("Time to Synced", "joiner", "to Synced (s)", "MiB/s over the donor",
                 "bars: 95% CI of each mean", "no encryption", "encrypted",
                 "rsync, stunnel, 1 thread", "mariabackup, socat TLS 1.3, 1 thread"):  # fmt: skip
        assert text in svg, text
    # the measured limits: disk and link on both sides, the cipher on the encrypted one
    for resource in ("disk read", "disk write", "link", "cipher"):
        assert f"limit: {resource}" in svg, resource
    cost = svg_labelled(page, SST_COST_LABEL)
    assert "cost of encryption (%)" in cost and "bars: 95% CI" in cost


def test_a_transfer_without_measured_limits_draws_no_limit_marks() -> None:
    summary = state_transfer_summary()
    part = summary.part("state-transfer")
    assert part is not None
    cells = [c.model_copy(update={"limits": {}}) for c in part.cells]
    svg = sst_plots.times_and_rates_svg(cells)
    assert svg is not None and "limit:" not in svg


def test_state_transfer_plots_are_the_same_bytes_when_drawn_twice() -> None:
    part = state_transfer_summary().part("state-transfer")
    assert part is not None
    assert sst_plots.times_and_rates_svg(part.cells) == sst_plots.times_and_rates_svg(part.cells)


def test_state_transfer_without_a_measured_cell_draws_no_plot() -> None:
    page = html_report.render(rendering.document(state_transfer_summary(rounds=0)))
    assert "State transfer (Galera SST)" in page
    assert "<svg" not in page


def test_the_plots_leave_the_markdown_as_it_was() -> None:
    text = markdown.render(rendering.document(state_transfer_summary()))
    assert "svg" not in text and "95% CI of each mean" not in text


# -- operations --------------------------------------------------------------------------------
def operations_part(rounds: int) -> Model:
    profile = test_operations.a_profile(
        '[server]\nencryption_scope = "all"\n[operations]\n'
        'operations = ["startup", "backup", "encrypt-existing"]\nencryption_threads = [2]\n'
    )
    runs = []
    for cell, plain in zip(operation_cells.cells(profile), (1.5, 40.0, 2.0), strict=True):
        runs += test_operations.rounds_of(cell, rounds, plain, 0.2)
    record = {"key_rotation": rotation.status(False, Path("/nonexistent"))}
    return operations.build(runs, profile, record, test_operations.CRYPTO)


def operations_page(rounds: int) -> str:
    return page_of("operations", operations_part(rounds))


def test_operations_plot_each_operations_time_plain_against_encrypted() -> None:
    page = operations_page(rounds=8)
    assert page.count("<svg") == 2
    svg = svg_labelled(page, OPERATIONS_LABEL)
    for text in ("start-up", "mariadb-backup --backup", "encrypting existing data",
                 "time (s)", "per transaction (ms)", "bars: 95% CI of each mean",
                 "no encryption", "encrypted"):  # fmt: skip
        assert text in svg, text
    assert "cost of encryption (%)" in svg_labelled(page, "Operations: cost of encryption, per row")


def test_operations_without_a_measured_operation_draw_no_plot() -> None:
    assert "<svg" not in operations_page(rounds=0)


# -- replication and rejoin --------------------------------------------------------------------
def replication_part(rounds: int) -> Model:
    profile = test_replication.a_profile(
        '[replication]\nworkloads = ["oltp_write_only"]\nthreads = [2, 8]\nmin_rounds = 2\n'
    )
    runs = []
    for i, cell in enumerate(replication_cells.cells(profile)):
        for r in range(1, rounds + 1):
            for variant in ("plain", "encrypted"):
                tps = (100.0 + 50 * i + r) * (0.8 if variant == "encrypted" else 1.0)
                run = test_replication.record(variant, tps=tps, round_=r)
                runs.append(dataclasses.replace(run, cell=cell))
    return replication.build(runs, profile, {"proofs": {}})


def replication_page(rounds: int) -> str:
    return page_of("replication", replication_part(rounds))


def test_replication_plots_tps_per_workload_plain_cluster_against_tls() -> None:
    page = replication_page(rounds=4)
    assert page.count("<svg") == 2
    svg = svg_labelled(page, REPLICATION_LABEL)
    for text in ("replication oltp_write_only 2 thr", "replication oltp_write_only 8 thr",
                 "transactions/s", "bars: 95% CI of each mean", "plain cluster",
                 "socket.ssl (TLS) cluster"):  # fmt: skip
        assert text in svg, text
    cost = svg_labelled(page, "Replication: cost of Galera's TLS, per row")
    assert "cost of TLS (%)" in cost


def test_replication_without_a_measured_cell_draws_no_plot() -> None:
    assert "<svg" not in replication_page(rounds=0)


def rejoin_part(rounds: int) -> Model:
    profile = parse(
        'name = "r"\nstudies = ["rejoin"]\n[rejoin]\ntransfers = ["ist", "sst"]\nmin_rounds = 2\n',
        "p.toml",
    )
    runs = []
    for i, cell in enumerate(rejoin_cells.cells(profile)):
        for r in range(1, rounds + 1):
            for variant in ("plain", "encrypted"):
                sync_s = (2.0 + 10 * i + r / 10) * (1.1 if variant == "encrypted" else 1.0)
                run = test_rejoin.rejoin_record(cell.transfer, cell.transfer.upper(), 2000)
                runs.append(
                    dataclasses.replace(run, cell=cell, variant=variant, round=r, sync_s=sync_s)
                )
    return rejoin.build(runs, profile, {"proofs": {}})


def rejoin_page(rounds: int) -> str:
    return page_of("rejoin", rejoin_part(rounds))


def test_rejoin_plots_time_to_synced_per_transfer_plain_cluster_against_tls() -> None:
    page = rejoin_page(rounds=4)
    assert page.count("<svg") == 2
    svg = svg_labelled(page, REJOIN_LABEL)
    for text in ("rejoin by IST", "rejoin by SST", "to Synced (s", "bars: 95% CI of each mean",
                 "plain cluster", "socket.ssl (TLS) cluster"):  # fmt: skip
        assert text in svg, text
    assert "cost of TLS (%)" in svg_labelled(page, "Rejoin: cost of Galera's TLS, per row")


def test_rejoin_without_a_measured_cell_draws_no_plot() -> None:
    assert "<svg" not in rejoin_page(rounds=0)
