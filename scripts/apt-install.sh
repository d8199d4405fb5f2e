#!/usr/bin/env bash
# Install the Debian packages named as arguments that are missing; quick when none is.
#   scripts/apt-install.sh [--optional WHY] PACKAGE...
# Without root: an error (exit 2), or with --optional a note saying what will be skipped
# (exit 0).  No package may start a system service (mariadbd, sshd): a policy-rc.d that
# exists is left as it is; one we add is removed again.
set -euo pipefail

optional=""
if [ "${1:-}" = "--optional" ]; then
  optional=$2
  shift 2
fi

missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  if [ -n "$optional" ]; then
    echo "setup: not root, not installing ${missing[*]}: $optional" >&2
    exit 0
  fi
  echo "setup: need root to install: ${missing[*]} (sudo make setup)" >&2
  exit 2
fi

echo "setup: installing ${missing[*]}" >&2
added_policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\n# added by encbench setup for one apt-get run\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  added_policy=1
fi
trap '[ -n "$added_policy" ] && rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
