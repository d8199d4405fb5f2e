"""encbench's command line: run, calibrate, report, compare, crypto, doctor, clean.

Every error encbench expects ends in one line on stderr and an exit status (2 for bad
input); a stop (Ctrl-C, SIGTERM, a closed terminal: stopping.py) unwinds through every
context manager, so servers are stopped and what was measured stays on disk, and ends in
exit status 130."""

from __future__ import annotations

import contextlib
import errno
import json
import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from encbench import __version__, proc, stopping
from encbench.commands import overrides, preflight
from encbench.commands.rendering import render_documents
from encbench.engine.progress import RunProgress
from encbench.engine.runner import Runner, estimated_seconds
from encbench.errors import BadInput, EncbenchError, Interrupted, ToolError
from encbench.machine import environment, roots
from encbench.machine.checks import Check, missing_packages
from encbench.net import netns
from encbench.profiles import profile as profiles
from encbench.report import noise_floor
from encbench.results import outputs
from encbench.results.store import ResultStore
from encbench.servers import cgroup, dsn, images, keys, leftovers, registry, server_kind
from encbench.servers.local import check_path
from encbench.studies import (
    STUDIES,
    build_studies,
    check_disk,
    check_memory,
    check_out,
    left_out,
    unavailable_studies,
    without_room,
)
from encbench.studies import (
    named as named_studies,
)

if TYPE_CHECKING:  # compare draws plots: imported only by the command that needs it
    from encbench.report.compare import Comparison

CALIBRATION_PROFILE = "calibrate"  # what `encbench calibrate` runs without a PROFILE


def _fail(exc: EncbenchError, log_dir: Path | None = None, created: bool = False) -> NoReturn:
    """One line and the exit status.  `created`: something (a results directory, stored
    units, a target's databases) exists already, so even bad input found now is a failure
    (1): status 2 promises that nothing was created."""
    message = str(exc)
    if isinstance(exc, ToolError) and log_dir is not None and log_dir.is_dir():
        detail = log_dir / "error.log"
        with contextlib.suppress(OSError):  # the line below says it all the same
            detail.write_text(exc.details() + "\n")
            message += f" (details: {detail})"
    click.echo(f"encbench: {message}", err=True)
    sys.exit(1 if created and exc.exit_code == 2 else exc.exit_code)


# `encbench --help` ends with them; the README's CLI section says the same (tests/test_docs.py).
EXIT_STATUSES = (
    (0, "done"),
    (
        1,
        "measured or checked, and failed: a server, tool or proof failed during a run (the "
        "line says where the details are), or bad input found only after something was "
        "created (a results directory, a target's databases); a run left a database on "
        "its target that it could not drop (named, with the statement that drops it); "
        "doctor found a requirement missing; compare --fail-above found a cost grown "
        "beyond PCT",
    ),
    (2, "bad input, refused in one line with its fix before anything was created"),
    (130, "interrupted (Ctrl-C, SIGTERM, a closed terminal); what was measured is kept"),
)


def _epilog() -> str:
    """The exit statuses, one paragraph each ("\b": click keeps the lines as they are)."""
    lines = ["\b", "Exit status:"]
    for code, words in EXIT_STATUSES:
        lines += textwrap.wrap(words, 74, initial_indent=f"  {code:<4}", subsequent_indent=" " * 6)
    return "\n".join(lines)


def usage_line(exc: click.UsageError) -> str:
    """Click's usage error as one line with its fix ("encbench plan: no such option --out;
    see encbench plan --help"): the usage itself only on --help."""
    context = exc.ctx
    where = context.command_path if context is not None else "encbench"
    if isinstance(exc, click.NoSuchOption):
        words = f"no such option {exc.option_name}"
        if exc.possibilities:
            words += f" (did you mean {' or '.join(sorted(exc.possibilities))}?)"
    else:
        words = exc.format_message().rstrip(".")
        extra = re.fullmatch(r"Got unexpected extra arguments? \((.*)\)", words)
        takes_none = context is not None and not any(
            isinstance(p, click.Argument) for p in context.command.params
        )
        if extra and takes_none:
            words = f"takes no argument (got {extra.group(1)})"
        elif extra:
            words = f"unexpected extra argument {extra.group(1)}"
        else:
            words = words[:1].lower() + words[1:]
    return f"{where}: {words}; see {where} --help"


class _NamedContext(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Some parse errors (an option without its value) come without the command; name
        it, so that the line says which command's --help to read."""
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            exc.ctx = exc.ctx or ctx
            raise


class OneLineCommand(_NamedContext):
    pass


class OneLineGroup(click.Group, _NamedContext):
    """The group whose errors are one line each: click's usage errors (exit 2) and an OS
    error no command caught (exit 1: it came after the checks), never a traceback."""

    command_class = OneLineCommand

    def main(  # type: ignore[override]
        self, args: list[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> NoReturn:
        extra.pop("standalone_mode", None)
        # args is None: this process's own command line, not a test's call; its stop
        # handlers stay until it exits, so a signal after the command ended changes nothing.
        with stopping.stop_on_signals(to_the_end=args is None):
            status = self._status(args, prog_name, own_process=args is None, **extra)
        sys.exit(status)

    def _status(
        self, args: list[str] | None, prog_name: str | None, own_process: bool, **extra: Any
    ) -> int:
        """The command's exit status, its errors said in one line; a stop (exit 130) once its
        clean-up is done and every child it started has been seen to end."""
        try:
            status = self._command_status(args, prog_name, own_process, **extra)
            stopping.finish()
            return status
        except BaseException as exc:
            stop = stopping.raised_stop(exc)
            if stop is None:
                raise
            stopping.finish()
            click.echo(f"encbench: {stop}", err=True)
            return Interrupted.exit_code

    def _command_status(
        self, args: list[str] | None, prog_name: str | None, own_process: bool, **extra: Any
    ) -> int:
        before = proc.children()
        try:
            try:
                status = super().main(args, prog_name, standalone_mode=False, **extra)
            finally:
                # The last net under the command's clean-up: what it started and left.  Only
                # for its own process: a test's process has servers of its own.
                for line in _left_by(proc.current_run(), before) if own_process else []:
                    click.echo(f"encbench: {line}, which the clean-up had missed", err=True)
        except SystemExit as exc:
            status = exc.code
        except click.UsageError as exc:
            click.echo(usage_line(exc), err=True)
            status = 2
        except click.ClickException as exc:
            click.echo(f"encbench: {exc.format_message()}", err=True)
            status = exc.exit_code
        except click.Abort:
            status = Interrupted.exit_code
        except OSError as exc:
            status = 1
            if exc.errno != errno.EPIPE:  # stdout closed early (`| head`): nothing to say
                where = f"{exc.filename}: " if exc.filename else ""
                click.echo(f"encbench: {where}{exc.strerror or exc}", err=True)
        # A stop asked for and lost on its way up (or noted where it could not be raised) is
        # still a stop, whatever status the command ended in (a failure the stop caused):
        # it did not end as asked.
        stopping.check()
        return status if isinstance(status, int) else 0


@stopping.whole
def _left_by(run: proc.RunIdentity, besides: frozenset[Any]) -> list[str]:
    """Stop and remove what this process started and its clean-up missed (a stop at a moment
    no one owned it yet): its children but those `besides`, then its recorded sandboxes,
    groups, volumes and namespaces, in `encbench clean`'s order.  Never raises."""
    actions = proc.stop_children(besides=besides)
    for clean in (registry.clean, cgroup.clean_stale, images.clean_stale):
        with contextlib.suppress(EncbenchError, OSError):
            actions += clean(False, run)
    with contextlib.suppress(EncbenchError, OSError):
        actions += netns.clean_stale(only=run)
    return actions


@click.group(
    name="encbench",
    cls=OneLineGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    epilog=_epilog(),
)
@click.version_option(__version__, prog_name="encbench")
@click.pass_context
def main(context: click.Context) -> None:
    """What does encryption cost MariaDB on this machine, and is the difference real?"""
    if context.invoked_subcommand is None:
        # `encbench` alone asks what there is: the help, and success (click would exit 2).
        click.echo(context.get_help())


def sysbench_options(command: Callable[..., None]) -> Callable[..., None]:
    """`--threads`, `--time`, `--tables`, `--table-size`: the profile's settings in sysbench's
    words (commands/overrides.py), written into the profile this run keeps."""
    for name, metavar, words in reversed(
        [
            ("--threads", "N,N,…", "Client threads, e.g. 1,8,64, of every sysbench study"),
            ("--time", "SECONDS", "Each run's length (run_s) in every sysbench study"),
            ("--tables", "N", "sysbench tables ([data] tables)"),
            ("--table-size", "ROWS", "Rows per table ([data] table_size)"),
            (
                "--install",
                "NAME",
                "Where the sandboxes' MariaDB comes from ([server] install): system, or "
                "mariadb-11.8 from its private root (scripts/setup.sh mariadb-11.8)",
            ),
        ]
    ):
        words += ", instead of the profile's."
        command = click.option(name, metavar=metavar, help=words)(command)
    return command


def _sysbench_given(
    threads: str | None,
    time: str | None,
    tables: str | None,
    table_size: str | None,
    install: str | None = None,
) -> dict[str, str | None]:
    return {
        "threads": threads,
        "time": time,
        "tables": tables,
        "table-size": table_size,
        "install": install,
    }


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
@click.option(
    "--force",
    is_flag=True,
    help="With --resume: continue although DIR/profile.toml changed since the run began.",
)
@click.option(
    "--target",
    "target",
    metavar="DSN",
    help="Measure this server, which encbench did not start: mysql://USER@HOST:PORT/ "
    "(password from MYSQL_PWD or --defaults-extra-file, never in the DSN); in transit add "
    "?ssl-ca=CA&ssl-cert=CERT&ssl-key=KEY, for its CPU &ssh=USER@HOST[&ssh-config=FILE]. "
    "For PostgreSQL: postgresql://USER@HOST:PORT/[?sslrootcert=CA] (password from "
    "PGPASSWORD or ~/.pgpass).",
)
@click.option(
    "--defaults-extra-file",
    "defaults_file",
    type=click.Path(path_type=Path),
    help="With --target: an option file whose [client] section holds the password.",
)
@click.option(
    "--keep-databases",
    "keep",
    is_flag=True,
    help="With --target: leave encbench's databases on the server after the run.",
)
@click.option("--keep", "keep_alias", is_flag=True, hidden=True)  # its former name
@sysbench_options
def run(
    profile: str | None,
    out: Path | None,
    resume: Path | None,
    force: bool,
    target: str | None,
    defaults_file: Path | None,
    keep: bool,
    keep_alias: bool,
    threads: str | None,
    time: str | None,
    tables: str | None,
    table_size: str | None,
    install: str | None,
) -> None:
    """Measure encrypted vs plain servers with PROFILE and write DIR/<study>.jsonl,
    summary.json, report.md and report.html.

    PROFILE is a built-in (`encbench profiles` lists them with their time and whether they
    need root; by default quick) or the path of a .toml file."""
    options = TargetOptions(target, defaults_file, keep or keep_alias)
    given = _sysbench_given(threads, time, tables, table_size, install)
    _run(lambda: _open_store(profile, out, resume, force, options=options, sysbench=given))


@main.command()
@click.argument("profile", required=False)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    help="Results directory (default: results/NAME-TIMESTAMP, NAME ending in -aa).",
)
def calibrate(profile: str | None, out: Path | None) -> None:
    """A/A calibration: run PROFILE's studies with both sides identical (two identical plain
    servers; plain TCP against plain TCP) and report encbench's own false-positive rate and
    noise floor on this machine.

    PROFILE is a built-in or the path of a .toml file; by default `calibrate` (40 cells; its time:
    `encbench profiles`).  The result also goes to
    $XDG_STATE_HOME/encbench/calibration.json, whose noise floor every later report states.
    `encbench run --resume DIR` finishes an interrupted calibration."""
    _run(lambda: _open_store(profile or CALIBRATION_PROFILE, out, None, False, calibrate=True))


def _run(open_store: Callable[[], tuple[ResultStore, profiles.Profile]]) -> None:
    """One run (new, resumed or a calibration): the store, the studies, the documents."""
    store: ResultStore | None = None
    left = False
    try:
        store, prof = open_store()
        # Before any child starts: every process, sandbox and namespace of this run is
        # marked with it, so `encbench clean` can tell a live run from a dead one.
        proc.set_run_id(str(store.path))
        click.echo(
            f"encbench {__version__}: profile {prof.name}, results in {store.path}", err=True
        )
        _measure(store, prof)
        left = _say_leftovers(store.path)
    except Interrupted:
        if store is not None:
            # What was measured is on disk; give it its report.html too.  A report that
            # cannot be written now is written by `encbench report DIR`: the stop stays one.
            try:
                render_documents(store, prof, with_html=True)
            except (EncbenchError, OSError) as exc:
                click.echo(f"encbench: the report was not rewritten ({exc})", err=True)
            _say_leftovers(store.path)
        raise
    except EncbenchError as exc:
        if store is not None:
            _say_leftovers(store.path)
        _fail(exc, store.path / "logs" if store else None, created=store is not None)
    finally:
        if store is not None:
            store.unlock()
    click.echo(str(store.path / "report.md"))
    if left:
        # Measured and reported, but something of ours is still on the user's server: a
        # script must not take that for a clean end.
        sys.exit(1)


def _say_leftovers(results: Path) -> bool:
    """What this run created on the user's server and could not drop: each with the
    statement that drops it (recorded for `encbench clean --target DSN`); whether any."""
    found = leftovers.of_run(results)
    for leftover in found:
        click.echo(f"encbench: {leftover.words()}", err=True)
    return bool(found)


@dataclass(frozen=True)
class TargetOptions:
    dsn: str | None = None
    defaults_file: Path | None = None
    keep: bool = False

    def given(self) -> bool:
        return bool(self.dsn or self.defaults_file or self.keep)


def _load_profile(
    origin: str, options: TargetOptions, sysbench: Mapping[str, str | None] | None = None
) -> tuple[profiles.Profile, str, list[overrides.Override]]:
    """The profile, with the command line's target (servers/dsn.py) and its settings in
    sysbench's words (commands/overrides.py) written into its text; and what those settings
    changed."""
    prof, text = profiles.load(origin)
    if options.given():
        text = dsn.with_target(
            text, prof.target is not None, options.dsn, options.defaults_file, options.keep
        )
        prof = profiles.parse(text, origin)
    return overrides.apply(text, prof, dict(sysbench or {}), profiles.origin_words(origin))


def _open_store(
    profile: str | None,
    out: Path | None,
    resume: Path | None,
    force: bool,
    calibrate: bool = False,
    options: TargetOptions = TargetOptions(),
    sysbench: Mapping[str, str | None] | None = None,
) -> tuple[ResultStore, profiles.Profile]:
    """The results directory, locked for this run: a new one, or the one to resume.  Every
    check runs before a new directory exists: a run that cannot start leaves nothing."""
    if resume is not None:
        if profile is not None or out is not None or options.given() or _any(sysbench):
            raise BadInput(
                "--resume takes the profile, directory and target from DIR: give no PROFILE, "
                "--out, --target, --threads, --time, --tables, --table-size or --install with it"
            )
        store = ResultStore.open(resume)
        store.lock()
        try:
            store.check_profile_unchanged(force)
            prof = profiles.parse(store.profile_text, str(resume / "profile.toml"))
            here, left = _what_runs_here(prof, store.path)
            store.write_not_measured(left)
        except BaseException:
            store.unlock()
            raise
        return store, here
    if force:
        raise BadInput("--force goes with --resume: it accepts a changed profile.toml")
    origin = profile or profiles.DEFAULT_PROFILE
    prof, text, changed = _load_profile(origin, options, sysbench)
    if calibrate:
        prof, text = profiles.as_calibration(prof, text, origin)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    # A calibration of an ordinary profile must not look like a run of it.
    name = f"{prof.name}-aa" if prof.calibration and "calibrat" not in prof.name else prof.name
    out = out or Path("results") / f"{name}-{stamp}"
    outputs.check_new_directory(out, "--out")
    check_path(out)
    here, left = _what_runs_here(prof, out)
    store = ResultStore.create(
        out,
        prof.name,
        text,
        calibration=prof.calibration,
        overrides=[o.to_json() for o in changed],
    )
    store.write_not_measured(left)
    for o in changed:
        click.echo(f"encbench: {o.words()}", err=True)
    return store, here


def _any(given: Mapping[str, str | None] | None) -> bool:
    return any(v is not None for v in (given or {}).values())


def _what_runs_here(
    prof: profiles.Profile, out: Path, *, planning: bool = False
) -> tuple[profiles.Profile, dict[str, str]]:
    """The profile less what this machine leaves out (a target's studies; an optional one
    without its tools, root, disk or memory), checked; and what was left out, with why.
    `plan` asks the same (`planning`), less the target's readiness, which it prints."""
    left = left_out(prof, unavailable_studies(prof))
    left |= without_room(out, prof.without(left))
    here = prof.without(left)
    if planning:
        preflight.require_machine(here)
    else:
        preflight.require_tools(here)
    check_out(out, here)
    preflight.check_own_names(here, out)
    check_disk(out, here)
    check_memory(here)
    return here, left


def _measure(store: ResultStore, prof: profiles.Profile) -> None:
    """Every study the profile names, one after the other, on the one runner."""
    with RunProgress(0) as progress:
        for name, why in store.not_measured().items():
            progress.log(f"{name}: skipped — {why}")
        studies = build_studies(store, prof, progress)
        progress.set_total(estimated_seconds(studies))
        runner = Runner(
            store,
            progress,
            documents=lambda with_html: render_documents(store, prof, with_html=with_html),
        )
        if not prof.calibration:
            # The noise floor this run's report states: the machine's, as it is now.
            noise_floor.snapshot_noise_floor(store, prof)
        runner.run(studies)
        summary = render_documents(store, prof, with_html=True)
    if runner.complete:
        # Every cell is measured: --resume has nothing left to need the keys for.
        keys.remove_private(store.path)
        if summary.calibration is not None:
            where = noise_floor.record_finished(store, summary.calibration)
            click.echo(f"encbench: this machine's calibration is now in {where}", err=True)
    elif prof.calibration:
        click.echo(
            "encbench: the calibration is incomplete, so this machine's calibration file is "
            f"unchanged; `encbench run --resume {store.path}` finishes it",
            err=True,
        )


@main.command(name="plan")
@click.argument("profile", required=False)
@click.option("--target", "target", metavar="DSN", help="As for `encbench run`.")
@click.option("--defaults-extra-file", "defaults_file", type=click.Path(path_type=Path))
@click.option("--keep-databases", "keep", is_flag=True, help="As for `encbench run`.")
@click.option("--keep", "keep_alias", is_flag=True, hidden=True)  # its former name
@sysbench_options
def plan_command(
    profile: str | None,
    target: str | None,
    defaults_file: Path | None,
    keep: bool,
    keep_alias: bool,
    threads: str | None,
    time: str | None,
    tables: str | None,
    table_size: str | None,
    install: str | None,
) -> None:
    """Print what `encbench run` would measure — every study's cells, its rounds and budget,
    and how long it would take — and touch nothing: with a target, read-only, what its login
    and server lack and what fixes it (the GRANT statements, the key plugin's my.cnf lines),
    the load a run puts on it, the regimes its buffer pool allows, and every statement a run
    would send; no database, table, results directory or server is created."""
    from encbench.commands import plan

    try:
        prof, _, changed = _load_profile(
            profile or profiles.DEFAULT_PROFILE,
            TargetOptions(target, defaults_file, keep or keep_alias),
            _sysbench_given(threads, time, tables, table_size, install),
        )
        # Refused here as `run` would refuse it (a required study this machine cannot run,
        # too little disk or memory for the default results directory), in the same line.
        _what_runs_here(prof, Path("results"), planning=True)
        for line in [*(f"set: {o.words()}" for o in changed), *plan.lines(prof)]:
            click.echo(line)
    except EncbenchError as exc:
        _fail(exc)


@main.command(name="profiles")
def profiles_command() -> None:
    """List the built-in profiles: what each measures, its studies, how long it takes (the
    plan's estimate of the measuring, every study counted) and whether it needs root.  `encbench
    plan PROFILE` shows every cell of one."""
    from encbench.commands import catalog

    try:
        found = catalog.entries()
    except EncbenchError as exc:
        _fail(exc)
    for line in catalog.lines(found):
        click.echo(line)


@main.command(name="schema")
def schema_command() -> None:
    """Print the JSON Schema of summary.json (draft 2020-12), for programs that read it."""
    from encbench.report import summary_schema

    click.echo(summary_schema.shipped(), nl=False)


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--csv",
    "with_csv",
    is_flag=True,
    help="Also write DIRECTORY/report.csv: one row per cell and metric (cost, CI, verdict).",
)
def report(directory: Path, with_csv: bool) -> None:
    """Re-render summary.json, report.md and report.html of a results DIRECTORY from its
    results files (<study>.jsonl)."""
    try:
        store = ResultStore.open(directory)
        prof = profiles.parse(store.profile_text, str(directory / "profile.toml"))
        if not prof.calibration:
            # A directory from before snapshots: the machine's noise floor as it is now.
            noise_floor.snapshot_noise_floor(store, prof)
        summary = render_documents(store, prof, with_html=True)
    except EncbenchError as exc:
        _fail(exc)
    click.echo(str(directory / "report.md"))
    click.echo(str(directory / "report.html"))
    if with_csv:
        from encbench.report import table_csv

        try:
            store.write_text("report.csv", table_csv.render(summary))
        except OSError as exc:
            _fail(outputs.WriteFailed(f"cannot write {directory / 'report.csv'}: {exc.strerror}"))
        click.echo(str(directory / "report.csv"))


@main.command(name="compare")
@click.argument("dir_a_text", metavar="DIR_A")  # text: "" is refused, not read as "."
@click.argument("dir_b_text", metavar="DIR_B")
@click.option("--label-a", help="Name of the first result set (default: its directory name).")
@click.option("--label-b", help="Name of the second result set (default: its directory name).")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Write comparison.json, comparison.md and comparison.html into this new directory.",
)
@click.option(
    "--fail-above",
    "fail_above",
    metavar="PCT",
    help="Exit 1 when a cell's cost grew from A to B by more than PCT percentage points and "
    "the change is significant; name those cells.",
)
def compare_command(
    dir_a_text: str,
    dir_b_text: str,
    label_a: str | None,
    label_b: str | None,
    out: Path | None,
    fail_above: str | None,
) -> None:
    """The same cells of two result sets side by side (two machines, two versions, AES_CTR
    vs AES_CBC): the change in overhead and whether it is significant."""
    from encbench.commands import rendering
    from encbench.report import compare, regressions

    try:
        limit = None if fail_above is None else regressions.threshold(fail_above)
        for option, text in (("DIR_A", dir_a_text), ("DIR_B", dir_b_text)):
            if not text.strip():
                raise BadInput(
                    f"{option} is empty: give the results directory of a run, e.g. "
                    "results/quick-YYYYMMDD-HHMMSS"
                )
        dir_a, dir_b = Path(dir_a_text), Path(dir_b_text)
        summaries = []
        for directory in (dir_a, dir_b):
            data = rendering.summary_to_compare(ResultStore.open(directory))
            if data is None:
                raise BadInput(
                    f"{directory} has no summary.json: run `encbench report {directory}`"
                )
            summaries.append(data)
        if out is not None:
            if out.exists():
                raise BadInput(f"{out} exists: choose another --out")
            outputs.check_new_directory(out, "--out")
        result = rendering.compare(
            summaries[0], summaries[1], label_a or dir_a.name, label_b or dir_b.name
        )
        text = compare.render_markdown(result)
        if out is None:
            click.echo(text)
        else:
            outputs.make_directory(out)
            outputs.write_text(
                out / "comparison.json", json.dumps(result.to_json(), indent=2) + "\n"
            )
            outputs.write_text(out / "comparison.md", text)
            outputs.write_text(out / "comparison.html", compare.render_html(result))
            click.echo(str(out / "comparison.html"))
    except EncbenchError as exc:
        _fail(exc)
    if limit is not None:
        _fail_above(result, limit)


def _fail_above(result: Comparison, limit: float) -> None:
    """Exit 1, naming them, when cells' cost grew by more than `limit` points (significant)."""
    from encbench.report import regressions

    found = regressions.grown(result, limit)
    matched = regressions.matched(result)
    if not found:
        click.echo(
            f"encbench: no cost grew by more than {limit:g} pp with a significant change "
            f"({matched} cells measured in both)",
            err=True,
        )
        return
    click.echo(
        f"encbench: {len(found)} cost(s) grew by more than {limit:g} pp, the change "
        f"significant ({matched} cells measured in both):",
        err=True,
    )
    for grown in found:
        click.echo(f"  {grown.words()}", err=True)
    sys.exit(1)


@main.command()
@click.argument("profile", required=False)
@click.option(
    "--packages",
    "packages_only",
    is_flag=True,
    help="Only list the Debian packages PROFILE needs that are missing, one per line (what "
    "`scripts/setup.sh PROFILE` installs).",
)
def doctor(profile: str | None, packages_only: bool) -> None:
    """Check tools, versions, AES flags and free disk, and what each study of PROFILE (by
    default quick) needs of this machine, grouped by study; say how to fix what is missing.
    Without PROFILE also what other studies use.  Exit status 1 when something a run of
    PROFILE requires is missing (an optional study is only named)."""
    try:
        prof, _ = profiles.load(profile or profiles.DEFAULT_PROFILE)
    except EncbenchError as exc:
        _fail(exc)
    if packages_only:
        # Optional studies' too: whoever names the profile wants all of it.
        needed = preflight.tool_checks() + [
            check for study in named_studies(prof) for check in study.machine_needs(prof)
        ]
        needed += [
            check
            for study in named_studies(prof)
            for found in study.here.optional_cells(prof).values()
            for check in found
        ]
        for package in missing_packages(needed):
            click.echo(package)
        return
    checks = preflight.tool_checks() + preflight.machine_checks(Path.cwd())
    env = environment.collect(server_kind.installed_versions())
    click.echo("every run:")
    for check in checks:
        _echo_check(check, "MISSING", "fix")
    # The versions of what the profile's studies run: their server kinds', and sysbench
    # where one drives it.
    measured = {k for study in named_studies(prof) for k in study.kinds_in(prof)}
    kinds = [k for k in server_kind.kinds() if k.name in measured]
    versions = [f"{k.title} {env.get(k.name) or 'not installed'}" for k in kinds]
    versions.append(str(env["openssl"]))
    if any("sysbench" in k.load_clients for k in kinds):
        versions.append(f"sysbench {env['sysbench']}")
    click.echo(f"versions: {', '.join(versions)}, kernel {env['kernel']}")
    click.echo(f"cpu: {env['cpu']['model']} ({env['cpu']['cores']} cores)")
    required_ok = all(c.ok for c in checks)
    seen = {check.name for check in checks}
    for study in named_studies(prof):
        optional = study.here.optional(prof)
        needs = [check for check in study.machine_needs(prof) if check.name not in seen]
        shown = "optional" if optional else "required"
        click.echo(f"{study.name} ({shown}):" + ("" if needs else " nothing more than above"))
        for check in needs:
            seen.add(check.name)
            mark = "optional" if optional else "MISSING"
            _echo_check(check, mark, f"for {study.name}, fix")
            required_ok &= check.ok or optional
        # What the run leaves out of it without them, the rest measured: named, never failing.
        for what, found in study.here.optional_cells(prof).items():
            more = [check for check in found if check.name not in seen]
            click.echo(
                f"{study.name}, {what} (optional):" + ("" if more else " nothing more than above")
            )
            for check in more:
                seen.add(check.name)
                _echo_check(check, "optional", f"for {study.name}, {what}, fix")
    if profile is None:
        # No profile named: what other studies and profiles use too, as a failure never.
        others: dict[str, tuple[Check, str]] = {}
        for study in STUDIES:
            for check, what in study.here.optional_tools():
                if check.name not in seen:
                    others.setdefault(check.name, (check, what))
        if others:
            click.echo("other studies and profiles (optional):")
        for check, what in others.values():
            _echo_check(check, "optional", what)
        _echo_roots()
    sys.exit(0 if required_ok else 1)


def _echo_roots() -> None:
    """The newer servers encbench runs from private roots (machine/roots.py): built, or how to."""
    click.echo("newer servers from private roots (optional; to measure as --target):")
    for spec in roots.SPECS:
        found = roots.find(spec.name)
        if found is not None:
            click.echo(f"{'ok':8} {spec.title}: {found.version} in {found.path}")
        else:
            click.echo(f"{'optional':8} {spec.title}: {roots.missing_why(spec.name)}")


def _echo_check(check: Check, missing: str, fix_words: str) -> None:
    mark = "ok " if check.ok else missing
    line = f"{mark:8} {check.name}: {check.detail}"
    click.echo(line + (f" — {fix_words}: {check.fix}" if check.fix else ""))


@main.command(name="crypto")
@click.option("--quick", is_flag=True, help="A few seconds: AES-GCM with and without AES-NI, RSA.")
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Also write the figures as JSON."
)
def crypto_command(quick: bool, json_path: Path | None) -> None:
    """Measure this machine's crypto capacity with openssl speed: ciphers with and without
    AES-NI, RSA/ECDSA signatures, one core and all cores."""
    from encbench import capacity as crypto
    from encbench.report import crypto as crypto_report

    try:
        if json_path is not None:
            outputs.check_new_file(json_path, "--json")
        capacity = crypto.measure_capacity(
            quick=quick, progress=lambda m: click.echo(m, err=True)
        ).to_json()
        # The table first: a --json that can no longer be written loses only its copy.
        click.echo(crypto_report.render_markdown(capacity))
        if json_path is not None:
            outputs.write_text(json_path, json.dumps(capacity, indent=2) + "\n")
    except EncbenchError as exc:
        _fail(exc)


@main.command(name="estimate")
@click.option(
    "--prometheus",
    metavar="URL",
    help="Instead of --target: every instance mysqld_exporter or postgres_exporter reports to "
    "this Prometheus (credentials from ENCBENCH_PROMETHEUS_TOKEN, or _USER and _PASSWORD, "
    "or a file).",
)
@click.option("--since", metavar="DURATION", help="With --prometheus: the window (default 7d).")
@click.option(
    "--step", metavar="DURATION", help="With --prometheus: its step windows (default 5m)."
)
@click.option(
    "--match",
    metavar="SELECTOR",
    help="With --prometheus: only the exporters' series matching it, e.g. '{job=\"mysql\"}'.",
)
@click.option(
    "--rules",
    is_flag=True,
    help="Print Prometheus recording rules computing the estimate from mysqld_exporter's "
    "and postgres_exporter's series with this machine's unit costs (with --step, --match, "
    "--scope).",
)
@click.option(
    "--prometheus-credentials",
    "credentials",
    type=click.Path(path_type=Path),
    help="With --prometheus: a file of ENCBENCH_PROMETHEUS_TOKEN=… (or _USER=, _PASSWORD=) lines.",
)
@click.option(
    "--target",
    "target",
    metavar="DSN",
    help="The server to estimate, as for `encbench run` (mysql://USER@HOST:PORT/, password "
    "from MYSQL_PWD or --defaults-extra-file, ?ssh=USER@HOST to read its CPU there; or "
    "postgresql://USER@HOST:PORT/DB, password from PGPASSWORD or ~/.pgpass).",
)
@click.option(
    "--defaults-extra-file",
    "defaults_file",
    type=click.Path(path_type=Path),
    help="With --target: an option file whose [client] section holds the password.",
)
@click.option(
    "--seconds", type=int, default=60, show_default=True, help="How long to read its counters."
)
@click.option(
    "--scope",
    type=click.Choice(["tables", "all"]),
    default="tables",
    show_default=True,
    help="Encryption at rest of InnoDB's tables, or also its redo log and binary log "
    "(PostgreSQL: its data files, or also its WAL).",
)
@click.option(
    "--units-from",
    "units_from",
    multiple=True,
    metavar="DIR|LABEL=VALUE:FILE",
    help="Take this machine's unit costs from a finished results directory, and keep them.  "
    "With --prometheus, LABEL=VALUE:FILE (repeatable, one label) estimates the instances "
    "whose LABEL is VALUE with the units measured on a host of their class (FILE: the "
    "estimate-units.json --measure-units kept there, or its results directory); the others "
    "with this machine's.",
)
@click.option(
    "--measure-units",
    is_flag=True,
    help="Measure the unit costs first, on sandboxed servers (about 13 minutes), and keep them.",
)
@click.option(
    "--units-profile",
    metavar="PROFILE|FILE",
    help="With --measure-units: the profile to measure them with (default estimate-units; "
    "PostgreSQL's on fscrypt: estimate-units-postgresql).",
)
@click.option(
    "--validate",
    "validate_dir",
    type=click.Path(path_type=Path),
    help="Hold the model against the measured runs of a results directory instead.",
)
@click.option(
    "--json", "json_path", type=click.Path(path_type=Path), help="Also write it all as JSON."
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="With --prometheus: write estimate.md, .json, .csv and .html (with plots) into this "
    "directory, and print their paths.",
)
def estimate_command(
    prometheus: str | None,
    since: str | None,
    step: str | None,
    match: str | None,
    rules: bool,
    credentials: Path | None,
    target: str | None,
    defaults_file: Path | None,
    seconds: int,
    scope: str,
    units_from: tuple[str, ...],
    measure_units: bool,
    units_profile: str | None,
    validate_dir: Path | None,
    json_path: Path | None,
    out: Path | None,
) -> None:
    """What encryption at rest and TLS would cost a server at its own load, from its own
    status counters over --seconds, with no load put on it and nothing changed there: the
    extra CPU per cause (table reads and writes, redo and binary log, TLS handshakes and
    bytes) from this machine's measured unit costs, with intervals.  MariaDB, MySQL and
    PostgreSQL; one server (--target) or every one a Prometheus watches (--prometheus)."""
    from encbench.estimate import command, units

    log: Callable[[str], None] = lambda m: click.echo(m, err=True)  # noqa: E731
    created = False
    try:
        directory, classes = command.split_units_from(units_from)
        options = command.Options(
            target, defaults_file, seconds, "all" if scope == "all" else "tables", directory,
            measure_units, units_profile, validate_dir, json_path, prometheus, since, step,
            match, credentials, rules, out, classes,
        )  # fmt: skip
        # Everything that can refuse, before minutes of measuring and before anything is kept:
        # the options, the target (reachable, login, counters), the directory's units.
        options.check()
        if target:
            command.check_target(options, log)
        if prometheus:
            command.reach_prometheus(options, log)
        found = units.from_directory(directory) if directory is not None else None
        if measure_units:
            units_dir = command.units_directory(units_profile)
            # The run's own lines go to stderr: stdout is the estimate's.
            with contextlib.redirect_stdout(sys.stderr):
                _run(
                    lambda: _open_store(
                        units_profile or command.UNITS_PROFILE, units_dir, None, False
                    )
                )
            created = True
            found = units.from_directory(units_dir)
        created = created or found is not None
        command.run(options, found, click.echo, log)
    except EncbenchError as exc:
        _fail(exc, created=created)


@main.command()
@click.option(
    "--stop-live-runs",
    "include_live",
    is_flag=True,
    help="Also stop the servers, tunnels and namespaces of encbench runs still alive: those "
    "runs fail.",
)
@click.option("--all", "all_alias", is_flag=True, hidden=True)  # its former name
@click.option(
    "--target",
    "target",
    metavar="DSN",
    help="Instead: drop the databases encbench created on this server and could not drop "
    "(it had gone away); the password as for `encbench run --target`.",
)
@click.option(
    "--defaults-extra-file",
    "defaults_file",
    type=click.Path(path_type=Path),
    help="With --target: an option file whose [client] section holds the password.",
)
def clean(
    include_live: bool, all_alias: bool, target: str | None, defaults_file: Path | None
) -> None:
    """Stop servers and delete sandboxes, tunnels, network namespaces and filesystem images
    (their keys removed, unmounted, loop devices detached) that a killed run left behind; a
    live run's are left alone unless --stop-live-runs.  With --target DSN: drop what runs
    against that server recorded as left there."""
    if target is not None or defaults_file is not None:
        from encbench.commands import clean_target

        try:
            if target is None or include_live or all_alias:
                raise BadInput(
                    "--target DSN drops what runs left on that server: give it alone, with "
                    "--defaults-extra-file at most"
                )
            lines, failed = clean_target.drop_recorded(target, defaults_file)
        except EncbenchError as exc:
            _fail(exc)
        for line in lines:
            click.echo(line)
        sys.exit(1 if failed else 0)
    actions = registry.clean(include_live_runs=include_live or all_alias)
    actions += proc.stop_orphans()
    # After the servers and the orphans (a server killed before its run recorded it is one):
    # the kernel removes only a group that no process is in any more.
    actions += cgroup.clean_stale(include_live_runs=include_live or all_alias)
    # After the servers: an image is unmounted only once nothing holds a file open on it.
    actions += images.clean_stale(include_live_runs=include_live or all_alias)
    # Without `ip`, encbench cannot have made namespaces either.
    with contextlib.suppress(netns.NetnsUnavailable):
        actions += netns.clean_stale()
    for line in actions or ["nothing to clean"]:
        click.echo(line)
