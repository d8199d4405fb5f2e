"""The filesystem layer on real servers (root, a loop device, ext4 encryption): the
tde-vs-filesystem-tiny profile runs through the CLI — plain against the filesystem alone and
against TDE with it, each proven below the filesystem (the marker in plain's raw image and not
in the encrypted side's, the names listed without the key) — and leaves no mount, loop device,
key or image behind; after a SIGKILL, `encbench clean` removes them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from encbench import state
from encbench.servers import fscrypt
from tests.helpers import encbench, loops_under, mounts_under

PROFILE = "tde-vs-filesystem-tiny"
FS_ONLY = "filesystem (fscrypt)"
BOTH = "AES_CTR, scope tables + filesystem (fscrypt)"


@pytest.fixture(autouse=True)
def filesystem_layer_possible() -> None:
    why = fscrypt.unavailable()
    if why is not None:
        pytest.skip(why)  # not root, or no ext4 encryption: the run would leave the layer out


def records(state_dir: Path, kind: str) -> list[dict[str, Any]]:
    """encbench's records of one kind in the test's own state folder (state_dir sets
    XDG_STATE_HOME), read as encbench reads them: one being written, torn, is passed over."""
    assert state.base() == state_dir / "encbench"
    return state.read_records(kind, dict)


def test_the_tiny_profile_proves_both_layers_below_the_filesystem_and_leaves_nothing(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    result = encbench("run", PROFILE, "--out", str(out))
    assert result.returncode == 0, result.stderr

    record = json.loads((out / "at-rest.json").read_text())
    configs = record["configurations"]
    assert set(configs) == {FS_ONLY, BOTH}
    for config in configs.values():
        fs = config["filesystem"]
        plain, encrypted = fs["proofs"]["plain"], fs["proofs"]["encrypted"]
        assert plain["passed"] and plain["marker_found"] and not plain["encrypted"]
        assert encrypted["passed"] and encrypted["encrypted"] and not encrypted["marker_found"]
        assert encrypted["entries"] > 0 and encrypted["names_readable_without_key"] == []
        assert encrypted["example_without_key"] not in ("data", "tmp", "my.cnf")
        assert fs["key"] == "removed"
    # InnoDB under the filesystem alone is plain; under both it encrypts its tables.
    assert configs[FS_ONLY]["proofs"]["encrypted"]["tablespaces_encrypted"] == 0
    assert configs[FS_ONLY]["option_difference"] == {}
    assert configs[BOTH]["proofs"]["encrypted"]["tablespaces_encrypted"] > 0
    contents = record["filesystem"]["ciphers"][0]
    assert contents["algorithm"] == "xts(aes)" and contents["driver"]

    runs = [json.loads(line) for line in (out / "at-rest.jsonl").read_text().splitlines()]
    assert {r["cell"]["layer"] for r in runs} == {"fs", "tde+fs"}
    under_fs_only = [r for r in runs if r["cell"]["layer"] == "fs"]
    assert under_fs_only and all(r["pages_decrypted"] == 0 for r in under_fs_only)
    report = (out / "report.md").read_text()
    assert f"driver `{contents['driver']}`" in report
    assert "AES-NI" in report and "Proof below the filesystem, encrypted" in report
    # Without inline encryption the encrypted side reads through the page cache: io-bound,
    # every server ran in a memory budget, proven on the running server, and each run
    # recorded the cache it held; the summary says so beside the figures.
    if not record["filesystem"]["inline_crypt"]:
        for config in configs.values():
            io_bound = config["regimes"]["io-bound"]
            budget = io_bound["memory_budget_mib"]
            assert io_bound["page_cache_dropped"] == "before each run"
            assert budget == io_bound["buffer_pool_mb"] + 256
            for shown in io_bound["confinement"].values():
                assert shown["read_back"]["memory.limit_in_bytes"] in (str(budget << 20),)
        cached = [r["page_cache_mb"] for r in runs if r["cell"]["regime"] == "io-bound"]
        assert cached and all(c is not None and 0 <= c <= budget for c in cached)
        assert all(r["page_cache_mb"] is None for r in runs if r["cell"]["regime"] != "io-bound")
        assert "memory budget of" in report and "dropped before each run" in report
    # The kernel threads' work (loop devices, fscrypt) is the run's, recorded, not other load.
    assert all(r["kernel_cpu_s"] is not None for r in runs)

    assert mounts_under(out) == [] and loops_under(out) == []
    assert not (out / "volumes").exists()
    assert records(state_dir, "volumes") == []
    assert not (out / "private").exists()  # the run's key went with the other secrets


def test_clean_removes_the_mounts_loop_devices_and_key_of_a_killed_run(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "encbench", "run", PROFILE, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
    )
    try:
        # Killed with the encrypted side's key in its keyring and a server on a mount.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert child.poll() is None, "the run ended before its volumes were made"
            keyed = any(r.get("key_identifier") for r in records(state_dir, "volumes"))
            serving = any(
                str(r.get("root", "")).startswith(str(out)) for r in records(state_dir, "sandboxes")
            )
            if keyed and serving:
                break
            time.sleep(0.1)
        else:
            pytest.fail("no server started on an encrypted volume")
    finally:
        child.send_signal(signal.SIGKILL)  # the run this test started, by its pid
        child.wait(timeout=30)
    assert len(mounts_under(out)) == 2 and loops_under(out)

    cleaned = encbench("clean")
    assert cleaned.returncode == 0, cleaned.stderr
    assert mounts_under(out) == [] and loops_under(out) == [], cleaned.stdout
    assert cleaned.stdout.count("removed volume") == 2, cleaned.stdout
    assert records(state_dir, "volumes") == []
    assert not list(out.glob("volumes/*.img"))
    assert "nothing to clean" in encbench("clean").stdout
