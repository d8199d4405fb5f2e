"""The pieces of a study's ReportPart (report/parts.py) that studies fill the same way,
written once: the cells `compare` matches across two result sets, the set-up table's software
versions, the Setup of a study whose set-up lines are in its own section, its sections as
ReportPart calls them (with or without this machine's noise floor), and a Galera study's
whole part.  A study passes what is its own: its name, its key fields, its words."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from encbench.profiles.profile import Profile
from encbench.report.models import Model, NoiseFloor, Record
from encbench.report.parts import Compared, Context, ReportPart, Setup, measured
from encbench.report.tables import Section
from encbench.results.store import ResultStore


def _own_label(cell: Any) -> str:
    label: str = cell.label
    return label


def _own_threads(cell: Any) -> int:
    """The cell's client threads; 0 for a cell that has none (a rejoin, a start-up)."""
    threads: int = getattr(cell, "threads", 0)
    return threads


def compared_cells(
    study: str,
    key: Callable[[Any], tuple[Any, ...]],
    *,
    row_header: str,
    group: str | Callable[[Any], str] | None = None,
    threads: Callable[[Any], int] = _own_threads,
    label: Callable[[Any], str] = _own_label,
    name: Callable[[Any], str] | None = None,
) -> Callable[[Any], list[Compared]]:
    """ReportPart.compared: the part's measured cells, each matched by the study's name and
    `key` (its cell without its results), under `group` (one for all, or each cell's;
    default the study's name), with its `threads` (default its own, or 0), by its `label`
    (default its own) and, where `compare` names it alone, its `name` (default its own
    label)."""

    def compared(part: Any) -> list[Compared]:
        return [
            Compared.of(
                c,
                key=(study, *key(c)),
                group=study if group is None else group if isinstance(group, str) else group(c),
                row_header=row_header,
                label=label(c),
                threads=threads(c),
                name=name(c) if name is not None else None,
            )
            for c in measured(part.cells)
        ]

    return compared


def versions(fields: Mapping[str, str]) -> Callable[[Any], dict[str, str]]:
    """ReportPart.compare_setup of a part's software versions: each title (e.g. "MariaDB")
    with the part's field of that name where the part knows it."""

    def compare_setup(part: Any) -> dict[str, str]:
        found = {title: getattr(part, name) for title, name in fields.items()}
        return {title: version for title, version in found.items() if version}

    return compare_setup


# compare's set-up rows of a Galera study's part (GaleraPart): its server's and Galera's.
galera_versions = versions({"MariaDB": "mariadb_version", "Galera": "galera_version"})


def server_version(part: Any) -> Setup:
    """Only the version of the servers it started (its lines are in its own section)."""
    return Setup(server_version=part.mariadb_version)


def sections_of(build: Callable[[Any], list[Section]]) -> Callable[[Any, Context], list[Section]]:
    """ReportPart.sections of a study whose sections read only its part."""

    def sections(part: Any, context: Context) -> list[Section]:
        return build(part)

    return sections


def sections_with_floor(
    build: Callable[[Any, NoiseFloor | None], list[Section]],
) -> Callable[[Any, Context], list[Section]]:
    """ReportPart.sections of a study whose sections also judge its results by this
    machine's noise floor (report/suspect.py)."""

    def sections(part: Any, context: Context) -> list[Section]:
        return build(part, context.noise_floor)

    return sections


def galera_part(
    model: type[Model],
    build: Callable[[ResultStore, Profile, Record | None], Model],
    sections: Callable[[Any, Context], list[Section]],
    compared: Callable[[Any], list[Compared]],
    compare_metrics: Mapping[str, str],
) -> ReportPart:
    """A Galera study's ReportPart (its part a GaleraPart): the report's set-up names the
    server, and compare's set-up table the server and Galera, as the study's record kept
    them; the rest is the study's own."""
    return ReportPart(
        model=model,
        build=build,
        setup=server_version,
        sections=sections,
        compared=compared,
        compare_metrics=compare_metrics,
        compare_setup=galera_versions,
    )
