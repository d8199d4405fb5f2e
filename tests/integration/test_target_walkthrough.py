"""A DBA's first run against their own server, step by step, as README's "Your own server"
tells it: a MariaDB server started here by hand with no key plugin and a login with no
privileges; `encbench run` refuses in one line that points to `encbench plan`; `plan` prints
the GRANT statements and the my.cnf lines and touches nothing; the test applies them as an
administrator would (the grants as root over the socket, the key file by the printed shell
lines, the plugin by a restart with the printed options); then `plan` finds nothing to fix,
and the run measures in memory and says first, in its report, that no read came from disk.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from encbench.servers.mariadb import key_setup
from tests.helpers import encbench, encbench_here, start_plain_server, tiny_profile

PASSWORD = "not-a-real-secret-8"
LOGIN = "'newbie'@'127.0.0.1'"
OPTION = re.compile(r"([a-z_]+) = (\S+)")


def block_after(lines: list[str], start: str, stop: str) -> list[str]:
    """The printed lines between the one containing `start` and the next containing `stop`."""
    first = next(i for i, line in enumerate(lines) if start in line)
    last = next(i for i in range(first + 1, len(lines)) if stop in lines[i])
    return [line.strip() for line in lines[first + 1 : last]]


def test_a_new_user_goes_from_plan_to_a_report_that_says_what_it_could_not_measure(
    tmp_path: Path, state_dir: Path
) -> None:
    server = start_plain_server(tmp_path / "users", use_cgroup=False)
    try:
        server.query(f"CREATE USER {LOGIN} IDENTIFIED BY '{PASSWORD}'")
        pool_mb = int(server.query("SELECT @@innodb_buffer_pool_size")[0][0]) / 2**20
        dsn = f"mysql://newbie@127.0.0.1:{server.port}/"
        env = {"MYSQL_PWD": PASSWORD}
        profile = str(tiny_profile(tmp_path / "p.toml", regimes='["in-memory", "io-bound"]'))
        out = tmp_path / "out"
        cwd = tmp_path / "cwd"
        cwd.mkdir()
        before = server.query("SHOW DATABASES")

        refused = encbench("run", profile, "--target", dsn, "--out", str(out), env=env, cwd=cwd)
        assert refused.returncode == 2, refused.stderr
        assert "`encbench plan`" in refused.stderr.strip().splitlines()[-1]
        assert "Traceback" not in refused.stderr and not out.exists()

        plan = encbench_here("plan", profile, "--target", dsn, env=env, cwd=cwd)
        assert plan.returncode == 0, plan.stderr
        lines = plan.stdout.splitlines()
        grants = [line.strip() for line in lines if line.strip().startswith("GRANT ")]
        assert len(grants) == 2 and all(g.endswith(f" TO {LOGIN};") for g in grants)
        assert "io-bound: not possible" in plan.stdout and "in-memory: possible" in plan.stdout
        assert "every prerequisite holds" not in plan.stdout
        assert server.query("SHOW DATABASES") == before and list(cwd.iterdir()) == []

        # As an administrator would: the grants as root, over the socket.
        for grant in grants:
            server.query(grant.rstrip(";"))
        # The key file by the printed lines, in a directory of the test's own (the chown to
        # the packaged server's user does not apply to a server the test runs as itself).
        keys = tmp_path / "keys"
        commands = block_after(lines, "make its key file", "add these lines")
        for command in commands:
            if not command.startswith("chown"):
                shell = command.replace(key_setup.KEY_DIR, str(keys))
                subprocess.run(["bash", "-c", shell], check=True, timeout=30)
        key_file = Path(key_setup.KEY_FILE.replace(key_setup.KEY_DIR, str(keys)))
        assert key_file.stat().st_mode & 0o777 == 0o600
        assert re.fullmatch(r"1;[0-9a-f]{64}\n", key_file.read_text())
        # The plugin by the printed option lines, and a restart.
        cnf = block_after(lines, "add these lines", "restart the server")
        assert cnf[0] == "[mariadb]"
        options = {m[1]: m[2] for line in cnf if (m := OPTION.fullmatch(line))}
        assert options["plugin_load_add"] == "file_key_management"
        options = {k: v.replace(key_setup.KEY_DIR, str(keys)) for k, v in options.items()}
        server.restart(server.options | options)

        again = encbench_here("plan", profile, "--target", dsn, env=env, cwd=cwd)
        assert again.returncode == 0, again.stderr
        assert f"{LOGIN} has every one the run needs" in again.stdout
        assert "file_key_management active" in again.stdout
        assert "ready: every prerequisite holds" in again.stdout
        assert "GRANT " not in again.stdout and "fix:" not in again.stdout

        result = encbench("run", profile, "--target", dsn, "--out", str(out), env=env, cwd=cwd)
        assert result.returncode == 0, result.stderr
        record = json.loads((out / "at-rest.json").read_text())
        assert record["proofs"]["encrypted"]["tablespaces_encrypted"] == 1
        summary = json.loads((out / "summary.json").read_text())
        said = summary["studies"]["at-rest"]["disk_reads_not_measured"]
        assert said["buffer_pool_mb"] == pool_mb
        report = (out / "report.md").read_text().splitlines()
        assert report[2].startswith("**Measured in memory only: no read came from disk.**")
        assert f"({pool_mb:.0f} MiB)" in report[2]
        assert "not what encryption costs when reads come from disk" in report[2]
        assert report[4].startswith("To measure reads from disk: run this profile")
        assert server.query("SHOW DATABASES") == before
    finally:
        server.destroy()
