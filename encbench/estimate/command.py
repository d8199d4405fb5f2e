"""What `encbench estimate` does, in order: refuse bad input before anything runs; take unit
costs from a results directory where asked (--units-from, or the run --measure-units made)
into this machine's state; then, with a target, log in, check the counters it needs, read
the window, re-measure the cipher's part of the units where the server's host or cipher
differs, and print the estimate.  Nothing is created or changed on the server: it is only
asked SHOW GLOBAL STATUS, SHOW GLOBAL VARIABLES and its session's byte counters over one
connection (and SHOW GRANTS only where a needed counter is missing); a target of a kind
with its own part of the estimate (estimate/kinds.py) only what that part reads."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from encbench import capacity
from encbench.errors import BadInput
from encbench.estimate import (
    counters,
    fleet,
    fleet_out,
    fleet_series,
    kind_fleet,
    kind_target,
    kinds,
    model,
    prometheus,
    prometheus_api,
    report,
    rescale,
    rules,
    unit_classes,
    units,
    validate,
)
from encbench.estimate.prometheus import Asked
from encbench.profiles.profile import TargetSpec
from encbench.results import outputs
from encbench.servers import dsn, remote_cpu, server_kind

DEFAULT_SINCE = "7d"
DEFAULT_STEP = "5m"
# A week in minutes is 10,080: beyond this many step windows a subquery costs Prometheus
# more than a fleet's answer is worth.
MAX_STEPS = 20_000
UNITS_PROFILE = "estimate-units"  # the built-in profile --measure-units runs
LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})

Echo = Callable[[str], None]
# The one command that makes an estimate possible on a machine that has no units yet.
NO_UNITS_FIX = (
    "run `encbench estimate --measure-units` once (about 13 minutes; kept for every later "
    "estimate), then this command again"
)


@dataclass(frozen=True)
class Options:
    target: str | None = None
    defaults_file: Path | None = None
    seconds: int = 60
    scope: model.Scope = "tables"
    units_from: Path | None = None
    measure_units: bool = False
    units_profile: str | None = None
    validate: Path | None = None
    json_path: Path | None = None
    prometheus: str | None = None
    since: str | None = None
    step: str | None = None
    match: str | None = None
    credentials: Path | None = None
    rules: bool = False
    out: Path | None = None  # with --prometheus: estimate.md/.json/.csv/.html there
    unit_classes: tuple[str, ...] = ()  # --units-from LABEL=VALUE:FILE (unit_classes.py)

    def check(self) -> None:
        """Every refusal that needs no server and no run, in one line with its fix."""
        self.check_rules()
        self.check_prometheus()
        self.check_unit_classes()
        if self.validate is not None and (self.target or self.units_from or self.measure_units):
            raise BadInput(
                "--validate DIR checks the model on DIR's runs alone: give it without "
                "--target, --units-from or --measure-units"
            )
        if self.units_from is not None and self.measure_units:
            raise BadInput("give --units-from DIR or --measure-units, not both")
        if self.units_profile is not None and not self.measure_units:
            raise BadInput("--units-profile goes with --measure-units: add it, or leave it out")
        if self.defaults_file is not None and not self.target:
            raise BadInput("--defaults-extra-file goes with --target: add --target DSN")
        if not (
            self.target
            or self.prometheus
            or self.rules
            or self.units_from
            or self.measure_units
            or self.validate
        ):
            raise BadInput(
                "nothing to do: give --target DSN (the server to estimate), --prometheus URL "
                "(a fleet) or --rules (Prometheus's recording rules), --units-from DIR or "
                "--measure-units (unit costs for later estimates), or --validate DIR"
            )
        if self.json_path is not None and not (self.target or self.prometheus or self.validate):
            raise BadInput(
                "--json writes an estimate or a validation: add --target, --prometheus or "
                "--validate"
            )
        if self.json_path is not None:
            outputs.check_new_file(self.json_path, "--json")
        counters.check_seconds(self.seconds)
        if self.target:
            self.spec()
        wants_units = self.target or self.prometheus or self.rules
        has_units = self.units_from or self.measure_units or self.unit_classes
        if wants_units and not (has_units or units.read_machine()):
            raise BadInput(f"no unit costs are stored on this machine yet: {NO_UNITS_FIX}")
        for directory in (self.units_from, self.validate):
            if directory is not None:
                units.open_directory(directory)

    def check_unit_classes(self) -> None:
        if not self.unit_classes:
            return
        if not self.prometheus:
            raise BadInput(
                f"--units-from {self.unit_classes[0]}: a class's units are for the instances of "
                "a fleet that carry its label: add --prometheus URL, or give a results "
                "directory as --units-from DIR"
            )
        unit_classes.load(self.unit_classes)

    def check_rules(self) -> None:
        if not self.rules:
            return
        for name, given in (
            ("--target", self.target), ("--prometheus", self.prometheus),
            ("--validate", self.validate), ("--since", self.since), ("--json", self.json_path),
            ("--prometheus-credentials", self.credentials),
        ):  # fmt: skip
            if given is not None:
                raise BadInput(
                    f"--rules prints recording rules (with --step, --match, --scope): leave "
                    f"out {name}"
                )
        self.rules_step()
        prometheus_api.label_matchers(self.match)

    def rules_step(self) -> str:
        step = self.step or DEFAULT_STEP
        prometheus_api.duration_s(step, "--step")
        return step

    def check_prometheus(self) -> None:
        if not self.prometheus:
            offered: tuple[tuple[str, object], ...] = (
                ("--since", self.since),
                ("--prometheus-credentials", self.credentials),
                ("--out", self.out),
            )
            if not self.rules:
                offered += (("--step", self.step), ("--match", self.match))
            for name, given in offered:
                if given is not None:
                    raise BadInput(f"{name} goes with --prometheus: add --prometheus URL")
            return
        if self.target or self.validate is not None:
            raise BadInput(
                "give --prometheus URL (a fleet, from its exporters) or --target DSN (one "
                "server, read directly) or --validate DIR, one at a time"
            )
        prometheus_api.check_url(self.prometheus)
        self.asked(end=0.0)
        prometheus_api.authorization(os.environ, self.credentials)
        if self.out is not None:
            fleet_out.check(self.out)

    def asked(self, end: float) -> Asked:
        """The Prometheus window: --since up to `end`, in --step windows."""
        since = prometheus_api.duration_s(self.since or DEFAULT_SINCE, "--since")
        step = prometheus_api.duration_s(self.step or DEFAULT_STEP, "--step")
        if step > since:
            raise BadInput(
                f"--step {self.step or DEFAULT_STEP} is longer than --since "
                f"{self.since or DEFAULT_SINCE}: give a step that divides the window"
            )
        if since / step > MAX_STEPS:
            raise BadInput(
                f"--since/--step gives {since / step:,.0f} step windows per series: give at "
                f"most {MAX_STEPS:,} (a longer --step)"
            )
        return Asked(
            end=end,
            since_s=since,
            step_s=step,
            matchers=prometheus_api.label_matchers(self.match),
        )

    def spec(self) -> TargetSpec:
        assert self.target is not None
        fields = dsn.parse_dsn(self.target)
        if fields.get("kind", kinds.first_kind().name) not in kinds.readable():
            title = server_kind.named(fields["kind"]).title
            read = [server_kind.named(name) for name in kinds.readable()]
            titles = [f"{k.title}'s" for k in read]
            words = ", ".join(titles[:-1]) + " and " + titles[-1] if len(titles) > 1 else titles[0]
            schemes = [f"{k.schemes[0]}://" for k in read]
            raise BadInput(
                f"--target: the estimate reads {words} counters, not {title}'s; give a "
                f"{' or '.join(schemes)}USER@HOST:PORT/ target"
            )
        if self.defaults_file is not None:
            dsn.refuse_option_file(fields)
            fields["defaults_extra_file"] = str(self.defaults_file.absolute())
        try:
            return TargetSpec.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise BadInput(
                f"--target: {first['msg']}; write it as "
                f"{kinds.first_kind().schemes[0]}://USER@HOST:PORT/"
            ) from None


def split_units_from(given: tuple[str, ...]) -> tuple[Path | None, tuple[str, ...]]:
    """--units-from's values: at most one results directory, and the classes' LABEL=VALUE:FILE
    (a cli error is raised in one line where two directories are given)."""
    classes = tuple(g for g in given if unit_classes.is_class(g))
    directories = [Path(g) for g in given if not unit_classes.is_class(g)]
    if len(directories) > 1:
        raise BadInput(
            f"--units-from {directories[1]}: one results directory gives this machine's "
            "units; give one (a class's units are LABEL=VALUE:FILE)"
        )
    return (directories[0] if directories else None), classes


def units_directory(profile: str | None) -> Path:
    """Where --measure-units writes its run: results/NAME-TIMESTAMP, as `encbench run`."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = Path(profile).stem if profile else UNITS_PROFILE
    return Path("results") / f"{name}-{stamp}"


def _write_json(path: Path | None, data: object) -> None:
    if path is not None:
        outputs.write_text(path, json.dumps(data, indent=2) + "\n")


def store_units(found: units.DirectoryUnits, out: Echo, log: Echo, quiet: bool) -> None:
    """A directory's units into this machine's state; their table to stdout unless an
    estimate follows (its own table names them)."""
    try:
        where = units.write_machine(found.units)
    except OSError as exc:
        raise outputs.WriteFailed(
            f"cannot write {units.machine_file()}: {exc.strerror or exc}"
        ) from exc
    log(f"encbench: unit costs from {found.directory} stored in {where}")
    for name, why in found.missing.items():
        log(f"encbench: no {name.replace('_', ' ')} unit there: {why}")
    if not quiet:
        out(report.render_units(found, str(where)))


@contextlib.contextmanager
def server_cpu(
    spec: TargetSpec, pid_file: str, log: Echo
) -> Iterator[tuple[remote_cpu.SshCpu | None, str, int | None]]:
    """The server's CPU reader over ssh where the DSN allows it, how it is read, and its
    host's CPUs; (None, why not, None) otherwise."""
    if not spec.ssh:
        yield None, "not read (add ssh=USER@HOST to the DSN to read it on its host)", None
        return
    with tempfile.TemporaryDirectory(prefix="encbench-estimate-") as scratch:
        cpu = remote_cpu.SshCpu(spec.ssh, spec.ssh_config, Path(scratch) / "ssh.log")
        try:
            log(f"encbench: server CPU from /proc/PID/stat on {spec.ssh} over ssh ({pid_file})")
            cpu.open(pid_file)
            cores = int(cpu.ask("getconf _NPROCESSORS_ONLN"))
            words = f"{cpu.source} of pid {cpu.pid} on {spec.ssh}, over one open ssh connection"
            yield cpu, words, cores
        finally:
            cpu.close()


def hosts_for(spec: TargetSpec, cpu: remote_cpu.SshCpu | None) -> rescale.Hosts:
    if cpu is not None:
        return rescale.Hosts(
            here=rescale.local_speed, there=rescale.remote_speed(cpu.ask), same_host=False
        )
    same = bool(spec.socket) or spec.host in LOOPBACK
    return rescale.Hosts(
        here=rescale.local_speed,
        there=None,
        same_host=same,
        why_not="its openssl speed needs ssh=USER@HOST in the DSN",
    )


def server_cipher(variables: dict[str, str]) -> str | None:
    """The server's own cipher at rest, where its settings name one (its key management
    plugin's)."""
    algorithm = variables.get(kinds.first().CIPHER, "").upper()
    return capacity.SERVER_CIPHERS.get(algorithm)


def _where(spec: TargetSpec) -> str:
    return spec.socket or f"{spec.host}:{spec.port}"


def check_target(options: Options, log: Echo) -> None:
    """Before any local measuring and before anything is stored: the target answers, takes
    the login, and shows the counters the estimate needs (one short connection)."""
    spec = options.spec()
    part = kinds.of(spec.kind)
    if part is not None:
        part.check(spec)
    else:
        first = kinds.first()
        with first.session(spec) as session:
            first.check_counters(session.status(), session.grants, spec.user)
    log(f"encbench: {_where(spec)} as {spec.user}: reachable, its counters visible")


def estimate_target(options: Options, out: Echo, log: Echo) -> None:
    stored = units.read_machine()
    if not stored:
        raise BadInput(f"no unit costs are stored on this machine yet: {NO_UNITS_FIX}")
    spec = options.spec()
    part = kinds.of(spec.kind)
    if part is not None:
        # No CPU over ssh yet: the handshake's cipher part is not rescaled to its host.
        hosts = hosts_for(spec, None)
        resolved = {name: rescale.resolve(u, hosts, None) for name, u in stored.items()}
        built = kind_target.estimate(part, spec, options.seconds, options.scope, resolved, log)
        _write_json(options.json_path, built.model_dump(mode="json"))
        out(report.render_markdown(built))
        return
    first = kinds.first()
    target = _where(spec)
    with first.session(spec) as session:
        first.check_counters(session.status(), session.grants, spec.user)
        variables = session.variables()
        log(
            f"encbench: {target} as {spec.user}: reading its status every "
            f"{counters.SAMPLE_S:.0f} s for {options.seconds} s (nothing is changed on it)"
        )
        with server_cpu(spec, variables.get(first.PID_FILE, ""), log) as (cpu, words, cores):
            window = counters.sample_window(first, session, options.seconds, cpu, words, log)
            window = window.model_copy(update={"host_cores": cores})
            # After the window: openssl speed on the server's host must not land in its CPU.
            hosts = hosts_for(spec, cpu)
            cipher = server_cipher(window.variables)
            resolved = {
                name: rescale.resolve(u, hosts, cipher)
                for name, u in stored.items()
                if name not in kinds.others_units()  # other kinds' alone
            }
    result = model.estimate(window.intervals, resolved, options.scope)
    built = report.build(target, window, result, resolved)
    _write_json(options.json_path, built.model_dump(mode="json"))
    out(report.render_markdown(built))


def _client(options: Options) -> prometheus_api.Prometheus:
    assert options.prometheus is not None
    url = prometheus_api.check_url(options.prometheus)
    return prometheus_api.Prometheus(
        url, prometheus_api.authorization(os.environ, options.credentials)
    )


def reach_prometheus(options: Options, log: Echo) -> None:
    """Before any local measuring: Prometheus answers a query with these credentials."""
    client = _client(options)
    client.query("vector(1)", time.time())
    # A class no instance has is refused now, in one line, before any word of progress.
    instance_classes(options, client, options.asked(end=time.time()))
    log(f"encbench: {client.url}: answers")


def estimate_fleet(options: Options, out: Echo, log: Echo) -> None:
    """The fleet's estimate from Prometheus: a few dozen queries, each reduced there to one
    value per instance."""
    stored = units.read_machine()
    if not stored and not options.unit_classes:
        raise BadInput(f"no unit costs are stored on this machine yet: {NO_UNITS_FIX}")
    client = _client(options)
    url = client.url
    asked = options.asked(end=time.time())
    asking = prometheus.queries(asked) | kind_fleet.all_queries(asked)
    log(
        f"encbench: {url}: {len(asking)} queries over the last {options.since or DEFAULT_SINCE} "
        f"in {options.step or DEFAULT_STEP} steps (Prometheus reduces them; nothing is written)"
    )
    answers = prometheus.ask_all(client, asking, asked.end)
    hosts = rescale.Hosts(
        here=rescale.local_speed, there=None, same_host=False, why_not=fleet.NOT_RESCALED
    )
    resolved = {name: rescale.resolve(u, hosts, None) for name, u in stored.items()}
    classes = classes_of(options, client, asked, hosts)
    others = kind_fleet.estimates(answers, asked, resolved, options.scope)
    first = {k: v for k, v in answers.items() if not kind_fleet.is_theirs(k)}
    built = fleet.build(
        url, asked, options.match or "", first, resolved, options.scope, classes,
        [e for _, e in others],
    )  # fmt: skip
    _write_json(options.json_path, built.model_dump(mode="json"))
    if options.out is None:
        out(fleet.render_markdown(built))
        return
    # The series sums each kind's instances, and each class's at its own units, in PromQL.
    theirs = {e.instance: kind for kind, e in others}  # instance → its kind's name
    present = fleet_series.Kinds(
        first=any(e.instance not in theirs for e in built.instances),
        others=frozenset(theirs.values()),
    )
    by_class = {c.name: c.units for c in classes.values()}  # name: LABEL=VALUE
    series_classes = [
        fleet_series.ClassSeries(*_label_value(name), by_class[name]) for name in sorted(by_class)
    ]
    series = fleet_out.over_time(client, asked, resolved, built, log, present, series_classes)
    for path in fleet_out.write(options.out, built, series):
        out(str(path))


def _label_value(name: str) -> tuple[str, str]:
    """LABEL=VALUE (a label's name has no `=`; its value may)."""
    label, _, value = name.partition("=")
    return label, value


def instance_classes(
    options: Options, client: prometheus_api.Prometheus, asked: Asked
) -> dict[str, unit_classes.UnitClass]:
    """instance → its class (--units-from LABEL=VALUE:FILE), from one more query; a class no
    instance has is refused."""
    if not options.unit_classes:
        return {}
    given = unit_classes.load(options.unit_classes)
    samples = client.query(unit_classes.query(given[0].label, asked), asked.end)
    return unit_classes.of_instances(given, samples)


def classes_of(
    options: Options, client: prometheus_api.Prometheus, asked: Asked, hosts: rescale.Hosts
) -> dict[str, fleet.ClassUnits]:
    """instance → the units of its class, as the fleet's estimate uses them."""
    return {
        instance: fleet.ClassUnits(
            c.name,
            str(c.source),
            {name: rescale.resolve(u, hosts, None) for name, u in c.units.items()},
        )
        for instance, c in instance_classes(options, client, asked).items()
    }


def run(options: Options, found: units.DirectoryUnits | None, out: Echo, log: Echo) -> None:
    """Everything after the checks (and after --measure-units' run): `found` are the units
    to keep, from --units-from or that run's directory."""
    if options.validate is not None:
        checked = validate.validate(options.validate)
        _write_json(options.json_path, checked.model_dump(mode="json"))
        out(report.render_validation(checked))
        return
    if found is not None:
        store_units(
            found, out, log, quiet=bool(options.target or options.prometheus or options.rules)
        )
    if options.target:
        estimate_target(options, out, log)
    if options.prometheus:
        estimate_fleet(options, out, log)
    if options.rules:
        stored = units.read_machine()
        if not stored:
            raise BadInput(f"no unit costs are stored on this machine yet: {NO_UNITS_FIX}")
        matchers = prometheus_api.label_matchers(options.match)
        step = options.rules_step()

        def others(host: str) -> tuple[list[str], list[str]]:
            return rules.kind_lines(stored, step, matchers, options.scope, host)

        out(rules.render(stored, step, matchers, options.scope, more=others).rstrip("\n"))
