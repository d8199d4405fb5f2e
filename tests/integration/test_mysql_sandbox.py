"""MySQL 9.7 as the at-rest study's sandboxes (`[server] install = "mysql"`): two servers
from its private root, the encrypted one with default_table_encryption and the keyring
component (its keyring file 0600 in the run's private directory), each proven by its
tablespaces and raw files; every run paired, the report naming MySQL and saying that its
runs are not proven one by one; nothing left running."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from encbench import roots
from tests.helpers import encbench, skip_unless_ci, tiny_profile


@pytest.fixture(autouse=True)
def root_built() -> None:
    if roots.find("mysql") is None:
        skip_unless_ci(roots.missing_why("mysql"))


def test_mysql_sandboxes_measure_table_encryption_with_their_proofs(
    tmp_path: Path, state_dir: Path
) -> None:
    # In memory only (the suite's time): the pool's size comes from the data's, which
    # MySQL's statistics give only once fresh (the data's size is checked below).
    profile = tiny_profile(tmp_path / "p.toml")
    profile.write_text(profile.read_text() + '[server]\ninstall = "mysql"\n')
    out = tmp_path / "out"
    result = encbench("run", str(profile), "--out", str(out))
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["variant"] for r in runs} == {"plain", "encrypted"}
    assert {r["cell"]["regime"] for r in runs} == {"in-memory"}
    assert all(r["pages_decrypted"] == 0 for r in runs)  # MySQL counts none
    record = json.loads((out / "at-rest.json").read_text())
    assert record["family"] == "MySQL" and record["mariadb_version"].startswith("9.7.")
    assert record["data"]["size_mb"] > 0  # fresh statistics, not MySQL's cached zero
    assert record["encryption"]["key_management"] == "component_keyring_file"
    proofs = record["proofs"]
    assert (
        proofs["encrypted"]["tablespaces_encrypted"] == proofs["encrypted"]["tablespaces_checked"]
    )
    assert proofs["plain"]["tablespaces_encrypted"] == 0
    assert proofs["encrypted"]["marker_found_in"] == []
    assert "encbench_proof.ibd" in proofs["plain"]["marker_found_in"]
    assert record["option_difference"] == {"default_table_encryption": "ON"}
    server = json.loads((out / "summary.json").read_text())["servers"]["at-rest"]
    assert server["name"] == "MySQL" and server["version"].startswith("9.7.")
    report = (out / "report.md").read_text()
    assert "MySQL 9.7." in report.split("Software:")[1]
    assert "Encryption: component_keyring_file, AES-256 (MySQL's only)" in report
    assert "MySQL counts no pages through the cipher" in report
    assert "The cipher's floor" not in report
    leftovers = [
        " ".join(p.info["cmdline"])
        for p in psutil.process_iter(["cmdline"])
        if str(out) in " ".join(p.info["cmdline"] or [])
    ]
    assert leftovers == []


def test_what_mysql_sandboxes_do_not_measure_yet_is_refused_in_one_line(tmp_path: Path) -> None:
    for extra, words in (
        ('studies = ["at-rest", "in-transit"]\n', "in-transit not (this host"),
        ('[server]\nencryption_scope = "all"\n', 'scope "tables"'),
        ('[server]\nencryption_algorithm = "AES_CBC"\n', "one cipher"),
    ):
        profile = tmp_path / "p.toml"
        text = 'name = "x"\n' + extra
        text += 'install = "mysql"\n' if "[server]" in extra else '[server]\ninstall = "mysql"\n'
        profile.write_text(text)
        result = encbench("plan", str(profile))
        assert result.returncode == 2, result.stdout
        [line] = result.stderr.strip().splitlines()
        assert words in line, line
