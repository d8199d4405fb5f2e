"""encbench's command line: run, report, doctor, clean.

Every error encbench expects ends in one line on stderr and an exit status (2 for bad
input); SIGINT and SIGTERM unwind through every context manager, so servers are stopped and
what was measured stays on disk."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import NoReturn

import click

from encbench import __version__, environment, preflight, proc
from encbench import profile as profiles
from encbench.engine import rounds as plan
from encbench.engine.progress import RunProgress
from encbench.errors import BadInput, EncbenchError, Interrupted, ToolError
from encbench.net import netns
from encbench.report.documents import render_documents
from encbench.results.store import ResultStore
from encbench.servers import registry
from encbench.studies.at_rest.pair import check_disk
from encbench.studies.at_rest.study import AtRestStudy
from encbench.studies.in_transit import cells as transit_plan
from encbench.studies.in_transit.study import TransitStudy


def _raise_interrupted(signum: int, frame: FrameType | None) -> NoReturn:
    # Once: a second Ctrl-C must not cut short the clean-up that the first one started
    # (every stop step has its own timeout, so the clean-up cannot hang).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Interrupted(f"stopped by {signal.Signals(signum).name}; what was measured is kept")


def _fail(exc: EncbenchError, log_dir: Path | None = None) -> NoReturn:
    message = str(exc)
    if isinstance(exc, ToolError) and log_dir is not None and log_dir.is_dir():
        detail = log_dir / "error.log"
        detail.write_text(exc.details() + "\n")
        message += f" (details: {detail})"
    click.echo(f"encbench: {message}", err=True)
    sys.exit(exc.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="encbench")
def main() -> None:
    """What does encryption cost MariaDB on this machine, and is the difference real?"""


@main.command()
@click.argument("profile", required=False)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    help="Results directory (default: results/PROFILE-TIMESTAMP).",
)
@click.option(
    "--resume",
    "resume",
    type=click.Path(path_type=Path),
    help="Continue the run stored in this results directory.",
)
def run(profile: str | None, out: Path | None, resume: Path | None) -> None:
    """Measure encrypted vs plain servers with PROFILE and write runs.jsonl, summary.json,
    report.md and report.html.

    PROFILE is a built-in — smoke (about 2 min), quick (the default, under 15 min),
    seed-2019-decryption (about 50 min), seed-2013-ssl (connection rate by key size and
    distance, about 7 min), in-transit (every in-transit test, about 11 min) — or the path of
    a .toml file."""
    signal.signal(signal.SIGTERM, _raise_interrupted)
    signal.signal(signal.SIGINT, _raise_interrupted)
    store: ResultStore | None = None
    try:
        if resume is not None:
            if profile is not None or out is not None:
                raise BadInput(
                    "--resume takes the profile and directory from DIR: "
                    "give no PROFILE or --out with it"
                )
            store = ResultStore.open(resume)
            prof = profiles.parse(store.profile_text, str(resume / "profile.toml"))
            preflight.require_tools(prof)
            check_disk(store.path, prof)
        else:
            prof, text = profiles.load(profile or profiles.DEFAULT_PROFILE)
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            out = out or Path("results") / f"{prof.name}-{stamp}"
            # Both before the directory exists: a run that cannot start leaves nothing behind.
            preflight.require_tools(prof)
            check_disk(out, prof)
            store = ResultStore.create(out, prof.name, text)
        click.echo(
            f"encbench {__version__}: profile {prof.name}, results in {store.path}", err=True
        )
        total = plan.estimated_seconds(prof) + transit_plan.estimated_seconds(prof)
        with RunProgress(total) as progress:
            if "at-rest" in prof.studies:
                AtRestStudy(store, prof, progress).run()
            if "in-transit" in prof.studies:
                moving = TransitStudy(store, prof, progress)
                moving.on_documents = lambda: render_documents(store, prof)
                moving.progress_base_s = plan.estimated_seconds(prof)
                moving.run()
            render_documents(store, prof, with_html=True)
    except EncbenchError as exc:
        if isinstance(exc, Interrupted) and store is not None:
            # What was measured is on disk; give it its report.html too.
            render_documents(store, prof, with_html=True)
        _fail(exc, store.path / "logs" if store else None)
    click.echo(str(store.path / "report.md"))


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
def report(directory: Path) -> None:
    """Re-render summary.json, report.md and report.html of a results DIRECTORY from its
    runs.jsonl."""
    try:
        store = ResultStore.open(directory)
        prof = profiles.parse(store.profile_text, str(directory / "profile.toml"))
        render_documents(store, prof, with_html=True)
    except EncbenchError as exc:
        _fail(exc)
    click.echo(str(directory / "report.md"))
    click.echo(str(directory / "report.html"))


@main.command(name="compare")
@click.argument("dir_a", type=click.Path(path_type=Path))
@click.argument("dir_b", type=click.Path(path_type=Path))
@click.option("--label-a", help="Name of the first result set (default: its directory name).")
@click.option("--label-b", help="Name of the second result set (default: its directory name).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write comparison.json, comparison.md and comparison.html into this new directory.",
)
def compare_command(
    dir_a: Path, dir_b: Path, label_a: str | None, label_b: str | None, out: Path | None
) -> None:
    """The same cells of two result sets side by side (two machines, two versions, AES_CTR
    vs AES_CBC): the change in overhead and whether it is significant."""
    from encbench.report import compare

    try:
        summaries = []
        for directory in (dir_a, dir_b):
            data = ResultStore.open(directory).read_json("summary.json")
            if data is None:
                raise BadInput(
                    f"{directory} has no summary.json: run `encbench report {directory}`"
                )
            summaries.append(data)
        if out is not None and out.exists():
            raise BadInput(f"{out} exists: choose another --out")
        result = compare.compare(
            summaries[0], summaries[1], label_a or dir_a.name, label_b or dir_b.name
        )
    except EncbenchError as exc:
        _fail(exc)
    text = compare.render_markdown(result)
    if out is None:
        click.echo(text)
        return
    out.mkdir(parents=True)
    (out / "comparison.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "comparison.md").write_text(text)
    (out / "comparison.html").write_text(compare.render_html(result))
    click.echo(str(out / "comparison.html"))


@main.command()
def doctor() -> None:
    """Check tools, versions, AES flags and free disk; say how to fix what is missing."""
    checks = preflight.tool_checks() + preflight.machine_checks(Path.cwd())
    env = environment.collect()
    for check in checks:
        mark = "ok " if check.ok else "MISSING"
        line = f"{mark:8} {check.name}: {check.detail}"
        if check.fix:
            line += f" — fix: {check.fix}"
        click.echo(line)
    click.echo(
        f"versions: MariaDB {env['mariadb']}, {env['openssl']}, sysbench "
        f"{env['sysbench']}, kernel {env['kernel']}"
    )
    click.echo(f"cpu: {env['cpu']['model']} ({env['cpu']['cores']} cores)")
    # What only some in-transit profiles use: reported, but not a failure.
    for check in preflight.optional_transit_checks():
        mark = "ok " if check.ok else "optional"
        line = f"{mark:8} {check.name}: {check.detail}"
        click.echo(
            line + (f" — for in-transit tunnels and dumps: {check.fix}" if check.fix else "")
        )
    sys.exit(0 if all(c.ok for c in checks) else 1)


@main.command(name="crypto")
@click.option("--quick", is_flag=True, help="A few seconds: AES-GCM with and without AES-NI, RSA.")
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Also write the figures as JSON."
)
def crypto_command(quick: bool, json_path: Path | None) -> None:
    """Measure this machine's crypto capacity with openssl speed: ciphers with and without
    AES-NI, RSA/ECDSA signatures, one core and all cores."""
    from encbench import capacity as crypto

    signal.signal(signal.SIGTERM, _raise_interrupted)
    try:
        if json_path is not None and json_path.exists():
            raise BadInput(f"{json_path} exists: choose another --json path")
        capacity = crypto.measure_capacity(
            quick=quick, progress=lambda m: click.echo(m, err=True)
        ).to_json()
    except EncbenchError as exc:
        _fail(exc)
    if json_path is not None:
        json_path.write_text(json.dumps(capacity, indent=2) + "\n")
    click.echo(crypto.render_markdown(capacity))


@main.command()
@click.option(
    "--all",
    "include_live",
    is_flag=True,
    help="Also stop sandboxes whose encbench run is still alive.",
)
def clean(include_live: bool) -> None:
    """Stop servers and delete sandboxes, tunnels and network namespaces that a killed run
    left behind."""
    actions = registry.clean(include_live_runs=include_live)
    actions += proc.stop_orphans()
    # Without `ip`, encbench cannot have made namespaces either.
    with contextlib.suppress(netns.NetnsUnavailable):
        actions += netns.clean_stale()
    for line in actions or ["nothing to clean"]:
        click.echo(line)
