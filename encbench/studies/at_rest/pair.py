"""The pair of sandboxed servers of the at-rest study: provisioned, filled and proven once,
then restarted per regime with that regime's buffer pool.

In an A/A calibration (profile `calibration = true`) the `encrypted` role is a twin of the
plain server: the same options, no key, proven plain like the first; the record says so."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from encbench.errors import BadInput
from encbench.machine.placement import usable_cpus
from encbench.profiles.durations import load_seconds
from encbench.profiles.profile import Profile, ShapeSpec
from encbench.proof import at_rest as proof
from encbench.results.store import ResultStore
from encbench.servers import key_server, keys, page_cache, shapes
from encbench.servers.closed_on_exit import ClosedOnExit
from encbench.servers.key_server import KeyServer
from encbench.servers.mariadb import installs, key_server_proof
from encbench.servers.mariadb.options import option_difference, server_options
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.remote_cpu import SshCpu
from encbench.servers.sandbox_dirs import clear_stale_sandbox, remove_empty_sandbox_dir
from encbench.servers.sizing import (
    SERVER_ALLOWANCE_MB,
    data_dir_bytes,
    pool_mb,
    rows_mb,
)
from encbench.servers.target import Connection, Target
from encbench.servers.variants import AGAINST_TABLES_SIDES, VARIANTS, EncryptionSpec, side_name
from encbench.studies.at_rest import steady
from encbench.studies.at_rest.cells import configurations
from encbench.studies.at_rest.dialects import Dialect, dialect_for
from encbench.studies.at_rest.flushing import CPU_MEASUREMENT
from encbench.studies.at_rest.options import measure_options
from encbench.studies.at_rest.volumes import PairVolumes, uses_images
from encbench.workloads import sysbench


def estimated_data_mb(profile: Profile) -> float:
    return rows_mb(profile.data.rows)


def shape_memory_mb(profile: Profile) -> tuple[int, str]:
    """What one server needs at least inside a shape's memory limit: the largest buffer pool
    of the profile's regimes (data as estimated before loading) and the allowance."""
    data_mb = estimated_data_mb(profile)
    regime = max(
        measure_options(profile).regimes, key=lambda r: pool_mb(data_mb, r, profile.regime)
    )
    pool = pool_mb(data_mb, regime, profile.regime)
    return pool + SERVER_ALLOWANCE_MB, (
        f"a {pool:,} MB buffer pool for the {regime} regime + {SERVER_ALLOWANCE_MB} MB for the "
        "rest of the server"
    )


def shape_limits(shape: ShapeSpec) -> shapes.Limits:
    """A profile's shape on this machine (its CPUs: the first of those encbench may use)."""
    return shapes.limits(
        shape.name, shape.cpus, shape.cpu_quota, shape.memory_mib, usable_cpus(), shape.iops
    )


def check_iops_disk(profile: Profile, results: Path) -> None:
    """An IOPS cap needs a disk under the data directories, which live in the results
    directory: refused as the run starts, not at the first shaped restart."""
    capped = [s for s in profile.server.shapes if s.iops is not None]
    if capped and shapes.disk_of(results) is None:
        raise BadInput(
            f"server.shapes: shape {capped[0].name!r} caps the IOPS of the disk that holds "
            "the servers' data, and the results directory is on none (tmpfs, overlay); give "
            "--out a directory on a disk, or remove iops"
        )


def disk_bytes(profile: Profile) -> int:
    """What the pair's two data directories need at most (nothing here for a target)."""
    if profile.target is not None:
        return 0
    return len(VARIANTS) * data_dir_bytes(profile.data.rows)


def setup_s(profile: Profile) -> float:
    """Making and loading a pair of servers (or a target's two table sets) per encrypted
    configuration, each with the profile's rows."""
    pairs = len(configurations(profile)) if profile.server.dimensions else 1
    return load_seconds(len(VARIANTS) * pairs, profile.data.rows)


def memory_mb(profile: Profile) -> tuple[int, str]:
    """Both servers run at once, each with the largest pool the profile's regimes ask for."""
    if profile.target is not None:
        return 0, "a target's table sets live in its own memory"
    data_mb = estimated_data_mb(profile)
    pool = max(pool_mb(data_mb, r, profile.regime) for r in measure_options(profile).regimes)
    return len(VARIANTS) * (pool + SERVER_ALLOWANCE_MB), (
        f"two servers, each a {pool:,} MB buffer pool + {SERVER_ALLOWANCE_MB} MB; use smaller "
        "data (data.tables, data.table_size), a smaller regime.in_memory_headroom, or drop "
        '"in-memory" from measure.regimes'
    )


# What a server holds beyond its buffer pool inside an io-bound memory budget (_limits): not
# SERVER_ALLOWANCE_MB, the memory check's estimate: a write_only run at 16 threads took
# mariadbd to 225 MB of anonymous memory with a 94 MB pool (MariaDB 10.11: the log buffer,
# Aria's page cache for the system tables, the dictionary, threads), and a budget of the pool
# + 128 MB was killed by the cgroup's OOM killer.  The rest of the budget is page cache.
BUDGET_ALLOWANCE_MB = 256


def _silent(line: str) -> None:
    return None  # no progress log before provision() gives one


class ServerPair(ClosedOnExit):
    """Both variants, identical but for encryption.  A context manager: on any exit (success,
    error, Ctrl-C, SIGTERM) both servers are stopped and their sandboxes deleted (and, under
    the filesystem layer, the key removed and their images unmounted, detached and deleted:
    volumes.py).  One of the designs of hosts.VariantHost: each variant its own local server,
    restarted per regime."""

    def __init__(
        self, store: ResultStore, profile: Profile, spec: EncryptionSpec | None = None
    ) -> None:
        self.store = store
        self.profile = profile
        # The servers' family (MariaDB, or MySQL from its root): its SQL and its proofs.
        self.dialect: Dialect = dialect_for(installs.family_of(profile.server.install))
        # The encrypted server's configuration now; `use` provisions a fresh pair for another.
        every = configurations(profile)
        # Without root the filesystem layer is left out: a pair starts with TDE if it can.
        self.spec = spec or next((s for s in every if not s.fs), every[0])
        self.binlog = profile.server.binary_log
        self.calibration = profile.calibration
        self.private = keys.private_dir(store.path)
        # A calibration encrypts nothing: no key is made (the path is never written).
        self.key_file = (
            self.private / "encryption.keys" if self.calibration else keys.key_file(self.private)
        )
        # Where a configuration has the filesystem layer: every server on its own image.
        self.volumes = PairVolumes(store, profile) if uses_images(profile) else None
        # Where a configuration's TDE keys come from a key server: one of the run's own,
        # started with the pair that reads from it and stopped after it (close).
        self.key_server: KeyServer | None = None
        self.log: Callable[[str], None] = _silent
        self.servers = self._new_servers()
        self.data_mb = 0.0
        self.regime: str | None = None
        # The instance shape of the next restart (use_shape), and the one the servers run in.
        self.shape: ShapeSpec | None = None
        self.shaped: ShapeSpec | None = None
        self.record: dict[str, Any] = store.read_json("at-rest.json") or {}
        # Restart before every block or only per regime: the profile's, unless this run began
        # under a version that had no such setting (its at-rest.json has no `restart`), which
        # restarted per regime — a resumed run keeps one design.
        self.restart: str = self.record.setdefault(
            "restart", "regime" if self.record else measure_options(profile).restart
        )
        # The servers have started and served no block yet: the next block needs no restart.
        self.fresh = False

    def _new_servers(self) -> dict[str, SandboxServer]:
        sandbox = self.store.path / "sandbox"
        roots = self.volumes.roots() if self.volumes else {v: sandbox / v for v in VARIANTS}
        for root in roots.values():
            clear_stale_sandbox(root)
        install = installs.of(self.profile.server.install)
        return {
            # A MySQL server's keyring file, beside the run's other keys (private/, 0700).
            v: SandboxServer(v, roots[v], install=install, keyring=self.private / f"keyring-{v}")
            for v in VARIANTS
        }

    def _config_record(self) -> dict[str, Any]:
        """Where at-rest.json keeps what belongs to the configuration (its proofs, options,
        regimes): the top level for a run of one configuration, as always; else one entry
        per configuration under `configurations`, named by its label."""
        if not self.profile.server.dimensions:
            return self.record
        every = self.record.setdefault("configurations", {})
        config: dict[str, Any] = every.setdefault(self.spec.label, {})
        return config

    def use(self, spec: EncryptionSpec, log: Callable[[str], None]) -> None:
        """Measure the next cells with this encrypted configuration.  Another algorithm
        cannot read pages the first one encrypted, another scope must start with its own
        logs, and another layer with its own filesystems, so both servers are replaced by a
        fresh pair — new data directories (on new images under the filesystem layer), the
        same data loaded again (plain too, so that both sides' data are equally new) — and
        proven in full, as the first pair was."""
        if spec == self.spec:
            return
        log(f"encryption {spec.label}: a fresh pair of servers")
        self.close()
        self.spec, self.regime = spec, None
        self.servers = self._new_servers()
        self.provision(log)

    def use_shape(self, shape: ShapeSpec | None, log: Callable[[str], None]) -> None:
        """Confine both servers to this shape from the next configure() on: they are
        restarted inside it (a server must be in its groups before it allocates its buffer
        pool).  Loading and the full proof stay unconfined: a load buffer pool may not fit a
        small shape's memory."""
        if shape != self.shape:
            self.shape = shape
            if shape is not None:
                log(f"instance shape {shape.words}")

    def close(self) -> None:
        try:
            for server in self.servers.values():
                server.destroy(keep_log_in=self.store.path / "logs")
            remove_empty_sandbox_dir(self.store)
        finally:
            try:
                self._close_key_server()
            finally:
                self._close_volumes()

    def _open_key_server(self, log: Callable[[str], None]) -> None:
        """The run's key server, where this configuration's keys come from one (servers/
        key_server.py): started, its keys written and its token proven before a server
        reads them."""
        reads_keys = self.spec.tde and not self.calibration
        if self.spec.key_provider != "key-server" or not reads_keys or self.key_server:
            return
        log("starting the key server (OpenBao) with the run's own CA")
        self.key_server = key_server.started(self.private / "key-server")

    def _close_key_server(self) -> None:
        """After the servers that read from it (its files stay in private/, removed with
        it)."""
        if self.key_server is not None:
            self.key_server.stop()
            self.key_server = None

    def _close_volumes(self) -> None:
        if self.volumes is not None:
            # After the servers: nothing holds a file open on the images any more.
            key = self.volumes.close(self.log)
            if key:
                self._config_record().setdefault("filesystem", {})["key"] = key
                self.store.write_json("at-rest.json", self.record)

    def connection(self, variant: str) -> Connection:
        return self.servers[variant].endpoint()

    def target(self, variant: str) -> Target:
        return self.servers[variant]

    def remote_cpu(self) -> SshCpu | None:
        return None  # each server is local: its CPU is read here

    def local_server(self, variant: str) -> SandboxServer | None:
        return self.servers[variant]

    def unavailable(self, regime: str) -> str | None:
        """Every regime (each server is restarted with its buffer pool), but io-bound on
        images where no memory group can hold the budget (_limits)."""
        if self.shape is not None or self.volumes is None or regime != "io-bound":
            return None
        why = shapes.problem(shapes.memory_budget(0, usable_cpus()).controllers)
        return None if why is None else f"io-bound on the images needs a memory budget: {why}"

    def settle(self, variant: str, regime: str) -> None:
        """Io-bound on images (where _limits gives a memory budget): the server's files
        dropped from the page cache before each run, so that the filesystem layer's side,
        whose O_DIRECT this kernel serves through the cache, reads from the device as plain
        does rather than from what earlier runs left cached; the budget bounds what one run
        caches (recorded per run: page_cache_mb).  Plain's O_DIRECT files have nothing
        cached: the same call costs it nothing."""
        if self.shape is None and self.volumes is not None and regime == "io-bound":
            page_cache.drop(self.servers[variant].datadir)

    def client_env(self) -> dict[str, str] | None:
        return None  # the unix socket as the OS user: no password

    def options(self, variant: str, buffer_pool_mb: int) -> dict[str, str]:
        server = self.servers[variant]
        return server_options(
            variant,
            self.spec,
            server.paths,
            port=server.port,
            buffer_pool_mb=buffer_pool_mb,
            key_file=self.key_file,
            run_as_root=os.geteuid() == 0,
            calibration=self.calibration,
            binlog=self.binlog,
            key_server=self.key_server.access() if self.key_server else None,
        )

    def _innodb_claim(self, variant: str) -> str:
        """What InnoDB's tables of this variant must be: plain but for TDE's encrypted side
        and a control of scope tables (the filesystem layer alone encrypts below a plain
        InnoDB; a calibration encrypts nothing)."""
        encrypts = self.spec if variant == "encrypted" else self.spec.control
        if encrypts is not None and encrypts.tde and not self.calibration:
            return "encrypted"
        return "plain"

    def side(self, variant: str) -> str:
        """The variant as the progress log and the record name it."""
        if self.spec.control is not None:
            return AGAINST_TABLES_SIDES[variant]
        return side_name(variant, self.calibration)

    def provision(self, log: Callable[[str], None]) -> None:
        """Init, start, fill with sysbench's tables and prove each variant (where a
        configuration has the filesystem layer: on its freshly made image, proven below the
        filesystem too, and left stopped for configure() to start)."""
        self.log = log
        if self.volumes is not None:
            self.volumes.mount_for(self.spec, log)
        self._open_key_server(log)
        data = self.profile.data
        load_bp = max(64, math.ceil(rows_mb(data.rows) * 1.5))
        proofs = {}
        if self.calibration:
            proof.prove_twins(self.options("plain", load_bp), self.options("encrypted", load_bp))
        for variant, server in self.servers.items():
            log(f"provisioning the {self.side(variant)} server")
            server.shape = None
            opts = self.options(variant, load_bp)
            server.initialize(opts)
            server.start(opts)
            # No TCP account: every client of this study connects over the unix socket as the
            # OS user (unix_socket authentication), so no password exists to leak.
            log(f"loading {data.tables} × {data.table_size:,} rows into {self.side(variant)}")
            sysbench.load(server, data, self.store.path / "logs" / f"prepare-{variant}.log")
            claimed = self._innodb_claim(variant)
            control = variant == "plain" and claimed == "encrypted"
            log(f"proving that {self.side(variant)} is {claimed}{' (its logs plain)' * control}")
            # The logs of scope all are plain on the plain side, and on the control of scope
            # tables too: either way the scan's positive control.
            proofs[variant] = proof.prove(
                server, claimed, self.spec, data.tables, name=self.side(variant),
                sql=self.dialect.proof_sql, background=self.dialect.mariadb,
                logs=self.dialect.logs, logs_claimed="plain" if variant == "plain" else None,
            ).to_json()  # fmt: skip
        self.data_mb = self._data_mb(self.servers["plain"])
        self.shaped = None
        if self.calibration:
            self.record.update(
                {
                    "calibration": True,
                    "sides": {v: self.side(v) for v in VARIANTS},
                    # Both configured as plain: the binary log follows the scope as for plain.
                    "configured_as": {v: "plain" for v in VARIANTS},
                }
            )
        self.record.update(
            {
                "data": {
                    "tables": data.tables,
                    "table_size": data.table_size,
                    "size_mb": round(self.data_mb, 1),
                },
                "binary_log": self.binlog,
                "cpu_measurement": (
                    steady.design(measure.steady_chunk_s)
                    if (measure := measure_options(self.profile)).write_window == "steady"
                    else CPU_MEASUREMENT
                ),
                "mariadb_version": self.servers["plain"].version(),
                "family": self.dialect.family,
            }
        )
        install = self.servers["plain"].install.record()
        if install is not None:
            self.record["install"] = install
        config = self._config_record()
        if not self.calibration:
            config["encryption"] = {"algorithm": self.spec.algorithm, "scope": self.spec.scope}
            if self.spec.tde:  # the filesystem layer alone has fscrypt's key, not TDE's
                config["encryption"]["key_provider"] = self.spec.key_provider
            if self.key_server is not None:
                encrypted = self.servers["encrypted"]
                config["encryption"]["key_server"] = key_server_proof.prove(
                    encrypted, self.key_server, encrypted.database, self.side("encrypted")
                )
            if not self.dialect.mariadb:
                # MySQL's InnoDB has one cipher.
                config["encryption"]["algorithm"] = "AES-256 (MySQL's only)"
            if self.spec.layer != "tde":
                config["encryption"]["layer"] = self.spec.layer
            if self.spec.control is not None:
                # The control encrypts its tables as the other side does: only the logs differ.
                config["encryption"]["against"] = "scope tables"
                config["sides"] = {v: self.side(v) for v in VARIANTS}
        config.update(
            {
                "proofs": proofs,
                "option_difference": option_difference(
                    self.options("plain", load_bp), self.options("encrypted", load_bp)
                ),
            }
        )
        if self.volumes is not None:
            if self.spec.fs:
                config["filesystem"] = self.volumes.prove(self.servers, data.tables, self.side, log)
                self.record["filesystem"] = self.volumes.setup_record()
            else:
                self.record.setdefault("filesystem", self.volumes.setup_record())
        self.store.write_json("at-rest.json", self.record)

    def _data_mb(self, server: SandboxServer) -> float:
        if server.install.mysql:
            # MySQL's table sizes are its statistics' (0 right after loading): made fresh.
            count = self.profile.data.tables
            tables = ", ".join(f"{server.database}.sbtest{i}" for i in range(1, count + 1))
            server.query(f"ANALYZE TABLE {tables}")
        rows = server.query(
            "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME LIKE 'sbtest%%'",
            (server.database,),
        )
        return float(rows[0][0] or 0) / 2**20

    def buffer_pool_mb(self, regime: str) -> int:
        return pool_mb(self.data_mb, regime, self.profile.regime)

    def configure(self, regime: str, log: Callable[[str], None]) -> None:
        """Restart both servers with the regime's buffer pool, prove each again (the server's
        own account of its tablespaces: the options came back as they were) and preload the
        pool when in-memory."""
        if self.regime == regime and self.shaped == self.shape:
            return
        bp = self.buffer_pool_mb(regime)
        log(f"{regime}: buffer pool {bp} MB for {self.data_mb:.0f} MB of data")
        self._check_shape_memory(bp)
        self._restart(regime, bp)
        self.regime, self.shaped = regime, self.shape

    def renew(self) -> bool:
        """New server processes for the next block: both restarted as the regime left them
        (same options, same shape), proven again and, in memory, preloaded.  Why: two
        identical servers can differ by a fifth for as long as both processes live (where
        their memory and threads landed: see README, Calibration), so a block measured on one
        pair of processes says nothing of the next pair; a restart per block makes that
        difference part of the blocks' spread, which the interval then covers.  Servers
        just started (a new regime, shape or pair) serve their first block as they are.
        False when the run restarts per regime only."""
        if self.restart != "block" or self.regime is None:
            return False
        if not self.fresh:
            self._restart(self.regime, self.buffer_pool_mb(self.regime))
        self.fresh = False
        return True

    def _restart(self, regime: str, bp: int) -> None:
        confine = self._limits(regime, bp)
        layout = self._layout(confine)
        regime_record: dict[str, Any] = {
            "buffer_pool_mb": bp,
            "options": {},
            "proofs": {},
            "cpu_source": {},
        }
        if confine is not None and confine.name == shapes.MEMORY_BUDGET:
            regime_record["memory_budget_mib"] = confine.memory_mib
            regime_record["page_cache_dropped"] = "before each run"  # settle()
        if self.calibration:
            proof.prove_twins(self.options("plain", bp), self.options("encrypted", bp))
        for variant, server in self.servers.items():
            opts = self.options(variant, bp)
            server.shape = self._shaping(layout, confine, server)
            server.restart(opts)
            regime_record["options"][variant] = keys.redact(opts)
            if server.shaped is not None:
                # Read back from the cgroup files and shown on the running server.
                regime_record.setdefault("confinement", {})[variant] = server.shaped.confinement(
                    server.pid
                )
            claimed = self._innodb_claim(variant)
            regime_record["proofs"][variant] = proof.prove_tablespaces(
                server, claimed, self.profile.data.tables, sql=self.dialect.proof_sql
            )
            regime_record["cpu_source"][variant] = server.cpu_counter.source
            if regime == "in-memory":
                self._preload(server)
        regimes = self._shape_record().setdefault("regimes", {})
        # How many times both servers started in this regime: 1 + one per renewed block.
        regime_record["starts"] = regimes.get(regime, {}).get("starts", 0) + 1
        regimes[regime] = regime_record
        self.store.write_json("at-rest.json", self.record)
        self.fresh = True

    def _limits(self, regime: str, bp: int) -> shapes.Limits | None:
        """How the next start confines each server: the instance shape; else, io-bound on the
        run's images, a memory budget of the pool and the allowance.  Why the budget: without
        inline encryption ext4 serves InnoDB's O_DIRECT on an encrypted file as buffered I/O,
        so the filesystem layer's reads would come from the machine's spare memory while
        plain's reach the device; within the same budget each side has the memory it would
        have on a server of that size, the page cache included (recorded per run)."""
        if self.shape is not None:
            return shape_limits(self.shape)
        if self.volumes is None or regime != "io-bound":
            return None
        return shapes.memory_budget(bp + BUDGET_ALLOWANCE_MB, usable_cpus())

    def _layout(self, confine: shapes.Limits | None) -> shapes.Layout | None:
        """Where the next start confines the servers (the preflight found the layout
        usable; a machine that changed since is an error, not an unconfined run)."""
        if confine is None:
            return None
        layout = shapes.detect(confine.controllers)
        if isinstance(layout, str):
            raise shapes.ShapeError(f"{confine.name}: {layout}")
        return layout

    def _shaping(
        self, layout: shapes.Layout | None, confine: shapes.Limits | None, server: SandboxServer
    ) -> tuple[shapes.Layout, shapes.Limits] | None:
        """How the next start confines this server: an IOPS cap applies to the disk of its
        own data directory."""
        if layout is None or confine is None:
            return None
        return layout, shapes.on_device(confine, server.datadir)

    def _check_shape_memory(self, bp: int) -> None:
        """The preflight checked the estimated data; this is the loaded data's own pool."""
        if self.shape is None or self.shape.memory_mib is None:
            return
        need = bp + SERVER_ALLOWANCE_MB
        if self.shape.memory_mib < need:
            raise BadInput(
                f"shape {self.shape.name}: memory_mib = {self.shape.memory_mib:,} and the loaded "
                f"data ({self.data_mb:.0f} MB) needs a {bp:,} MB buffer pool + "
                f"{SERVER_ALLOWANCE_MB} MB; raise memory_mib to {need:,} or more"
            )

    def _shape_record(self) -> dict[str, Any]:
        """Where at-rest.json keeps a regime's restart: per shape under `shapes` when the
        profile has shapes, else the configuration's record as always."""
        config = self._config_record()
        if self.shape is None:
            return config
        every = config.setdefault("shapes", {})
        entry: dict[str, Any] = every.setdefault(self.shape.name, {})
        entry["shape"] = self.shape.model_dump()
        return entry

    def _preload(self, server: SandboxServer) -> None:
        # Full scans of the clustered and the secondary index bring every page in.
        for i in range(1, self.profile.data.tables + 1):
            server.query(f"SELECT SUM(LENGTH(c)) FROM {server.database}.sbtest{i}")
            server.query(f"SELECT SUM(k) FROM {server.database}.sbtest{i} FORCE INDEX (k_{i})")
