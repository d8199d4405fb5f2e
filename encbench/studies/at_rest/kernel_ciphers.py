"""The kernel's ciphers behind the filesystem layer (fscrypt), in the words both kinds'
sections give them: each mode of the policy with its driver, and whether that driver runs on
the CPU's AES instructions."""

from __future__ import annotations

from encbench.report.models import Record


def cipher_lines(fs: Record, where: str = "") -> list[str]:
    """A line per mode of the filesystem record's policy (`ciphers`): the kernel's driver
    and its priority, or that /proc/crypto has none; `where` follows "does not use AES-NI"
    (" here": on this machine)."""
    out = []
    for c in fs.get("ciphers") or []:
        if not c.get("driver"):
            out.append(f"Kernel cipher for {c['mode']} (`{c['algorithm']}`): not in /proc/crypto.")
            continue
        uses = "uses AES-NI" if c.get("aes_ni") else f"does not use AES-NI{where}"
        out.append(
            f"Kernel cipher for {c['role']} {c['mode']} (`{c['algorithm']}`): driver "
            f"`{c['driver']}` (priority {c['priority']}), which {uses}."
        )
    return out
