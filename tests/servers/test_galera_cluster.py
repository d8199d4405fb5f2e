"""The Galera cluster both Galera studies configure: its nodes placed on their hosts, their
options as a bootstrapping node and as a member, and an emptied node, without a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench.servers import registry
from encbench.servers.mariadb import galera
from encbench.servers.mariadb.galera_cluster import GaleraCluster

LAUNCH = ["ip", "netns", "exec", "encb-test"]


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GaleraCluster[str]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # a private registry
    monkeypatch.setattr(galera, "provider", lambda: Path("/usr/lib/galera/libgalera_smm.so"))
    roots = {role: tmp_path / "sandbox" / f"galera-{role}" for role in ("donor", "joiner")}
    return GaleraCluster(roots, pool_mb=64, logs=tmp_path / "logs")


def test_a_placed_node_starts_inside_its_host_with_its_temporary_files_in_its_sandbox(
    cluster: GaleraCluster[str],
) -> None:
    with cluster:
        node = cluster.place(
            "donor", name="donor", node_name="plain-donor", address="10.0.0.1", launch=LAUNCH
        )
        root = cluster.roots["donor"]
        assert node.launch_prefix == [*LAUNCH, "env", f"TMPDIR={root.absolute() / 'tmp'}"]
        assert cluster.hosts["donor"] == galera.Node("plain-donor", "10.0.0.1")
        socket_dir = node.socket_dir
        assert socket_dir.is_dir()
    assert not socket_dir.exists()  # closing the cluster destroyed the node


def test_the_first_node_bootstraps_and_a_member_joins_its_peers_with_the_same_server_options(
    cluster: GaleraCluster[str],
) -> None:
    with cluster:
        for role, address in (("donor", "10.0.0.1"), ("joiner", "10.0.0.2")):
            cluster.place(role, name=role, node_name=role, address=address, launch=LAUNCH)
        first = cluster.node_options("donor", peers=(), sst_method="rsync")
        member = cluster.node_options(
            "joiner", peers=(cluster.hosts["donor"],), sst_method="rsync", sst_donor="donor"
        )
        assert first["wsrep_cluster_address"] == "gcomm://"
        assert member["wsrep_cluster_address"] == f"gcomm://10.0.0.1:{galera.GCOMM_PORT}"
        assert member["wsrep_sst_donor"] == "donor" and "wsrep_sst_donor" not in first
        assert first["wsrep_cluster_name"] == member["wsrep_cluster_name"]
        for role, options in (("donor", first), ("joiner", member)):
            assert cluster.server_options(role).items() <= options.items()
            assert options["innodb_buffer_pool_size"] == "64M"


def test_an_emptied_node_keeps_an_empty_data_directory_for_its_next_full_transfer(
    cluster: GaleraCluster[str],
) -> None:
    with cluster:
        node = cluster.place("joiner", name="joiner", node_name="j", address="10.0.0.2", launch=[])
        node.root.mkdir(parents=True)
        (node.root / registry.SANDBOX_MARKER).write_text("")
        node.paths.datadir.mkdir()
        (node.paths.datadir / "grastate.dat").write_text("seqno: 7\n")
        cluster.empty("joiner")
        assert node.paths.datadir.is_dir() and not any(node.paths.datadir.iterdir())
