"""The steady write design's warm-up (studies/at_rest/steady.py): when a server's write path
has leveled off, read from its status as MariaDB and MySQL give it."""

from __future__ import annotations

from collections.abc import Mapping

from encbench.studies.at_rest import steady
from encbench.studies.at_rest.steady import State

MIB = 2**20


def states(dirty: list[int], ages: list[int | None] | None = None) -> list[State]:
    ages = ages if ages is not None else [64 * MIB] * len(dirty)
    return [State(d, a, 0) for d, a in zip(dirty, ages, strict=True)]


def test_mariadb_gives_its_checkpoint_age_and_mysql_its_two_lsns() -> None:
    maria = {"Innodb_buffer_pool_pages_dirty": "1250", "Innodb_checkpoint_age": "3000000",
             "Innodb_buffer_pool_pages_flushed": "77"}  # fmt: skip
    assert steady.state(maria) == State(1250, 3_000_000, 77)
    mysql = {"Innodb_buffer_pool_pages_dirty": "9", "Innodb_redo_log_current_lsn": "5000",
             "Innodb_redo_log_checkpoint_lsn": "4200"}  # fmt: skip
    assert steady.state(mysql) == State(9, 800, 0)
    assert steady.state({"Innodb_buffer_pool_pages_dirty": "3"}) == State(3, None, 0)


def test_a_climbing_pool_is_not_level_and_a_noisy_flat_one_is() -> None:
    # dirty pages under 16 writing threads on a 46 MB pool, read every 5 s (measured)
    flat = [1437, 1141, 1514, 1274, 1311, 1210]
    assert steady.level(states(flat))
    assert not steady.level(states(flat[: 2 * steady.READINGS - 1]))  # two means needed
    climbing = [200, 600, 1000, 1600, 2200, 2900]
    assert not steady.level(states(climbing))
    # the last readings held against those just before: an old climb no longer counts
    assert steady.level(states([*climbing, 2800, 3000, 2900, 2950]))


def test_the_checkpoint_age_must_level_too_unless_the_server_gives_none() -> None:
    flat = [1200] * 6
    growing = [8 * MIB, 16 * MIB, 24 * MIB, 40 * MIB, 56 * MIB, 72 * MIB]
    assert not steady.level(states(flat, list(growing)))
    assert steady.level(states(flat, [None] * 6))
    # small figures swing by more than a share of themselves and are level all the same
    assert steady.level(states([10, 90, 30, 200, 5, 60], [MIB, 3 * MIB, 0, 5 * MIB, 0, MIB]))


def test_the_warm_up_loads_in_chunks_until_every_server_levels_or_its_bound() -> None:
    chunks: list[tuple[int, int]] = []

    def load(chunk: int, seconds: int) -> None:
        chunks.append((chunk, seconds))

    flat = iter(range(100))

    def read_flat() -> Mapping[str, State]:
        next(flat)
        return {"plain": State(1000, MIB, 0), "encrypted": State(1100, 2 * MIB, 0)}

    done = steady.warm_until_level(load, read_flat, min_s=0, max_s=60, chunk_s=2)
    assert done.level and len(chunks) == 2 * steady.READINGS
    assert chunks[0] == (0, 2) and set(done.readings) == {"plain", "encrypted"}
    assert done.to_json()["readings"]["plain"][0] == [1000, MIB]  # type: ignore[index]

    climb = iter(range(1, 1000))

    def read_climbing() -> Mapping[str, State]:
        n = next(climb)
        return {"plain": State(1000, MIB, 0), "encrypted": State(500 * n, MIB, 0)}

    chunks.clear()
    never = steady.warm_until_level(load, read_climbing, min_s=0, max_s=0)
    assert not never.level and len(chunks) == 1  # the bound ends it: measured anyway, marked


def test_the_design_in_words_names_the_profiles_chunk() -> None:
    assert "in 3 s chunks" in steady.design(3) and "last 2 readings" in steady.design(3)
