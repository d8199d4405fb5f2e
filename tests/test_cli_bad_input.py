"""Bad input gets one line naming the problem and the fix, and exit status 2."""

from pathlib import Path

import pytest

from tests.helpers import encbench, tiny_profile


def assert_one_line_error(result, *fragments: str) -> None:  # type: ignore[no-untyped-def]
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_unknown_profile(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench("run", "nosuch", cwd=tmp_path), "unknown profile 'nosuch'", "quick"
    )


def test_bad_toml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[measure\n')
    assert_one_line_error(encbench("run", str(bad)), "not valid TOML")


def test_threads_not_positive(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml", threads="[4, 0]")
    assert_one_line_error(encbench("run", str(prof)), "measure.threads.1", "greater than 0")


def test_unknown_workload(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml", workloads='["oltp_fast"]')
    assert_one_line_error(encbench("run", str(prof)), "unknown workload 'oltp_fast'")


def test_output_directory_with_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("keep me")
    prof = tiny_profile(tmp_path / "p.toml")
    assert_one_line_error(
        encbench("run", str(prof), "--out", str(tmp_path / "out")), "is not an empty directory"
    )
    assert (tmp_path / "out" / "notes.txt").read_text() == "keep me"


def test_resume_of_a_directory_that_is_no_run(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench("run", "--resume", str(tmp_path)), "not an encbench results directory"
    )


def test_missing_sysbench_names_the_package(tmp_path: Path) -> None:
    # A PATH with every tool but sysbench (stand-ins: only their presence is checked first).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("mariadbd", "mariadb-install-db", "openssl"):
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
        (bindir / name).chmod(0o755)
    prof = tiny_profile(tmp_path / "p.toml")
    result = encbench("run", str(prof), "--out", str(tmp_path / "o"), env={"PATH": str(bindir)})
    assert_one_line_error(result, "sysbench not found", "apt-get install sysbench")


def test_missing_mariadbd_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from encbench import preflight, proc
    from encbench.errors import BadInput

    monkeypatch.setattr(proc, "which", lambda name: None if name == "mariadbd" else "/bin/x")
    with pytest.raises(BadInput, match="mariadbd not found: apt-get install mariadb-server"):
        preflight.require_tools()


def test_a_cpu_profile_without_perf_is_refused_before_anything_starts(tmp_path: Path) -> None:
    # Every tool but perf (stand-ins: only their presence is checked first).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("mariadbd", "mariadb-install-db", "openssl", "sysbench"):
        (bindir / name).write_text("#!/bin/sh\nexit 0\n")
        (bindir / name).chmod(0o755)
    prof = tiny_profile(tmp_path / "p.toml", profile_cpu="true")
    out = tmp_path / "o"
    result = encbench("run", str(prof), "--out", str(out), env={"PATH": str(bindir)})
    assert_one_line_error(result, "perf not found", "apt-get install linux-perf")
    assert not out.exists()


def test_data_set_larger_than_the_disk(tmp_path: Path) -> None:
    prof = tmp_path / "huge.toml"
    prof.write_text('name = "huge"\n[data]\ntables = 1000\ntable_size = 1000000000\n')
    result = encbench("run", str(prof), "--out", str(tmp_path / "o"))
    assert_one_line_error(result, "not enough disk", "GiB")
    assert not (tmp_path / "o").exists()


def test_every_command_has_help() -> None:
    for command in ("run", "report", "doctor", "clean"):
        result = encbench(command, "--help")
        assert result.returncode == 0
        assert "Usage:" in result.stdout


def transit_profile(path: Path, line: str) -> Path:
    path.write_text(f'name = "t"\nstudies = ["in-transit"]\n[transit]\n{line}\n')
    return path


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ('key_types = ["rsa999"]', ("transit.key_types", "unknown TLS key type 'rsa999'")),
        ('tls_version = "TLSv1.0"', ("transit.tls_version", "TLSv1.2")),
        ("rtt_ms = [0, -5]", ("transit.rtt_ms", "out of range")),
        ('methods = ["wireguard"]', ("transit.methods.0",)),
        (
            'tls_version = "TLSv1.2"\nbulk_ciphers = ["ECDHE-ECDSA-AES128-GCM-SHA256"]',
            ("cannot be used with a rsa2048 key", "Au=RSA"),
        ),
        ('tls_version = "TLSv1.2"\nbulk_ciphers = ["NO-SUCH-SUITE"]', ("openssl ciphers",)),
    ],
)
def test_bad_transit_settings_get_one_line_and_exit_2(
    tmp_path: Path, line: str, fragments: tuple[str, ...]
) -> None:
    prof = transit_profile(tmp_path / "t.toml", line)
    out = tmp_path / "out"
    assert_one_line_error(encbench("run", str(prof), "--out", str(out)), *fragments)
    assert not out.exists()  # refused before anything was created


def test_an_output_path_the_servers_cannot_read_is_refused_before_it_exists(
    tmp_path: Path,
) -> None:
    prof = tiny_profile(tmp_path / "p.toml")
    out = tmp_path / "my results"
    assert_one_line_error(
        encbench("run", str(prof), "--out", str(out)), "' '", "choose a path without it"
    )
    assert not out.exists()


def test_force_without_resume_is_refused(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml")
    assert_one_line_error(encbench("run", str(prof), "--force"), "--force goes with --resume")


def test_resume_with_a_changed_profile_is_refused_unless_forced(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    store = ResultStore.create(tmp_path / "out", "tiny", 'name = "tiny"\n')
    store.unlock()
    (store.path / "profile.toml").write_text('name = "tiny"\n[measure]\nthreads = [3]\n')
    assert_one_line_error(
        encbench("run", "--resume", str(store.path)), "changed since the run began", "--force"
    )


def test_encryption_threads_out_of_range_are_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    prof = tmp_path / "ops.toml"
    prof.write_text(
        'name = "ops"\nstudies = ["operations"]\n[operations]\nencryption_threads = [1, 300]\n'
    )
    out = tmp_path / "out"
    assert_one_line_error(
        encbench("run", str(prof), "--out", str(out)),
        "operations.encryption_threads: 300 encryption threads is out of range",
        "use 1 to 255",
    )
    assert not out.exists()


def test_a_target_nobody_answers_at_is_refused_before_the_results_directory(
    tmp_path: Path,
) -> None:
    """A typo in the DSN's port: one line naming the address, exit 2, nothing written."""
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = encbench(
        "run", "smoke", "--target", f"mysql://bench@127.0.0.1:{port}/",
        cwd=tmp_path, env={"MYSQL_PWD": "x"},
    )  # fmt: skip
    assert_one_line_error(result, f"127.0.0.1:{port}", "check the target's host and port")
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (("--threads", "1,x"), ("--threads 1,x", "'x' is not a whole number", "--threads 1,8,64")),
        (("--time", "1,2"), ("--time 1,2", "give one whole number", "--time 30")),
        (("--tables", "many"), ("--tables many", "not a whole number", "--tables 8")),
        (("--table-size", ""), ("--table-size", "not a whole number", "--table-size 100000")),
    ],
)
@pytest.mark.parametrize("command", ["run", "plan"])
def test_a_sysbench_option_that_is_no_number_gets_one_line(
    tmp_path: Path, command: str, args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    extra = ("--out", str(out)) if command == "run" else ()
    assert_one_line_error(encbench(command, "smoke", *args, *extra), *fragments)
    assert not out.exists()


def test_a_sysbench_option_no_study_of_the_profile_takes_is_refused(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench("run", "operations", "--threads", "4", "--out", str(tmp_path / "o")),
        "--threads: no study of profile operations",
        "remove --threads",
    )
    assert not (tmp_path / "o").exists()


def test_resume_takes_no_sysbench_option(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    store = ResultStore.create(tmp_path / "out", "tiny", 'name = "tiny"\n')
    store.unlock()
    assert_one_line_error(
        encbench("run", "--resume", str(store.path), "--time", "5"), "--resume takes", "--time"
    )
