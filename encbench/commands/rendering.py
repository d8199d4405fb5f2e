"""The report of a results directory with every study's part (studies.reported()): what the
command line and the engine call; report/ itself knows no study by name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from encbench import studies
from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from encbench.profiles.profile import Profile
from encbench.report import compare as comparing
from encbench.report import documents
from encbench.report.models import Record, Summary
from encbench.report.tables import Document
from encbench.results.store import ResultStore


def render_documents(store: ResultStore, profile: Profile, with_html: bool = False) -> Summary:
    return documents.render_documents(store, profile, studies.reported(), with_html=with_html)


def build_summary(store: ResultStore, profile: Profile) -> Summary:
    return documents.build_summary(store, profile, studies.reported())


def read_summary(data: object, where: str) -> Summary:
    return documents.read_summary(data, where, studies.reported())


def summary_to_compare(store: ResultStore) -> Any:
    """A results directory's summary as `compare` reads it: its summary.json (None: none);
    one that holds a part whose cells are now another study's (pg-in-transit: PostgreSQL's
    in-transit cells, now the in-transit study's) built again from the directory's runs, as
    `encbench report` would write it now — summary.json itself is left as it is."""
    data = store.read_json("summary.json")
    parts = data.get("studies") if isinstance(data, dict) else None
    if not isinstance(parts, dict) or not set(parts) & studies.former_names():
        return data
    where = str(store.path / "profile.toml")
    try:
        profile = profiles.parse(store.profile_text, where)
    except BadInput as exc:
        raise BadInput(
            f"{store.path}: its summary.json names a former study ({', '.join(sorted(parts))}) "
            f"and is built again from its runs, which needs its profile: {exc}"
        ) from None
    return build_summary(store, profile)


def document(summary: Summary, crypto: Record | None = None) -> Document:
    return documents.document(summary, studies.reported(), crypto)


def compare(
    summary_a: Mapping[str, Any] | Summary,
    summary_b: Mapping[str, Any] | Summary,
    label_a: str,
    label_b: str,
) -> comparing.Comparison:
    return comparing.compare(summary_a, summary_b, label_a, label_b, studies.reported())
