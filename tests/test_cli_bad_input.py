"""Bad input gets one line naming the problem and the fix, and exit status 2."""

from pathlib import Path

import pytest

from tests.helpers import encbench, encbench_here, tiny_profile


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
    assert_one_line_error(encbench_here("run", str(bad)), "not valid TOML")


def test_threads_not_positive(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml", threads="[4, 0]")
    assert_one_line_error(
        encbench_here("run", str(prof)), "measure.threads.1: 0 is out of range; use at least 1"
    )


def test_unknown_workload(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml", workloads='["oltp_fast"]')
    assert_one_line_error(encbench_here("run", str(prof)), "unknown workload 'oltp_fast'")


def test_output_directory_with_foreign_files(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("keep me")
    prof = tiny_profile(tmp_path / "p.toml")
    assert_one_line_error(
        encbench_here("run", str(prof), "--out", str(tmp_path / "out")), "is not an empty directory"
    )
    assert (tmp_path / "out" / "notes.txt").read_text() == "keep me"


def test_resume_of_a_directory_that_is_no_run(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench_here("run", "--resume", str(tmp_path)), "not an encbench results directory"
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
    from encbench import proc
    from encbench.commands import preflight
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
    result = encbench_here("run", str(prof), "--out", str(tmp_path / "o"))
    assert_one_line_error(result, "not enough disk", "GiB")
    assert not (tmp_path / "o").exists()


def test_every_command_has_help() -> None:
    for command in ("run", "report", "doctor", "clean"):
        result = encbench_here(command, "--help")
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
    assert_one_line_error(encbench_here("run", str(prof), "--out", str(out)), *fragments)
    assert not out.exists()  # refused before anything was created


def test_an_output_path_the_servers_cannot_read_is_refused_before_it_exists(
    tmp_path: Path,
) -> None:
    prof = tiny_profile(tmp_path / "p.toml")
    out = tmp_path / "my results"
    assert_one_line_error(
        encbench_here("run", str(prof), "--out", str(out)), "' '", "choose a path without it"
    )
    assert not out.exists()


def test_force_without_resume_is_refused(tmp_path: Path) -> None:
    prof = tiny_profile(tmp_path / "p.toml")
    assert_one_line_error(encbench_here("run", str(prof), "--force"), "--force goes with --resume")


def test_resume_with_a_changed_profile_is_refused_unless_forced(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    store = ResultStore.create(tmp_path / "out", "tiny", 'name = "tiny"\n')
    store.unlock()
    (store.path / "profile.toml").write_text('name = "tiny"\n[measure]\nthreads = [3]\n')
    assert_one_line_error(
        encbench_here("run", "--resume", str(store.path)), "changed since the run began", "--force"
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
        encbench_here("run", str(prof), "--out", str(out)),
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
    result = encbench_here(
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
    assert_one_line_error(encbench_here(command, "smoke", *args, *extra), *fragments)
    assert not out.exists()


def test_a_sysbench_option_no_study_of_the_profile_takes_is_refused(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench_here("run", "operations", "--threads", "4", "--out", str(tmp_path / "o")),
        "--threads: no study of profile operations",
        "remove --threads",
    )
    assert not (tmp_path / "o").exists()


def test_resume_takes_no_sysbench_option(tmp_path: Path) -> None:
    from encbench.results.store import ResultStore

    store = ResultStore.create(tmp_path / "out", "tiny", 'name = "tiny"\n')
    store.unlock()
    assert_one_line_error(
        encbench_here("run", "--resume", str(store.path), "--time", "5"), "--resume takes", "--time"
    )


# pydantic's own words, which a user should never read.
PYDANTIC_WORDS = ("Input should", "Field required", "Extra inputs", "List should", "String should")


@pytest.mark.parametrize(
    ("lines", "fragments"),
    [
        (
            'studies = ["at-rst"]',
            (
                'studies.0: "at-rst" is not one of the choices',
                'did you mean "at-rest"?',
                '"rejoin"',
            ),
        ),
        ("[data]\ntables = 5000", ("data.tables: 5000 is out of range; use 1 to 1000",)),
        ("[measure]\nthreads = []", ("measure.threads: the list is empty; list at least one",)),
        ('[measure]\nregimes = ["disk"]', ('"disk"', 'choose from "in-memory", "io-bound"')),
        ("[regime]\nin_memory_headroom = 1.0", ("in_memory_headroom: 1.0", "use 1.2 to 10")),
        ("[measure]\ntarget_halfwidth_pct = 0", ("0 is out of range; use above 0 and at most 50",)),
        ("[mesure]\nthreads = [1]", ("mesure: unknown key; did you mean measure?",)),
        ("[measure]\nthread = [1]", ("measure.thread: unknown key; did you mean threads?",)),
        ('[target]\nhost = "h"', ("target.user: missing; add it",)),
        ('[target]\nuser = ""\nhost = "h"', ('target.user: "" is empty; give a value',)),
        ("measure = 3", ("measure: expected a table of keys, got 3",)),
        ('[[server.shapes]]\nname = "a"\ncpus = 0', ("server.shapes.0.cpus: 0", "use 1 to 4096")),
    ],
)
def test_a_bad_profile_value_is_named_with_its_key_value_and_what_is_allowed(
    tmp_path: Path, lines: str, fragments: tuple[str, ...]
) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text(f'name = "p"\n{lines}\n')
    result = encbench_here("plan", str(prof))
    assert_one_line_error(result, f"{prof}: ", *fragments)
    assert not any(words in result.stderr for words in PYDANTIC_WORDS), result.stderr


def test_a_profile_without_a_name_is_told_to_add_one(tmp_path: Path) -> None:
    prof = tmp_path / "p.toml"
    prof.write_text('description = "x"\n')
    assert_one_line_error(encbench_here("plan", str(prof)), "name: missing; add it")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (
            ("--tables", "2000"),
            ("profile smoke with --tables 2000: data.tables: 2000", "1 to 1000"),
        ),
        (("--time", "0"), ("with --time 0: measure.run_s: 0 is out of range; use 1 to 3600",)),
        (("--threads", "4,0"), ("measure.threads.1: 0 is out of range; use at least 1",)),
        (("--threads", "4,4"), ("measure.threads: 4 is listed twice",)),
        (("--table-size", "-5"), ("data.table_size: -5 is out of range; use at least 1",)),
    ],
)
def test_a_sysbench_option_out_of_range_is_named_with_the_key_it_sets(
    args: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    result = encbench_here("plan", "smoke", *args)
    assert_one_line_error(result, *fragments)
    assert not any(words in result.stderr for words in PYDANTIC_WORDS), result.stderr


def test_a_misspelt_profile_name_is_offered_the_built_in_it_means(tmp_path: Path) -> None:
    assert_one_line_error(
        encbench_here("run", "quikc", cwd=tmp_path),
        "unknown profile 'quikc'",
        "did you mean 'quick'?",
    )
    assert not (tmp_path / "results").exists()


def test_encbench_alone_prints_its_help_and_succeeds() -> None:
    result = encbench_here()
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout and "Commands:" in result.stdout
    assert "profiles" in result.stdout


def test_keep_databases_is_the_option_and_keep_still_works() -> None:
    """Both reach the target's options: without a target, both are refused as needing one."""
    for spelling in ("--keep-databases", "--keep"):
        assert_one_line_error(encbench_here("plan", "smoke", spelling), "go with a target")
    shown = encbench_here("run", "--help").stdout
    assert "--keep-databases" in shown and "--keep " not in shown


@pytest.mark.parametrize(
    ("args", "live"), [((), False), (("--stop-live-runs",), True), (("--all",), True)]
)
def test_clean_stops_live_runs_only_when_its_flag_says_so(
    monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], live: bool
) -> None:
    """In-process, with nothing stopped for real: other runs may share this machine."""
    from click.testing import CliRunner

    from encbench import cli, proc
    from encbench.net import netns
    from encbench.servers import cgroup, images, registry

    asked: list[bool] = []
    volumes_asked: list[bool] = []
    monkeypatch.setattr(
        registry, "clean", lambda include_live_runs: asked.append(include_live_runs) or []
    )
    # The filesystem layer's images too: another run's live volumes are in the same state
    # folder, and a real clean with the flag would remove their keys and unmount them.
    monkeypatch.setattr(
        images,
        "clean_stale",
        lambda include_live_runs: volumes_asked.append(include_live_runs) or [],
    )
    groups_asked: list[bool] = []
    monkeypatch.setattr(
        cgroup,
        "clean_stale",
        lambda include_live_runs: groups_asked.append(include_live_runs) or [],
    )
    monkeypatch.setattr(proc, "stop_orphans", lambda: [])
    monkeypatch.setattr(netns, "clean_stale", lambda: [])
    result = CliRunner().invoke(cli.main, ["clean", *args])
    assert result.exit_code == 0, result.output
    assert asked == [live] and volumes_asked == [live] and groups_asked == [live]
    assert "nothing to clean" in result.output
    shown = CliRunner().invoke(cli.main, ["clean", "--help"]).output
    assert "--stop-live-runs" in shown and "--all" not in shown
