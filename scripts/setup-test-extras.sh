#!/usr/bin/env bash
# What only the tests need, installed only when missing: quick when already done.
#   chromium: tests/report/test_html_report.py opens report.html in it, headless, and checks the
#     screenshot and the DOM as a user would see them.
#   stunnel4, openssh-server, libmariadb-dev, iproute2: the in-transit tests (tunnels, the C
#     reference client, network namespaces).  openssh-server is installed without starting
#     a system sshd.  A user's own in-transit profile names what it needs (encbench doctor,
#     and a one-line error before a run starts).
#   linux-perf: `[measure] profile_cpu = true` (where the cost goes) and its tests; gcc and
#     libssl-dev: workloads/pagecrypt.c, MariaDB's per-page OpenSSL pattern (benchmarks/).
#   mmdebstrap and the MySQL 9.7 and MariaDB 11.8 roots (encbench/machine/roots.py, as
#     `scripts/setup.sh mysql mariadb-11.8` builds them, once a machine: about 15 s and
#     500 MB each): the tests against a live MySQL and on MariaDB 11.8's sandboxes.
#   postgresql-15: the PostgreSQL in-transit study's tests (initdb, postgres, pgbench, psql);
#     installed without starting the system cluster its package creates.  A user's profile
#     that lists the study says what it needs (encbench doctor), like the tunnels'.
#   prometheus, prometheus-mysqld-exporter, prometheus-postgres-exporter: `encbench estimate
#     --prometheus`'s test scrapes sandboxed MariaDB and PostgreSQL servers through them (each
#     started on a free loopback port; the packages' system services are not started).
# Without root these tests are skipped (with the reason), except in CI, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/apt-install.sh --optional "their tests will be skipped (sudo scripts/setup-test-extras.sh)" \
  chromium stunnel4 openssh-server libmariadb-dev iproute2 linux-perf gcc libssl-dev \
  postgresql-15 mmdebstrap prometheus prometheus-mysqld-exporter \
  prometheus-postgres-exporter
if [ "$(id -u)" = 0 ]; then
  .venv/bin/python -m encbench.machine.roots build mysql
  .venv/bin/python -m encbench.machine.roots build mariadb-11.8
else
  echo "setup: not root, not building the MySQL and MariaDB 11.8 roots: their tests will be skipped" >&2
fi
