"""Which at-rest cells a profile asks for: per encryption configuration (where the profile
lists several, or another layer than TDE), instance shape (where it lists any), regime,
workload and thread count — in that order, so that the servers are provisioned once per
configuration and restarted once per shape and regime."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from encbench.profiles.profile import Profile, ShapeSpec
from encbench.servers.variants import Against, Algorithm, EncryptionSpec, Layer, Scope
from encbench.studies import definition
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.records import CellKey, RunRecord

# The kind whose cells this package measures itself (postgresql/: PostgreSQL's).
MARIADB = "mariadb"


def filesystem_only(profile: Profile) -> EncryptionSpec:
    """The configuration of layer `fs`: InnoDB encrypts nothing, so neither algorithm nor
    scope make another one (those fields keep the first listed and `tables`; the binary log
    follows the run's other configurations, as for plain)."""
    return EncryptionSpec(
        profile.server.encryption_algorithm[0], "tables", "fs", key_provider=profile.server.keys
    )


def configurations(profile: Profile) -> list[EncryptionSpec]:
    """Every encrypted configuration of the run: per layer, each algorithm with each scope
    (one configuration for the filesystem alone), each against what the profile lists —
    plain, and for scope all under TDE alone, scope tables (server.encryption_against)."""
    s = profile.server
    found: list[EncryptionSpec] = []
    for layer in s.encryption_layer:
        if layer == "fs":
            found.append(filesystem_only(profile))
            continue
        for spec in (
            EncryptionSpec(algorithm=a, scope=scope, layer=layer, key_provider=s.keys)
            for a in s.encryption_algorithm
            for scope in s.encryption_scope
        ):
            found += [
                replace(spec, against=against)
                for against in s.encryption_against
                if against == "plain" or (spec.scope == "all" and spec.layer == "tde")
            ]
    return found


def configuration(cell: CellKey, profile: Profile) -> EncryptionSpec:
    """The encrypted server's configuration for a cell: its own, or the run's only one."""
    if not cell.configuration:
        return configurations(profile)[0]
    if cell.layer == "fs":
        return filesystem_only(profile)
    return EncryptionSpec(
        algorithm=cast(Algorithm, cell.algorithm),
        scope=cast(Scope, cell.scope),
        layer=cast(Layer, cell.layer or "tde"),
        against=cast(Against, cell.against or "plain"),
        key_provider=profile.server.keys,
    )


def shape(cell: CellKey, profile: Profile) -> ShapeSpec | None:
    """The instance shape of a cell, or None for unconfined servers."""
    if not cell.shape:
        return None
    return next(s for s in profile.server.shapes if s.name == cell.shape)


def measures(profile: Profile, kind: str) -> bool:
    """Whether the profile's at-rest study measures this kind of server (its definition's
    kinds_in: of `[server] kinds`, or on a target MariaDB's alone, its table sets)."""
    return definition.measures(profile, RunRecord.STUDY, kind)


def cells(profile: Profile) -> list[CellKey]:
    """The at-rest study's MariaDB cells (none when the profile does not measure them)."""
    if not measures(profile, MARIADB):
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
            # TDE's cells are named as before layers existed (layer ""); the filesystem's
            # alone names neither algorithm nor scope, which it does not use.
            algorithm=spec.algorithm if spec and spec.tde else "",
            scope=spec.scope if spec and spec.tde else "",
            shape=shape,
            layer=spec.layer if spec and spec.fs else "",
            # Against plain, as every cell before there was a choice: not named.
            against="" if spec is None or spec.against == "plain" else spec.against,
        )
        for spec in specs
        for shape in shapes
        for regime in m.regimes
        for workload in m.workloads
        for threads in m.threads
    ]
