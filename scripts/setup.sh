#!/usr/bin/env bash
# Everything encbench needs, installed only when missing: quick when already done.
#   Debian packages: the servers and tools encbench drives.
#   Python: the environment from the committed lock file (uv.lock), exactly.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.9
# gcc, libmariadbd-dev: the operations study's key rotation builds encbench's key plugin
# (encbench/servers/keyplugin) against the server's headers.
# galera-4, socat, rsync, stunnel4, iproute2: the state-transfer study (Galera nodes on two
# network namespaces; the SST scripts stream through socat or rsync, encrypted by stunnel);
# fio and iperf3: the disk's and the link's limits it sets every transfer against.
PACKAGES=(mariadb-server mariadb-client mariadb-backup sysbench openssl gcc libmariadbd-dev
          galera-4 socat rsync stunnel4 iproute2 fio iperf3)

scripts/apt-install.sh "${PACKAGES[@]}"

if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  python3 -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi
export UV_PYTHON_DOWNLOADS=never
# Bytecode compiled at install: with PYTHONDONTWRITEBYTECODE set (as on some machines and
# CI runners) every start would otherwise compile matplotlib and pydantic again (~1.5 s).
uv sync --frozen --quiet --compile-bytecode
