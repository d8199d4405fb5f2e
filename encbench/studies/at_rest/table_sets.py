"""At rest on a server encbench did not start: two sets of the same sysbench tables on it,
one ENCRYPTED=NO and one ENCRYPTED=YES, each in a database encbench creates, names with the
run id and marks as its own (a table `encbench_owner` whose COMMENT names the run).  A
hosts.VariantHost design: both variants live on the one server.

Safety: before anything is created, the prerequisites (servers/mariadb/prerequisites.py) and the
names: a database of encbench's name that exists without this run's marker is refused, never
read, altered or dropped.  Only encbench's own databases are created, filled, proven and —
unless the target says keep — dropped at the end, on any exit.  No global variable is changed:
no flushing between runs (it would need innodb_max_dirty_pages_pct), no restart.

sysbench 1.0.20's oltp_common.lua has no option for table options (its
`mysql_table_options` is a Lua global, not a command-line option), so both sets are loaded
by the stock `prepare` with the same seed and then rebuilt alike by ALTER TABLE … ENCRYPTED=NO
or ENCRYPTED=YES: the two sets differ only in that option.

What this design cannot show, said in the report (WHAT_IT_CANNOT_SHOW): the redo log and
the binary log are the server's own, encrypted or not for both sets alike; the buffer pool
is shared by both sets; the server's CPU is not readable from here; the server is shared
with whatever else runs on it, whose load lands on both variants' rounds alike but adds
noise; the data files cannot be scanned (the proof is the server's own account).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from encbench.profiles.profile import Profile, ShapeSpec
from encbench.proof import at_rest as proof
from encbench.results.store import ResultStore
from encbench.servers.mariadb import prerequisites
from encbench.servers.mariadb.sandbox import SandboxServer
from encbench.servers.owned import MARKER_TABLE, OwnedDatabases, ownership, run_key
from encbench.servers.remote_cpu import SshCpu, cpu_measurement
from encbench.servers.target import MISSING, Connection, Target
from encbench.servers.variants import VARIANTS, EncryptionSpec
from encbench.studies.at_rest import target_regimes
from encbench.studies.at_rest.dialects import MARIADB_DIALECT, Dialect, dialect_for
from encbench.studies.at_rest.needs import target_needs
from encbench.studies.at_rest.pair import estimated_data_mb
from encbench.workloads import sysbench


def design(dialect: Dialect) -> str:
    return (
        f"two table sets on one server ({dialect.table_option('encrypted')} / "
        f"{dialect.table_option('plain')})"
    )


WHAT_IT_CANNOT_SHOW = (
    "the redo log, the binary log and the undo and temporary tablespaces are the server's "
    "own, alike for both table sets, so their encryption is in neither or both",
    "both table sets share one buffer pool (and its page cleaner): the rounds alternate, "
    "but the pages of one set can push out the other's",
    f"server CPU per transaction: {MISSING['pid']}",
    "the raw data files: the proof is the server's own account ({proof_view}) and its "
    "counters, not a file scan",
    "whatever else runs on that server shares it with both variants' rounds",
)
# With [target] ssh the CPU is read, but it is the whole server's process.
CPU_IS_THE_WHOLE_SERVERS = (
    "server CPU per transaction apart from the server's other work: the CPU read over ssh is "
    "the whole server process's, so whatever else it serves lands in both variants' figures"
)


def names_for_key(key: str) -> dict[str, str]:
    return {v: f"encbench_{key}_{v}" for v in VARIANTS}


def database_names(store_path: str) -> dict[str, str]:
    return names_for_key(run_key(store_path))


def statements(profile: Profile, key: str, dialect: Dialect = MARIADB_DIALECT) -> list[str]:
    """What encbench will create and do on the target, in order (`encbench plan` prints it)."""
    d = profile.data
    out = []
    for variant, db in names_for_key(key).items():
        out += [
            f"CREATE DATABASE `{db}`{dialect.database_option(variant)}",
            f"CREATE TABLE `{db}`.{MARKER_TABLE} (run VARCHAR(64)) COMMENT='encbench run {key}'",
            f"sysbench oltp_read_only prepare --tables={d.tables} --table-size={d.table_size} "
            f"--rand-seed=1 --mysql-db={db}",
            f"ALTER TABLE `{db}`.sbtest1…sbtest{d.tables} {dialect.table_option(variant)}",
        ]
    out.append("per run: sysbench … run --mysql-db=<the variant's database>")
    if not profile.target or not profile.target.keep:
        out += [f"at the end: DROP DATABASE `{db}`" for db in names_for_key(key).values()]
    return out


def cannot_show(cpu: SshCpu | None, dialect: Dialect = MARIADB_DIALECT) -> list[str]:
    lines = [line.replace("{proof_view}", dialect.proof_view) for line in WHAT_IT_CANNOT_SHOW]
    if cpu is None:
        return lines
    return [
        line if not line.startswith("server CPU per transaction") else CPU_IS_THE_WHOLE_SERVERS
        for line in lines
    ]


class TableSets(OwnedDatabases):
    """Both variants on the user's server, each in a database of encbench's own (dropped on
    any exit unless keep: OwnedDatabases)."""

    def __init__(self, store: ResultStore, profile: Profile) -> None:
        assert profile.target is not None, "encbench's databases on a target need [target]"
        super().__init__(store, profile.target)
        self.profile = profile
        self.names = database_names(str(store.path.absolute()))
        self.dialect = MARIADB_DIALECT  # the server's family's SQL, known once checked
        self.pool_bytes = 0
        self.regime: str | None = None
        self.record: dict[str, Any] = store.read_json("at-rest.json") or {"regimes": {}}
        self.record.setdefault("skipped", {})

    # -- VariantHost -------------------------------------------------------------------------
    def target(self, variant: str) -> Target:
        return self.server.on(self.names[variant])

    def connection(self, variant: str) -> Connection:
        return self.server.on(self.names[variant]).endpoint()

    def client_env(self) -> dict[str, str] | None:
        return self.server.client_env()

    def local_server(self, variant: str) -> SandboxServer | None:
        return None

    def remote_cpu(self) -> SshCpu | None:
        return self.cpu

    # -- safety --------------------------------------------------------------------------------
    def _ownership(self, db: str) -> str:
        return ownership(self.server, db, self.marker)

    def check(self) -> None:
        """Everything that must hold before anything is created; one line when not."""
        facts = prerequisites.read_facts(self.server)
        prerequisites.refuse(facts.server_problems())
        self.dialect = dialect_for(prerequisites.family(facts.variables))
        needed = target_needs(self.profile)
        prerequisites.refuse(facts.privilege_problems(self.names.values(), needed))
        for db in self.names.values():
            self._ownership(db)
        variables = facts.variables
        self.pool_bytes = int(variables.get("innodb_buffer_pool_size", "0"))
        self.record["target"] = {
            "server": self.server.name,
            "version": variables.get("version", ""),
            "family": self.dialect.family,
            "key_plugins": facts.key_plugins,
            "innodb_encrypt_tables": variables.get("innodb_encrypt_tables", ""),
            "buffer_pool_mb": round(self.pool_bytes / 2**20),
            "buffer_pool_bytes": self.pool_bytes,
        }

    # -- provisioning --------------------------------------------------------------------------
    def provision(self, log: Callable[[str], None]) -> None:
        self.check()
        self.open_cpu(log)
        data = self.profile.data
        proofs = {}
        for variant, db in self.names.items():
            log(f"creating {db} on the {self.server.name}")
            self.create(db, self.dialect.database_option(variant))
            log(f"loading {data.tables} × {data.table_size:,} rows into {db}")
            sysbench.prepare(
                self.connection(variant),
                tables=data.tables,
                table_size=data.table_size,
                log=self.store.path / "logs" / f"prepare-{variant}.log",
                env=self.client_env(),
            )
            for i in range(1, data.tables + 1):
                # Both sets are rebuilt alike; they differ only in the option.
                option = self.dialect.table_option(variant)
                self.server.query(f"ALTER TABLE `{db}`.sbtest{i} {option}")
            log(f"proving that {db} is {variant} ({self.dialect.proof_view})")
            proofs[variant] = proof.prove_tablespaces(
                self.target(variant), variant, data.tables, proof_table=False,
                when="after loading", sql=self.dialect.proof_sql,
            ) | {"not_proven": self._not_proven(variant)}  # fmt: skip
        self.record.update(
            {
                "design": design(self.dialect),
                "databases": dict(self.names),
                "marker": self.marker,
                "cannot_show": cannot_show(self.cpu, self.dialect),
                "encryption": {
                    "option": f"{self.dialect.table_option('encrypted')} per table (the "
                    "server's key plugin or keyring)"
                },
                "data": {
                    "tables": data.tables,
                    "table_size": data.table_size,
                    "size_mb": round(estimated_data_mb(self.profile), 1),
                },
                "proofs": proofs,
                "cpu_measurement": cpu_measurement(self.cpu, self.spec.ssh),
                "mariadb_version": self.record["target"]["version"],
                "option_difference": {
                    "table option": f"{self.dialect.table_option('plain')} → "
                    f"{self.dialect.table_option('encrypted')}"
                },
            }
        )
        self.store.write_json("at-rest.json", self.record)

    def _not_proven(self, variant: str) -> list[str]:
        found = proof.RAW_FILES.missing(self.target(variant))
        if not self.dialect.page_counters:
            found.append(
                f"each run's pages through the cipher: {self.dialect.family} counts none "
                "(no Innodb_num_pages_encrypted/decrypted), so runs are proven by the "
                "tablespaces alone"
            )
        return found

    # -- regimes -------------------------------------------------------------------------------
    def use(self, spec: EncryptionSpec, log: Callable[[str], None]) -> None:
        """One configuration only: the user's server encrypts with its own settings (a
        target profile names one algorithm and one scope: profile.parse)."""

    def use_shape(self, shape: ShapeSpec | None, log: Callable[[str], None]) -> None:
        """No shape: a server encbench did not start cannot be confined by it (a target
        profile with server.shapes is refused: profile.parse)."""
        assert shape is None, "a target is never shaped"

    def unavailable(self, regime: str) -> str | None:
        return target_regimes.problem(regime, self.pool_bytes, self.profile)

    def settle(self, variant: str, regime: str) -> None:
        return None  # a target's page cache is its host's, never touched

    def renew(self) -> bool:
        return False  # the user's server: never restarted

    def configure(self, regime: str, log: Callable[[str], None]) -> None:
        """No restart: prove the sets again and, in memory, read both into the pool."""
        if self.regime == regime:
            return
        proofs = {
            v: proof.prove_tablespaces(
                self.target(v),
                v,
                self.profile.data.tables,
                proof_table=False,
                when="again",
                sql=self.dialect.proof_sql,
            )
            for v in VARIANTS
        }
        if regime == "in-memory":
            log("in-memory: reading both table sets into the server's buffer pool")
            for db in self.names.values():
                for i in range(1, self.profile.data.tables + 1):
                    self.server.query(f"SELECT SUM(LENGTH(c)) FROM `{db}`.sbtest{i}")
                    self.server.query(f"SELECT SUM(k) FROM `{db}`.sbtest{i} FORCE INDEX (k_{i})")
        self.record["regimes"][regime] = {
            "buffer_pool_mb": round(self.pool_bytes / 2**20),
            "proofs": proofs,
            "cpu_source": {v: self.cpu.source if self.cpu else "not measured" for v in VARIANTS},
        }
        self.store.write_json("at-rest.json", self.record)
        self.regime = regime
