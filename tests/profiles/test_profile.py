"""Profiles: the built-ins load, and every bad value is refused with its key named."""

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from encbench import capacity
from encbench.engine import study_base
from encbench.errors import BadInput
from encbench.profiles import profile
from encbench.results.store import ResultStore


def test_every_builtin_profile_loads() -> None:
    assert {"smoke", "quick", "percona-2019-decryption"} <= set(profile.builtin_names())
    for name in profile.builtin_names():
        prof, text = profile.load(name)
        assert prof.name == name
        assert text.strip()


@pytest.mark.parametrize(("former", "name"), sorted(profile.FORMER_NAMES.items()))
def test_a_former_profile_name_still_loads_the_profile_it_was_renamed_to(
    former: str, name: str
) -> None:
    assert profile.load(former) == profile.load(name)


def test_former_profile_names_are_neither_listed_nor_offered() -> None:
    assert not set(profile.FORMER_NAMES) & set(profile.builtin_names())
    assert set(profile.FORMER_NAMES.values()) <= set(profile.builtin_names())
    with pytest.raises(BadInput) as refused:
        profile.load("no-such-profile")
    assert "seed" not in str(refused.value)


def test_quick_is_read_only_in_both_regimes_over_the_issued_thread_sweep() -> None:
    prof, _ = profile.load("quick")
    assert prof.measure.workloads == ["oltp_read_only"]
    assert set(prof.measure.regimes) == {"in-memory", "io-bound"}
    assert prof.measure.threads == [1, 4, 16, 64]


def test_quick_has_one_optional_rsync_sst_cell_on_small_data_of_its_own() -> None:
    prof, _ = profile.load("quick")
    st = prof.state_transfer
    assert "state-transfer" in prof.studies and st.optional
    assert st.methods == ["rsync"]  # MariaDB's default; mariabackup's donor sleeps 10 s
    assert st.data(prof.data).tables * st.data(prof.data).table_size == 20_000
    assert st.min_rounds >= 12  # an interval, not a functional check


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('name = "x"\n[measure]\nthreads = [0]\n', "measure.threads.0"),
        ('name = "x"\n[measure]\nthreads = [-4]\n', "measure.threads.0"),
        ('name = "x"\n[measure]\nworkloads = ["oltp_nope"]\n', "unknown workload 'oltp_nope'"),
        ('name = "x"\n[measure]\nthread = [1]\n', "measure.thread: unknown key"),
        ('name = "x"\n[server]\nencryption_algorithm = "ROT13"\n', "server.encryption_algorithm"),
        ('name = "x"\n[measure]\nmin_rounds = 9\nmax_rounds = 3\n', "min_rounds"),
        ('name = "x"\n[server]\nkinds = ["oracle"]\n', "unknown server kind 'oracle'"),
        (
            'name = "x"\n[server]\nkinds = ["mariadb", "mariadb"]\n',
            'server.kinds: "mariadb" is listed twice',
        ),
        ('name = "x"\n[server]\nkinds = []\n', "server.kinds"),
        ("[data]\ntables = 1\n", "name: missing; add it"),
        ('name = "x"\n[data\n', "not valid TOML"),
        ('name = "x"\ncipher_speed_repeats = 0\n', "cipher_speed_repeats"),
        ('name = "x"\ncipher_speed_repeats = 11\n', "cipher_speed_repeats"),
    ],
)
def test_bad_values_name_their_key(toml: str, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        profile.parse(toml, "my.toml")


def test_crypto_json_runs_openssl_speed_as_often_as_the_profile_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cipher_speed_repeats reaches the plan of crypto.json's `openssl speed`; unset, three."""
    plans: list[capacity.Plan] = []

    class Measured:
        def __init__(self, plan: capacity.Plan) -> None:
            plans.append(plan)

        def to_json(self) -> dict[str, Any]:
            return {"plan": plans[-1].to_json()}

    monkeypatch.setattr(capacity, "measure_capacity", lambda plan: Measured(plan))
    progress = SimpleNamespace(status=lambda _: None)
    for text, repeats in (('name = "x"\ncipher_speed_repeats = 1\n', 1), ('name = "x"\n', 3)):
        read = profile.parse(text, "p.toml")
        (tmp_path / str(repeats)).mkdir()
        store = ResultStore(tmp_path / str(repeats))
        algorithms = read.server.encryption_algorithm
        study_base.record_cipher_speed(store, algorithms, progress, read.cipher_speed_repeats)  # type: ignore[arg-type]
        assert plans[-1].repeats == repeats
        assert len(plans[-1].jobs) == 2  # AES_CTR's two directions, each run `repeats` times
        assert store.read_json("crypto.json") == {"plan": plans[-1].to_json()}


def test_only_the_tests_profiles_measure_the_ciphers_and_limits_for_less_time() -> None:
    """cipher_speed_repeats and [state_transfer] limits_s shorten the figures beside the
    results; the profiles users run keep the defaults (three runs, two seconds)."""
    from encbench.studies.state_transfer.options import LIMITS_S, state_transfer_options

    assert (capacity.FINGERPRINT_REPEATS, LIMITS_S) == (3, 2)
    for name in profile.builtin_names():
        prof, _ = profile.load(name)
        spec = state_transfer_options(prof)
        shortened = (prof.cipher_speed_repeats, spec.limits_s) != (3, 2)
        for_tests = name.startswith("smoke") or name.endswith("-tiny")
        assert not shortened or for_tests, name


def test_a_profile_measures_mariadb_unless_it_names_its_server_kinds() -> None:
    assert profile.parse('name = "x"\n', "my.toml").server.kinds == ["mariadb"]
    named = profile.parse('name = "x"\n[server]\nkinds = ["postgresql", "mariadb"]\n', "my.toml")
    assert named.server.kinds == ["postgresql", "mariadb"]


def test_unknown_profile_lists_the_builtins() -> None:
    with pytest.raises(BadInput, match=r"unknown profile .nosuch.: use one of .*quick"):
        profile.load("nosuch")


def test_a_toml_path_that_does_not_exist_is_named() -> None:
    with pytest.raises(BadInput, match=r"cannot read profile /nonexistent/p\.toml"):
        profile.load("/nonexistent/p.toml")
