"""Start a command inside cgroups: `python -I -S enter_cgroups.py LOG PROCS... -- COMMAND...`
writes this process's pid into each cgroup.procs file PROCS, then execs COMMAND in place
(the same pid, so the caller's Popen, registry and process group still name it).

Why a launcher rather than moving the server after it started (servers/cgroup.py does that
for the CPU counter alone): on cgroup v1, memory a process allocated before it moved stays
charged to its old group, and a server (MariaDB's) allocates its buffer pool and starts its
threads at once.  Joining before the exec puts every byte and every thread of the server in its
shape from the first instruction.

It is run as a script with `-I -S` and imports nothing of encbench: between the fork and the
server's exec only these writes happen.  A write the kernel refuses is appended as one line
to LOG (the server's error log, whose tail the caller reports) and ends with exit 126.
"""

from __future__ import annotations

import os
import sys

CANNOT_JOIN = 126


def main(argv: list[str]) -> int:
    if len(argv) < 3 or "--" not in argv:
        sys.stderr.write("usage: enter_cgroups.py LOG PROCS... -- COMMAND...\n")
        return 2
    split = argv.index("--")
    log, groups, command = argv[0], argv[1:split], argv[split + 1 :]
    for procs in groups:
        try:
            with open(procs, "w") as f:
                f.write(f"{os.getpid()}\n")
        except OSError as exc:
            with open(log, "a") as f:
                f.write(f"encbench: cannot join the cgroup {os.path.dirname(procs)}: {exc}\n")
            return CANNOT_JOIN
    os.execvp(command[0], command)
    return CANNOT_JOIN  # not reached: execvp returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
