"""The operations study's part of the report: a table of times with their intervals, plain
against encrypted, then encrypting existing data against the cipher's limit, key rotation
(how, or why it was not measured), and the study's set-up."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from encbench.report.cells import fmt, rounds_text, sample_text, verdict_notes
from encbench.report.models import Differences
from encbench.report.study_sections import headline, opening
from encbench.report.tables import Bullets, Paragraph, Plot, Section, Table, row
from encbench.studies.operations import plots as operations_plots
from encbench.studies.operations.models import OperationCellSummary, OperationsSummary

INTRO = (
    "Each operation is timed once per variant per round, plain and encrypted in alternating "
    "order (blocks of A B and B A), with the same statistics and stopping rule as the other "
    "studies: times are means over rounds with their 95% CI; the cost is the paired "
    "Hodges–Lehmann estimate with its 95% CI (positive: encryption makes it slower)."
)
PAIRING_NOTE = (
    "Encrypting existing data has no plain operation that does the same work, so its pair is "
    "the foreground load (sysbench oltp_read_write) on the same server with the same plain "
    "tables: during the encryption pass (`innodb_encrypt_tables=ON` until every table is "
    "encrypted) against the same load with nothing in the background; its time is "
    "milliseconds per committed transaction (the server's Com_commit over the window). After "
    "each encrypted run the tables are decrypted again, outside the window."
)
STARTUP_NOTE = (
    "Start-up and crash recovery are timed from starting mariadbd until `SELECT 1` answers "
    "(probed every 10 ms); a crash is `kill -9` of the server's process group after "
    "{load_s} s of sysbench oltp_write_only, and InnoDB's error log gives the redo it "
    "applied (checkpoint LSN to end of log)."
)
BACKUP_NOTE = (
    "Backups are `mariadb-backup --backup` of the running, idle server (its option file "
    "carries the key plugin's options); `--prepare` is timed on a fresh backup, with the "
    "backup's own backup-my.cnf."
)


def _detail(cell: OperationCellSummary) -> str:
    v = cell.variants
    if v is None:
        return ""
    if cell.operation == "crash-recovery":
        return (
            f"redo applied {sample_text(v.plain.redo_mib, 'MiB', 1)} plain, "
            f"{sample_text(v.encrypted.redo_mib, 'MiB', 1)} encrypted"
        )
    if cell.operation == "encrypt-existing":
        return (
            f"foreground {sample_text(v.plain.foreground_tps, 'txn/s', 0)} without, "
            f"{sample_text(v.encrypted.foreground_tps, 'txn/s', 0)} during the encryption"
        )
    if cell.operation == "key-rotation":
        return (
            f"foreground {sample_text(v.plain.foreground_tps, 'txn/s', 0)} not rotating, "
            f"{sample_text(v.encrypted.foreground_tps, 'txn/s', 0)} while rotating; "
            f"re-encryption {sample_text(v.encrypted.encryption_s, 's', 2)} at "
            f"{sample_text(v.encrypted.encryption_mib_per_s, 'MiB/s', 0)}"
        )
    if cell.operation in ("backup", "prepare"):
        return (
            f"backup {sample_text(v.plain.backup_mib, 'MiB', 0)} plain, "
            f"{sample_text(v.encrypted.backup_mib, 'MiB', 0)} encrypted"
        )
    return ""


# What each side of a cell is where both run encrypted: the columns say plain and
# encrypted, so the cell names its sides.
SIDE_WORDS = {"key-rotation": ("not rotating: ", "rotating: ")}


def times_table(
    cells: Sequence[OperationCellSummary], differences: Differences | None = None
) -> Table:
    rows = []
    for cell in cells:
        words = SIDE_WORDS.get(cell.operation, ("", ""))
        text = partial(sample_text, unit=cell.unit, digits=3)
        time, kind = headline(cell, "time", text, words)
        rows.append(
            row(
                cell.label,
                *time,
                rounds_text(cell),
                _detail(cell),
                styles={4: kind},
            )
        )
    return Table(
        ["Operation", "no encryption (95% CI)", "encrypted (95% CI)", "cost (95% CI)",
         "verdict", "rounds", "also measured"],
        rows,
        notes=verdict_notes([c.comparisons.get("time") for c in cells], differences),
    )  # fmt: skip


def encryption_table(cells: Sequence[OperationCellSummary]) -> Table | None:
    found = [c for c in cells if c.operation == "encrypt-existing" and c.variants]
    if not found:
        return None
    rows = []
    for cell in found:
        assert cell.variants is not None
        enc = cell.variants.encrypted
        per = cell.mib_per_s_per_thread
        limit = cell.cipher_mib_per_s_per_core
        share = f"{100 * per.mean / limit:.0f}%" if per and limit else "–"
        rows.append(
            row(
                str(cell.threads),
                sample_text(enc.encryption_s, "s", 3),
                sample_text(enc.encryption_mib_per_s, "", 0),
                sample_text(per, "", 0),
                fmt(limit, 0) if limit else "–",
                share,
            )
        )
    return Table(
        ["Encryption threads", "time to encrypt (95% CI)", "MiB/s (95% CI)",
         "MiB/s per thread", "cipher on one core, MiB/s", "per thread / cipher"],
        rows,
        caption=(
            "Encrypting existing data: the tablespace files (ibdata and every .ibd) over the "
            "time the background threads took, per thread against the server's cipher "
            "encrypting 16 KiB pages on one core (`openssl speed`, crypto.json: a ceiling "
            "that ignores reading, writing and checksumming the pages)"
        ),
    )  # fmt: skip


ROTATION_NOTE = (
    "**Key rotation**: Debian's file_key_management keys have one version, so encbench "
    "builds its own key plugin, `encbench_key_management` (versioned keys from a file in the "
    "run's private directory). Both variants run on the plain server restarted with it and "
    "`innodb_encrypt_tables=ON`, its tables encrypted (untimed) before the first round, with "
    "the same foreground load as above: *rotating* raises the plugin's key version by 2 "
    "(`innodb_encryption_rotate_key_age=1`: InnoDB re-encrypts a page when its version plus "
    "the age is below the latest) and its window lasts until every table's oldest page has "
    "the new version; *not rotating* is the same load over foreground_s with the same "
    "polling. Its time is milliseconds per committed transaction; the re-encryption's time "
    "and MiB/s (every tablespace file) are in the table. Per run, every table must end "
    "encrypted, with the new version after a rotation and the old one otherwise."
)


def key_rotation_text(part: OperationsSummary) -> str:
    status = part.key_rotation or {}
    if status.get("measured"):
        return ROTATION_NOTE
    reason = status.get("reason") or "not measured"
    return f"**Key rotation**: {reason}."


def setup_items(part: OperationsSummary) -> list[str]:
    enc = part.encryption or {}
    data = part.data or {}
    diff = ", ".join(f"`{k}={v}`" for k, v in (part.option_difference or {}).items())
    items = [
        f"Servers: two sandboxed MariaDB {part.mariadb_version or '?'} servers, `plain` and "
        f"`encrypted` ({enc.get('algorithm', '?')}, scope `{enc.get('scope', '?')}`), each "
        f"with {data.get('tables', '?')} × {data.get('table_size', '?'):,} sysbench rows and "
        f"a {part.buffer_pool_mb or '?'} MB buffer pool; encrypted adds: {diff or '–'}."
        if isinstance(data.get("table_size"), int)
        else "Servers: not provisioned yet.",
        "Encrypting existing data runs on the plain server restarted with the key plugin and "
        f"`innodb_encrypt_tables=OFF`, `innodb_encryption_rotation_iops={part.rotation_iops}` "
        "(MariaDB's default, 100, would throttle it to about 1.6 MiB/s).",
        "Scope: with `all` the redo log is encrypted too, so crash recovery and "
        "`--prepare` decrypt the redo they apply; with `tables` only the pages.",
        "Per-run proof: right after each operation the server's INNODB_TABLESPACES_ENCRYPTION "
        "must show every table of the data set encrypted on the encrypted side and none on the "
        "plain side.",
    ]
    return items


def sections(part: OperationsSummary) -> list[Section]:
    load_s = part.crash_load_s
    blocks = opening(INTRO, part.differences)
    cells = part.cells
    blocks += [
        times_table(cells, part.differences),
        Plot(
            lambda: operations_plots.times_svg(cells),
            "Per operation, the mean of each variant with the 95% CI of that mean; a panel per "
            "unit, on a log scale where its times span more than 10×.",
        ),
        Plot(
            lambda: operations_plots.cost_svg(cells),
            "Above 0: encrypted takes longer; the paired estimates of the table's cost column.",
        ),
    ]
    encryption = encryption_table(part.cells)
    if encryption is not None:
        blocks.append(encryption)
    blocks += [
        Paragraph(PAIRING_NOTE),
        Paragraph(STARTUP_NOTE.format(load_s=load_s or "a few")),
        Paragraph(BACKUP_NOTE),
        Paragraph(key_rotation_text(part)),
        Section("Operations: set-up and proof", [Bullets(setup_items(part))], level=3),
    ]
    return [Section("Operations: times, plain against encrypted", blocks)]
