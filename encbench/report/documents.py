"""summary.json, report.md and report.html of a results directory, from its run records
alone, so that `encbench report DIR` re-renders exactly what the run wrote.  Every study's
part comes from its ReportPart (report/parts.py), given by the caller: this module knows no
study by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from encbench import stats
from encbench.errors import BadInput
from encbench.profiles.profile import Profile
from encbench.report import (
    across,
    bound_section,
    calibration,
    calibration_section,
    markdown,
    reading,
)
from encbench.report.calibration import METHOD as CALIBRATION_METHOD
from encbench.report.cells import cores_of
from encbench.report.models import (
    Calibration,
    Harness,
    MeasuredServer,
    Model,
    NoiseFloor,
    Record,
    StudyPart,
    Summary,
)
from encbench.report.parts import Context, Reported, Setup
from encbench.report.tables import Bullets, Document, Paragraph, Section
from encbench.results.schema import SUMMARY_SCHEMA
from encbench.results.store import ResultStore
from encbench.servers import server_kind


def render_documents(
    store: ResultStore, profile: Profile, studies: Sequence[Reported], with_html: bool = False
) -> Summary:
    """summary.json and report.md (cheap: after every round); report.html on request, since
    drawing its plots takes a second or two of CPU that must not land between rounds."""
    summary = build_summary(store, profile, studies)
    store.write_json("summary.json", summary.to_json())
    crypto = store.read_json("crypto.json")
    store.write_text("report.md", markdown.render(document(summary, studies, crypto)))
    if with_html:
        from encbench.report import html  # the plots import matplotlib: slow, only needed here

        store.write_text("report.html", html.render(document(summary, studies, crypto)))
    return summary


def build_summary(store: ResultStore, profile: Profile, studies: Sequence[Reported]) -> Summary:
    environment = store.read_json("environment.json")
    left_out = store.not_measured()
    # A study measured in part before a resume left it out keeps its part; the section
    # below says why the rest is missing.
    parts: dict[str, Model] = {
        s.name: s.report.build(store, profile, environment)
        for s in studies
        if (listed := s.listed_in(profile)) is not None
        and (listed not in left_out or store.has_runs(s.name))
    }
    servers = measured_servers(studies, parts, environment)
    if profile.calibration:
        # How its rounds at rest shared the machine: a run's floor is compared with it.
        by_name = {s.name: s for s in studies}
        sharing = _first([by_name[n].report.sharing(part) for n, part in parts.items()])
        aa = calibration.build(store, profile, environment, studies, sharing or "sequential")
        return summarize(
            profile.name, environment, parts, calibration=aa, not_measured=left_out,
            servers=servers,
        )  # fmt: skip
    noise = calibration.noise_floor_of(store)
    return summarize(
        profile.name, environment, parts, noise_floor=noise, not_measured=left_out,
        servers=servers,
    )  # fmt: skip


def measured_servers(
    studies: Sequence[Reported], parts: Mapping[str, Model], environment: Record | None
) -> dict[str, MeasuredServer]:
    """Each measured study's server: its kind, its name (a MySQL target's own, measured
    by the mariadb kind), and its version (the study's record, else the installed one)."""
    env = environment or {}
    found: dict[str, MeasuredServer] = {}
    for s in studies:
        part = parts.get(s.name)
        if part is None:
            continue
        seen = s.report.setup(part)
        # One server a study: the first kind it measured (a study of several kinds names
        # each in its own section).
        kind = server_kind.named(seen.kinds_measured(s.kinds)[0])
        recorded, title = seen.version_of(kind.name, s.kinds)
        version = recorded or env.get(kind.name)
        found[s.name] = MeasuredServer(
            kind=kind.name,
            name=title or kind.title,
            version=str(version) if version else None,
        )
    return found


def summarize(
    profile_name: str,
    environment: Record | None,
    parts: Mapping[str, Model],
    *,
    calibration: Calibration | None = None,
    noise_floor: NoiseFloor | None = None,
    not_measured: Mapping[str, str] | None = None,
    servers: Mapping[str, MeasuredServer] | None = None,
) -> Summary:
    """The summary of the studies' parts, each under its study's name; an A/A calibration
    carries its result, an ordinary run the machine's noise floor as it found it; the
    profile's studies the run left out, with why."""
    return Summary(
        profile=profile_name,
        method=CALIBRATION_METHOD if calibration else stats.METHOD,
        environment=environment,
        harness=total_harness([cast(StudyPart, p) for p in parts.values()], cores_of(environment)),
        studies=dict(parts),
        calibration=calibration,
        noise_floor=noise_floor,
        not_measured=dict(not_measured or {}),
        servers=dict(servers or {}),
    )


def total_harness(parts: list[StudyPart], cores: int) -> Harness:
    """encbench's own CPU over every study's measured windows."""
    cpu = sum(p.harness.cpu_s for p in parts)
    wall = sum(p.harness.measured_wall_s for p in parts)
    return Harness.of(cpu, wall, cores)


def read_summary(data: object, where: str, studies: Sequence[Reported]) -> Summary:
    """summary.json as written by this encbench; another schema gets one line and the fix."""
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SUMMARY_SCHEMA:
        raise BadInput(
            f"{where}: summary.json schema {schema!r} is not {SUMMARY_SCHEMA}: re-render it "
            "with the encbench that wrote it (`encbench report DIR`)"
        )
    try:
        parts = {s.name: s.report.model for s in studies}
        return Summary.model_validate(data, context={"parts": parts})
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise BadInput(
            f"{where}: summary.json is damaged ({first}): run `encbench report DIR`"
        ) from None


def _measured(summary: Summary, studies: Sequence[Reported]) -> list[tuple[Reported, Any]]:
    """The studies with a part in the summary, in the registry's order, with their part."""
    return [(s, part) for s in studies if (part := summary.part(s.name)) is not None]


def _first(found: Sequence[str | None]) -> str | None:
    return next((x for x in found if x), None)


def document(
    summary: Summary, studies: Sequence[Reported], crypto: Record | None = None
) -> Document:
    """The whole report: each study's sections, the crypto capacity (HTML only), the setup."""
    measured = _measured(summary, studies)
    words = " and ".join(s.words for s, _ in measured)
    if summary.calibration is not None:
        # A/A: its own sections; the studies' tables speak of encryption and overhead.
        title = f"encbench: A/A calibration, {words} — profile `{summary.profile}`"
        sections = calibration_section.sections(summary)
        if summary.not_measured:
            sections.append(not_measured_section(summary.not_measured, summary))
        return Document(title, [*sections, setup_section(summary, measured)])
    title = f"encbench: {words} encryption — profile `{summary.profile}`"
    context = Context(noise_floor=summary.noise_floor)
    sections = [reading.section(summary)] if measured else []
    # The same question on every server first: the headline where a profile asks it.
    side_by_side = across.section([a for s, part in measured for a in s.report.across(part)])
    sections += [side_by_side] if side_by_side is not None else []
    for s, part in measured:
        sections += s.report.sections(part, context)
        bound = bound_section.section(s.words, s.report.compared(part))
        sections += [bound] if bound is not None else []
    if crypto:
        from encbench.report import crypto as crypto_section

        algorithm = _first([s.report.cipher(part) for s, part in measured])
        sections.append(crypto_section.section(crypto, algorithm))
    if summary.not_measured:
        sections.append(not_measured_section(summary.not_measured, summary))
    sharing = _first([s.report.sharing(part) for s, part in measured])
    sections.append(calibration_section.noise_floor_section(summary.noise_floor, sharing))
    sections.append(setup_section(summary, measured))
    lead = [Paragraph(line) for s, part in measured for line in s.report.lead(part)]
    return Document(title, sections, lead)


def not_measured_section(left_out: Mapping[str, str], summary: Summary) -> Section:
    """The profile's studies this run did not measure (or, resumed, did not finish), and why
    — never silently absent."""
    items = [
        f"**{name}**"
        + (": measured in part; the rest was left out" if name in summary.studies else "")
        + f": {why}."
        for name, why in left_out.items()
    ]
    return Section("Not measured", [Bullets(items)])


def _kind_version(
    kind: str, measured: Sequence[tuple[Reported, Any]], setups: Sequence[Setup]
) -> tuple[str | None, str | None]:
    """The version the first study of that kind recorded of its server, and the name it
    gave that server where not the kind's (a MySQL target)."""
    found = (x.version_of(kind, s.kinds) for (s, _), x in zip(measured, setups, strict=True))
    return next((f for f in found if f[0]), (None, None))


def setup_section(summary: Summary, measured: Sequence[tuple[Reported, Any]]) -> Section:
    setups: list[Setup] = [s.report.setup(part) for s, part in measured]
    env = summary.environment or {}
    if summary.calibration is not None:
        items = [
            line
            for s, part in measured
            if s.calibration is not None
            for line in s.calibration.setup(part)
        ]
    else:
        items = [line for x in setups for line in x.servers]
    cpu = env.get("cpu", {})
    if cpu:
        flags = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in cpu.get("flags", {}).items())
        # Each measured kind's version (a study's own, else the environment's), and
        # sysbench where a kind's studies drive it; a run of no study is MariaDB's.
        named = {
            k for (s, _), x in zip(measured, setups, strict=True) for k in x.kinds_measured(s.kinds)
        }
        kinds = [k for k in server_kind.kinds() if k.name in named]
        kinds = kinds or server_kind.kinds()[:1]
        versions = []
        for k in kinds:
            version, title = _kind_version(k.name, measured, setups)
            if version or env.get(k.name):
                versions.append(f"{title or k.title} {version or env.get(k.name)}")
        tools = [str(env.get("openssl"))]
        if any("sysbench" in k.load_clients for k in kinds):
            tools.append(f"sysbench {env.get('sysbench')}")
        theirs = "".join(f", {x}" for x in versions + tools)
        items += [
            f"Machine: {cpu.get('model', '?')}, {cpu.get('cores', '?')} cores; "
            f"CPU flags: {flags or '?'}.",
            f"Software: {env.get('os')}, kernel {env.get('kernel')}{theirs}.",
        ]
    items += [line for x in setups for line in x.software]
    parts = [part for _, part in measured]
    if parts:
        items.append(
            f"Statistics: {summary.method}. Rounds come in blocks of two in opposite orders "
            "(A B then B A, or B A then A B, drawn at random per block); blocks are added until "
            f"the CI half-width reaches ±{parts[0].target_halfwidth_pct:g}% or the cell's time "
            "budget ends; a round whose runs shared the machine with too much other load is "
            "measured again."
        )
    items += [line for x in setups for line in x.last]
    if parts:
        # Every study's windows together: the figure the issues hold to 1% of the machine.
        h = summary.harness
        items.append(
            f"encbench's own CPU during measured windows: {h.cpu_s:.2f} s over "
            f"{h.measured_wall_s:.0f} s measured = {h.share_of_machine_pct:.2f}% of the machine."
        )
    return Section("Setup", [Bullets(items)])
