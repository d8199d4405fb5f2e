#!/usr/bin/env bash
# What only the tests need, installed only when missing: quick when already done.
#   Debian's chromium: tests/test_html_report.py opens report.html in it, headless, and
#   checks the screenshot and the DOM as a user would see them.
# Without it that test is skipped (with the reason), so a machine without root can still run
# everything else: this script then says what is missing and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(chromium)

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
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
