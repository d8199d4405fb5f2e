"""A real sandbox server in an awkward directory, and one that dies or hangs mid-run: every
failure is one ServerError that names the server, never a PyMySQL traceback or a hang."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.errors import BadInput, ServerError
from encbench.servers.mariadb.options import common_options
from encbench.servers.mariadb.sandbox import SandboxServer

pytestmark = pytest.mark.integration

# A short read timeout so that a hung server fails the test in seconds.
READ_TIMEOUT_S = 2.0


def started(root: Path, name: str = "faulty") -> SandboxServer:
    server = SandboxServer(name, root, query_timeout_s=READ_TIMEOUT_S)
    options = common_options(
        server.paths,
        port=server.port,
        buffer_pool_mb=32,
        run_as_root=os.geteuid() == 0,
        binlog=False,
    )
    try:
        server.initialize(options)
        server.start(options)
    except BaseException:
        server.destroy()
        raise
    return server


@pytest.fixture
def server(tmp_path: Path, state_dir: Path) -> Iterator[SandboxServer]:
    running = started(tmp_path / "sandbox")
    try:
        yield running
    finally:
        if running.process is not None and running.process.poll() is None:
            os.kill(running.process.pid, signal.SIGCONT)  # in case a test left it stopped
        running.destroy()


def test_a_server_in_a_directory_with_a_hash_and_quotes_keeps_its_files_inside(
    tmp_path: Path, state_dir: Path
) -> None:
    out = tmp_path / "out"
    root = out / "re#sults;'q\"b\\s%u$HOME" / "sandbox"
    server = started(root, "awkward")
    try:
        datadir, log, tmpdir = server.query("SELECT @@datadir, @@log_error, @@tmpdir")[0]
        assert Path(datadir) == root / "data"
        assert Path(log) == root / "error.log"
        assert Path(tmpdir) == root / "tmp"
        # Before quoting, `#` cut the datadir short: a directory next to the results.
        assert [p.name for p in out.iterdir()] == [root.parent.name]
    finally:
        server.destroy()


def test_a_space_in_the_sandbox_path_is_refused_before_anything_is_created(
    tmp_path: Path, state_dir: Path
) -> None:
    root = tmp_path / "with space" / "sandbox"
    with pytest.raises(BadInput, match="' ' cannot be passed to mariadb-install-db"):
        SandboxServer("spaced", root)
    assert not (tmp_path / "with space").exists()


def test_a_killed_server_is_named_with_its_signal_and_its_log(server: SandboxServer) -> None:
    pid = server.pid
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(ServerError) as caught:
        server.query("SELECT 1")
    message = str(caught.value)
    assert message.startswith(f"the faulty server (pid {pid}) died (killed by SIGKILL)")
    assert "its log ends: " in message and "\n" not in message
    assert "ready for connections" in caught.value.details()


def test_check_alive_is_quiet_for_a_well_server_and_names_a_dead_one(
    server: SandboxServer,
) -> None:
    server.check_alive()
    os.kill(server.pid, signal.SIGKILL)
    time.sleep(0.5)
    with pytest.raises(ServerError, match=r"^the faulty server \(pid \d+\) died"):
        server.check_alive()


def test_a_query_in_flight_when_the_server_dies_is_named(server: SandboxServer) -> None:
    pid = server.pid
    with pytest.raises(ServerError, match="died") as caught, server.cursor(timeout_s=30) as cur:
        os.kill(pid, signal.SIGKILL)
        cur.execute("SELECT SLEEP(10)")
    assert f"pid {pid}" in str(caught.value)


def test_a_stopped_server_times_out_within_the_read_timeout(server: SandboxServer) -> None:
    os.kill(server.pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        with pytest.raises(ServerError) as caught:
            server.query("SELECT 1")
        elapsed = time.monotonic() - began
        with pytest.raises(ServerError, match=f"did not answer within {READ_TIMEOUT_S:g} s"):
            server.global_status()  # status reads too, with the shorter of the two timeouts
    finally:
        os.kill(server.pid, signal.SIGCONT)
    assert str(caught.value) == (
        f"the faulty server (pid {server.pid}) did not answer within {READ_TIMEOUT_S:g} s "
        f"— its error log: {server.paths.error_log}"
    )
    assert READ_TIMEOUT_S <= elapsed < READ_TIMEOUT_S + 3
    server.check_alive()  # it answers again once continued


def test_a_statement_the_server_refuses_is_one_line_naming_it(server: SandboxServer) -> None:
    with pytest.raises(ServerError, match=r"^the faulty server refused a statement: .*1146"):
        server.query("SELECT * FROM mysql.no_such_table")


def test_a_start_after_kill_9_probes_only_once_the_server_has_bound_its_socket(
    server: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 leaves the socket file behind; the next start must not take it for the new
    server's and connect every poll period through the recovery (each failed connect costs
    the harness CPU inside a timed start-up).  Every probe must find the new server's socket
    file, never the killed one's: a count of probes would instead depend on how long the new
    server takes from its bind to its first answer, which a loaded machine stretches."""
    options = dict(server.options)
    assert server.process is not None
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=30)
    server.stop()
    socket_file = server.paths.socket
    assert socket_file.exists()  # what the killed server left

    def identity() -> tuple[int, int, int] | None:
        try:
            st = socket_file.stat()
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino, st.st_ctime_ns)  # ctime: an inode number may be reused

    stale = identity()
    seen: list[tuple[int, int, int] | None] = []
    opened = server._open

    def counted(*args: object, **kwargs: object) -> object:
        seen.append(identity())
        return opened(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(server, "_open", counted)
    server.start(options, poll_s=0.001)
    assert seen, "the start never probed the server"
    assert stale not in seen, "a probe connected to the killed server's socket file"
    assert None not in seen, "a probe ran with no socket file to connect to"
    assert server.query("SELECT 1") == [(1,)]
