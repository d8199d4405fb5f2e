#!/usr/bin/env bash
# Everything encbench needs, installed only when missing: quick when already done.
#   scripts/setup.sh [PROFILE|ROOT...]
#   Debian packages: the servers and tools encbench drives; and, for each PROFILE named,
#     what its studies need beyond them (PostgreSQL's server for the PostgreSQL studies), as
#     `encbench doctor PROFILE --packages` lists it.
#   ROOT (mysql, mariadb-11.8): a newer server than Debian 12 ships, built once from Debian's
#     archive into a private root under encbench's data directory (encbench/machine/roots.py), with
#     mmdebstrap; nothing of it is installed into the host system.
#   uv, at the version below: the one on PATH if it is that version, else encbench's own copy
#     in .tools/uv (a venv of the system Python), so that a stock Debian 12, which has no pip
#     and whose Python is externally managed (PEP 668), needs nothing but python3-venv.
#   Python: the environment from the committed lock file (uv.lock), exactly.
# The functions are tested with stub commands (tests/test_setup_script.py): sourced, this
# file only defines them.
set -euo pipefail

UV_VERSION=0.13.9
# gcc, libmariadbd-dev: the operations study's key rotation builds encbench's key plugin
# (encbench/servers/mariadb/keyplugin) against the server's headers.
# galera-4, socat, rsync, stunnel4, iproute2: the state-transfer study (Galera nodes on two
# network namespaces; the SST scripts stream through socat or rsync, encrypted by stunnel);
# fio and iperf3: the disk's and the link's limits it sets every transfer against.
# mariadb-plugin-hashicorp-key-management: MariaDB's client of a key server (Vault's API:
# OpenBao, servers/key_server.py), for TDE's keys kept where production servers keep them.
PACKAGES=(mariadb-server mariadb-client mariadb-backup sysbench openssl gcc libmariadbd-dev
          galera-4 socat rsync stunnel4 iproute2 fio iperf3
          mariadb-plugin-hashicorp-key-management)
# Where encbench keeps its own uv, and what installs Debian packages (the tests point both
# elsewhere).
TOOLS_DIR=${ENCBENCH_TOOLS_DIR:-.tools}
APT_INSTALL=${ENCBENCH_APT_INSTALL:-scripts/apt-install.sh}

# The version a uv binary reports ("uv 0.13.9 (…)" → 0.13.9), or nothing.
uv_version() {
  "$1" --version 2>/dev/null | cut -d' ' -f2
}

# A uv of UV_VERSION already here: the one on PATH, else encbench's own; prints its path.
find_uv() {
  local candidate
  for candidate in "$(command -v uv || true)" "$TOOLS_DIR/uv/bin/uv"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] \
        && [ "$(uv_version "$candidate")" = "$UV_VERSION" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# encbench's own uv: a venv of the system Python with uv installed by its pip.  Never pip
# into the system Python (PEP 668 forbids it on Debian 12, which has no pip anyway).  venv
# needs ensurepip, which Debian ships in python3-venv: installed first when missing.  Each
# step returns on failure: `set -e` does not hold in a function called from a condition.
make_own_uv() {
  if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    "$APT_INSTALL" python3-venv || return 1
  fi
  rm -rf "$TOOLS_DIR/uv"
  python3 -m venv "$TOOLS_DIR/uv" || return 1
  "$TOOLS_DIR/uv/bin/pip" install -q --disable-pip-version-check "uv==$UV_VERSION" || return 1
}

# Sets UV to a uv of UV_VERSION, making encbench's own when there is none.
ensure_uv() {
  if ! UV=$(find_uv); then
    echo "setup: installing uv $UV_VERSION into $TOOLS_DIR/uv" >&2
    make_own_uv || return 1
    UV=$(find_uv) || { echo "setup: uv $UV_VERSION did not install" >&2; return 1; }
  fi
  export UV
}

# The packages the named profiles need that are missing, one per line.
profile_packages() {
  local profile
  for profile in "$@"; do
    .venv/bin/encbench doctor --packages "$profile" || return  # its status: 2 for a bad name
  done
}

main() {
  cd "$(dirname "$0")/.."
  "$APT_INSTALL" "${PACKAGES[@]}"
  ensure_uv
  export UV_PYTHON_DOWNLOADS=never
  # Bytecode compiled at install: with PYTHONDONTWRITEBYTECODE set (as on some machines and
  # CI runners) every start would otherwise compile matplotlib and pydantic again (~1.5 s).
  "$UV" sync --frozen --quiet --compile-bytecode
  # And encbench's own modules, which the editable install leaves where they are: else every
  # `python -m encbench` (the tests start hundreds) compiles its ~260 again (~0.3 s of a core).
  .venv/bin/python -m compileall -q encbench
  local roots=() profiles=() name
  for name in "$@"; do
    if .venv/bin/python -m encbench.machine.roots names | grep -qx -- "$name"; then
      roots+=("$name")
    else
      profiles+=("$name")
    fi
  done
  if [ ${#roots[@]} -gt 0 ]; then
    "$APT_INSTALL" mmdebstrap
    for name in "${roots[@]}"; do
      .venv/bin/python -m encbench.machine.roots build "$name"
    done
  fi
  if [ ${#profiles[@]} -gt 0 ]; then
    local extra
    extra=$(profile_packages "${profiles[@]}")
    if [ -n "$extra" ]; then
      # shellcheck disable=SC2086  # one package a word
      "$APT_INSTALL" $extra
    fi
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  main "$@"
fi
