"""`encbench estimate --prometheus URL --out DIR`: the fleet's estimate as four files in DIR
(created where missing), as `encbench compare --out` writes its own: estimate.md (what
stdout prints without --out), estimate.json (as --json), estimate.csv (fleet_csv.py) and
estimate.html (fleet_html.py, with the fleet's time series from one more query)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from encbench.errors import BadInput, EncbenchError
from encbench.estimate import fleet, fleet_csv, fleet_html, fleet_series
from encbench.estimate.fleet_series import FleetSeries
from encbench.estimate.prometheus import Asked
from encbench.estimate.prometheus_api import Prometheus
from encbench.estimate.rescale import Resolved
from encbench.results import outputs

NAMES = ("estimate.md", "estimate.json", "estimate.csv", "estimate.html")


def check(out: Path) -> None:
    """Before any query: DIR can be made or written, and holds no estimate already."""
    outputs.check_new_directory(out, "--out")
    for name in NAMES:
        if (out / name).exists():
            raise BadInput(f"{out / name} exists: choose another --out directory")


def over_time(
    client: Prometheus,
    asked: Asked,
    units: Mapping[str, Resolved],
    built: fleet.FleetReport,
    log: Callable[[str], None],
    kinds: fleet_series.Kinds = fleet_series.FIRST_ONLY,
    classes: Sequence[fleet_series.ClassSeries] = (),
) -> FleetSeries | str:
    """The fleet's series over the window, or why the page has none.  A range query refused
    (a proxy that lets only instant queries through) costs the page its time series, not
    the estimate already made."""
    if not built.instances:
        return "no instance was estimated"
    try:
        found = fleet_series.ask(client, asked, units, built.scope, kinds, classes)
    except EncbenchError as exc:
        log(f"encbench: the fleet's series over time not drawn: {exc}")
        return f"Prometheus did not answer its range query ({exc})"
    if found is None:
        return "Prometheus's range query gave no series (no unit cost in scope, or no sample)"
    return found


def write(out: Path, built: fleet.FleetReport, series: FleetSeries | str) -> list[Path]:
    """The four files (the page with the fleet's series, or saying why it has none); their
    paths, in NAMES' order."""
    if not out.is_dir():
        outputs.make_directory(out)
    texts = (
        fleet.render_markdown(built),
        json.dumps(built.model_dump(mode="json"), indent=2) + "\n",
        fleet_csv.render(built),
        fleet_html.render(built, series),
    )
    paths = [out / name for name in NAMES]
    for path, text in zip(paths, texts, strict=True):
        outputs.write_text(path, text)
    return paths
