"""A DBA's own server, before a run: which privileges each profile needs (no more than
encbench sends), which the login lacks and the statements that grant them, the key plugin
and the lines that load one, the regimes a buffer pool allows — against recorded server
answers — and the report's first lines when no read could come from disk."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from encbench.commands import rendering
from encbench.errors import BadInput, ServerError
from encbench.profiles import profile as profiles
from encbench.report import documents, markdown
from encbench.servers import grants
from encbench.servers.grants import TargetNeeds
from encbench.servers.mariadb import key_setup, prerequisites, readiness
from encbench.studies import target_needs
from encbench.studies.at_rest import summary as at_rest_summary
from encbench.studies.at_rest import target_regimes
from encbench.studies.at_rest.needs import WRITES
from encbench.studies.at_rest.records import CellKey
from encbench.studies.in_transit.needs import TARGET_NEEDS as TRANSIT_NEEDS
from tests.results.test_store import record

TARGET = '[target]\nhost = "db.example"\nuser = "bench"\n'


def load(body: str = "", target: str = TARGET) -> profiles.Profile:
    return profiles.parse(f'name = "t"\n{body}\n{target}', "t.toml")


READ_ONLY = load('[measure]\nworkloads = ["oltp_point_select", "oltp_read_only"]')


# -- what a profile needs -------------------------------------------------------------------
def test_a_read_only_profile_needs_no_update_or_delete_and_the_proof_needs_process() -> None:
    needs = target_needs(READ_ONLY)
    assert needs.database == {"SELECT", "INSERT", "CREATE", "DROP", "ALTER", "INDEX"}
    assert needs.global_ == {"PROCESS"} and needs.key_plugin


@pytest.mark.parametrize("workload", sorted(WRITES))
def test_each_write_workload_adds_exactly_what_its_script_sends(workload: str) -> None:
    needs = target_needs(load(f'[measure]\nworkloads = ["{workload}"]'))
    assert needs.database - target_needs(READ_ONLY).database == WRITES[workload] - {"INSERT"}


def test_in_transit_needs_its_own_database_only_and_no_key_plugin() -> None:
    transit = load('studies = ["in-transit"]')
    assert target_needs(transit) == TRANSIT_NEEDS
    assert not TRANSIT_NEEDS.global_ and not TRANSIT_NEEDS.key_plugin
    both = load('studies = ["at-rest", "in-transit"]\n[measure]\nworkloads = ["oltp_read_only"]')
    assert target_needs(both) == target_needs(READ_ONLY) | TRANSIT_NEEDS


# -- what the login lacks, and the statements -----------------------------------------------
AT_REST = target_needs(READ_ONLY)
NEEDED = ", ".join(grants.ordered(AT_REST.database, grants.DATABASE_ORDER))


def statements_for(shown: list[str], user: str = "bench@10.0.0.2") -> list[str]:
    lacking = prerequisites.missing_privileges(shown, readiness.EXAMPLE_DATABASES, AT_REST)
    return grants.grant_statements(grants.account(user), lacking)


def test_a_login_with_no_grants_gets_both_statements_for_the_account_the_server_sees() -> None:
    assert statements_for(["GRANT USAGE ON *.* TO `bench`@`10.0.0.2`"]) == [
        f"GRANT {NEEDED} ON `encbench\\_%`.* TO 'bench'@'10.0.0.2';",
        "GRANT PROCESS ON *.* TO 'bench'@'10.0.0.2';",
    ]


def test_only_what_is_missing_is_granted() -> None:
    shown = [
        "GRANT PROCESS ON *.* TO `bench`@`%`",
        "GRANT SELECT, INSERT, CREATE, DROP ON `encbench\\_%`.* TO `bench`@`%`",
    ]
    assert statements_for(shown, "bench@%") == [
        "GRANT ALTER, INDEX ON `encbench\\_%`.* TO 'bench'@'%';"
    ]


@pytest.mark.parametrize(
    "shown",
    [
        ["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"],
        [
            "GRANT PROCESS ON *.* TO `bench`@`%`",
            "GRANT ALL PRIVILEGES ON `encbench\\_%`.* TO `bench`@`%`",
        ],
    ],
)
def test_a_login_that_has_everything_needs_no_statement(shown: list[str]) -> None:
    assert statements_for(shown) == []


def test_grants_on_another_database_or_one_table_are_not_enough() -> None:
    shown = [
        "GRANT ALL PRIVILEGES ON `shop`.* TO `bench`@`%`",
        "GRANT SELECT ON `encbench_x_plain`.`sbtest1` TO `bench`@`%`",
    ]
    assert statements_for(shown)[0].startswith(f"GRANT {NEEDED} ON")


def test_an_account_is_quoted_as_sql_names_it() -> None:
    assert grants.account("bench@%") == "'bench'@'%'"
    assert grants.account("o'brien@db.example") == "'o\\'brien'@'db.example'"


def test_a_refused_login_names_the_account_to_create_as_the_server_saw_the_client() -> None:
    said = "target h:3306: Access denied for user 'bench'@'10.0.0.2' (using password: YES) (1045)"
    assert grants.denied_account(said) == "'bench'@'10.0.0.2'"
    assert grants.denial(said) == "Access denied for user 'bench'@'10.0.0.2' (using password: YES)"
    assert grants.denied_account("Can't connect to server on 'h'") is None


def test_a_run_refuses_in_one_line_that_points_to_plan() -> None:
    with pytest.raises(BadInput) as caught:
        prerequisites.refuse(["a problem: GRANT PROCESS ON *.* TO 'b'@'h';", "another"])
    message = str(caught.value)
    assert "\n" not in message and ";;" not in message
    assert message.endswith(prerequisites.PLAN_HINT) and "(and 1 more)" in message


# -- the key plugin -------------------------------------------------------------------------
MARIADB = {
    "version": "10.11.6-MariaDB-0+deb12u1",
    "version_comment": "Debian 12",
    "read_only": "OFF",
    "innodb_read_only": "OFF",
    "innodb_file_per_table": "ON",
    "innodb_encrypt_tables": "OFF",
    "innodb_buffer_pool_size": str(8 << 30),
}


@dataclasses.dataclass
class Answers:
    """A MariaDB server answering the read-only queries of `plan` from recorded rows."""

    variables: dict[str, str]
    active: list[str] = dataclasses.field(default_factory=list)
    all_plugins: list[tuple[str, str]] | None = dataclasses.field(
        default_factory=lambda: [("file_key_management", "NOT INSTALLED")]
    )
    shown: list[str] = dataclasses.field(default_factory=list)
    user: str = "bench@10.0.0.2"
    sent: list[str] = dataclasses.field(default_factory=list)

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        self.sent.append(sql)
        if sql.startswith("SHOW GLOBAL VARIABLES"):
            return [(k, v) for k, v in self.variables.items() if k in (args or ())]
        if "information_schema.ALL_PLUGINS" in sql:
            if self.all_plugins is None:
                raise ServerError("Unknown table 'ALL_PLUGINS' in information_schema")
            return list(self.all_plugins)
        if "information_schema.PLUGINS" in sql:
            return [(name,) for name in self.active]
        if sql == "SHOW GRANTS":
            return [(g,) for g in self.shown] or [("GRANT USAGE ON *.* TO `bench`@`10.0.0.2`",)]
        if sql == "SELECT CURRENT_USER()":
            return [(self.user,)]
        raise AssertionError(f"unexpected query {sql}")


def cnf_options(lines: list[str]) -> dict[str, str]:
    """The `key = value` lines of an option-file block, as the server would read them."""
    found = [re.fullmatch(r"\s*([a-z_]+) = (\S+)", line) for line in lines]
    return {m[1]: m[2] for m in found if m}


def test_an_active_key_plugin_is_named_and_no_lines_are_given() -> None:
    lines = key_setup.lines(["hashicorp_key_management"], None, "AES_CTR")
    assert lines == ["  key management: hashicorp_key_management active — tables can be encrypted"]


def test_without_one_the_lines_load_file_key_management_with_a_key_file_and_a_restart() -> None:
    lines = key_setup.lines([], key_setup.known_plugins(Answers(MARIADB)), "AES_CTR")
    text = "\n".join(lines)
    assert "file_key_management is in the server's plugin directory, not loaded" in text
    assert cnf_options(lines) == {
        "plugin_load_add": "file_key_management",
        "file_key_management_filename": key_setup.KEY_FILE,
        "file_key_management_encryption_algorithm": "AES_CTR",
    }
    assert any("# file_key_management_filekey = FILE:" in line for line in lines)
    assert 'echo "1;$(openssl rand -hex 32)"' in text and "umask 077" in text
    assert f"chown mysql:mysql {key_setup.KEY_FILE} && chmod 0600" in text
    assert "restart the server" in text and "encbench never restarts a server" in text


@pytest.mark.parametrize(
    ("known", "words"),
    [
        ([], "not in the server's plugin directory (plugin_dir): install"),
        (
            [("file_key_management", "NOT INSTALLED"), ("aws_key_management", "INACTIVE")],
            "aws_key_management is loaded but INACTIVE: the server's error log says why",
        ),
    ],
)
def test_what_the_server_has_of_key_plugins_is_said(
    known: list[tuple[str, str]], words: str
) -> None:
    found = key_setup.known_plugins(Answers(MARIADB, all_plugins=known))
    assert words in "\n".join(key_setup.lines([], found, "AES_CTR"))


def test_a_server_without_all_plugins_gets_the_lines_without_that_detail() -> None:
    found = key_setup.known_plugins(Answers(MARIADB, all_plugins=None))
    assert found is None
    lines = key_setup.lines([], found, "AES_CBC")
    assert "plugin directory" not in "\n".join(lines)
    assert cnf_options(lines)["file_key_management_encryption_algorithm"] == "AES_CBC"


# -- the target's part of `plan` -------------------------------------------------------------
SPEC = READ_ONLY.target
assert SPEC is not None


def plan_of(server: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], bool]:
    monkeypatch.setattr(readiness, "server_of", lambda spec: server)
    monkeypatch.setenv("MYSQL_PWD", "x")
    return readiness.plan_lines(SPEC, AT_REST, "AES_CTR")


def test_plan_prints_every_fix_for_a_new_login_and_reads_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = Answers(MARIADB)
    lines, logged_in = plan_of(server, monkeypatch)
    text = "\n".join(lines)
    assert logged_in
    assert "it sees this login as 'bench'@'10.0.0.2' (CURRENT_USER())" in text
    assert f"GRANT {NEEDED} ON `encbench\\_%`.* TO 'bench'@'10.0.0.2';" in text
    assert "GRANT PROCESS ON *.* TO 'bench'@'10.0.0.2';" in text
    assert "plugin_load_add = file_key_management" in text
    # The key plugin's fix is the lines above, not the run's one-line refusal as well.
    assert prerequisites.NO_KEY_PLUGIN not in text
    assert "every prerequisite holds" not in text
    assert all(q.startswith(("SHOW", "SELECT")) for q in server.sent)


def test_plan_says_when_the_login_has_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = ["GRANT ALL PRIVILEGES ON *.* TO `bench`@`10.0.0.2`"]
    server = Answers(MARIADB, active=["file_key_management"], shown=shown)
    lines = plan_of(server, monkeypatch)[0]
    text = "\n".join(lines)
    assert f"'bench'@'10.0.0.2' has every one the run needs ({NEEDED} on" in text
    assert "file_key_management active" in text and "ready: every prerequisite holds" in text
    assert not [line for line in lines if line.lstrip().startswith(("GRANT ", "CREATE USER"))]


class Refusing:
    def __init__(self, message: str) -> None:
        self.message = message

    def query(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        raise BadInput(self.message)


def test_a_refused_login_gets_create_user_and_its_grants(monkeypatch: pytest.MonkeyPatch) -> None:
    said = "target db.example:3306: Access denied for user 'bench'@'10.0.0.2' (using password: YES)"
    lines, logged_in = plan_of(Refusing(said), monkeypatch)
    assert not logged_in
    assert "    CREATE USER 'bench'@'10.0.0.2' IDENTIFIED BY '…';" in lines
    assert "    GRANT PROCESS ON *.* TO 'bench'@'10.0.0.2';" in lines


def test_a_server_that_cannot_be_reached_is_still_bad_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(BadInput, match="check the target's host"):
        plan_of(Refusing("target h:1: refused: check the target's host and port"), monkeypatch)


def test_a_read_only_server_is_only_that_and_in_transit_asks_no_key_plugin() -> None:
    facts = prerequisites.read_facts(Answers({**MARIADB, "read_only": "ON"}))
    assert readiness.problems(facts, AT_REST) == [prerequisites.READ_ONLY]
    facts = prerequisites.read_facts(Answers(MARIADB, shown=["GRANT ALL ON *.* TO `b`@`%`"]))
    assert readiness.problems(facts, TRANSIT_NEEDS) == []
    assert readiness.problems(facts, AT_REST) == [prerequisites.NO_KEY_PLUGIN]


# -- regimes against the buffer pool --------------------------------------------------------
SMALL = load(
    '[data]\ntables = 1\ntable_size = 50000\n[measure]\nregimes = ["in-memory", "io-bound"]'
)


def test_a_large_pool_allows_in_memory_only_and_says_what_would_give_io_bound() -> None:
    pool = 8 << 30
    memory = target_regimes.fit("in-memory", pool, SMALL)
    disk = target_regimes.fit("io-bound", pool, SMALL)
    assert memory.possible and not disk.possible
    # io-bound: the data at least 1 / io_bound_fraction times the pool.
    assert disk.factor == 1 / SMALL.regime.io_bound_fraction
    line = target_regimes.plan_line(disk, SMALL)
    needed = target_regimes.size(8 * 1024 * disk.factor)
    assert line.startswith("io-bound: not possible — the buffer pool is 8.0 GiB")
    assert f"≥ {needed} for both sets" in line
    assert "run this profile without --target" in line
    assert f"data.table_size ≥ {disk.table_size:,}" in line
    # With that many rows the same pool would give io-bound.
    bigger = load(f"[data]\ntables = 1\ntable_size = {disk.table_size}")
    assert target_regimes.fit("io-bound", pool, bigger).possible


def test_a_pool_is_suggested_only_where_mariadb_could_run_one_that_small() -> None:
    tiny = target_regimes.fit("io-bound", 8 << 30, SMALL)
    assert tiny.limit_mb < SMALL.regime.min_buffer_pool_mb
    assert "whose buffer pool is at most" not in target_regimes.plan_line(tiny, SMALL)
    large = load("[data]\ntables = 4\ntable_size = 2000000")
    fit = target_regimes.fit("io-bound", 8 << 30, large)
    line = target_regimes.plan_line(fit, large)
    assert (
        f"target a server whose buffer pool is at most {target_regimes.size(fit.limit_mb)}" in line
    )


def test_a_builtin_profile_is_named_in_the_sandbox_run_that_measures_io_bound() -> None:
    smoke, _ = profiles.load("smoke")
    assert target_regimes.sandbox_command(smoke) == "`encbench run smoke` (without --target)"


# -- the report's first lines ------------------------------------------------------------------
def report_of(profile: profiles.Profile, pool_mb: int) -> tuple[dict[str, Any], str]:
    runs = [
        dataclasses.replace(record(n, v, tps), cell=CellKey("oltp_point_select", "in-memory", 2))
        for n in range(4)
        for v, tps in (("plain", 100.0 + n), ("encrypted", 98.0 + n))
    ]
    servers = {"design": "two table sets", "target": {"buffer_pool_mb": pool_mb}}
    part = at_rest_summary.build(runs, profile, servers, None)
    summary = documents.summarize("t", None, {"at-rest": part})
    return summary.to_json(), markdown.render(rendering.document(summary))


def test_a_report_whose_pool_held_all_the_data_says_so_first_from_summary_json() -> None:
    profile = load(
        '[data]\ntables = 1\ntable_size = 2000\n[measure]\nworkloads = ["oltp_point_select"]\n'
        'regimes = ["in-memory", "io-bound"]\nthreads = [2]'
    )
    data, text = report_of(profile, 128)
    said = data["studies"]["at-rest"]["disk_reads_not_measured"]
    assert said["buffer_pool_mb"] == 128
    first = text.splitlines()[2:5]
    assert first[0].startswith("**Measured in memory only: no read came from disk.**")
    assert "(128 MiB)" in first[0] and "not what encryption costs when reads come" in first[0]
    assert first[2].startswith("To measure reads from disk: run this profile without --target")
    assert f"`data.table_size` of at least {said['table_size']:,} rows" in first[2]


def test_a_pool_small_enough_for_io_bound_or_a_sandbox_adds_no_first_lines() -> None:
    profile = load("[data]\ntables = 1\ntable_size = 2000000")  # ≈ 990 MiB a set
    data, text = report_of(profile, 64)
    assert data["studies"]["at-rest"].get("disk_reads_not_measured") is None
    assert text.splitlines()[2].startswith("## ")
    sandbox = profiles.parse('name = "t"', "t.toml")
    assert at_rest_summary.disk_reads_not_measured(sandbox, {"regimes": {}}) is None


def test_needs_of_nothing_ask_nothing() -> None:
    assert not TargetNeeds() and TargetNeeds() | AT_REST == AT_REST
