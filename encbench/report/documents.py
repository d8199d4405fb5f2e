"""summary.json, report.md and report.html of a results directory, from its run records
alone, so that `encbench report DIR` re-renders exactly what the run wrote."""

from __future__ import annotations

from collections.abc import Mapping

from encbench import stats
from encbench.errors import BadInput
from encbench.profile import Profile
from encbench.report import calibration, calibration_section, markdown
from encbench.report.at_rest import cores_of
from encbench.report.calibration import METHOD as CALIBRATION_METHOD
from encbench.report.models import (
    Calibration,
    NoiseFloor,
    Record,
    Studies,
    StudyPart,
    Summary,
)
from encbench.report.sections import SECTIONS, total_harness
from encbench.report.tables import Bullets, Document, Section
from encbench.results.schema import SUMMARY_SCHEMA
from encbench.results.store import ResultStore


def render_documents(store: ResultStore, profile: Profile, with_html: bool = False) -> Summary:
    """summary.json and report.md (cheap: after every round); report.html on request, since
    drawing its plots takes a second or two of CPU that must not land between rounds."""
    summary = build_summary(store, profile)
    store.write_json("summary.json", summary.to_json())
    crypto = store.read_json("crypto.json")
    store.write_text("report.md", markdown.render(document(summary, crypto)))
    if with_html:
        from encbench.report import html  # the plots import matplotlib: slow, only needed here

        store.write_text("report.html", html.render(document(summary, crypto)))
    return summary


def build_summary(store: ResultStore, profile: Profile) -> Summary:
    environment = store.read_json("environment.json")
    left_out = store.not_measured()
    # A study measured in part before a resume left it out keeps its part; the section
    # below says why the rest is missing.
    parts: dict[str, StudyPart] = {
        name: SECTIONS[name].build(store, profile, environment)
        for name in profile.studies
        if name in SECTIONS and (name not in left_out or store.has_runs(name))
    }
    if profile.calibration:
        aa = calibration.build(store, profile, environment)
        return summarize(profile.name, environment, parts, calibration=aa, not_measured=left_out)
    noise = calibration.noise_floor_of(store)
    return summarize(profile.name, environment, parts, noise_floor=noise, not_measured=left_out)


def summarize(
    profile_name: str,
    environment: Record | None,
    parts: Mapping[str, StudyPart],
    *,
    calibration: Calibration | None = None,
    noise_floor: NoiseFloor | None = None,
    not_measured: Mapping[str, str] | None = None,
) -> Summary:
    """The summary of the studies' parts, each under its study's name; an A/A calibration
    carries its result, an ordinary run the machine's noise floor as it found it; the
    profile's studies the run left out, with why."""
    return Summary(
        profile=profile_name,
        method=CALIBRATION_METHOD if calibration else stats.METHOD,
        environment=environment,
        harness=total_harness(list(parts.values()), cores_of(environment)),
        studies=Studies.model_validate(parts),
        calibration=calibration,
        noise_floor=noise_floor,
        not_measured=dict(not_measured or {}),
    )


def read_summary(data: object, where: str) -> Summary:
    """summary.json as written by this encbench; another schema gets one line and the fix."""
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema != SUMMARY_SCHEMA:
        raise BadInput(
            f"{where}: summary.json schema {schema!r} is not {SUMMARY_SCHEMA}: re-render it "
            "with the encbench that wrote it (`encbench report DIR`)"
        )
    try:
        return Summary.model_validate(data)
    except ValueError as exc:
        first = str(exc).splitlines()[0]
        raise BadInput(
            f"{where}: summary.json is damaged ({first}): run `encbench report DIR`"
        ) from None


def document(summary: Summary, crypto: Record | None = None) -> Document:
    """The whole report: each study's sections, the crypto capacity (HTML only), the setup."""
    studies = [s for s in SECTIONS.values() if s.part(summary) is not None]
    words = " and ".join(s.words for s in studies)
    if summary.calibration is not None:
        # A/A: its own sections; the studies' tables speak of encryption and overhead.
        title = f"encbench: A/A calibration, {words} — profile `{summary.profile}`"
        sections = calibration_section.sections(summary)
        if summary.not_measured:
            sections.append(not_measured_section(summary.not_measured, summary.studies))
        return Document(title, [*sections, setup_section(summary)])
    title = f"encbench: {words} encryption — profile `{summary.profile}`"
    sections = [section for s in studies for section in s.sections(summary)]
    if crypto:
        from encbench.report import crypto as crypto_section

        at_rest = summary.studies.at_rest
        servers = (at_rest.servers if at_rest else None) or {}
        algorithm = (servers.get("encryption") or {}).get("algorithm")
        sections.append(crypto_section.section(crypto, algorithm))
    if summary.not_measured:
        sections.append(not_measured_section(summary.not_measured, summary.studies))
    at_rest = summary.studies.at_rest
    sections.append(
        calibration_section.noise_floor_section(
            summary.noise_floor, at_rest.sharing if at_rest else None
        )
    )
    sections.append(setup_section(summary))
    return Document(title, sections)


def not_measured_section(left_out: Mapping[str, str], parts: Studies) -> Section:
    """The profile's studies this run did not measure (or, resumed, did not finish), and why
    — never silently absent."""
    measured = {
        field.alias or attr
        for attr, field in Studies.model_fields.items()
        if getattr(parts, attr) is not None
    }
    items = [
        f"**{name}**"
        + (": measured in part; the rest was left out" if name in measured else "")
        + f": {why}."
        for name, why in left_out.items()
    ]
    return Section("Not measured", [Bullets(items)])


def setup_section(summary: Summary) -> Section:
    setups = [s.setup(summary) for s in SECTIONS.values() if s.part(summary) is not None]
    env = summary.environment or {}
    if summary.calibration is not None:
        items = calibration_section.setup_lines(summary)
    else:
        items = [line for s in setups for line in s.servers]
    cpu = env.get("cpu", {})
    if cpu:
        flags = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in cpu.get("flags", {}).items())
        mariadb = next((s.mariadb_version for s in setups if s.mariadb_version), None)
        items += [
            f"Machine: {cpu.get('model', '?')}, {cpu.get('cores', '?')} cores; "
            f"CPU flags: {flags or '?'}.",
            f"Software: {env.get('os')}, kernel {env.get('kernel')}, MariaDB "
            f"{mariadb or env.get('mariadb')}, {env.get('openssl')}, sysbench "
            f"{env.get('sysbench')}.",
        ]
    items += [line for s in setups for line in s.software]
    parts = [p for s in SECTIONS.values() if (p := s.part(summary)) is not None]
    if parts:
        items.append(
            f"Statistics: {summary.method}. Rounds come in blocks of two in opposite orders "
            "(A B then B A, or B A then A B, drawn at random per block); blocks are added until "
            f"the CI half-width reaches ±{parts[0].target_halfwidth_pct:g}% or the cell's time "
            "budget ends; a round whose runs shared the machine with too much other load is "
            "measured again."
        )
    items += [line for s in setups for line in s.last]
    if parts:
        # Every study's windows together: the figure the issues hold to 1% of the machine.
        h = summary.harness
        items.append(
            f"encbench's own CPU during measured windows: {h.cpu_s:.2f} s over "
            f"{h.measured_wall_s:.0f} s measured = {h.share_of_machine_pct:.2f}% of the machine."
        )
    return Section("Setup", [Bullets(items)])
