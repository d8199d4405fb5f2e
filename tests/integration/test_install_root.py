"""A newer MariaDB than this host's, from its private root (`[server] install =
"mariadb-11.8"`, machine/roots.py and servers/mariadb/installs.py): the at-rest and in-transit
studies'
sandboxes run MariaDB 11.8 with that root's plugins and OpenSSL, proven as the host's are,
and the results name the release and the root; a profile whose other studies run this
host's MariaDB (its backup tool, Galera) is refused in one line; nothing is left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import encbench, encbench_here, need_root, running_from, tiny_profile

ROOT = "mariadb-11.8"


@pytest.fixture(autouse=True)
def root_built() -> None:
    need_root(ROOT)


def with_install(path: Path) -> Path:
    path.write_text(path.read_text() + f'[server]\ninstall = "{ROOT}"\n')
    return path


def test_at_rest_on_mariadb_11_8_proves_each_run_and_names_the_release_and_its_openssl(
    tmp_path: Path, state_dir: Path
) -> None:
    profile = with_install(tiny_profile(tmp_path / "p.toml"))
    out = tmp_path / "out"
    result = encbench("run", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    encrypted = [r for r in runs if r["variant"] == "encrypted"]
    assert encrypted and {r["variant"] for r in runs} == {"plain", "encrypted"}
    record = json.loads((out / "at-rest.json").read_text())
    assert record["mariadb_version"].startswith("11.8.")
    assert record["install"]["name"] == ROOT and record["install"]["suite"] == "trixie"
    assert record["install"]["openssl"].startswith("3.")
    assert all(p["tablespaces_encrypted"] > 0 for p in [record["proofs"]["encrypted"]])
    server = json.loads((out / "summary.json").read_text())["servers"]["at-rest"]
    assert server["name"] == "MariaDB" and server["version"].startswith("11.8.")
    report = (out / "report.md").read_text()
    assert "MariaDB 11.8." in report.split("Software:")[1]
    assert f"Servers from a private root ({ROOT}, Debian trixie)" in report
    assert running_from(out) == []


def test_in_transit_on_mariadb_11_8_proves_its_tls(tmp_path: Path, state_dir: Path) -> None:
    profile = tmp_path / "t.toml"
    profile.write_text(
        'name = "tiny-transit"\nstudies = ["in-transit"]\n[transit]\ntests = ["connect"]\n'
        'methods = ["tls"]\nconnect_threads = [1]\nwarmup_s = 0\nmin_rounds = 2\n'
        "max_rounds = 2\ninterference_max_pct = 100\n"
    )
    with_install(profile)
    out = tmp_path / "out"
    result = encbench("run", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    record = json.loads((out / "in-transit.json").read_text())
    assert record["mariadb_version"].startswith("11.8.") and record["install"]["name"] == ROOT
    assert all(p["encrypted"].startswith("TLSv1.3 ") for p in record["proofs"].values())
    assert "its TLS is that root's OpenSSL" in (out / "report.md").read_text()
    assert running_from(out) == []


def test_a_study_that_runs_this_hosts_mariadb_is_refused_with_the_install(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text('name = "x"\nstudies = ["at-rest", "operations"]\n')
    with_install(profile)
    result = encbench_here("plan", str(profile))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert 'server.install = "mariadb-11.8"' in line and "operations" in line
    assert "remove them from studies, or server.install" in line
