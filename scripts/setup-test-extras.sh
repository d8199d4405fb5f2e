#!/usr/bin/env bash
# What only the tests need, installed only when missing: quick when already done.
#   Debian's chromium: tests/test_html_report.py opens report.html in it, headless, and
#   checks the screenshot and the DOM as a user would see them.
#   stunnel4, openssh-server, libmariadb-dev: the in-transit building blocks' tests (tunnels,
#   the C reference client).  openssh-server is installed without starting a system sshd.
# Without it that test is skipped (with the reason), so a machine without root can still run
# everything else: this script then says what is missing and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(chromium stunnel4 openssh-server libmariadb-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "setup-test-extras: not root, not installing: ${missing[*]}; the browser test will be" \
       "skipped (sudo scripts/setup-test-extras.sh to run it)" >&2
  exit 0
fi
echo "setup-test-extras: installing ${missing[*]}" >&2
# No package may start a system service (sshd): a policy-rc.d that exists is left as it is;
# one we add is removed again.
added_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\n# added by encbench setup for one apt-get run\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  added_policy=1
fi
trap '[ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
