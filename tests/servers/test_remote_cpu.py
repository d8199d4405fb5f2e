"""The server's CPU over ssh (servers/remote_cpu.py): the same one-shell protocol, driven
here through a local `sh` in ssh's place (the real sshd is in the integration tests), with a
real process named mariadbd (a copy of sleep) as the server."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.errors import BadInput
from encbench.servers import postgresql
from encbench.servers.cgroup import parse_counter
from encbench.servers.remote_cpu import SshCpu


class LocalShell(SshCpu):
    """SshCpu whose "ssh" is a local shell: what is tested is everything after connecting."""

    def argv(self) -> list[str]:
        return ["sh"]


@pytest.fixture
def mariadbd(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    sleep = shutil.which("sleep")
    assert sleep is not None
    fake = tmp_path / "mariadbd"
    shutil.copy(sleep, fake)
    process = subprocess.Popen([str(fake), "60"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_utime_and_stime_are_read_after_the_command_name_even_with_spaces() -> None:
    line = "1234 (my server) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0"
    assert parse_counter("proc_stat_ticks", line) == 325
    with pytest.raises(ValueError):
        parse_counter("proc_stat_ticks", "not a stat line")


def test_the_servers_process_is_found_from_its_pid_file_and_its_cpu_read(
    tmp_path: Path, mariadbd: subprocess.Popen[bytes]
) -> None:
    pid_file = tmp_path / "server.pid"
    pid_file.write_text(f"{mariadbd.pid}\n")
    cpu = LocalShell("host", "", tmp_path / "ssh.log")
    try:
        cpu.open(str(pid_file))
        assert cpu.pid == mariadbd.pid
        assert cpu.ticks_per_s > 0
        first = cpu.read_s()
        assert first >= 0 and cpu.read_s() >= first
    finally:
        cpu.close()
    assert cpu.process is None


def test_a_pid_file_naming_another_program_is_refused(tmp_path: Path) -> None:
    other = subprocess.Popen(["sleep", "60"])
    try:
        pid_file = tmp_path / "server.pid"
        pid_file.write_text(f"{other.pid}\n")
        cpu = LocalShell("host", "", tmp_path / "ssh.log")
        try:
            with pytest.raises(BadInput, match="is 'sleep', not mariadbd or mysqld"):
                cpu.open(str(pid_file))
        finally:
            cpu.close()
    finally:
        other.kill()
        other.wait()


def test_the_process_must_be_one_its_kind_names(
    tmp_path: Path, mariadbd: subprocess.Popen[bytes]
) -> None:
    pid_file = tmp_path / "server.pid"
    pid_file.write_text(f"{mariadbd.pid}\n")
    cpu = LocalShell("host", "", tmp_path / "ssh.log", postgresql.KIND)
    try:
        with pytest.raises(BadInput, match="is 'mariadbd', not postgres:"):
            cpu.open(str(pid_file))
    finally:
        cpu.close()


def test_a_missing_pid_file_is_one_line_naming_it(tmp_path: Path) -> None:
    cpu = LocalShell("host", "", tmp_path / "ssh.log")
    try:
        with pytest.raises(BadInput, match="failed"):
            cpu.open(str(tmp_path / "absent.pid"))
    finally:
        cpu.close()


def test_a_connection_that_ends_says_so_with_sshs_own_words(tmp_path: Path) -> None:
    class Refused(SshCpu):
        def argv(self) -> list[str]:
            return ["sh", "-c", "echo 'Permission denied (publickey).' >&2; exit 255"]

    cpu = Refused("nobody@host", "", tmp_path / "ssh.log")
    try:
        with pytest.raises(BadInput, match=r"Permission denied \(publickey\)"):
            cpu.open("/run/mysqld/mysqld.pid")
    finally:
        cpu.close()


def test_the_ssh_command_never_prompts_and_never_takes_the_host_for_an_option() -> None:
    argv = SshCpu("bench@db.example", "/cfg", Path("/dev/null")).argv()
    assert "BatchMode=yes" in argv
    assert argv[-3:] == ["--", "bench@db.example", "sh"]
    assert argv[argv.index("-F") + 1] == "/cfg"
