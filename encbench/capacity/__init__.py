"""The machine's crypto capacity: how many MB/s this CPU encrypts and how many RSA/ECDSA
signatures and verifications it does per second, with and without AES-NI, on one core and on
all of them, measured with the real `openssl speed`.

These figures bound what encryption can cost MariaDB: a page read that must be decrypted, a TLS
record, a handshake.  Comparing them with a measured slowdown tells whether the crypto itself or
something around it (extra copies, locks, I/O) is the cost.

Beside them, the other ceilings a copy of data meets (the state-transfer study's limits):
`disk` (fio: sequential read and write on a directory's filesystem) and `link` (iperf3: one
TCP stream between two launch prefixes, e.g. two network namespaces), imported as
submodules.

Layout: pure parsers (text → dataclasses, unit-tested on captured outputs in
tests/golden/openssl/; `parse`), the aggregated results (`results`), a small plan of which
`openssl speed` runs to make (`plan`), the runner (`measure`), and `cipher_entry` /
`cipher_mb_per_s` (`read`), which read the JSON form so that stored results can be used
without re-measuring.  The tables `encbench crypto` prints are report/crypto.py's.
"""

from encbench.capacity.measure import (
    linked_tls_libs,
    measure_capacity,
    measure_speeds,
    package_of,
    read_cpu_flags,
    read_openssl_version,
    speed_argv,
)
from encbench.capacity.parse import (
    ASYMMETRIC,
    BLOCK_SIZES,
    CIPHERS,
    CONTENDED_SHARE,
    FULL_IA32CAP,
    MARIADBD,
    NO_AESNI_IA32CAP,
    OPENSSL,
    SEED_STUDY_IA32CAP,
    SYSBENCH,
    AsymSpeed,
    Contention,
    CpuFlags,
    CpuTimes,
    Direction,
    EvpSpeed,
    LddEntry,
    OpensslVersion,
    parse_asym_speed,
    parse_cpu_flags,
    parse_dpkg_search,
    parse_evp_speed,
    parse_ldd,
    parse_openssl_version,
)
from encbench.capacity.plan import (
    DIRECTIONS,
    FINGERPRINT_REPEATS,
    HEADLINE_BLOCKS,
    PAGE_BYTES,
    SERVER_CIPHERS,
    Plan,
    SpeedJob,
    default_plan,
    fingerprint_plan,
    quick_plan,
)
from encbench.capacity.read import cipher_entry, cipher_mb_per_s
from encbench.capacity.results import (
    AsymResult,
    CipherResult,
    CryptoCapacity,
    LinkedBinary,
    LinkedLib,
    Stat,
)

__all__ = [
    "ASYMMETRIC",
    "BLOCK_SIZES",
    "CIPHERS",
    "CONTENDED_SHARE",
    "DIRECTIONS",
    "FINGERPRINT_REPEATS",
    "FULL_IA32CAP",
    "HEADLINE_BLOCKS",
    "MARIADBD",
    "NO_AESNI_IA32CAP",
    "OPENSSL",
    "PAGE_BYTES",
    "SEED_STUDY_IA32CAP",
    "SERVER_CIPHERS",
    "SYSBENCH",
    "AsymResult",
    "AsymSpeed",
    "CipherResult",
    "Contention",
    "CpuFlags",
    "CpuTimes",
    "CryptoCapacity",
    "Direction",
    "EvpSpeed",
    "LddEntry",
    "LinkedBinary",
    "LinkedLib",
    "OpensslVersion",
    "Plan",
    "SpeedJob",
    "Stat",
    "cipher_entry",
    "cipher_mb_per_s",
    "default_plan",
    "fingerprint_plan",
    "linked_tls_libs",
    "measure_capacity",
    "measure_speeds",
    "package_of",
    "parse_asym_speed",
    "parse_cpu_flags",
    "parse_dpkg_search",
    "parse_evp_speed",
    "parse_ldd",
    "parse_openssl_version",
    "quick_plan",
    "read_cpu_flags",
    "read_openssl_version",
    "speed_argv",
]
