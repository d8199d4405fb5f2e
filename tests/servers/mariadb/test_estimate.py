"""MariaDB's part of `encbench estimate` (servers/mariadb/estimate.py): what its login must
see of the server's counters, and the grant that shows them."""

from __future__ import annotations

import pytest

from encbench.errors import BadInput
from encbench.servers.mariadb import estimate as mariadb_part


def test_missing_counters_ask_for_process_only_where_the_user_lacks_it() -> None:
    status = {"Uptime": "1"}
    usage = ["GRANT USAGE ON *.* TO `u`@`%`"]
    with pytest.raises(BadInput, match=r"GRANT PROCESS ON \*\.\* TO 'u'@'THIS_HOST'"):
        mariadb_part.check_counters(status, lambda: usage, "u")
    process = ["GRANT PROCESS ON *.* TO `u`@`%`"]
    with pytest.raises(BadInput, match="counts no Innodb_pages_read"):
        mariadb_part.check_counters(status, lambda: process, "u")
    full = {name: "0" for name in mariadb_part.REQUIRED}
    mariadb_part.check_counters(full, lambda: pytest.fail("no grants asked"), "u")


def test_mariadbs_ways_give_the_first_kinds_part_of_the_estimate() -> None:
    from encbench.estimate import kinds

    assert kinds.first() is mariadb_part and isinstance(mariadb_part, kinds.FirstKind)
    assert kinds.of("mariadb") is None  # the first kind is read its own way, not as a further one
