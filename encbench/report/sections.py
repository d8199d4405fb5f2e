"""Each study registers its part of the report here: how to build its part of summary.json
from the results directory, and its sections (tables, text and plots, in order) for report.md
and report.html.  documents.py loops over the profile's studies through this registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from encbench.profile import Profile
from encbench.profiling import PROFILE_FILE
from encbench.report import (
    at_rest,
    at_rest_section,
    in_transit,
    in_transit_section,
    operations,
    operations_section,
    rejoin,
    replication,
    replication_section,
    shapes_section,
    state_transfer,
    state_transfer_section,
)
from encbench.report.models import (
    AtRestSummary,
    Harness,
    InTransitSummary,
    OperationsSummary,
    Record,
    RejoinSummary,
    ReplicationSummary,
    StateTransferSummary,
    StudyPart,
    Summary,
)
from encbench.report.tables import Section
from encbench.results.schema import (
    OperationRecord,
    RejoinRecord,
    ReplicationRecord,
    RunRecord,
    SstRecord,
    TransitRecord,
)
from encbench.results.store import ResultStore


@dataclass(frozen=True)
class Setup:
    """A study's lines in the report's Setup list: before the machine, after the software
    versions, and after the statistics line."""

    servers: list[str] = field(default_factory=list)
    software: list[str] = field(default_factory=list)
    last: list[str] = field(default_factory=list)
    mariadb_version: str | None = None


class StudySection(Protocol):
    name: ClassVar[str]  # the study's name: its key in summary.json's "studies"
    words: ClassVar[str]  # what the report's title calls it

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> StudyPart: ...

    def part(self, summary: Summary) -> StudyPart | None: ...

    def sections(self, summary: Summary) -> list[Section]: ...

    def setup(self, summary: Summary) -> Setup: ...


class AtRestSection:
    name: ClassVar[str] = RunRecord.STUDY
    words: ClassVar[str] = "data-at-rest"

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> AtRestSummary:
        return at_rest.build(
            store.runs(RunRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            environment,
            store.read_json("crypto.json"),
            store.read_json(PROFILE_FILE),
        )

    def part(self, summary: Summary) -> AtRestSummary | None:
        return summary.studies.at_rest

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return at_rest_section.sections(part, shapes_section.sections(part)) if part else []

    def setup(self, summary: Summary) -> Setup:
        part = self.part(summary)
        if part is None:
            return Setup()
        return Setup(
            servers=at_rest_section.setup_servers(part.servers),
            software=at_rest_section.setup_capacity(part),
            last=at_rest_section.setup_last(part),
            mariadb_version=(part.servers or {}).get("mariadb_version"),
        )


class InTransitSection:
    name: ClassVar[str] = TransitRecord.STUDY
    words: ClassVar[str] = "in-transit"

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> InTransitSummary:
        return in_transit.build(
            store.runs(TransitRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            at_rest.cores_of(environment),
        )

    def part(self, summary: Summary) -> InTransitSummary | None:
        return summary.studies.in_transit

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return in_transit_section.sections(part) if part else []

    def setup(self, summary: Summary) -> Setup:
        return Setup()  # its setup and proof are a subsection of its own section


class OperationsSection:
    name: ClassVar[str] = OperationRecord.STUDY
    words: ClassVar[str] = "operations under"

    def __init__(self) -> None:
        self.load_s = 0  # the profile's crash load, for the report's words

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> OperationsSummary:
        self.load_s = profile.operations.crash_load_s
        return operations.build(
            store.runs(OperationRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            store.read_json("crypto.json"),
            at_rest.cores_of(environment),
        )

    def part(self, summary: Summary) -> OperationsSummary | None:
        return summary.studies.operations

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return operations_section.sections(part, self.load_s) if part else []

    def setup(self, summary: Summary) -> Setup:
        return Setup()  # its set-up and proof are a subsection of its own section


class StateTransferSection:
    name: ClassVar[str] = SstRecord.STUDY
    words: ClassVar[str] = "state-transfer"

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> StateTransferSummary:
        return state_transfer.build(
            store.runs(SstRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            at_rest.cores_of(environment),
        )

    def part(self, summary: Summary) -> StateTransferSummary | None:
        return summary.studies.state_transfer

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return state_transfer_section.sections(part) if part else []

    def setup(self, summary: Summary) -> Setup:
        return Setup()  # its set-up and proof are subsections of its own section


class ReplicationSection:
    name: ClassVar[str] = ReplicationRecord.STUDY
    words: ClassVar[str] = "replication"

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> ReplicationSummary:
        return replication.build(
            store.runs(ReplicationRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            at_rest.cores_of(environment),
        )

    def part(self, summary: Summary) -> ReplicationSummary | None:
        return summary.studies.replication

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return replication_section.sections(part) if part else []

    def setup(self, summary: Summary) -> Setup:
        return Setup()  # its set-up and proof are subsections of its own section


class RejoinSection:
    name: ClassVar[str] = RejoinRecord.STUDY
    words: ClassVar[str] = "rejoin"

    def build(
        self, store: ResultStore, profile: Profile, environment: Record | None
    ) -> RejoinSummary:
        return rejoin.build(
            store.runs(RejoinRecord),
            profile,
            store.read_json(f"{self.name}.json"),
            at_rest.cores_of(environment),
        )

    def part(self, summary: Summary) -> RejoinSummary | None:
        return summary.studies.rejoin

    def sections(self, summary: Summary) -> list[Section]:
        part = self.part(summary)
        return rejoin.sections(part) if part else []

    def setup(self, summary: Summary) -> Setup:
        return Setup()  # the replication study's set-up describes the same clusters


SECTIONS: dict[str, StudySection] = {
    s.name: s
    for s in (
        AtRestSection(),
        InTransitSection(),
        OperationsSection(),
        StateTransferSection(),
        ReplicationSection(),
        RejoinSection(),
    )
}


def total_harness(parts: list[StudyPart], cores: int) -> Harness:
    """encbench's own CPU over every study's measured windows."""
    cpu = sum(p.harness.cpu_s for p in parts)
    wall = sum(p.harness.measured_wall_s for p in parts)
    return Harness.of(cpu, wall, cores)
