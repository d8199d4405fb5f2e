"""The tunnels against their real daemons, without MariaDB: a tiny TCP server stands for it.

The private sshd's client key can forward to MariaDB's address and nothing else, and run no
command but the session's sleep; both tunnels work from a run directory whose name holds
every character their configuration files treat specially (but whitespace: check_path).
"""

from __future__ import annotations

import socket
import socketserver
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from encbench import proc
from encbench.net import tunnels
from encbench.servers import pki
from tests.helpers import skip_unless_ci

pytestmark = pytest.mark.integration

GREETING = b"HELLO FROM THE DB\n"
AWKWARD = "re#sults;'q\"b\\s%u%%${HOME}"


class _Greeter(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(GREETING)


@pytest.fixture
def db() -> Iterator[tuple[str, int]]:
    """A loopback TCP server that greets every connection: MariaDB's place in the tunnel."""
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Greeter) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield ("127.0.0.1", int(server.server_address[1]))
        server.shutdown()


@pytest.fixture
def other_port() -> Iterator[int]:
    """A second listening port on loopback, which the tunnel must not reach."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def needs_sshd() -> None:
    if proc.which("sshd") is None or proc.which("ssh") is None:
        skip_unless_ci("sshd not installed: run scripts/setup-test-extras.sh")


def through(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        return s.recv(100)


def ssh_with_the_tunnel_key(tunnel: tunnels.Tunnel, *args: str) -> list[str]:
    """An ssh client of our own that presents the tunnel's client key to its sshd."""
    sshd = tunnel.daemons[0]
    directory = sshd.log.parent
    key = next(directory.glob("client_*[!b]"))  # the private key, not the .pub
    return [
        proc.which("ssh") or "ssh",
        "-F",
        "/dev/null",
        "-i",
        key.name,
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "UserKnownHostsFile=known_hosts",
        "-o",
        "StrictHostKeyChecking=yes",
        "-p",
        str(sshd.port),
        *args,
        f"{tunnels._user()}@127.0.0.1",
    ]


def run_in(tunnel: tunnels.Tunnel, argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=tunnel.daemons[0].log.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def finish(client: subprocess.Popen[bytes], timeout_s: float) -> tuple[bytes, bytes]:
    """The client's output once it exits, or once it is killed after timeout_s."""
    try:
        return client.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        client.kill()
        return client.communicate()


def test_the_ssh_tunnel_works_from_an_awkward_run_directory(
    tmp_path: Path, db: tuple[str, int]
) -> None:
    needs_sshd()
    run_dir = tmp_path / AWKWARD
    run_dir.mkdir()
    with tunnels.ssh_tunnel(run_dir, db=db) as tunnel:
        assert through(tunnel.port) == GREETING


def test_stunnel_works_from_an_awkward_run_directory(tmp_path: Path, db: tuple[str, int]) -> None:
    if proc.which("stunnel4") is None and proc.which("stunnel") is None:
        skip_unless_ci("stunnel not installed: apt-get install stunnel4")
    run_dir = tmp_path / AWKWARD
    made = pki.generate(run_dir, "rsa2048")
    with tunnels.stunnel(run_dir, made, db=db) as tunnel:
        assert through(tunnel.port) == GREETING
        assert tunnel.sessions()[0] == 1


def test_the_tunnel_key_reaches_the_server_and_no_other_port(
    tmp_path: Path, db: tuple[str, int], other_port: int
) -> None:
    needs_sshd()
    with tunnels.ssh_tunnel(tmp_path, db=db) as tunnel:
        allowed = run_in(tunnel, ssh_with_the_tunnel_key(tunnel, "-W", f"{db[0]}:{db[1]}"))
        out, _ = finish(allowed, 10)
        assert out == GREETING  # the same key and client do reach the server
        for target in (f"127.0.0.1:{other_port}", f"localhost:{db[1]}"):
            refused = run_in(tunnel, ssh_with_the_tunnel_key(tunnel, "-W", target))
            out, err = finish(refused, 10)
            assert refused.returncode != 0 and out == b""
            assert b"administratively prohibited" in err


def test_the_tunnel_key_cannot_forward_a_remote_port(tmp_path: Path, db: tuple[str, int]) -> None:
    needs_sshd()
    with tunnels.ssh_tunnel(tmp_path, db=db) as tunnel:
        argv = ssh_with_the_tunnel_key(
            tunnel, "-N", "-o", "ExitOnForwardFailure=yes", "-R", f"0:{db[0]}:{db[1]}"
        )
        refused = run_in(tunnel, argv)
        _, err = finish(refused, 10)
        assert refused.returncode != 0
        assert b"remote port forwarding failed" in err


def test_the_tunnel_key_runs_no_command_but_the_sessions_sleep(
    tmp_path: Path, db: tuple[str, int]
) -> None:
    needs_sshd()
    marker = tmp_path / "written-by-ssh"
    with tunnels.ssh_tunnel(tmp_path, db=db) as tunnel:
        argv = ssh_with_the_tunnel_key(tunnel, "-T")
        argv.append(f"touch {marker}; echo RAN")
        client = run_in(tunnel, argv)
        with pytest.raises(subprocess.TimeoutExpired):
            client.wait(timeout=3)  # the forced `sleep` holds the session
        # Leaving the block stops sshd and its session's sleep while the client still holds it.
    out, _ = finish(client, 10)
    assert b"RAN" not in out
    assert not marker.exists()
