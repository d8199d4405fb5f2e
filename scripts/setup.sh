#!/usr/bin/env bash
# Everything encbench needs, installed only when missing: quick when already done.
#   Debian packages: the servers and tools encbench drives.
#   Python: the environment from the committed lock file (uv.lock), exactly.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
PACKAGES=(mariadb-server mariadb-client mariadb-backup sysbench openssl)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup: need root to install: ${missing[*]} (sudo make setup)" >&2; exit 2; }
  echo "setup: installing ${missing[*]}" >&2
  # encbench runs its own sandboxed servers: the package must not start a system server.
  # A policy-rc.d that already exists is left as it is; one we add is removed again.
  added_policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# added by encbench setup for one apt-get run\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    added_policy=1
  fi
  trap '[ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  python3 -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi
export UV_PYTHON_DOWNLOADS=never
uv sync --frozen --quiet
