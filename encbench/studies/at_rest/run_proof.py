"""The at-rest study's per-run proof: each run's own counters must say what its variant
claims (a plain run decrypts and encrypts nothing; an encrypted io-bound run that read pages
decrypted some), and a shaped run's server could run only on its shape's CPUs.  The proof
of the servers and their files is proof/at_rest.py's."""

from __future__ import annotations

from encbench.errors import ProofError
from encbench.studies.at_rest.records import RunRecord


def check_run(
    record: RunRecord,
    writes: bool,
    calibration: bool = False,
    shared_server: bool = False,
    innodb_encrypts: bool = True,
    control_encrypts: bool = False,
) -> None:
    """The per-run proof from the server's own counters (deltas over the run); ProofError
    names the run and the counter that contradicts its variant.  In an A/A calibration both
    sides are plain.  With `shared_server` (a user's server holding both table sets) a
    plain run is held to decrypting nothing only: the page cleaner may flush, and so
    encrypt, the encrypted set's pages left dirty by an earlier write workload.  Without
    `innodb_encrypts` (the filesystem layer alone) the encrypted side's InnoDB is plain and
    held to what plain's is: the kernel encrypts below it, which its proof is.  With
    `control_encrypts` (scope all against scope tables) the plain role's tables are
    encrypted too, and its runs are held to what an encrypted run's are."""
    where = f"{record.cell.label} round {record.round}: the {record.variant} run"
    encrypts = innodb_encrypts if record.variant == "encrypted" else control_encrypts
    if calibration or not encrypts:
        encrypted = 0 if shared_server else record.pages_encrypted
        if record.pages_decrypted or encrypted:
            whose = "plain" if innodb_encrypts else "InnoDB under the filesystem layer alone"
            raise ProofError(
                f"{where} decrypted {record.pages_decrypted} and encrypted "
                f"{record.pages_encrypted} pages (Innodb_num_pages_*): {whose} must do neither"
            )
        return
    # InnoDB's page counters (a MariaDB run has them all).
    read, written = record.pages_read or 0, record.pages_written or 0
    if record.cell.regime == "io-bound" and read > 0 and not record.pages_decrypted:
        raise ProofError(
            f"{where} read {record.pages_read} pages from disk and decrypted none "
            "(Innodb_num_pages_decrypted): its tables are not encrypted"
        )
    if writes and written > 0 and not record.pages_encrypted:
        raise ProofError(
            f"{where} wrote {record.pages_written} pages and encrypted none "
            "(Innodb_num_pages_encrypted): its tables are not encrypted"
        )


def check_confined(record: RunRecord, cpus: tuple[int, ...]) -> None:
    """The per-run proof of an instance shape: the server's Cpus_allowed_list when the run
    began was the shape's CPUs (servers/shapes.py proves its groups and limits per start)."""
    from encbench.machine.placement import cpu_list
    from encbench.servers.shapes import parse_cpu_list

    if parse_cpu_list(record.shape_cpus_allowed) != tuple(sorted(cpus)):
        raise ProofError(
            f"{record.cell.label} round {record.round}: the {record.variant} server could run "
            f"on CPUs {record.shape_cpus_allowed!r}, not its shape's "
            f"{cpu_list(sorted(cpus))}: it was not confined"
        )
