#!/usr/bin/env bash
# What only the tests need, installed only when missing: quick when already done.
#   chromium: tests/test_html_report.py opens report.html in it, headless, and checks the
#     screenshot and the DOM as a user would see them.
#   stunnel4, openssh-server, libmariadb-dev: the in-transit building blocks' tests (tunnels,
#     the C reference client).  openssh-server is installed without starting a system sshd.
# Without root these tests are skipped (with the reason), except in CI, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/apt-install.sh --optional "their tests will be skipped (sudo scripts/setup-test-extras.sh)" \
  chromium stunnel4 openssh-server libmariadb-dev
