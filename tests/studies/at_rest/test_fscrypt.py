"""The filesystem layer without a kernel: the fscrypt ioctls' numbers and structs as
linux/fscrypt.h lays them out, the kernel's cipher read from /proc/crypto, the profile's
keys and their refusals, the cells and labels of layers, the options of each side, the
per-run proof of a plain InnoDB under the filesystem, and the report's words on the
kernel's cipher.  The real thing (root, a loop device) is tests/integration/
test_filesystem_layer.py."""

from __future__ import annotations

import os
import stat
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from encbench.commands import catalog, plan
from encbench.engine.study import CellSkipped
from encbench.errors import BadInput, ProofError
from encbench.profiles import profile
from encbench.proof import at_rest as proof
from encbench.report.models import Harness, Pair, Spread
from encbench.results.store import ResultStore
from encbench.servers import fscrypt, images, keys, page_cache, shapes
from encbench.servers.mariadb.options import SandboxPaths, server_options
from encbench.servers.sizing import BYTES_PER_ROW_ESTIMATE
from encbench.servers.variants import EncryptionSpec
from encbench.studies import at_rest, definition
from encbench.studies.at_rest import cells, mariadb_side, run_proof, section, volumes
from encbench.studies.at_rest import plan as at_rest_plan
from encbench.studies.at_rest.models import AtRestCell, AtRestSummary, AtRestVariant
from encbench.studies.at_rest.pair import ServerPair
from encbench.studies.at_rest.records import CellKey, RunRecord
from tests.helpers import encbench_here

IDENTIFIER = bytes(range(16))
NO_HARNESS = Harness(cpu_s=0, measured_wall_s=0, share_of_machine_pct=0)


# -- the kernel's interface ---------------------------------------------------------------
def test_the_ioctl_numbers_are_the_kernels() -> None:
    # _IOR('f', 19, struct fscrypt_policy_v1), _IOWR('f', 23/24/26, ...), as the kernel's
    # headers expand them.
    assert fscrypt.FS_IOC_SET_ENCRYPTION_POLICY == 0x800C6613
    assert fscrypt.FS_IOC_ADD_ENCRYPTION_KEY == 0xC0506617
    assert fscrypt.FS_IOC_REMOVE_ENCRYPTION_KEY == 0xC0406618
    assert fscrypt.FS_IOC_GET_ENCRYPTION_KEY_STATUS == 0xC080661A


def test_a_v2_policy_is_packed_field_by_field() -> None:
    packed = fscrypt.pack_policy("AES-256-XTS", "AES-256-CTS", IDENTIFIER)
    assert len(packed) == 24
    # version 2, contents mode 1, filenames mode 4, flags PAD_32, data unit 0, 3 reserved.
    assert packed[:8] == bytes([2, 1, 4, 3, 0, 0, 0, 0])
    assert packed[8:] == IDENTIFIER
    adiantum = fscrypt.pack_policy("Adiantum", "Adiantum", IDENTIFIER)
    assert adiantum[1:3] == bytes([9, 9])
    with pytest.raises(ValueError, match="16 bytes"):
        fscrypt.pack_policy("AES-256-XTS", "AES-256-CTS", b"short")


def test_the_add_key_argument_carries_the_key_after_an_80_byte_header() -> None:
    key = bytes(range(64))
    arg = fscrypt.pack_add_key(key)
    assert len(arg) == 80 + 64
    spec_type, reserved = struct.unpack_from("=II", arg)
    assert (spec_type, reserved) == (fscrypt.KEY_SPEC_TYPE_IDENTIFIER, 0)
    raw_size, key_id, flags = struct.unpack_from("=III", arg, 40)
    assert (raw_size, key_id, flags) == (64, 0, 0)
    assert arg[80:] == key
    assert not any(arg[8:40]) and not any(arg[52:80])
    # The kernel writes the identifier into the specifier's union: read back from there.
    arg[8:24] = IDENTIFIER
    assert fscrypt.identifier_of(arg) == IDENTIFIER
    with pytest.raises(ValueError, match="64 bytes"):
        fscrypt.pack_add_key(bytes(32))


def test_remove_and_status_arguments_name_the_key_by_its_identifier() -> None:
    remove = fscrypt.pack_remove_key(IDENTIFIER)
    status = fscrypt.pack_key_status(IDENTIFIER)
    assert (len(remove), len(status)) == (64, 128)
    for arg in (remove, status):
        assert struct.unpack_from("=I", arg)[0] == fscrypt.KEY_SPEC_TYPE_IDENTIFIER
        assert arg[8:24] == IDENTIFIER and not any(arg[24:40])
    # What the kernel answers: removal_status_flags at 40; status at 64 of the status arg.
    struct.pack_into("=I", remove, 40, fscrypt.REMOVAL_FILES_BUSY)
    assert fscrypt.REMOVE_KEY.unpack_from(remove)[3] == fscrypt.REMOVAL_FILES_BUSY
    struct.pack_into("=I", status, 64, fscrypt.KEY_STATUS_ABSENT)
    assert fscrypt.KEY_STATUS.unpack_from(status)[3] == fscrypt.KEY_STATUS_ABSENT


PROC_CRYPTO = """\
name         : xts(aes)
driver       : xts(ecb(aes-generic))
module       : kernel
priority     : 100
internal     : no

name         : xts(aes)
driver       : xts(ecb(aes-fixed-time))
module       : kernel
priority     : 101
internal     : no

name         : xts(aes)
driver       : __xts-aes-aesni
priority     : 401
internal     : yes

name         : cts(cbc(aes))
driver       : cts(cbc-aes-aesni)
priority     : 400
internal     : no
"""


def test_the_kernels_cipher_is_the_driver_of_highest_priority_it_may_use() -> None:
    xts = fscrypt.kernel_cipher("xts(aes)", PROC_CRYPTO)
    assert xts == fscrypt.KernelCipher("xts(aes)", "xts(ecb(aes-fixed-time))", 101)
    assert not xts.aes_ni
    cts = fscrypt.kernel_cipher("cts(cbc(aes))", PROC_CRYPTO)
    assert cts is not None and cts.aes_ni
    assert fscrypt.kernel_cipher("hctr2(aes)", PROC_CRYPTO) is None


def test_inline_crypt_needs_both_kernel_options() -> None:
    both = {"CONFIG_FS_ENCRYPTION_INLINE_CRYPT": "y", "CONFIG_BLK_INLINE_ENCRYPTION_FALLBACK": "y"}
    assert fscrypt.inline_crypt(both)
    assert images.mount_options(both).endswith(",inlinecrypt")
    one = dict(both, CONFIG_BLK_INLINE_ENCRYPTION_FALLBACK="n")
    assert not fscrypt.inline_crypt(one)
    assert images.mount_options(one) == images.BASE_MOUNT_OPTIONS


def test_without_root_the_layer_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fscrypt.os, "geteuid", lambda: 1000)
    assert "needs root" in (fscrypt.unavailable() or "")


def test_clean_undoes_a_dead_runs_record_and_touches_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose image was never made (killed right after recording it): clean drops
    the record and the empty mount point, and leaves everything else alone."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    mountpoint = tmp_path / "volumes" / "plain"
    mountpoint.mkdir(parents=True)
    other = tmp_path / "volumes" / "not-ours"
    other.mkdir()
    record = images.VolumeRecord(str(tmp_path / "volumes" / "plain.img"), str(mountpoint),
                                  "run", 2**22 + 1, 1)  # fmt: skip
    record.save()
    assert images.clean_stale() == [f"removed volume {record.image}"]
    assert not mountpoint.exists() and other.exists()
    assert not record.file.exists()
    assert images.clean_stale() == []


def test_a_loop_device_the_unmount_detached_counts_as_detached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attached with autoclear, the loop device goes with the last unmount: `losetup -d` then
    fails, and clean must not report it left (nor keep the record for it)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    image = tmp_path / "plain.img"
    image.write_bytes(b"")
    attached = ["/dev/loop7"]

    def run(argv: list[str], phase: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        if argv[:2] == ["losetup", "-j"]:
            out = "".join(f"{d}: []: ({image})\n" for d in attached)
            return subprocess.CompletedProcess(argv, 0, out, "")
        if argv[:2] == ["losetup", "-d"]:
            return subprocess.CompletedProcess(argv, 1, "losetup: No such device", "")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(images, "_run", run)
    record = images.VolumeRecord(str(image), str(tmp_path / "plain"), "run", 1, 1)
    attached.clear()  # the unmount's autoclear detached it
    monkeypatch.setattr(images, "loops_of", lambda _image: ["/dev/loop7"])  # seen before
    monkeypatch.setattr(images, "_attached", lambda loop, img, wait_s=2.0: loop in attached)
    undone = images.undo(record)
    assert "/dev/loop7 detached" in undone.done and undone.left == []
    attached.append("/dev/loop7")  # really still attached: said, and left for clean
    image.write_bytes(b"")  # the first undo deleted it, with nothing left
    undone = images.undo(record)
    assert undone.left == [f"/dev/loop7 still attached to {image}"]


# -- the profile --------------------------------------------------------------------------
BASE = 'name = "x"\n[measure]\nworkloads = ["oltp_read_only"]\nregimes = ["io-bound"]\n'
BASE += "threads = [1]\n"


def layers(server: str) -> profile.Profile:
    return profile.parse(BASE + f"[server]\n{server}\n", "p")


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ('fscrypt_contents = "AES-128-CBC"', "server.fscrypt_contents"),
        ('fscrypt_filenames = "AES-256-XTS"', "server.fscrypt_filenames"),
        (
            'fscrypt_contents = "Adiantum"',
            'server.fscrypt_contents = "Adiantum" cannot go with server.fscrypt_filenames = '
            '"AES-256-CTS"',
        ),
        ('encryption_layer = ["tde", "zfs"]', "unknown encryption layer 'zfs'; choose"),
        ('encryption_layer = ["fs", "fs"]', '"fs" is listed twice'),
    ],
)
def test_bad_filesystem_settings_are_refused_in_one_line(server: str, message: str) -> None:
    with pytest.raises(BadInput, match=message) as err:
        layers(server)
    assert "\n" not in str(err.value)


def test_a_bad_mode_is_one_line_and_exit_2_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(BASE + '[server]\nencryption_layer = "fs"\nfscrypt_contents = "XTS"\n')
    result = encbench_here("plan", str(path), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "server.fscrypt_contents" in lines[0] and "AES-256-XTS" in lines[0]


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("calibration = true\n" + BASE + '[server]\nencryption_layer = "fs"\n', "A/A calibration"),
        (
            BASE + '[server]\nencryption_layer = "fs"\n[[server.shapes]]\nname = "a"\ncpus = 1\n',
            "server.shapes and the filesystem layer",
        ),
        (
            BASE + '[server]\nencryption_layer = "tde+fs"\n[target]\nhost = "h"\nuser = "u"\n',
            "a target's files are on its own filesystem",
        ),
        (
            'studies = ["operations"]\n' + BASE + '[server]\nencryption_layer = "fs"\n',
            "server.encryption_layer",
        ),
    ],
)
def test_the_layer_is_refused_where_it_cannot_be(toml: str, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        profile.parse(toml, "p")


def test_the_built_in_profile_compares_every_layer_with_plain_and_says_it_needs_root() -> None:
    prof, _ = profile.load("tde-vs-filesystem")
    specs = cells.configurations(prof)
    assert [s.layer for s in specs] == ["tde", "fs", "tde+fs"]
    assert len(cells.cells(prof)) == 3 * 2 * 2 * 2
    assert catalog.root_words(prof) == "for the filesystem layer (else left out)"
    # Its cells within 35 minutes (writes need 120 s cells for an interval); loading the
    # three pairs comes on top.
    plans = plan.study_plans(prof)
    assert sum(p.measuring_s for p in plans) <= 35 * 60
    assert catalog.estimated_s(prof) == sum(p.measuring_s + p.setup_s for p in plans)
    assert "tde-vs-filesystem" in profile.listed_names()
    assert "tde-vs-filesystem-tiny" not in profile.listed_names()
    tiny, _ = profile.load("tde-vs-filesystem-tiny")
    assert [s.layer for s in cells.configurations(tiny)] == ["fs", "tde+fs"]


# -- cells, labels, records ---------------------------------------------------------------
def test_each_layer_names_its_cells_and_tde_keeps_its_old_names() -> None:
    prof = layers('encryption_layer = ["tde", "fs", "tde+fs"]')
    assert prof.server.dimensions and prof.server.filesystem
    tde, fs, both = cells.cells(prof)
    assert tde == CellKey("oltp_read_only", "io-bound", 1, algorithm="AES_CTR", scope="tables")
    assert tde.label == "oltp_read_only io-bound AES_CTR tables 1 thr"
    assert fs == CellKey("oltp_read_only", "io-bound", 1, layer="fs")
    assert (fs.label, fs.slug) == (
        "oltp_read_only io-bound fs 1 thr",
        "oltp_read_only-io-bound-fs-t1",
    )
    assert both.label == "oltp_read_only io-bound AES_CTR tables tde+fs 1 thr"
    assert both.slug == "oltp_read_only-io-bound-AES_CTR-tables-tde-fs-t1"
    assert cells.configuration(tde, prof) == EncryptionSpec("AES_CTR", "tables", "tde")
    assert cells.configuration(fs, prof) == EncryptionSpec("AES_CTR", "tables", "fs")
    assert cells.configuration(both, prof) == EncryptionSpec("AES_CTR", "tables", "tde+fs")
    assert cells.configuration(fs, prof).label == "filesystem (fscrypt)"
    assert both.configuration == "AES_CTR, scope tables + filesystem (fscrypt)"
    # One filesystem configuration whatever the algorithms and scopes listed.
    many = layers('encryption_layer = ["fs", "tde"]\nencryption_algorithm = ["AES_CTR", "AES_CBC"]')
    assert [s.label for s in cells.configurations(many)] == [
        "filesystem (fscrypt)", "AES_CTR, scope tables", "AES_CBC, scope tables",
    ]  # fmt: skip


def test_a_single_filesystem_layer_still_names_its_cells() -> None:
    prof = layers('encryption_layer = "fs"')
    assert prof.server.dimensions
    assert [c.layer for c in cells.cells(prof)] == ["fs"]
    assert not layers('encryption_layer = "tde"').server.dimensions


def _record(cell: CellKey, variant: str, **counters: int) -> RunRecord:
    return RunRecord(
        cell=cell, round=1, variant=variant, position=0, session="s", started_at="t",
        wall_s=1.0, tps=10.0, qps=100.0, transactions=10, ignored_errors=0, reconnects=0,
        latency_avg_ms=1.0, latency_p95_ms=2.0, latency_max_ms=3.0, server_cpu_s=0.1,
        cpu_ms_per_txn=10.0, harness_cpu_s=0.0, bp_read_requests=0, bp_reads=0,
        pages_read=counters.get("pages_read", 0), pages_written=0, raw_output="raw/x",
        pages_decrypted=counters.get("pages_decrypted", 0),
    )  # fmt: skip


def test_records_carry_the_layer_and_older_lines_read_as_tde() -> None:
    fs = CellKey("oltp_read_only", "io-bound", 1, layer="fs")
    line = _record(fs, "plain").to_json()
    assert line["cell"] == {"workload": "oltp_read_only", "regime": "io-bound", "threads": 1,
                            "layer": "fs"}  # fmt: skip
    assert RunRecord.from_json(line).cell == fs
    old = CellKey("oltp_read_only", "io-bound", 1, algorithm="AES_CTR", scope="all")
    line = _record(old, "plain").to_json()
    assert "layer" not in line["cell"]
    assert RunRecord.from_json(line).cell.layer == ""


def test_summary_cells_name_the_layer_only_where_it_is_not_tde() -> None:
    one = AtRestCell(workload="w", regime="io-bound", threads=1, rounds=0, measured_s=0, status="")
    assert "layer" not in one.model_dump(mode="json")
    fs = one.model_copy(update={"layer": "fs"})
    assert fs.model_dump(mode="json")["layer"] == "fs"
    assert fs.setting == "io-bound, filesystem (fscrypt)"
    both = one.model_copy(update={"algorithm": "AES_CTR", "scope": "tables", "layer": "tde+fs"})
    assert both.setting == "io-bound, AES_CTR, scope tables + filesystem (fscrypt)"


# -- the servers' options and the per-run proof --------------------------------------------
def _options(variant: str, layer: str) -> dict[str, str]:
    paths = SandboxPaths(*(Path(f"/x/{n}") for n in ("d", "t", "s", "p", "e")))
    spec = EncryptionSpec("AES_CTR", "tables", layer)  # type: ignore[arg-type]
    return server_options(
        variant, spec, paths, port=1, buffer_pool_mb=8, key_file=Path("/k"), run_as_root=False
    )


def test_the_filesystem_layer_alone_sets_no_server_option() -> None:
    assert _options("encrypted", "fs") == _options("plain", "fs")
    assert _options("encrypted", "tde+fs") == _options("encrypted", "tde")
    assert _options("encrypted", "tde+fs")["innodb_encrypt_tables"] == "ON"


def test_innodb_under_the_filesystem_alone_is_held_to_plain_per_run() -> None:
    cell = CellKey("oltp_read_only", "io-bound", 1, layer="fs")
    read_from_disk = _record(cell, "encrypted", pages_read=50)
    run_proof.check_run(read_from_disk, writes=False, innodb_encrypts=False)
    with pytest.raises(ProofError, match="its tables are not encrypted"):
        run_proof.check_run(read_from_disk, writes=False, innodb_encrypts=True)
    decrypting = _record(cell, "encrypted", pages_read=50, pages_decrypted=50)
    with pytest.raises(ProofError, match="InnoDB under the filesystem layer alone"):
        run_proof.check_run(decrypting, writes=False, innodb_encrypts=False)


def test_an_image_holds_twice_a_servers_files_and_a_headroom() -> None:
    def image(tables: int, table_size: int) -> int:
        toml = f'name = "x"\n[data]\ntables = {tables}\ntable_size = {table_size}\n'
        return volumes.image_bytes(profile.parse(toml + '[server]\nencryption_layer = "fs"\n', "p"))

    assert image(1, 1000) == volumes.MIN_IMAGE_BYTES
    rows = 8 * 1_000_000
    size = image(8, 1_000_000)
    assert size % volumes.MIB == 0
    assert size >= 2 * rows * BYTES_PER_ROW_ESTIMATE + volumes.IMAGE_HEADROOM_BYTES
    assert image(8, 2_000_000) > size


# -- the report ---------------------------------------------------------------------------
def _filesystem(driver: str, aes_ni: bool, cpu_aes: bool = True) -> dict[str, object]:
    return {
        "policy": {"version": 2, "contents": "AES-256-XTS", "filenames": "AES-256-CTS"},
        "image_mib": 1024, "mkfs": "mkfs.ext4 -O encrypt", "mount_options": "nodev,nosuid",
        "inline_crypt": False, "loop_direct_io": {"plain": True, "encrypted": True},
        "cpu_aes": cpu_aes,
        "ciphers": [{"role": "contents", "mode": "AES-256-XTS", "algorithm": "xts(aes)",
                     "driver": driver, "priority": 101, "aes_ni": aes_ni}],
    }  # fmt: skip


def test_the_report_names_the_kernels_driver_and_what_its_aes_means_against_tde() -> None:
    software = "\n".join(section.filesystem_lines(_filesystem("xts(ecb(aes-fixed-time))", False)))
    assert "driver `xts(ecb(aes-fixed-time))`" in software
    assert "does not use AES-NI" in software
    assert "OpenSSL in user space" in software and "in software and TDE's in hardware" in software
    assert "buffered I/O" in software
    hardware = "\n".join(section.filesystem_lines(_filesystem("xts-aes-aesni", True)))
    assert "which uses AES-NI" in hardware and "Both layers use" in hardware
    no_aes = "\n".join(section.filesystem_lines(_filesystem("xts(aes-generic)", False, False)))
    assert "no AES instructions" in no_aes


def test_the_key_is_the_runs_own_and_only_its_owner_reads_it(tmp_path: Path) -> None:
    first = keys.raw_key(keys.private_dir(tmp_path), fscrypt.KEY_BYTES)
    path = tmp_path / "private" / "fscrypt.key"
    assert len(first) == fscrypt.KEY_BYTES
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keys.raw_key(keys.private_dir(tmp_path), fscrypt.KEY_BYTES) == first  # --resume
    other = tmp_path / "other"
    other.mkdir()
    assert keys.raw_key(keys.private_dir(other), fscrypt.KEY_BYTES) != first


def test_the_image_witness_needs_the_marker_in_plain_and_nothing_readable_in_encrypted(
    tmp_path: Path,
) -> None:
    marker = b"ENCBENCH-MARKER-0123456789abcdef"
    seen = tmp_path / "plain.img"
    # Across the scan's chunk boundary: found all the same.
    seen.write_bytes(bytes(proof.SCAN_CHUNK_BYTES - 10) + marker + bytes(100))
    unseen = tmp_path / "encrypted.img"
    unseen.write_bytes(bytes(4096))
    assert proof.prove_image(seen, marker, "plain", encrypted=False).passed
    with pytest.raises(ProofError, match=r"marker not readable in the raw image encrypted\.img"):
        proof.prove_image(unseen, marker, "plain", encrypted=False)
    real = ["data", "my.cnf", "tmp"]
    hidden = ["AbCdEfGh0123", "XyZ-9_aaaa", "q1w2e3r4t5y6"]
    passed = proof.prove_image(unseen, marker, "encrypted", encrypted=True, names=(real, hidden))
    assert passed.passed and passed.entries == 3 and passed.example_without_key in hidden
    with pytest.raises(ProofError, match=r"marker readable in the raw image plain\.img"):
        proof.prove_image(seen, marker, "encrypted", encrypted=True, names=(real, hidden))
    with pytest.raises(ProofError, match=r"names readable without the key: my\.cnf"):
        proof.prove_image(unseen, marker, "encrypted", True, (real, [*hidden[:2], "my.cnf"]))
    with pytest.raises(ProofError, match="not listed without the key"):
        proof.prove_image(unseen, marker, "encrypted", encrypted=True)


def test_plan_says_what_the_layer_makes_or_why_it_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prof = layers('encryption_layer = ["tde", "fs"]')
    monkeypatch.setattr(fscrypt, "unavailable", lambda: "the filesystem layer needs root")
    assert at_rest_plan.layer_lines(prof) == [
        "  the filesystem layer's cells: left out here — the filesystem layer needs root"
    ]
    monkeypatch.setattr(fscrypt, "unavailable", lambda: None)
    (line,) = at_rest_plan.layer_lines(prof)
    assert f"{volumes.image_bytes(prof) // volumes.MIB:,} MiB ext4 image" in line
    assert at_rest_plan.layer_lines(layers('encryption_layer = "tde"')) == []


def test_with_the_layer_every_server_of_every_pair_is_on_its_own_image(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    prof, _ = profile.load("tde-vs-filesystem")
    monkeypatch.setattr(fscrypt, "unavailable", lambda: None)
    store = ResultStore.create(tmp_path / "on-images", prof.name, "")
    pair = ServerPair(store, prof)
    try:
        assert pair.spec.layer == "tde" and pair.volumes is not None
        assert {v: s.root for v, s in pair.servers.items()} == {
            v: store.path / "volumes" / v / "server" for v in ("plain", "encrypted")
        }
    finally:
        pair.close()  # nothing was made: nothing is left either
    assert not (store.path / "volumes").exists()
    monkeypatch.setattr(fscrypt, "unavailable", lambda: "needs root")
    store = ResultStore.create(tmp_path / "without", prof.name, "")
    pair = ServerPair(store, prof)
    try:
        assert pair.volumes is None
        assert pair.servers["plain"].root == store.path / "sandbox" / "plain"
    finally:
        pair.close()


class _Host:
    """Just enough of a VariantHost for a cell that is skipped before it is used."""

    def __init__(self) -> None:
        self.record: dict[str, object] = {}

    def unavailable(self, regime: str) -> None:
        return None


def test_without_root_the_layers_cells_are_skipped_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prof = layers('encryption_layer = ["tde", "fs"]')
    store = ResultStore.create(tmp_path / "out", prof.name, "")
    study: Any = definition.runner(at_rest.STUDY, store, prof, None)  # type: ignore[arg-type]
    side = study.side("mariadb")
    side.host = _Host()
    monkeypatch.setattr(fscrypt, "unavailable", lambda: "the filesystem layer needs root")
    tde, fs = cells.cells(prof)
    with pytest.raises(CellSkipped, match="needs root"), side.open_cell(fs):
        pass
    skipped = {"skipped": {fs.slug: "the filesystem layer needs root"}}
    assert store.read_json("at-rest.json") == skipped
    assert mariadb_side.layer_unavailable(cells.configuration(tde, prof)) is None


def test_a_mode_the_kernel_was_built_without_is_found_in_its_build_options() -> None:
    config = {"CONFIG_CRYPTO_XTS": "y", "CONFIG_CRYPTO_CTS": "y", "CONFIG_CRYPTO_ADIANTUM": "m"}
    assert fscrypt.modes_not_built(["AES-256-XTS", "AES-256-CTS"], config) == []
    assert fscrypt.modes_not_built(["Adiantum", "Adiantum"], config) == []
    assert fscrypt.modes_not_built(["AES-256-XTS", "AES-256-HCTR2"], config) == ["AES-256-HCTR2"]
    assert fscrypt.modes_not_built(["AES-256-HCTR2"], {}) == []  # nothing published


def test_the_summary_says_io_bound_fs_cells_may_read_from_the_page_cache() -> None:
    """Without inline encryption the flaw is said beside the figures it touches: the
    io-bound cells of a filesystem layer, measured; never TDE's, in-memory ones or a kernel
    that keeps O_DIRECT (inlinecrypt)."""

    def part(inline: bool, *cells: AtRestCell) -> AtRestSummary:
        fs = dict(_filesystem("xts(ecb(aes-fixed-time))", False), inline_crypt=inline)
        return AtRestSummary(
            target_halfwidth_pct=2, write_workload_state="", servers={"filesystem": fs},
            crypto=None, harness=NO_HARNESS, cells=list(cells),
        )  # fmt: skip

    def cell(regime: str, layer: str, rounds: int = 4) -> AtRestCell:
        return AtRestCell(workload="w", regime=regime, threads=1, rounds=rounds, measured_s=1,
                          status="done", layer=layer)  # fmt: skip

    (words,) = section.page_cache_words(
        part(False, cell("io-bound", "fs"), cell("io-bound", "tde+fs"), cell("io-bound", ""))
    )
    assert "page cache" in words and "2 io-bound cell(s)" in words
    assert section.page_cache_words(part(True, cell("io-bound", "fs"))) == []
    assert (
        section.page_cache_words(part(False, cell("in-memory", "fs"), cell("io-bound", ""))) == []
    )
    assert section.page_cache_words(part(False, cell("io-bound", "fs", rounds=0))) == []


def _cached(mb: float) -> AtRestVariant:
    one = Spread(mean=1.0, stdev=0.0)
    return AtRestVariant(
        tps=one, qps=one, latency_avg_ms=one, latency_p95_ms=one, hit_ratio=one,
        pages_read_per_txn=one, pages_written_per_txn=one, errors=0, reconnects=0,
        page_cache_mb=Spread(mean=mb, stdev=0.0),
    )  # fmt: skip


def test_with_a_memory_budget_the_summary_says_how_much_the_page_cache_held() -> None:
    fs = dict(_filesystem("xts(ecb(aes-fixed-time))", False), inline_crypt=False)
    budget: dict[str, dict[str, dict[str, object]]] = {
        "regimes": {"io-bound": {"buffer_pool_mb": 24, "memory_budget_mib": 152}}
    }
    servers = {"filesystem": fs, "data": {"size_mb": 400.0}, "configurations": {"fs": budget}}
    cell = AtRestCell(
        workload="w", regime="io-bound", threads=1, rounds=4, measured_s=1, status="done",
        layer="fs", variants=Pair[AtRestVariant](plain=_cached(2), encrypted=_cached(60)),
    )  # fmt: skip
    part = AtRestSummary(
        target_halfwidth_pct=2, write_workload_state="", servers=servers, crypto=None,
        harness=NO_HARNESS, cells=[cell],
    )  # fmt: skip
    (words,) = section.page_cache_words(part)
    assert "memory budget of 152 MiB" in words and "double caching" in words
    assert "held 60 MB as its runs ended (its tables are 400 MB), plain's 2 MB" in words
    # A run that dropped the page cache before each run says so instead.
    budget["regimes"]["io-bound"]["page_cache_dropped"] = "before each run"
    (words,) = section.page_cache_words(part)
    assert "dropped before each run" in words and "double caching" not in words
    assert "held 60 MB as its runs ended (its tables are 400 MB), plain's 2 MB." in words
    # A run whose runs recorded no cache (no memory group) says what it may understate.
    unrecorded = Pair[AtRestVariant](plain=_cached(2), encrypted=_cached(60).model_copy(
        update={"page_cache_mb": None}))  # fmt: skip
    part = part.model_copy(update={"cells": [cell.model_copy(update={"variants": unrecorded})]})
    (words,) = section.page_cache_words(part)
    assert "may understate" in words


def test_io_bound_on_images_every_server_is_held_to_its_pool_and_allowance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    prof, _ = profile.load("tde-vs-filesystem")
    monkeypatch.setattr(fscrypt, "unavailable", lambda: None)
    pair = ServerPair(ResultStore.create(tmp_path / "out", prof.name, ""), prof)
    try:
        budget = pair._limits("io-bound", 40)
        assert budget is not None and budget.name == shapes.MEMORY_BUDGET
        assert budget.memory_mib == 40 + 256 and budget.cpu_quota is None
        assert budget.controllers == {"cpuset", "memory"}
        assert pair._limits("in-memory", 400) is None  # the pool holds the data
    finally:
        pair.close()
    monkeypatch.setattr(fscrypt, "unavailable", lambda: "needs root")
    pair = ServerPair(ResultStore.create(tmp_path / "plain-dirs", prof.name, ""), prof)
    try:
        assert pair._limits("io-bound", 40) is None  # O_DIRECT stays direct: no budget
    finally:
        pair.close()


def test_dropping_the_page_cache_advises_every_regular_file_below(tmp_path: Path) -> None:
    (tmp_path / "data" / "db").mkdir(parents=True)
    for name in ("data/ibdata1", "data/db/t.ibd", "ib_logfile0"):
        (tmp_path / name).write_bytes(b"x" * 8192)
    os.mkfifo(tmp_path / "data" / "not-a-file")  # like the server's socket: passed over
    (tmp_path / "data" / "link").symlink_to(tmp_path / "ib_logfile0")  # not followed
    assert page_cache.drop(tmp_path) == 3


def test_the_summary_says_what_kernel_threads_spent_per_run_on_each_side() -> None:
    def side(kernel_s: float) -> AtRestVariant:
        return _cached(1).model_copy(update={"kernel_cpu_s": Spread(mean=kernel_s, stdev=0.0)})

    cell = AtRestCell(
        workload="w", regime="io-bound", threads=1, rounds=4, measured_s=1, status="done",
        layer="fs", variants=Pair[AtRestVariant](plain=side(0.05), encrypted=side(0.61)),
    )  # fmt: skip
    part = AtRestSummary(
        target_halfwidth_pct=2, write_workload_state="", servers={}, crypto=None,
        harness=NO_HARNESS, cells=[cell],
    )  # fmt: skip
    (words,) = section.kernel_words(part)
    assert "0.61–0.61 s per run with the encrypted side and 0.05–0.05 s with plain" in words
    assert section.kernel_words(part.model_copy(update={"cells": []})) == []
