"""MariaDB's per-page OpenSSL pattern against `openssl speed`'s reused context, per 16 KiB
page, AES-256-CTR and -CBC, both directions, AES-NI on and off (workloads/pagecrypt.c).

    .venv/bin/python -m benchmarks.pagecrypt [SECONDS_PER_PATTERN]

A benchmark, not a test: its figures need a quiet machine.  The "set-up" column is the
per-page pattern's extra CPU, which the cipher's floor (report/floor.py) leaves out.
"""

from __future__ import annotations

import sys

from encbench.workloads import pagecrypt


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    results = pagecrypt.measure(seconds)
    by_key = {(r.cipher, r.direction, r.accel, r.pattern): r for r in results}
    print("| cipher | direction | AES-NI | per-page µs | reused µs | set-up µs per page |")
    print("|---|---|---|---|---|---|")
    for cipher, direction, accel in dict.fromkeys(
        (r.cipher, r.direction, r.accel) for r in results
    ):
        per_page = by_key[(cipher, direction, accel, "per-page")].us_per_page
        reused = by_key[(cipher, direction, accel, "reused")].us_per_page
        print(
            f"| aes-256-{cipher} | {direction} | {'on' if accel else 'off'} | {per_page:.2f} "
            f"| {reused:.2f} | {per_page - reused:+.2f} |"
        )


if __name__ == "__main__":
    main()
