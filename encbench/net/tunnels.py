"""Encryption outside the server: stunnel (TLS) and an SSH port forward, each a context manager
that owns its processes.

Every daemon runs in its own process group with the ENCBENCH_OWNER marker, keeps its files
(configuration, keys, log) in a private run directory, is ready when its port is in LISTEN
state, and is stopped with SIGTERM, then SIGKILL, by its own pid.  Readiness is read from
/proc/PID/net/tcp rather than by connecting: a probe connection would make stunnel or ssh
open a real connection to MariaDB and count as an aborted connect in the server's status.
That file shows the sockets of the daemon's own network namespace, so it also works for a
daemon started inside one (see netns.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from encbench import proc, stopping
from encbench.errors import BadInput, ToolError
from encbench.servers import keys
from encbench.servers.local import check_path
from encbench.servers.pki import Pki

STUNNEL_HINT = "install it: apt-get install stunnel4"
SSH_HINT = "install them: apt-get install openssh-server openssh-client"
SSH_CIPHERS = (
    "aes128-cbc",  # the seed's "apples to apples" match for DHE-RSA-AES256-SHA's CBC mode
    "aes256-cbc",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
)
SSH_KEY_TYPES = {"ed25519": ("-t", "ed25519"), "rsa4096": ("-t", "rsa", "-b", "4096")}
SSH_KEY_TYPES |= {
    "rsa2048": ("-t", "rsa", "-b", "2048"),
    "ecdsa-p256": ("-t", "ecdsa", "-b", "256"),
}
PRIVSEP_DIR = Path("/run/sshd")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


listening = proc.listening  # one reader of /proc: see proc.listening

# What sshd ("Bind to port N on 127.0.0.1 failed: Address already in use") and ssh -L
# ("bind [127.0.0.1]:N: Address already in use") log when the port free_port chose was taken
# by another process between the choice and the daemon's bind.
PORT_TAKEN = b"Address already in use"
PORT_TRIES = 3


class PortTaken(ToolError):
    """The daemon exited at start-up because its port was no longer free."""


class Daemon:
    """One long-running helper process: started in its own group, stopped by its pid."""

    def __init__(
        self, name: str, argv: Sequence[str], log: Path, port: int, cwd: Path | None = None
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.cwd = cwd
        self.log = log
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 20) -> None:
        """Start and wait for the port; on any failure or interrupt while waiting (Ctrl-C,
        SIGTERM) the process is stopped before the exception goes on."""
        try:
            self._start(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout_s: float) -> None:
        with open(self.log, "ab") as out:
            logged_before = out.tell()
            try:
                self.process = proc.start_streams(
                    self.argv,
                    cwd=self.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            except FileNotFoundError as exc:
                raise BadInput(f"{self.argv[0]} not found") from exc
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                failure = PortTaken if self._logged_since(logged_before, PORT_TAKEN) else ToolError
                raise failure(
                    f"{self.name} exited during start-up",
                    argv=self.argv,
                    phase=f"start {self.name}",
                    tail=proc.tail(self.log),
                    hint=f"see {self.log}",
                )
            if listening(self.process.pid, self.port):
                return
            time.sleep(0.02)
        self.stop()
        raise ToolError(
            f"{self.name} did not listen on port {self.port} within {timeout_s:.0f} s",
            argv=self.argv,
            phase=f"start {self.name}",
            tail=proc.tail(self.log),
        )

    def _logged_since(self, offset: int, needle: bytes) -> bool:
        try:
            with open(self.log, "rb") as log:
                log.seek(offset)
                return needle in log.read()
        except OSError:
            return False

    @stopping.whole
    def stop(self) -> None:
        """SIGTERM to the group, then SIGKILL; never raises.  Descendants that left the group
        (sshd's per-connection child calls setsid(), and the session's command has a pty
        session of its own) are found by parentage first and killed by pid after."""
        process, self.process = self.process, None
        if process is None:
            return
        offspring = proc.descendants(process.pid)
        proc.stop_group(process, ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)))
        proc.kill_pids(offspring)

    @property
    def pid(self) -> int:
        if self.process is None:
            raise RuntimeError(f"{self.name} is not running")
        return self.process.pid


@dataclass(frozen=True)
class Tunnel:
    """A running tunnel: clients dial `port` on loopback in plain; `daemons` are its processes
    (for their CPU); `proof_log` is the log in which the tunnel names each session's cipher."""

    port: int
    daemons: tuple[Daemon, ...]
    proof_log: Path
    proof_pattern: re.Pattern[str]

    @property
    def pids(self) -> list[int]:
        return [d.pid for d in self.daemons]

    def sessions(self) -> tuple[int, str]:
        """How many encrypted sessions (stunnel's server side) or forwarded channels (the ssh
        client's -v log: sshd itself logs nothing per channel) the log shows so far, and the
        last cipher it names: the tunnel's own account that it encrypts."""
        try:
            text = self.proof_log.read_text(errors="replace")
        except OSError:
            return 0, ""
        ciphers = self.proof_pattern.findall(text)
        return len(ciphers), ciphers[-1] if ciphers else ""

    def resumed(self) -> int:
        """Handshakes the stunnel server resumed from an earlier session (0 for ssh)."""
        try:
            return len(STUNNEL_RESUMED.findall(self.proof_log.read_text(errors="replace")))
        except OSError:
            return 0


# stunnel at `debug = info` logs every handshake's suite on the accepting (server) side, e.g.
# "TLSv1.3 ciphersuite: TLS_AES_256_GCM_SHA384 (256-bit encryption)".
STUNNEL_PROOF = re.compile(r"(TLSv1\.[23] ciphersuite: \S+)")
STUNNEL_RESUMED = re.compile(r"TLS accepted: previous session reused")
# ssh -v logs the negotiated cipher once and opens one direct-tcpip channel per connection
# ("channel 1: new direct-tcpip [direct-tcpip]" in OpenSSH 9; "new [direct-tcpip]" before).
SSH_CIPHER = re.compile(r"kex: client->server cipher: (\S+)")
# The rest of what the tunnel negotiated once, when it opened: the MAC ("<implicit>" for the
# AEAD ciphers), the key exchange and the host key's signature algorithm.
SSH_TERMS = {
    "mac": re.compile(r"kex: client->server cipher: \S+ MAC: (\S+)"),
    "kex": re.compile(r"kex: algorithm: (\S+)"),
    "host_key": re.compile(r"kex: host key algorithm: (\S+)"),
}
SSH_CHANNEL = re.compile(r"(channel \d+: new (?:direct-tcpip|\[direct-tcpip\]))")


@contextlib.contextmanager
def running(daemon: Daemon) -> Iterator[Daemon]:
    daemon.start()  # stops what it started if it fails or is interrupted
    try:
        yield daemon
    finally:
        daemon.stop()


def start_on_free_ports(
    stack: contextlib.ExitStack[bool | None],
    daemons: Callable[[], Sequence[Daemon]],
    tries: int = PORT_TRIES,
) -> Sequence[Daemon]:
    """Start the daemons `daemons()` makes, in order, each stopped when `stack` closes.  A port
    is chosen free before the daemon binds it, and another process may bind it in between
    (tests in parallel, any client's ephemeral port): a daemon that exits for that is stopped
    with those started before it, and `daemons()` is asked again for fresh ports."""
    for attempt in range(1, tries + 1):
        made = daemons()
        started = contextlib.ExitStack()
        try:
            for daemon in made:
                started.enter_context(running(daemon))
        except PortTaken:
            started.close()
            if attempt == tries:
                raise
            continue
        stack.enter_context(started)
        return made
    raise AssertionError("unreachable: the last try returns or raises")


def _run_dir(run_dir: Path, name: str) -> Path:
    """The daemon's private directory, absolute: stunnel.conf takes a value verbatim but for
    its leading and trailing blanks, and sshd reads a relative AuthorizedKeysFile from the
    home directory.  check_path refuses what no configuration file can carry."""
    run_dir = run_dir.absolute()
    check_path(run_dir, "run directory")
    path = keys.private_dir(run_dir) / name
    path.mkdir(mode=0o700, exist_ok=True)
    return path


# -- stunnel ----------------------------------------------------------------------------------
def stunnel_conf(
    *,
    client: bool,
    accept: tuple[str, int],
    connect: tuple[str, int],
    pki: Pki,
    log: Path,
    tls_version: str = "TLSv1.3",
    resume: bool = False,
    check_ip: str | None = None,
) -> str:
    """stunnel configuration; foreground and no pid file, so the Popen pid is the daemon.  The
    server side logs at `info`, one line per handshake naming its suite: the per-run proof.

    stunnel's client resumes TLS sessions by default (tickets); with resume=False the server
    refuses resumption, so every connection pays a full handshake as MariaDB's clients do.
    The client checks that the server's certificate names `check_ip` (default: the address
    it connects to; a delay relay's is not the server's)."""
    level = "notice" if client else "info"
    # syslog = no: in the foreground stunnel also logs to syslog; with no /dev/log (no syslog
    # daemon, as on this machine) glibc writes to /dev/console, here a serial port.  Measured
    # with perf: that UART write took 73% of stunnel's CPU, about 17 ms per connection.
    lines = ["foreground = yes", "syslog = no", "pid =", f"output = {log.absolute()}"]
    lines.append(f"debug = {level}")
    lines.append("[mariadb]")
    lines += [f"accept = {accept[0]}:{accept[1]}", f"connect = {connect[0]}:{connect[1]}"]
    lines += [f"sslVersion = {tls_version}", f"CAfile = {pki.ca_cert.absolute()}"]
    # The MariaDB handshake is a ping-pong of small packets: no Nagle delay on either socket.
    lines += ["socket = l:TCP_NODELAY=1", "socket = r:TCP_NODELAY=1"]
    lines.append(f"sessionResume = {'yes' if resume else 'no'}")
    if client:
        # Verify the server like a careful client would, against the run's own CA.
        lines += ["client = yes", "verifyChain = yes", f"checkIP = {check_ip or connect[0]}"]
        lines += [f"cert = {pki.client_cert.absolute()}", f"key = {pki.client_key.absolute()}"]
    else:
        lines += [f"cert = {pki.server_cert.absolute()}", f"key = {pki.server_key.absolute()}"]
    return "\n".join(lines) + "\n"


def _stunnel(run_dir: Path, name: str, conf_text: str, port: int, prefix: Sequence[str]) -> Daemon:
    binary = proc.which("stunnel4") or proc.which("stunnel")
    if binary is None:
        raise BadInput(f"stunnel not found: {STUNNEL_HINT}")
    conf = run_dir / f"{name}.conf"
    conf.write_text(conf_text)
    return Daemon(name, [*prefix, binary, str(conf)], run_dir / f"{name}.out", port)


@contextlib.contextmanager
def stunnel(
    run_dir: Path,
    pki: Pki,
    *,
    db: tuple[str, int],
    server_listen: tuple[str, int] | None = None,
    client_dial: tuple[str, int] | None = None,
    tls_version: str = "TLSv1.3",
    resume: bool = False,
    server_prefix: Sequence[str] = (),
    client_prefix: Sequence[str] = (),
) -> Iterator[Tunnel]:
    """A server-side stunnel in front of MariaDB's TCP port `db` and a client-side stunnel
    connecting to it; yields the tunnel, whose loopback port clients dial in plain.

    The prefixes (e.g. netns.exec_prefix(name)) place each side on its own emulated host;
    `client_dial` is where the client side reaches `server_listen` when not directly (a
    delay relay in front of it)."""
    directory = _run_dir(run_dir, "stunnel")
    server_listen = server_listen or (db[0], free_port(db[0]))
    dial = client_dial or server_listen
    local = ("127.0.0.1", free_port())
    server_conf = stunnel_conf(
        client=False,
        accept=server_listen,
        connect=db,
        pki=pki,
        log=directory / "server.log",
        tls_version=tls_version,
        resume=resume,
    )
    client_conf = stunnel_conf(
        client=True,
        accept=local,
        connect=dial,
        pki=pki,
        log=directory / "client.log",
        tls_version=tls_version,
        resume=resume,
        check_ip=server_listen[0],
    )
    server = _stunnel(directory, "stunnel-server", server_conf, server_listen[1], server_prefix)
    client = _stunnel(directory, "stunnel-client", client_conf, local[1], client_prefix)
    with running(server), running(client):
        yield Tunnel(local[1], (server, client), directory / "server.log", STUNNEL_PROOF)


# -- ssh --------------------------------------------------------------------------------------
def check_cipher(cipher: str) -> str:
    if cipher not in SSH_CIPHERS:
        raise BadInput(f"unknown SSH cipher {cipher!r}: choose one of {', '.join(SSH_CIPHERS)}")
    return cipher


def _keygen(path: Path, key_type: str) -> Path:
    if key_type not in SSH_KEY_TYPES:
        raise BadInput(
            f"unknown SSH key type {key_type!r}: choose one of {', '.join(SSH_KEY_TYPES)}"
        )
    if not path.exists():
        proc.run(
            [
                "ssh-keygen",
                "-q",
                *SSH_KEY_TYPES[key_type],
                "-N",
                "",
                "-C",
                "encbench",
                "-f",
                str(path),
            ],
            phase="ssh-keygen",
            timeout_s=120,
            hint=SSH_HINT,
        )
    return path


# The session the tunnel holds open (see ssh_tunnel): the only command the key may run.
SSH_SESSION_COMMAND = "sleep 2147483647"


def sshd_quote(value: str) -> str:
    r"""One sshd_config argument, read back verbatim by OpenSSH's argv_split(): in double quotes
    `#` and spaces are kept, and `\\` and `\"` are its escapes (checked with `sshd -T` in
    tests/servers/test_option_files.py)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def authorized_key(public_key: str, db: tuple[str, int]) -> str:
    """The client key's authorized_keys line: `restrict` takes every right away (forwarding,
    agent, X11, pty, user rc), then only what the tunnel needs is given back: a pty for the
    interactive session that turns Nagle off, local forwarding to MariaDB's address alone, and
    one command, whatever the client asks to run."""
    options = [
        "restrict",
        "pty",
        "port-forwarding",
        f'permitopen="{db[0]}:{db[1]}"',
        f'command="{SSH_SESSION_COMMAND}"',
    ]
    return f"{','.join(options)} {public_key.strip()}\n"


def sshd_config(
    *,
    listen: tuple[str, int],
    host_key: Path,
    authorized_keys: Path,
    cipher: str,
    user: str,
    db: tuple[str, int],
) -> str:
    return (
        "\n".join(
            [
                f"ListenAddress {listen[0]}:{listen[1]}",
                f"HostKey {sshd_quote(str(host_key))}",
                "PidFile none",
                # PAM would consult the system's login stack; public keys are all we need.
                "UsePAM no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                # AuthorizedKeysFile expands %-tokens: a literal % is %%.
                f"AuthorizedKeysFile {sshd_quote(str(authorized_keys).replace('%', '%%'))}",
                # The key files sit in a temporary run directory, not a home directory.
                "StrictModes no",
                f"AllowUsers {user}",
                "PermitRootLogin prohibit-password",
                f"Ciphers {cipher}",
                # The account can only forward to MariaDB (authorized_key says it again).
                "AllowTcpForwarding local",
                f"PermitOpen {db[0]}:{db[1]}",
                "PermitListen none",
                "GatewayPorts no",
                "AllowStreamLocalForwarding no",
                "PermitTunnel no",
                "PermitTTY yes",  # the tunnel holds a terminal session: see ssh_tunnel
                f"ForceCommand {SSH_SESSION_COMMAND}",
                "X11Forwarding no",
                "AllowAgentForwarding no",
                "PermitUserEnvironment no",
                "PermitUserRC no",
                "LogLevel ERROR",
            ]
        )
        + "\n"
    )


@contextlib.contextmanager
def _privsep_dir(path: Path = PRIVSEP_DIR) -> Iterator[None]:
    """sshd started as root insists on its privilege-separation directory; Debian creates it
    only when the ssh service starts, which we must not do.  Made if missing, removed after
    by whoever made it, but only when no other sshd of ours (another tunnel, another process)
    still uses it: each user holds a shared flock on the directory while its sshd runs, and
    the maker removes it only if it then gets the lock alone.  A maker that leaves first
    leaves it behind, as the ssh service does."""
    if os.geteuid() != 0:
        yield
        return
    created, held = _hold_dir(path)
    try:
        yield
    finally:
        try:
            if created:
                with contextlib.suppress(BlockingIOError):
                    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    with contextlib.suppress(OSError):
                        path.rmdir()
        finally:
            os.close(held)


def _hold_dir(path: Path) -> tuple[bool, int]:
    """Make `path` if missing and hold a shared flock on it: (whether made here, its fd).  A
    directory removed between the open and the lock (its last user left) is made again."""
    while True:
        created = False
        try:
            path.mkdir(mode=0o755)
            created = True
        except FileExistsError:
            pass
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            continue
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            still_there = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            still_there = False
        if still_there:
            return created, fd
        os.close(fd)


@contextlib.contextmanager
def ssh_tunnel(
    run_dir: Path,
    *,
    db: tuple[str, int],
    cipher: str = "aes128-gcm@openssh.com",
    key_type: str = "ed25519",
    sshd_listen: tuple[str, int] | None = None,
    client_dial: tuple[str, int] | None = None,
    server_prefix: Sequence[str] = (),
    client_prefix: Sequence[str] = (),
    terminal: bool = True,
) -> Iterator[Tunnel]:
    """A private sshd (generated host and client keys, one explicit cipher) and `ssh -L`
    forwarding a loopback port to MariaDB's `db` address; yields the tunnel.

    terminal=True holds a terminal session (`ssh -tt … sleep`), False forwards only
    (`ssh -N`): OpenSSH turns Nagle's algorithm off (TCP_NODELAY) only for interactive
    sessions, and without it every forwarded MariaDB connect stalls on a delayed ACK
    (benchmarks/ssh_nodelay.py measures both).  A DBA's `ssh -L` with a shell open is the
    interactive case, and the default.

    As for stunnel, the prefixes place sshd and ssh on their hosts and `client_dial` is where
    ssh reaches `sshd_listen` when not directly; the known host is the address ssh dials."""
    check_cipher(cipher)
    sshd_bin = proc.which("sshd")
    if sshd_bin is None or proc.which("ssh") is None:
        raise BadInput(f"sshd/ssh not found: {SSH_HINT}")
    directory = _run_dir(run_dir, "ssh")
    host_key = _keygen(directory / f"host_{key_type}", key_type)
    client_key = _keygen(directory / f"client_{key_type}", key_type)
    authorized = directory / "authorized_keys"
    authorized.write_text(authorized_key(Path(f"{client_key}.pub").read_text(), db))
    user = _user()

    def daemons() -> tuple[Daemon, Daemon]:
        """sshd and ssh -L on ports chosen now (each try chooses afresh)."""
        listen = sshd_listen or ("127.0.0.1", free_port())
        config = directory / "sshd_config"
        config.write_text(
            sshd_config(
                listen=listen,
                host_key=host_key,
                authorized_keys=authorized,
                cipher=cipher,
                user=user,
                db=db,
            )
        )
        dial = client_dial or listen
        known_hosts = directory / "known_hosts"
        host_pub = Path(f"{host_key}.pub").read_text().split()
        known_hosts.write_text(f"[{dial[0]}]:{dial[1]} {host_pub[0]} {host_pub[1]}\n")
        local = free_port()
        sshd = Daemon(
            "sshd",
            [*server_prefix, sshd_bin, "-D", "-e", "-f", str(config)],
            directory / "sshd.log",
            listen[1],
        )
        client = Daemon(
            "ssh",
            [
                *client_prefix,
                proc.which("ssh") or "ssh",
                "-tt" if terminal else "-N",
                "-v",
                "-F",
                "/dev/null",
                # File names relative to the client's working directory: ssh expands %-tokens
                # and ${VARIABLES} in -i and UserKnownHostsFile, so a full path could change
                # meaning.
                "-i",
                client_key.name,
                "-o",
                "IdentitiesOnly=yes",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                f"UserKnownHostsFile={known_hosts.name}",
                "-o",
                f"Ciphers={cipher}",
                "-o",
                "ExitOnForwardFailure=yes",
                "-L",
                f"127.0.0.1:{local}:{db[0]}:{db[1]}",
                "-p",
                str(dial[1]),
                f"{user}@{dial[0]}",
                # The session's command: it only keeps the session (and its pty) open.
                *([SSH_SESSION_COMMAND] if terminal else []),
            ],
            directory / "ssh.log",
            local,
            cwd=directory,
        )
        return sshd, client

    with _privsep_dir(), contextlib.ExitStack() as stack:
        sshd, client = start_on_free_ports(stack, daemons)
        yield Tunnel(client.port, (sshd, client), directory / "ssh.log", SSH_CHANNEL)


def ssh_cipher(tunnel: Tunnel) -> str:
    """The cipher the ssh client negotiated, from its -v log."""
    try:
        found = SSH_CIPHER.findall(tunnel.proof_log.read_text(errors="replace"))
    except OSError:
        return ""
    return found[-1] if found else ""


def ssh_terms(tunnel: Tunnel) -> dict[str, str]:
    """The MAC, key exchange and host key algorithm the ssh client negotiated, from its -v
    log ("" for what it does not name)."""
    try:
        text = tunnel.proof_log.read_text(errors="replace")
    except OSError:
        text = ""
    found = {name: pattern.findall(text) for name, pattern in SSH_TERMS.items()}
    return {name: values[-1] if values else "" for name, values in found.items()}


def _user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name
