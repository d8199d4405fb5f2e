"""The server's CPU counted over sysbench's event loop only, from the server's own cgroup,
against real servers: the connect phase stays out of the window, the group lives and dies
with its server, the /proc fallback works the same way, and a write run's dirty pages are
flushed before its window closes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench.servers import cgroup
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.studies.at_rest import flushing
from encbench.workloads import sysbench
from tests.helpers import start_plain_server

TABLE_SIZE = 2000
# A client whose every thread makes the server work hard while connecting (thread_init),
# then asks for next to nothing in its loop: the old window (around all of sysbench) holds
# the connect phase's CPU, the event loop's window must not.
HEAVY_CONNECT_LUA = """
local con
function thread_init()
   con = sysbench.sql.driver():connect()
   con:query("SELECT BENCHMARK(300000, MD5('encbench'))")
end
function event()
   con:query("SELECT 1")
end
function thread_done()
   con:disconnect()
end
"""


def start(root: Path, use_cgroup: bool = True) -> SandboxServer:
    server: SandboxServer = start_plain_server(root, buffer_pool_mb=32, use_cgroup=use_cgroup)
    return server


@pytest.fixture
def server(tmp_path: Path, state_dir: Path) -> Iterator[SandboxServer]:
    s = start(tmp_path / "sandbox")
    try:
        s.query("CREATE DATABASE sbtest")
        sysbench.prepare(
            s.endpoint(), tables=1, table_size=TABLE_SIZE, log=tmp_path / "p.log", timeout_s=120
        )
        yield s
    finally:
        s.destroy()


def needs_cgroups() -> None:
    if cgroup.detect() is None:
        pytest.skip("no cgroup hierarchy encbench may write here (not root?)")


def test_the_server_runs_in_its_own_group_which_goes_with_it(server: SandboxServer) -> None:
    needs_cgroups()
    group = server.cgroup
    assert isinstance(group, cgroup.ServerCgroup)  # unshaped: the counter's group alone
    assert str(server.pid) in (group.path / "cgroup.procs").read_text().split()
    assert server.cpu_counter.source in (cgroup.SOURCE_V1, cgroup.SOURCE_V2)
    assert server.cpu_seconds() > 0
    assert group.record.file.exists()  # recorded for `encbench clean`
    server.stop()
    assert not group.path.exists()
    assert not group.record.file.exists()


def test_the_loop_window_leaves_the_connect_phase_out(
    server: SandboxServer, tmp_path: Path
) -> None:
    script = tmp_path / "heavy_connect.lua"
    script.write_text(HEAVY_CONNECT_LUA)
    counter = server.cpu_counter
    before = counter.raw()
    result = sysbench.run(
        sysbench.invocation(
            server.endpoint(),
            str(script),
            threads=4,
            time_s=0,
            events=40,
            log=tmp_path / "run.txt",
            cpu_counter=counter,
        )
    )
    after = counter.raw()
    window = result.window
    assert window is not None and window.threads == 4
    connect_phase = window.start_counter - before
    in_loop = window.end_counter - window.start_counter
    around_sysbench = after - before  # the old method
    assert before <= window.start_counter <= window.end_counter <= after
    # Four BENCHMARK calls before the loop; 40 × SELECT 1 in it.
    assert in_loop * 10 < connect_phase
    assert around_sysbench >= connect_phase + in_loop


def test_with_many_threads_connects_and_prepares_cost_the_server_outside_the_window(
    server: SandboxServer, tmp_path: Path
) -> None:
    counter = server.cpu_counter
    before = counter.raw()
    result = sysbench.run(
        sysbench.invocation(
            server.endpoint(),
            "oltp_point_select",
            threads=32,
            time_s=1,
            log=tmp_path / "run.txt",
            options=sysbench.oltp_options(1, TABLE_SIZE),
            cpu_counter=counter,
        )
    )
    after = counter.raw()
    window = result.window
    assert window is not None and window.threads == 32
    assert window.start_counter > before  # 32 connects and statement preparations
    assert window.end_counter - window.start_counter < after - before
    assert window.wall_s <= result.total_time_s + 0.1


def test_without_a_cgroup_the_window_is_read_from_proc(tmp_path: Path, state_dir: Path) -> None:
    s = start(tmp_path / "sandbox", use_cgroup=False)
    try:
        assert s.cgroup is None
        counter = s.cpu_counter
        assert counter.source == cgroup.SOURCE_PROC
        assert counter.path == Path(f"/proc/{s.pid}/stat")
        s.query("CREATE DATABASE sbtest")
        sysbench.prepare(
            s.endpoint(), tables=1, table_size=TABLE_SIZE, log=tmp_path / "p.log", timeout_s=120
        )
        before = counter.raw()
        result = sysbench.run(
            sysbench.invocation(
                s.endpoint(),
                "oltp_point_select",
                threads=2,
                time_s=1,
                log=tmp_path / "run.txt",
                options=sysbench.oltp_options(1, TABLE_SIZE),
                cpu_counter=counter,
            )
        )
        window = result.window
        assert window is not None
        assert before <= window.start_counter < window.end_counter <= counter.raw()
    finally:
        s.destroy()


def test_a_write_runs_dirty_pages_are_flushed_before_its_window_closes(
    server: SandboxServer, tmp_path: Path
) -> None:
    counter = server.cpu_counter
    flushing.flush(server, counter)
    sysbench.run(
        sysbench.invocation(
            server.endpoint(),
            "oltp_write_only",
            threads=2,
            time_s=1,
            log=tmp_path / "run.txt",
            options=sysbench.oltp_options(1, TABLE_SIZE),
        )
    )
    dirty = flushing.dirty_pages(server)
    assert dirty > 0
    before = counter.raw()
    flushed = flushing.flush(server, counter)
    assert flushed.dirty_left == 0
    assert flushed.end_counter > before  # the flush cost the server CPU, inside the window
    assert flushing.dirty_pages(server) == 0
    # the page cleaner's setting is back to the server's own
    assert float(server.query("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")[0][0]) == 90.0
