"""Dropping a server's files from the kernel's page cache (POSIX_FADV_DONTNEED, file by
file), for a server that reads through it where an io-bound run must read from the device:
InnoDB on a filesystem that serves O_DIRECT as buffered I/O (ext4 with fscrypt and no inline
encryption).  Only clean pages go; the server's own fsyncs leave its data files clean."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def drop(directory: Path) -> int:
    """Advise the kernel to drop the cached pages of every regular file below `directory`;
    the number of files advised.  A file that vanished meanwhile (a temporary one) or is not
    a regular file (the server's socket) is passed over."""
    advised = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            try:
                fd = os.open(Path(root) / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    advised += 1
            finally:
                os.close(fd)
    return advised
