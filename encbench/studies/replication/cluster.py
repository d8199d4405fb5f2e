"""The replication study's two clusters, a plain and a TLS Galera pair (servers/galera_pair.py)
up at once, as the profile sets them: their buffer pool, link and key type; each started,
loaded with the profile's sysbench data on node 1 (which reaches node 2 by replication, over
the link and under the pair's TLS if it has one) and described in the study's record.

Both are torn down on any exit: see servers/galera_pair.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from encbench.net import netns
from encbench.profile import Profile
from encbench.results.store import ResultStore
from encbench.servers import pki
from encbench.servers.galera_cluster import status_value
from encbench.servers.galera_pair import VARIANTS, GaleraPair
from encbench.servers.sandbox import tree_bytes
from encbench.servers.sandbox_dirs import remove_empty_sandbox_dir
from encbench.servers.sizing import BYTES_PER_ROW_ESTIMATE
from encbench.studies.replication.options import replication_options
from encbench.workloads import sysbench


def buffer_pool_mb(profile: Profile) -> int:
    """The whole data set in the pool with room to spare: the paired TPS is to measure the
    replication, not the disk (every node holds the data; see sizing.py)."""
    rows = profile.data.tables * profile.data.table_size
    return max(64, min(2048, int(rows * BYTES_PER_ROW_ESTIMATE * 1.5 / 2**20) + 32))


def provision(
    pair: GaleraPair, profile: Profile, prepare_log: Path, log: Callable[[str], None]
) -> None:
    """The pair started (node 2 joined to an empty database), then the data loaded on node 1
    with the marker table, and waited for until node 2 has applied it all."""
    pair.start()
    data = profile.data
    rows = data.tables * data.table_size
    log(f"replication: loading {data.tables} × {data.table_size:,} rows ({pair.variant})")
    sysbench.prepare(
        pair.node1.endpoint(),
        tables=data.tables,
        table_size=data.table_size,
        log=prepare_log,
        timeout_s=max(600, rows / 1000),
    )
    pair.create_marker_table()
    pair.wait_applied()


@contextmanager
def both_clusters(
    store: ResultStore, profile: Profile, log: Callable[[str], None], study: str
) -> Iterator[dict[str, GaleraPair]]:
    """The plain and the TLS cluster, started, loaded and described in the study's record
    (`study`.json); both torn down on any exit.  Two clusters rather than one restarted per
    variant: see study.py."""
    for line in netns.clean_stale():  # what a killed run left: never a live run's
        log(f"{study}: {line}")
    spec = replication_options(profile)
    with ExitStack() as stack:
        # Last out: DIR/sandbox once both clusters' sandboxes are gone.
        stack.callback(remove_empty_sandbox_dir, store)
        made = pki.generate(store.path, spec.key_type, peer=True)
        clusters = {
            variant: stack.enter_context(
                GaleraPair(
                    variant,
                    store.path,
                    pool_mb=buffer_pool_mb(profile),
                    rate_mbit=spec.rate_mbit,
                    made=made if variant == "encrypted" else None,
                    log=log,
                )
            )
            for variant in VARIANTS
        }
        for variant, cluster in clusters.items():
            provision(cluster, profile, store.path / "logs" / f"{study}-prepare-{variant}.log", log)
        record = store.read_json(f"{study}.json") or {}
        record.update(describe(clusters, profile, made))
        store.write_json(f"{study}.json", record)
        yield clusters


def describe(clusters: dict[str, GaleraPair], profile: Profile, made: pki.Pki) -> dict[str, Any]:
    node1 = clusters["plain"].node1
    data = profile.data
    return {
        "clusters": {v: c.describe() for v, c in clusters.items()},
        "link": {
            "rate_mbit": replication_options(profile).rate_mbit,
            "method": "veth pair per cluster",
        },
        "data": {
            "tables": data.tables,
            "table_size": data.table_size,
            "database_bytes": tree_bytes(node1.paths.datadir / node1.database),
        },
        "mariadb_version": node1.version(),
        "galera_version": status_value(node1, "wsrep_provider_version"),
        "key_type": replication_options(profile).key_type,
        "certificate": pki.describe(made.server_cert),
    }
