"""The transit building blocks against a real sandboxed MariaDB 10.11 with TLS (rsa2048)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from encbench import proc
from encbench.net import tunnels
from encbench.servers import pki
from encbench.servers.mariadb import tls
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.target import Connection
from encbench.workloads import connrate
from tests.helpers import processes_owned_by, skip_unless_ci
from tests.net.sandbox import tcp_sandbox

pytestmark = pytest.mark.integration


@dataclass
class Bench:
    server: SandboxServer
    pki: pki.Pki
    target: Connection
    password: str
    workdir: Path
    root: Path


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    missing = [n for n in ("mariadbd", "sysbench", "openssl", "mariadb") if not proc.which(n)]
    if missing:
        skip_unless_ci(f"{', '.join(missing)} not installed: run `make setup`")
    root = tmp_path_factory.mktemp("transit")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_STATE_HOME", str(root / "state"))
        made = pki.generate(root, "rsa2048")
        with tcp_sandbox(root, name="transit", made=made, buffer_pool_mb=32) as box:
            workdir = pki.sysbench_dir(made, root / "client")
            yield Bench(box.server, made, box.target, box.password, workdir, root)


def test_a_tls_connection_is_proven_encrypted_and_a_plain_one_plain(bench: Bench) -> None:
    log = bench.root / "proof.log"
    args = {"workdir": bench.workdir, "password": bench.password, "log": log}
    encrypted = connrate.sysbench_session(bench.target, ssl=True, **args)  # type: ignore[arg-type]
    tls.prove(encrypted, encrypted=True, what="sysbench --mysql-ssl=on")
    assert encrypted.version == "TLSv1.3"
    plain = connrate.sysbench_session(bench.target, ssl=False, **args)  # type: ignore[arg-type]
    tls.prove(plain, encrypted=False, what="sysbench --mysql-ssl=off")

    host, port, user = bench.target.host, bench.target.port, bench.target.user
    client = tls.client_session(host, port, user, bench.password, bench.pki, bench.workdir)
    tls.prove(client, encrypted=True, what="mariadb --ssl")
    client = tls.client_session(host, port, user, bench.password, None, bench.workdir)
    tls.prove(client, encrypted=False, what="mariadb --skip-ssl")


def test_the_handshake_counter_counts_exactly_the_encrypted_connections(bench: Bench) -> None:
    def measure(ssl: bool) -> tuple[connrate.ConnRate, tls.TlsCounters]:
        before = tls.counters(bench.server.global_status())
        rate = connrate.measure(
            bench.target,
            ssl=ssl,
            threads=1,
            time_s=1,
            workdir=bench.workdir,
            password=bench.password,
            log=bench.root / "count.log",
        )
        return rate, tls.counters(bench.server.global_status()).minus(before)

    # The harness's own status reads use no TLS (SandboxServer disables it), so they add none.
    plain, plain_delta = measure(False)
    assert plain.connections > 0 and plain_delta.finished_accepts == 0
    encrypted, tls_delta = measure(True)
    assert tls_delta.finished_accepts >= encrypted.connections
    assert tls_delta.finished_accepts <= encrypted.connections + 2  # in flight at the end
    # libmariadb does not resume TLS sessions: every connection pays a full handshake.
    assert tls_delta.session_cache_hits == 0


def test_tls_costs_connection_rate_and_both_clients_measure_it(
    bench: Bench, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = connrate.build_connloop(bench.root)
    common = {"workdir": bench.workdir, "password": bench.password, "log": bench.root / "r.log"}
    lua: dict[bool, list[float]] = {False: [], True: []}
    c_loop: list[float] = []
    # Interleaved rounds: drift of the machine hits both clients alike.
    for _ in range(3):
        for ssl in (False, True):
            rate = connrate.measure(bench.target, ssl=ssl, threads=1, time_s=1, **common)  # type: ignore[arg-type]
            lua[ssl].append(rate.per_s)
        c_rate = connrate.measure_connloop(
            binary,
            bench.target,
            ssl=False,
            threads=1,
            time_s=1.0,
            **common,  # type: ignore[arg-type]
        )
        c_loop.append(c_rate.per_s)
    best_plain, best_tls, best_c = max(lua[False]), max(lua[True]), max(c_loop)
    with capsys.disabled():
        print(
            f"\nconnections/s, 1 thread: lua plain {best_plain:.0f}, lua TLS {best_tls:.0f}, "
            f"C plain {best_c:.0f} (lua/C {best_plain / best_c:.0%})"
        )
    assert best_tls < best_plain / 2
    # Whether the Lua client reaches 90% of the C loop is a benchmark, not a test: the figures
    # printed above (one run on a shared machine) are no verdict either way.
    assert best_c > 0


def test_stunnel_carries_a_connection_and_stops_leaving_no_process(bench: Bench) -> None:
    db = (bench.target.host, bench.target.port)
    with tunnels.stunnel(bench.root, bench.pki, db=db) as tunnel:
        through = Connection.tcp("127.0.0.1", tunnel.port, bench.target.user, bench.target.database)
        session = connrate.sysbench_session(
            through, ssl=False, workdir=bench.workdir, password=bench.password, log=bench.root / "s"
        )
        # MariaDB sees the tunnel's plain connection; the encryption is stunnel's, and its
        # server side names the suite of that one handshake.
        assert not session.encrypted
        count, suite = tunnel.sessions()
        assert count == 1 and suite.startswith("TLSv1.3 ciphersuite: TLS_")
        assert any("stunnel" in p for p in processes_owned_by(os.getpid()))
    assert not [p for p in processes_owned_by(os.getpid()) if "stunnel" in p]


@pytest.mark.parametrize(
    "cipher",
    [
        "aes128-ctr",
        "aes128-gcm@openssh.com",
        "aes256-gcm@openssh.com",
        "chacha20-poly1305@openssh.com",
    ],
)
def test_an_ssh_tunnel_carries_a_connection_and_stops_leaving_no_process(
    bench: Bench, cipher: str
) -> None:
    if proc.which("sshd") is None:
        skip_unless_ci("sshd not installed: run scripts/setup-test-extras.sh")
    db = (bench.target.host, bench.target.port)
    with tunnels.ssh_tunnel(bench.root, db=db, cipher=cipher) as tunnel:
        through = Connection.tcp("127.0.0.1", tunnel.port, bench.target.user, bench.target.database)
        rate = connrate.measure(
            through,
            ssl=False,
            threads=1,
            time_s=1,
            workdir=bench.workdir,
            password=bench.password,
            log=bench.root / "ssh.log",
        )
        assert rate.connections > 0 and rate.errors == 0
        assert tunnels.ssh_cipher(tunnel) == cipher
        assert tunnel.sessions()[0] >= rate.connections
    left = subprocess.run(["pgrep", "-a", "sshd"], capture_output=True, text=True).stdout
    assert str(bench.root) not in left
    assert not [p for p in processes_owned_by(os.getpid()) if "ssh" in p]
