"""`encbench estimate --prometheus URL --out DIR`: the fleet's estimate as four files in DIR
(created where missing), as `encbench compare --out` writes its own: estimate.md (what
stdout prints without --out), estimate.json (as --json), estimate.csv (fleet_csv.py) and
estimate.html (fleet_html.py, with the fleet's time series from one more query)."""

from __future__ import annotations

import json
from pathlib import Path

from encbench import outputs
from encbench.errors import BadInput
from encbench.estimate import fleet, fleet_csv, fleet_html
from encbench.estimate.fleet_series import FleetSeries

NAMES = ("estimate.md", "estimate.json", "estimate.csv", "estimate.html")


def check(out: Path) -> None:
    """Before any query: DIR can be made or written, and holds no estimate already."""
    outputs.check_new_directory(out, "--out")
    for name in NAMES:
        if (out / name).exists():
            raise BadInput(f"{out / name} exists: choose another --out directory")


def write(out: Path, built: fleet.FleetReport, series: FleetSeries | None) -> list[Path]:
    """The four files; their paths, in NAMES' order."""
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
