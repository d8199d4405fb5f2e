"""Which at-rest cells a profile asks for: per encryption configuration (where the profile
lists several), instance shape (where it lists any), regime, workload and thread count — in
that order, so that the servers are provisioned once per configuration and restarted once
per shape and regime."""

from __future__ import annotations

from typing import cast

from encbench.profile import Profile, ShapeSpec
from encbench.servers.variants import Algorithm, EncryptionSpec, Scope
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.records import CellKey


def configurations(profile: Profile) -> list[EncryptionSpec]:
    """Every encrypted configuration of the run: each algorithm with each scope."""
    s = profile.server
    return [
        EncryptionSpec(algorithm=a, scope=scope)
        for a in s.encryption_algorithm
        for scope in s.encryption_scope
    ]


def configuration(cell: CellKey, profile: Profile) -> EncryptionSpec:
    """The encrypted server's configuration for a cell: its own, or the run's only one."""
    if not cell.configuration:
        return configurations(profile)[0]
    return EncryptionSpec(algorithm=cast(Algorithm, cell.algorithm), scope=cast(Scope, cell.scope))


def shape(cell: CellKey, profile: Profile) -> ShapeSpec | None:
    """The instance shape of a cell, or None for unconfined servers."""
    if not cell.shape:
        return None
    return next(s for s in profile.server.shapes if s.name == cell.shape)


def cells(profile: Profile) -> list[CellKey]:
    """The at-rest study's cells (none when the profile does not run that study)."""
    if "at-rest" not in profile.studies:
        return []
    m = measure_options(profile)
    # One configuration: cells without it, named as they always were (and --resume of an
    # older results directory finds its cells).
    specs: list[EncryptionSpec | None] = (
        list(configurations(profile)) if profile.server.dimensions else [None]
    )
    # Shapes are named even when one is listed: a confined server is not the machine's.
    shapes = [s.name for s in profile.server.shapes] or [""]
    return [
        CellKey(
            workload,
            regime,
            threads,
            algorithm=spec.algorithm if spec else "",
            scope=spec.scope if spec else "",
            shape=shape,
        )
        for spec in specs
        for shape in shapes
        for regime in m.regimes
        for workload in m.workloads
        for threads in m.threads
    ]
