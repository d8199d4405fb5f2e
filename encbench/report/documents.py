"""summary.json, report.md and report.html of a results directory, from its run records
alone, so that `encbench report DIR` re-renders exactly what the run wrote."""

from __future__ import annotations

from typing import Any

from encbench.profile import Profile
from encbench.report import markdown, summary, transit
from encbench.results.schema import RunRecord
from encbench.results.store import ResultStore


def render_documents(
    store: ResultStore,
    profile: Profile,
    runs: list[RunRecord] | None = None,
    with_html: bool = False,
) -> dict[str, Any]:
    """summary.json and report.md (cheap: after every round); report.html on request, since
    drawing its plots takes a second or two of CPU that must not land between rounds."""
    data = summary.build(
        runs if runs is not None else store.runs(),
        profile,
        store.read_json("servers.json"),
        store.read_json("environment.json"),
        store.read_json("crypto.json"),
    )
    data["transit"] = transit.build(store.transit_runs(), profile, store.read_json("transit.json"))
    store.write_json("summary.json", data)
    store.write_text("report.md", markdown.render(data))
    if with_html:
        from encbench.report import html  # imports matplotlib: slow, and only needed here

        store.write_text("report.html", html.render_html(data, store.read_json("crypto.json")))
    return data
