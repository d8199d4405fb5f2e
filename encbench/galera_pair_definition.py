"""The face (studies/definition.py: StudyDefinition) of a study measured on the two Galera
pairs (galera_pair_studies.py), written once for the replication and the rejoin study: what
the pairs need of this machine and leave on it, root for their hosts' network namespaces, the
variants as a plan names them, and no A/A calibration yet.  The study gives what is its own:
its record, class, words, section and report part.

Read by those studies' faces while the studies package is being read (it lists them): it is
not a module to import before `encbench.studies`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from encbench import galera_pair_studies as pairs
from encbench.engine.progress import RunProgress
from encbench.engine.study import Rule, Study
from encbench.options import Strict
from encbench.profile import Profile, no_calibration
from encbench.report.parts import ReportPart
from encbench.results.store import ResultStore
from encbench.studies.definition import Here, RootNeed, Settings, StudyDefinition


def namespaces(profile: Profile) -> RootNeed:
    return RootNeed("network namespaces")


HERE = Here(
    disk_bytes=pairs.disk_bytes,
    memory_mb=pairs.memory_mb,
    tools=pairs.needs,
    root=namespaces,
    creates=pairs.CREATES,
)


def pair_study(
    record: type[Any],
    make: Callable[[ResultStore, Profile, RunProgress], Study],
    *,
    words: str,
    setup_words: str,
    section: tuple[str, type[Strict], Callable[[Profile], Rule]],
    cells: Callable[[Profile], Sequence[Any]],
    report: ReportPart,
) -> StudyDefinition:
    """The study of `record` (its name is the record's STUDY), made by `make`, set by its
    `section` (its key, its model, and its rule under a profile)."""
    key, model, rule = section
    return StudyDefinition(
        name=record.STUDY,
        words=words,
        setup_words=setup_words,
        variants=pairs.VARIANT_WORDS,
        record=record,
        make=make,
        settings=Settings(key, model, rule, cells, validate=no_calibration(record.STUDY)),
        here=HERE,
        report=report,
    )
