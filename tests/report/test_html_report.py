"""report.html: one self-contained file with the tables and plots, quick to render, and
readable as a user sees it in a browser."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import rendering
from encbench.engine import stopping_rule
from encbench.profiles import profile
from encbench.report import documents, plots
from encbench.report import html as html_report
from encbench.report.models import Summary
from encbench.studies.at_rest import plots as at_rest_plots
from encbench.studies.at_rest import summary as at_rest
from encbench.studies.at_rest.cells import cells as at_rest_cells
from encbench.studies.at_rest.models import AtRestCell
from encbench.studies.at_rest.records import CellKey, RunRecord
from encbench.studies.at_rest.section import BUSY_SHARE, sharing_words
from tests.helpers import GOLDEN_ROOT, skip_unless_ci

GOLDEN = GOLDEN_ROOT / "report"

# cell → (complete rounds, cost of encryption as a fraction of TPS, per-round noise)
Effects = Mapping[CellKey, tuple[int, float, float]]


def synthetic_runs(effects: Effects, seed: int = 1) -> list[RunRecord]:
    """Paired runs shaped like real ones: a machine drift shared by both runs of a round, the
    encrypted run `cost` slower and spending `cost` × 1.2 more CPU per transaction, and the
    io-bound regime missing the buffer pool.  Deterministic for a seed."""
    rng = random.Random(seed)
    runs: list[RunRecord] = []
    for cell, (rounds, cost, noise) in effects.items():
        io_bound = cell.regime == "io-bound"
        base = 1100.0 * cell.threads**0.6 / (3.5 if io_bound else 1.0)
        for n in range(rounds):
            drift = rng.gauss(1.0, noise)
            order = (
                stopping_rule.VARIANTS if n % 2 == 0 else stopping_rule.VARIANTS[::-1]
            )  # blocks: AB, BA
            for position, variant in enumerate(order):
                enc = variant == "encrypted"
                jitter = rng.gauss(1.0, noise / 2)
                tps = round(base * drift * jitter * ((1.0 - cost) if enc else 1.0), 2)
                cpu = 0.5 * (3.0 if io_bound else 1.0) * (1 + 1.2 * cost if enc else 1.0)
                cpu *= rng.gauss(1.0, noise / 2)
                runs.append(_run(cell, n, variant, position, tps, cpu, io_bound))
    return runs


def _run(
    cell: CellKey, n: int, variant: str, position: int, tps: float, cpu: float, io_bound: bool
) -> RunRecord:
    wall_s = 1.0
    transactions = max(1, round(tps * wall_s))
    requests = 200 * transactions
    reads = int(requests * (0.31 if io_bound else 0.0))
    return RunRecord(
        cell=cell,
        round=n,
        variant=variant,
        position=position,
        session="golden",
        started_at=f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
        wall_s=wall_s,
        tps=tps,
        qps=round(tps * 16, 2),
        transactions=transactions,
        ignored_errors=0,
        reconnects=0,
        latency_avg_ms=round(1000.0 * cell.threads / tps, 2),
        latency_p95_ms=round(1400.0 * cell.threads / tps, 2),
        latency_max_ms=round(3000.0 * cell.threads / tps, 2),
        server_cpu_s=round(cpu * transactions / 1000.0, 4),
        cpu_ms_per_txn=cpu,
        harness_cpu_s=0.002,
        bp_read_requests=requests,
        bp_reads=reads,
        pages_read=reads,
        pages_written=0,
        raw_output=f"raw/{cell.slug}-r{n}-{variant}.txt",
    )


def golden_summary() -> Summary:
    """The summary of the golden at-rest runs (without crypto.json: no cipher floor)."""
    prof = profile.parse((GOLDEN / "profile.toml").read_text(), "profile.toml")
    runs = [
        RunRecord.from_json(json.loads(line))
        for line in (GOLDEN / "at-rest.jsonl").read_text().splitlines()
        if line.strip()
    ]
    environment = json.loads((GOLDEN / "environment.json").read_text())
    part = at_rest.build(runs, prof, json.loads((GOLDEN / "at-rest.json").read_text()), environment)
    return documents.summarize(prof.name, environment, {"at-rest": part})


def render_html(summary: Summary, crypto: dict[str, Any] | None = None) -> str:
    return html_report.render(rendering.document(summary, crypto))


def golden_crypto() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "crypto.json").read_text())
    return data


@pytest.fixture(scope="module")
def page() -> str:
    return render_html(golden_summary(), golden_crypto())


# ------------------------------------------------------------------------------- content


def test_the_page_loads_nothing_from_elsewhere(page: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I)
    assert "<script" not in page.lower()
    assert "<link" not in page.lower()
    assert "@import" not in page


def test_the_page_has_each_groups_tables_and_four_plots_plus_the_crypto_bars(page: str) -> None:
    cells = golden_cells()
    groups = {(c.workload, c.regime) for c in cells}
    measured = {(c.workload, c.regime) for c in cells if c.rounds}
    # cost, throughput, average latency, CPU per transaction
    assert page.count("<svg") == 4 * len(measured) + 1
    assert page.count("<th>avg latency ms (enc / plain)</th>") == len(measured)
    assert page.count("<th>overhead (95% CI)</th>") == len(groups)
    assert page.count("<th>server CPU ms/txn (enc / plain)</th>") == len(measured)
    assert "<h2>Crypto capacity" in page
    assert "<th>Threads</th><th>encrypted TPS</th><th>no encryption TPS</th>" in page


def test_verdict_cells_are_marked_cost_no_difference_or_inconclusive(page: str) -> None:
    for kind in ("cost", "same", "unsure", "gain"):
        assert f'class="{kind}"' in page, kind
    assert re.search(r'<td class="cost"><span class="mark"[^>]*>▲</span>\s*10\.\d% slower', page)


def golden_cells() -> list[AtRestCell]:
    part = golden_summary().part("at-rest")
    assert part is not None
    return part.cells


def test_every_text_from_the_results_is_escaped() -> None:
    data = golden_summary()
    part = data.part("at-rest")
    assert part is not None
    cells = [part.cells[0].model_copy(update={"status": "<script>alert(1)</script>"})]
    evil = data.model_copy(
        update={
            "profile": "<b>&evil</b>",
            "studies": data.studies
            | {"at-rest": part.model_copy(update={"cells": cells + part.cells[1:]})},
        }
    )
    page = render_html(evil)
    assert "<b>&evil" not in page and "&lt;b&gt;&amp;evil&lt;/b&gt;" in page
    assert "<script>" not in page


def test_a_page_without_crypto_figures_has_no_crypto_section() -> None:
    page = render_html(golden_summary())
    assert "Crypto capacity" not in page


def test_a_run_that_measured_nothing_yet_still_renders() -> None:
    prof = profile.parse((GOLDEN / "profile.toml").read_text(), "profile.toml")
    part = at_rest.build([], prof, None, None)
    page = render_html(documents.summarize(prof.name, None, {"at-rest": part}))
    assert "<svg" not in page
    assert page.count("not measured") >= 8


def test_crypto_bars_need_only_the_few_figures_of_a_quick_measurement() -> None:
    from tests.report.test_crypto import small_capacity_json

    svg = plots.crypto_svg(small_capacity_json())
    assert svg is not None and svg.startswith("<svg") and "rsa2048" in svg
    assert plots.crypto_svg({}) is None


def test_plots_are_identical_when_drawn_twice() -> None:
    cells = [c for c in golden_cells() if c.regime == "io-bound"]
    assert at_rest_plots.overhead_svg(cells, "x") == at_rest_plots.overhead_svg(cells, "x")
    assert plots.crypto_svg(golden_crypto()) == plots.crypto_svg(golden_crypto())


def test_a_thousand_runs_render_every_plot() -> None:
    # How long it takes is a benchmark, not a test: benchmarks/report_render.py.
    prof = profile.parse(
        'name = "big"\n[measure]\nworkloads = ["oltp_read_only", "oltp_point_select"]\n'
        'regimes = ["in-memory", "io-bound"]\nthreads = [1, 4, 16, 64]\nmax_rounds = 1000\n',
        "big.toml",
    )
    cells = at_rest_cells(prof)
    # 16 cells × 31 or 32 rounds × 2 variants = 1000 runs
    effects = {c: (32 if i < 4 else 31, 0.05 * (i % 3), 0.03) for i, c in enumerate(cells)}
    runs = synthetic_runs(effects)
    assert len(runs) == 1000
    part = at_rest.build(runs, prof, None, {"cpu": {"cores": 2}})
    page = render_html(documents.summarize(prof.name, None, {"at-rest": part}), golden_crypto())
    assert page.count("<svg") == 4 * 4 + 1  # four plots per group, the crypto bars


# ------------------------------------------------------------------ as a user sees it


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        skip_unless_ci("chromium is not installed: run scripts/setup-test-extras.sh (as root)")
    return found


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)


def test_in_a_browser_the_page_shows_its_tables_and_plots(page: str, tmp_path: Path) -> None:
    from PIL import Image

    report = tmp_path / "report.html"
    report.write_text(page)
    shot = tmp_path / "report.png"
    _browser(tmp_path, f"--screenshot={shot}", "--window-size=1280,2400", report.as_uri())
    with Image.open(shot) as image:
        grey = image.convert("L")
        assert grey.size == (1280, 2400)
        histogram = grey.histogram()
    ink = sum(histogram[:200]) / sum(histogram)
    assert ink > 0.01, f"the screenshot is almost blank ({ink:.2%} dark pixels)"
    assert len([n for n in histogram if n]) > 50, "the screenshot has too few grey levels"

    dom = _browser(tmp_path, "--dump-dom", report.as_uri()).stdout
    assert dom.count("<table") >= 4
    assert dom.count("<svg") == page.count("<svg")
    assert "no encryption TPS" in dom


def test_encbench_crypto_prints_the_tables_of_the_reports_crypto_section(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from click.testing import CliRunner

    from encbench import capacity, cli
    from encbench.report import crypto, markdown
    from encbench.report.tables import Section

    class Measured:  # stands in for `openssl speed` runs: a minute and more on this machine
        def to_json(self) -> dict[str, Any]:
            return golden_crypto()

    monkeypatch.setattr(capacity, "measure_capacity", lambda **_: Measured())
    printed = CliRunner().invoke(cli.main, ["crypto", "--quick"])
    assert printed.exit_code == 0, printed.output
    in_report = crypto.section(golden_crypto(), "aes-256-gcm")
    tables = [b for b in in_report.blocks if isinstance(b, Section)]
    assert [t.title for t in tables][-1] == "CPU and libraries"
    assert printed.stdout == markdown.render_blocks(tables) + "\n"


def test_a_busy_sequential_run_is_pointed_to_the_duet_and_a_quiet_one_is_not() -> None:
    part = golden_summary().part("at-rest")
    assert part is not None and part.server_starts is not None
    assert "duet" not in sharing_words(part), "the golden runs measured no round again"
    cells = part.cells
    # In 3 of 4 cells as many rounds measured again as counted: well above BUSY_SHARE.
    busy = [c.model_copy(update={"rounds_rejected": c.rounds if i % 4 else 0})
            for i, c in enumerate(cells)]  # fmt: skip
    words = sharing_words(part.model_copy(update={"cells": busy}))
    rejected = sum(c.rounds_rejected for c in busy)
    assert rejected / (rejected + sum(c.rounds for c in cells)) > BUSY_SHARE
    assert f"{rejected} of {rejected + sum(c.rounds for c in cells)} rounds" in words
    assert 'measure.sharing = "duet"' in words
    # Where a duet cannot be used, or is used, nothing is suggested.
    for update in ({"server_starts": None}, {"sharing": "duet", "server_cpus": ["0", "1"]}):
        other = part.model_copy(update={"cells": busy, **update})
        assert "runs both variants at once" not in sharing_words(other), update


def test_the_duet_is_suggested_from_a_quarter_of_the_rounds_measured_again() -> None:
    part = golden_summary().part("at-rest")
    assert part is not None
    cell = part.cells[0]

    def words(rounds: int, rejected: int, shape: str = "") -> str:
        one = cell.model_copy(
            update={"rounds": rounds, "rounds_rejected": rejected, "shape": shape}
        )
        return sharing_words(part.model_copy(update={"cells": [one]}))

    assert BUSY_SHARE == 0.25
    assert "1 of 4 rounds were measured again" in words(3, 1)
    assert "measured again" not in words(4, 1)  # 1 of 5: below a quarter
    assert "measured again" not in words(3, 1, shape="small"), "a shape pins the servers itself"
