"""`encbench plan`: what a run would create and measure on a target, printed; nothing is
created.  The server is only read (variables, grants, the catalogue).  Its login,
privileges and key plugin are the target's part of the plan (servers/mariadb/readiness.py); this is
the study's: the load it puts on the server, the regimes its buffer pool allows, every
statement it would send, and which cells it would measure."""

from __future__ import annotations

from encbench.profiles.durations import cell_seconds, duration
from encbench.profiles.profile import Profile
from encbench.servers import fscrypt
from encbench.servers.mariadb import prerequisites
from encbench.servers.mariadb.user_server import UserServer
from encbench.servers.owned import MARKER_TABLE, PLACEHOLDER_KEY
from encbench.studies.at_rest import target_regimes, volumes
from encbench.studies.at_rest.cells import cells
from encbench.studies.at_rest.dialects import Dialect, dialect_for
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.pair import estimated_data_mb
from encbench.studies.at_rest.table_sets import names_for_key, statements


def _server(profile: Profile) -> UserServer:
    assert profile.target is not None
    return UserServer.of_target(profile.target)


def existing_databases(server: UserServer) -> list[str]:
    """Databases of encbench's names already there: a run leaves them alone."""
    notes = []
    taken = server.query(
        "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE %s",
        ("encbench\\_%",),
    )
    for (name,) in taken:
        marked = server.query(
            "SELECT COUNT(*) FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
            (name, MARKER_TABLE),
        )[0][0]
        notes.append(
            f"note: {name} exists ({'an encbench run kept it' if marked else 'NOT encbench'}'s); "
            "a new run uses other names and leaves it alone"
        )
    return notes


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def load_lines(profile: Profile, pool_bytes: int) -> list[str]:
    """The data and the clients a run puts on the server, and for how long."""
    d, rule = profile.data, measure_options(profile)
    names = [f"`{name}`" for name in names_for_key("…").values()]
    set_mb = estimated_data_mb(profile)
    todo = cells(profile)
    measured = [c for c in todo if target_regimes.problem(c.regime, pool_bytes, profile) is None]
    tables = f"{d.tables} table{'s' if d.tables != 1 else ''}"
    out = [
        f"  load on the target: {len(names)} databases, {_listed(names)} (… = 12 hex digits "
        f"of the results directory), each {tables} × {d.table_size:,} rows ≈ "
        f"{target_regimes.size(set_mb)} ({target_regimes.size(len(names) * set_mb)} in all), "
        "loaded by sysbench prepare from this host and rebuilt by ALTER TABLE"
    ]
    if not measured:
        out.append("  then nothing: no cell's regime fits its buffer pool (below)")
        return out
    out.append(
        f"  then sysbench {_listed(list(rule.workloads))} at "
        f"{_listed([str(t) for t in rule.threads])} threads, one database at a time, for about "
        f"{duration(cell_seconds(rule) * len(measured))} ({len(measured)} of {len(todo)} cells "
        "measured, each until its budget at most; loading not counted)"
    )
    return out


def regime_lines(profile: Profile, pool_bytes: int) -> list[str]:
    out = [
        f"  regimes with its buffer pool of {target_regimes.size(pool_bytes / 2**20)} "
        "(innodb_buffer_pool_size, which encbench does not change):"
    ]
    for regime in ("in-memory", "io-bound"):
        fit = target_regimes.fit(regime, pool_bytes, profile)
        out.append(f"    {target_regimes.plan_line(fit, profile)}")
    return out


def target_checks(server: UserServer) -> tuple[int, Dialect]:
    """The target's buffer pool in bytes and its family's SQL (read-only queries)."""
    facts = prerequisites.read_facts(server)
    pool = int(facts.variables.get("innodb_buffer_pool_size", "0"))
    return pool, dialect_for(prerequisites.family(facts.variables))


def target_lines(profile: Profile) -> list[str]:
    """What `plan` says of a target beyond the cells: the load, the regimes its pool allows,
    every statement a run would send, and which cells it would measure."""
    if profile.target is None:
        return []
    server = _server(profile)
    pool, dialect = target_checks(server)
    out = load_lines(profile, pool) + regime_lines(profile, pool)
    out += [f"  {note}" for note in existing_databases(server)]
    out.append("  would create and run, in this order:")
    out += [f"    {s}" for s in statements(profile, PLACEHOLDER_KEY, dialect)]
    for c in cells(profile):
        why = target_regimes.problem(c.regime, pool, profile)
        out.append(f"  cell {c.label}: " + (f"skipped — {why}" if why else "measured"))
    return out


def layer_lines(profile: Profile) -> list[str]:
    """What `plan` says of the filesystem layer: the images it would make, or why this
    machine leaves its configurations out."""
    if not profile.server.filesystem or profile.target is not None:
        return []
    why = fscrypt.unavailable()
    if why is not None:
        return [f"  the filesystem layer's cells: left out here — {why}"]
    size = volumes.image_bytes(profile) // volumes.MIB
    return [
        f"  every server on its own {size:,} MiB ext4 image on a loop device (in the results "
        "directory, deleted at the end); under the filesystem layer, fscrypt "
        f"{profile.server.fscrypt_contents} / {profile.server.fscrypt_filenames}"
    ]


def key_lines(profile: Profile) -> list[str]:
    """What `plan` says of TDE's keys on encbench's own servers: where they come from."""
    if profile.target is not None or profile.calibration:
        return []
    if all(layer == "fs" for layer in profile.server.encryption_layer):
        return []
    provider = profile.server.keys
    where = {
        "key-file": "a key file in the run's private directory (mode 0600), read by "
        "file_key_management",
        "keyring-file": "MySQL's keyring file component, its file in the run's private "
        "directory (mode 0600)",
        "key-server": "a key server of the run's own (OpenBao in production mode, Vault's "
        "API, on the run's own CA), read by hashicorp_key_management with a token that may "
        "read the keys and nothing else (in the server's option file, mode 0600); AES-CBC, "
        "the server's cipher with that plugin; each run proven by the key server's audit log",
    }
    return [f'  TDE\'s keys (key_provider = "{provider}"): {where[provider]}']


def plan_lines(profile: Profile) -> list[str]:
    return target_lines(profile) + key_lines(profile) + layer_lines(profile)
