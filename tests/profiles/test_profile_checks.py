"""Every profile value is checked before anything starts (issue #8): each refusal is one
BadInput line naming the key and the fix, and a refused run leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from encbench import studies
from encbench.errors import BadInput
from encbench.profiles import options, profile
from encbench.servers import sizing
from encbench.servers.mariadb.options import SandboxPaths, server_options
from encbench.servers.variants import EncryptionSpec
from encbench.studies.at_rest import pair
from tests.helpers import encbench_here


def refusal(toml: str) -> str:
    with pytest.raises(BadInput) as caught:
        profile.parse('name = "x"\n' + toml, "p.toml")
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- 1. repeated list entries --------------------------------------------------------------


def test_refuses_repeated_thread_counts() -> None:
    message = refusal("[measure]\nthreads = [4, 4]\n")
    assert message == "p.toml: measure.threads: 4 is listed twice; list each value once"


@pytest.mark.parametrize(
    ("toml", "key", "value"),
    [
        ('studies = ["at-rest", "at-rest"]', "studies", '"at-rest"'),
        ('[measure]\nworkloads = ["oltp_read_only", "oltp_read_only"]', "measure.workloads", ""),
        ('[measure]\nregimes = ["io-bound", "in-memory", "io-bound"]', "measure.regimes", ""),
        ('[transit]\ntests = ["connect", "connect"]', "transit.tests", '"connect"'),
        ('[transit]\nkey_types = ["rsa2048", "rsa2048"]', "transit.key_types", ""),
        ('[transit]\nmethods = ["tls", "ssh", "tls"]', "transit.methods", '"tls"'),
        ("[transit]\nrtt_ms = [0, 40, 0.0]", "transit.rtt_ms", "0.0"),
        ("[transit]\nstunnel_resume = [false, false]", "transit.stunnel_resume", "false"),
        ("[transit]\nconnect_threads = [1, 1]", "transit.connect_threads", "1"),
        ("[transit]\nquery_threads = [16, 4, 16]", "transit.query_threads", "16"),
        (
            '[transit]\nssh_ciphers = ["aes256-ctr", "aes256-ctr"]',
            "transit.ssh_ciphers",
            '"aes256-ctr"',
        ),
        (
            '[transit]\ntls_version = "TLSv1.2"\nbulk_ciphers = ["AES256-SHA", "AES256-SHA"]',
            "transit.bulk_ciphers",
            '"AES256-SHA"',
        ),
    ],
)
def test_refuses_a_value_listed_twice_in_any_list(toml: str, key: str, value: str) -> None:
    message = refusal(toml + "\n")
    assert message.startswith(f"p.toml: {key}: {value}")
    assert message.endswith("is listed twice; list each value once")


# -- 2. strict types -----------------------------------------------------------------------


def test_refuses_a_thread_count_written_as_a_string() -> None:
    message = refusal('[measure]\nthreads = ["4"]\n')
    assert message == (
        'p.toml: measure.threads.0: expected a whole number, got "4"; write it without quotes'
    )


def test_refuses_a_duration_written_as_a_string() -> None:
    assert refusal('[measure]\nrun_s = "1"\n').startswith(
        'p.toml: measure.run_s: expected a whole number, got "1"; write it without quotes'
    )


def test_refuses_a_boolean_where_a_number_belongs() -> None:
    assert refusal("[data]\ntables = true\n") == (
        "p.toml: data.tables: expected a whole number, got true; "
        "write a number such as 1, not true or false"
    )
    assert "transit.rate_mbit: expected a number, got false" in refusal(
        "[transit]\nrtt_ms = [40]\nrate_mbit = false\n"
    )


def test_refuses_a_number_where_a_boolean_belongs() -> None:
    assert refusal("[transit]\nstunnel_resume = [0]\n").startswith(
        "p.toml: transit.stunnel_resume.0: expected true or false, got 0"
    )


def test_refuses_a_fraction_where_a_whole_number_belongs() -> None:
    assert refusal("[measure]\nrun_s = 1.5\n").endswith(
        "got 1.5; write a whole number, without a decimal point"
    )


@pytest.mark.parametrize(
    ("toml", "key", "value"),
    [
        ("[measure]\ncell_budget_s = inf", "measure.cell_budget_s", "inf"),
        ("[measure]\ntarget_halfwidth_pct = nan", "measure.target_halfwidth_pct", "nan"),
        ("[transit]\nrtt_ms = [nan]", "transit.rtt_ms.0", "nan"),
        ("[transit]\nrtt_ms = [40]\nrate_mbit = -inf", "transit.rate_mbit", "-inf"),
        ("[regime]\nin_memory_headroom = +inf", "regime.in_memory_headroom", "inf"),
    ],
)
def test_refuses_numbers_that_are_not_finite(toml: str, key: str, value: str) -> None:
    assert refusal(toml + "\n") == (
        f"p.toml: {key}: {value} is not a finite number; give a finite value"
    )


def test_accepts_a_whole_number_where_a_fraction_may_be_given() -> None:
    prof = profile.parse('name = "x"\n[measure]\ntarget_halfwidth_pct = 2\n', "p.toml")
    assert prof.measure.target_halfwidth_pct == 2.0
    assert isinstance(prof.measure.target_halfwidth_pct, float)


def test_every_builtin_profile_still_parses_under_the_strict_checks() -> None:
    for name in profile.builtin_names():
        prof, text = profile.load(name)
        assert profile.parse(text, name) == prof


# -- 3. threads within the sandboxed server's max_connections ------------------------------


def test_the_thread_limit_follows_the_servers_max_connections(tmp_path: Path) -> None:
    paths = SandboxPaths(tmp_path, tmp_path, tmp_path / "s", tmp_path / "p", tmp_path / "e")
    rendered = server_options(
        "plain",
        EncryptionSpec(),
        paths,
        port=3306,
        buffer_pool_mb=8,
        key_file=tmp_path / "k",
        run_as_root=False,
    )
    assert int(rendered["max_connections"]) == options.SERVER_MAX_CONNECTIONS
    assert 0 < options.MAX_CLIENT_THREADS < options.SERVER_MAX_CONNECTIONS


@pytest.mark.parametrize(
    "key", ["[measure]\nthreads", "[transit]\nconnect_threads", "[transit]\nquery_threads"]
)
def test_refuses_more_threads_than_the_server_accepts_connections(key: str) -> None:
    limit = options.MAX_CLIENT_THREADS
    profile.parse(f'name = "x"\n{key} = [1, {limit}]\n', "p.toml")
    message = refusal(f"{key} = [1, {limit + 1}]\n")
    name = key.replace("[", "").replace("]\n", ".")
    assert message.startswith(f"p.toml: {name}: {limit + 1} threads need {limit + 1} connections")
    assert f"max_connections = {options.SERVER_MAX_CONNECTIONS}" in message
    assert message.endswith(f"use at most {limit}")


# -- 4. the in-memory regime within the machine's memory -----------------------------------


def meminfo(available_kb: int) -> str:
    return f"MemTotal:       99999999 kB\nMemAvailable:   {available_kb} kB\nBuffers: 1 kB\n"


def big(regimes: str = '["in-memory", "io-bound"]') -> profile.Profile:
    # 8 × 1M rows ≈ 2 GB of data: an in-memory pool of about 4 GB per server.
    return profile.parse(
        f'name = "big"\n[data]\ntables = 8\ntable_size = 1000000\n[measure]\nregimes = {regimes}\n',
        "big.toml",
    )


def in_memory_pool_mb(prof: profile.Profile) -> int:
    return sizing.pool_mb(pair.estimated_data_mb(prof), "in-memory", prof.regime)


def test_refuses_an_in_memory_regime_larger_than_the_available_memory() -> None:
    pool = in_memory_pool_mb(big())
    with pytest.raises(BadInput) as caught:
        studies.check_memory(big(), meminfo(4 * 2**20))  # 4 GiB available
    message = str(caught.value)
    assert message.startswith("at-rest: the servers need about")
    assert f"each a {pool:,} MB buffer pool" in message
    assert "4,096 MB of memory is available" in message
    assert 'drop "in-memory" from measure.regimes' in message


def test_the_in_memory_estimate_counts_both_servers_pools() -> None:
    prof = big()
    pool = in_memory_pool_mb(prof)
    assert 3900 < pool < 4100  # 8M rows × 260 B × headroom 2 + 64 MB
    need_kb = 2 * (pool + sizing.SERVER_ALLOWANCE_MB) * 1024
    studies.check_memory(prof, meminfo(need_kb))
    with pytest.raises(BadInput):
        studies.check_memory(prof, meminfo(need_kb - 1024))


def test_accepts_big_data_when_the_in_memory_regime_is_not_asked_for() -> None:
    io_bound = big('["io-bound"]')
    studies.check_memory(io_bound, meminfo(2 * (sizing.SERVER_ALLOWANCE_MB + 500) * 1024))


def test_the_in_transit_server_must_fit_too() -> None:
    prof = profile.parse(
        'name = "t"\nstudies = ["in-transit"]\n[transit]\ntests = ["bulk"]\nbulk_mb = 8000\n',
        "t.toml",
    )
    with pytest.raises(BadInput, match=r"in-transit: .*transit.bulk_mb"):
        studies.check_memory(prof, meminfo(4 * 2**20))


def test_a_machine_without_memavailable_is_not_refused() -> None:
    studies.check_memory(big(), "MemTotal: 1024 kB\n")


# -- 5. unreadable profile files -----------------------------------------------------------


def test_refuses_a_profile_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(b'\xff\xfename = "x"\n')
    with pytest.raises(BadInput) as caught:
        profile.load(str(path))
    assert str(caught.value) == (
        f"{path}: not UTF-8 text (byte 0xff at offset 0); save the profile as UTF-8 TOML"
    )


def test_accepts_a_utf8_profile_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(b'\xef\xbb\xbfname = "x"\n')
    assert profile.load(str(path))[0].name == "x"


def test_refuses_a_profile_that_is_not_toml(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text("just some words\n")
    with pytest.raises(BadInput, match=r"p\.toml: not valid TOML: .*line 1"):
        profile.load(str(path))


def test_refuses_a_directory_as_the_profile(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as caught:
        profile.load(str(tmp_path))
    assert str(caught.value) == (
        f"profile {tmp_path} is a directory; give the path of a .toml file"
    )


# -- 6. a name that stays inside results/ --------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["../escape", "a/b", "a\\\\b", "..", "a..b", ".hidden", "", "nul\\u0000x", "sp ace", "é"],
)
def test_refuses_a_name_that_cannot_be_a_results_directory(name: str) -> None:
    with pytest.raises(BadInput) as caught:
        profile.parse(f'name = "{name}"\n', "p.toml")
    message = str(caught.value)
    assert message.startswith("p.toml: name: ")
    assert "\n" not in message and "\0" not in message
    assert "use only letters, digits, '.', '_' and '-'" in message


def test_accepts_names_of_letters_digits_dots_dashes_and_underscores() -> None:
    assert profile.parse('name = "seed-2019_v1.2"\n', "p.toml").name == "seed-2019_v1.2"


# -- through the command line --------------------------------------------------------------


def assert_refused_before_anything(tmp_path: Path, body: bytes, *fragments: str) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(body)
    result = encbench_here("run", str(path), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]  # no results/


def test_run_refuses_repeated_threads_in_one_line_and_creates_nothing(tmp_path: Path) -> None:
    assert_refused_before_anything(
        tmp_path,
        b'name = "x"\n[measure]\nthreads = [1, 4, 4]\n',
        "measure.threads: 4 is listed twice; list each value once",
    )


def test_run_refuses_a_name_leaving_results_and_creates_nothing(tmp_path: Path) -> None:
    assert_refused_before_anything(
        tmp_path, b'name = "../../x"\n', 'name: "../../x" cannot name the results directory'
    )
    assert not list(tmp_path.parent.glob("x-*"))


def test_run_refuses_a_profile_that_is_not_utf8_and_creates_nothing(tmp_path: Path) -> None:
    assert_refused_before_anything(tmp_path, b"\xff\xfe\x00n", "not UTF-8 text")
