"""What both state-transfer files check of a summary's cells."""

from __future__ import annotations


def assert_each_cell_is_set_against_the_limits(cells: list[dict]) -> None:  # type: ignore[type-arg]
    for c in cells:
        assert set(c["limits"]) == {"plain", "encrypted"}
        assert set(c["limits"]["plain"]["limits_mib_per_s"]) == {"disk read", "disk write", "link"}
        assert "cipher" in c["limits"]["encrypted"]["limits_mib_per_s"]
        for side in c["limits"].values():
            assert side["pct_of_limit"] > 0 and side["reading"]
