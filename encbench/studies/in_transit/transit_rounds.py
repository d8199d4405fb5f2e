"""What both kinds' settings of the in-transit study share: short paired rounds (a cell is one
path, and a study has many) and the round-trip times their distance tests run at."""

from __future__ import annotations

from typing import Annotated, Self

from pydantic import Field, field_validator, model_validator

from encbench.net import distance
from encbench.profiles.options import AcrossKeys, Rounds


class TransitRounds(Rounds):
    """The keys `[transit]` and `[pg_transit]` both have, with their checks; each
    adds its `tests` and the `distance_tests` among them."""

    # Round-trip times; 0 = loopback on one host.  The tests of distance_tests run at each
    # of them, the client in a network namespace of its own across an emulated link; the
    # others on loopback only.
    rtt_ms: Annotated[list[float], Field(min_length=1)] = [0]  # noqa: RUF012 (a pydantic field)
    # Shorter than at rest: a cell is one path, and a study has many.
    warmup_s: Annotated[int, Field(ge=0, le=3600)] = 1
    cell_budget_s: Annotated[float, Field(gt=0)] = 30

    def planned_rounds(self, cell: object) -> int | None:
        """A cell across an emulated distance at its fewest rounds: the link's fixed delay
        sets each run's rate, so its rounds agree within ±2% at once (every distance cell of
        the whole runs of percona-2013-ssl and postgresql-distance stopped there)."""
        return self.min_rounds if getattr(cell, "rtt_ms", 0) else None

    @field_validator("rtt_ms")
    @classmethod
    def delays_in_range(cls, value: list[float]) -> list[float]:
        return distance.rtts_in_range(value)

    @model_validator(mode="after")
    def distance_tests_are_measured(self) -> Self:
        # The default names a test a profile without it simply does not measure.
        tests: list[str] = getattr(self, "tests", [])
        unknown = [t for t in getattr(self, "distance_tests", []) if t not in tests]
        if unknown and "distance_tests" in self.model_fields_set:
            raise AcrossKeys(
                f"{{section}}.distance_tests names {', '.join(unknown)}, which {{section}}.tests "
                "does not measure: add it there or remove it here"
            )
        return self
