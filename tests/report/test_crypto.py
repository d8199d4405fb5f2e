"""encbench.crypto: parsers on captured outputs of the real openssl, the plan's time budget,
the orchestration with a fake openssl, rendering, and one real quick measurement."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from encbench import capacity as crypto
from encbench.errors import ToolError
from encbench.report.crypto import render_markdown
from tests.helpers import GOLDEN_ROOT

GOLDEN = GOLDEN_ROOT / "openssl"


def golden(name: str) -> str:
    return (GOLDEN / name).read_text()


# ------------------------------------------------------------------------------ evp parsing


def test_evp_output_gives_mb_per_s_for_each_of_the_six_block_sizes() -> None:
    speed = crypto.parse_evp_speed(golden("evp_aes-128-gcm_all_blocks.mr.txt"))
    assert speed.cipher == "AES-128-GCM"
    assert speed.processes == 1
    assert list(speed.mb_per_s) == [16, 64, 256, 1024, 8192, 16384]
    assert speed.mb_per_s[16] == pytest.approx(45.50448)
    assert speed.mb_per_s[16384] == pytest.approx(4418.84672)


def test_evp_figures_are_bytes_per_second_as_the_raw_counts_confirm() -> None:
    text = golden("evp_aes-128-gcm_all_blocks.mr.txt")
    speed = crypto.parse_evp_speed(text)
    # "+DT:<cipher>:<s>:<block>" then "+R:<operations>:<cipher>:<elapsed s>"
    raw = re.findall(r"\+DT:[^:]+:\d+:(\d+)\n\+R:(\d+):[^:]+:([0-9.]+)", text)
    assert len(raw) == 6
    for block, count, seconds in raw:
        expected = int(count) * int(block) / float(seconds) / 1e6
        assert speed.mb_per_s[int(block)] == pytest.approx(expected, rel=1e-6)


def test_a_single_block_run_without_aes_ni_reads_as_that_one_block() -> None:
    speed = crypto.parse_evp_speed(golden("evp_aes-128-gcm_16384_no_aesni.mr.txt"))
    assert speed.mb_per_s == {16384: pytest.approx(322.912256)}


def test_chacha20_is_reported_in_openssls_own_spelling() -> None:
    speed = crypto.parse_evp_speed(golden("evp_chacha20-poly1305_16.mr.txt"))
    assert speed.cipher == "ChaCha20-Poly1305"
    assert speed.cipher.lower() == "chacha20-poly1305"
    assert speed.mb_per_s[16] == pytest.approx(280.0916)


def test_cbc_decryption_is_far_faster_than_cbc_encryption_would_suggest() -> None:
    speed = crypto.parse_evp_speed(golden("evp_aes-256-cbc_16384_decrypt.mr.txt"))
    assert speed.mb_per_s[16384] == pytest.approx(8129.019904)


def test_a_multi_core_run_sums_the_children_and_counts_them() -> None:
    speed = crypto.parse_evp_speed(golden("evp_aes-256-gcm_16384_multi2.mr.txt"))
    assert speed.processes == 2
    assert speed.mb_per_s[16384] == pytest.approx(8354.562048)
    assert speed.mb_per_s[16384] == pytest.approx(4183.146496 + 4171.415552)


def test_a_multi_core_run_takes_block_sizes_from_the_childrens_headers() -> None:
    speed = crypto.parse_evp_speed(golden("evp_aes-128-gcm_all_blocks_multi2.mr.txt"))
    assert speed.processes == 2
    assert list(speed.mb_per_s) == [16, 64, 256, 1024, 8192, 16384]
    assert speed.mb_per_s[16384] == pytest.approx(8828.092416)


def test_an_unknown_cipher_gives_no_figures_and_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"no '\+F:' record"):
        crypto.parse_evp_speed(golden("evp_unknown_cipher.txt"))


def test_figures_without_a_block_size_header_are_rejected() -> None:
    with pytest.raises(ValueError, match="block-size"):
        crypto.parse_evp_speed("+F:25:AES-128-GCM:1000.00\n")


# ----------------------------------------------------------------------------- asym parsing


def test_rsa_and_ecdsa_output_gives_signs_and_verifies_per_second() -> None:
    speeds = {s.algorithm: s for s in crypto.parse_asym_speed(golden("asym_rsa_ecdsap256.mr.txt"))}
    assert list(speeds) == ["rsa1024", "rsa2048", "rsa4096", "ecdsap256"]
    assert (speeds["rsa2048"].sign_per_s, speeds["rsa2048"].verify_per_s) == (4136.0, 61433.0)
    assert (speeds["rsa4096"].sign_per_s, speeds["rsa4096"].verify_per_s) == (245.0, 16169.0)
    assert speeds["ecdsap256"].family == "ecdsa"
    assert (speeds["ecdsap256"].sign_per_s, speeds["ecdsap256"].verify_per_s) == (51692.0, 16938.0)
    assert all(s.processes == 1 for s in speeds.values())


def test_multi_core_rsa_and_ecdsa_are_summed_over_both_children() -> None:
    text = golden("asym_rsa2048_ecdsap256_multi2.mr.txt")
    speeds = {s.algorithm: s for s in crypto.parse_asym_speed(text)}
    assert speeds["rsa2048"].processes == 2
    assert speeds["rsa2048"].sign_per_s == 7886.0 == 3938.0 + 3948.0
    assert speeds["ecdsap256"].verify_per_s == 33820.0


def test_the_seed_mask_also_slows_rsa_which_the_no_aesni_mask_does_not() -> None:
    (seed,) = crypto.parse_asym_speed(golden("asym_rsa2048_seed_mask.mr.txt"))
    (ours,) = crypto.parse_asym_speed(golden("asym_rsa2048_no_aesni_mask.mr.txt"))
    (full,) = [
        s
        for s in crypto.parse_asym_speed(golden("asym_rsa_ecdsap256.mr.txt"))
        if s.algorithm == "rsa2048"
    ]
    assert seed.sign_per_s < full.sign_per_s / 2
    assert ours.sign_per_s == pytest.approx(full.sign_per_s, rel=0.1)


def test_output_without_public_key_records_is_rejected() -> None:
    with pytest.raises(ValueError):
        crypto.parse_asym_speed(golden("evp_aes-128-gcm_all_blocks.mr.txt"))


# -------------------------------------------------------------------- versions, flags, libs


def test_openssl_version_is_split_into_binary_and_library_versions() -> None:
    version = crypto.parse_openssl_version(golden("version.txt"))
    assert version.version == "3.0.19"
    assert version.library_version == "3.0.19"
    assert version.text.startswith("OpenSSL 3.0.19")


def test_an_openssl_version_without_a_library_part_uses_the_binary_version() -> None:
    assert crypto.parse_openssl_version("OpenSSL 1.1.1w  11 Sep 2023\n").library_version == (
        "1.1.1w"
    )


def test_cpu_flags_name_aes_vaes_sha_ni_pclmulqdq_and_every_avx512_flag() -> None:
    flags = crypto.parse_cpu_flags(golden("cpuinfo_processor0.txt"))
    assert flags.model == "AMD EPYC"
    assert flags.aes and flags.vaes and flags.sha_ni and flags.pclmulqdq and flags.vpclmulqdq
    assert "avx512f" in flags.avx512 and "avx512_vnni" in flags.avx512
    assert flags.to_json()["avx512"] is True


def test_a_cpu_without_aes_ni_reports_no_flags() -> None:
    flags = crypto.parse_cpu_flags("model name\t: Old CPU\nflags\t\t: fpu sse2 ssse3\n")
    assert not flags.aes and not flags.avx512 and flags.model == "Old CPU"


def test_ldd_output_keeps_libssl_and_libcrypto_but_not_libk5crypto() -> None:
    entries = crypto.parse_ldd(golden("ldd_sysbench.txt"))
    assert [e.soname for e in entries] == ["libssl.so.3", "libcrypto.so.3"]
    assert entries[0].path == "/lib/x86_64-linux-gnu/libssl.so.3"


def test_ldd_shows_mariadbd_links_the_system_openssl_3() -> None:
    entries = crypto.parse_ldd(golden("ldd_mariadbd.txt"))
    assert {e.soname for e in entries} == {"libssl.so.3", "libcrypto.so.3"}


def test_a_library_ldd_cannot_find_has_no_path() -> None:
    text = "\tlibssl.so.1.1 => not found\n\tlinux-vdso.so.1 (0x00007ffd)\n"
    assert crypto.parse_ldd(text) == [crypto.LddEntry("libssl.so.1.1", None)]


def test_dpkg_search_names_the_owning_package() -> None:
    assert crypto.parse_dpkg_search(golden("dpkg_S_libssl.txt")) == ["libssl3:amd64"]
    assert crypto.parse_dpkg_search("a, b:amd64: /usr/lib/x\n") == ["a", "b:amd64"]


def test_dpkg_not_knowing_a_path_gives_no_package() -> None:
    text = "dpkg-query: no path found matching pattern /lib/x86_64-linux-gnu/libssl.so.3\n"
    assert crypto.parse_dpkg_search(text) == []


def test_contention_is_busy_cpu_time_that_was_not_ours_as_a_share_of_all() -> None:
    start = crypto.CpuTimes(busy_s=100.0, steal_s=1.0, ours_s=10.0)
    end = crypto.CpuTimes(busy_s=300.0, steal_s=11.0, ours_s=110.0)
    # 100 s of wall time on 2 CPUs: 200 busy, of which 100 ours; 10 s stolen.
    assert crypto.Contention.between(start, end, 200.0) == crypto.Contention(0.5, 0.05)


def test_markdown_warns_when_other_work_competed_for_the_cpu() -> None:
    cap = small_capacity_json() | {"other_cpu_share": 0.31, "steal_share": 0.0}
    assert "**contended**: other processes used 31%" in render_markdown(cap)
    quiet = small_capacity_json() | {"other_cpu_share": 0.01, "steal_share": 0.0}
    assert "contended" not in render_markdown(quiet)


# --------------------------------------------------------------------------- stats and plan


def test_one_sample_has_a_mean_but_no_stdev() -> None:
    assert crypto.Stat.of([5.0]) == crypto.Stat(5.0, None, 1)
    stat = crypto.Stat.of([1.0, 2.0, 3.0])
    assert (stat.mean, stat.stdev, stat.n) == (2.0, 1.0, 3)


def test_the_default_plan_fits_in_two_minutes_on_paper() -> None:
    plan = crypto.default_plan(2)
    assert plan.estimated_s <= 110
    assert plan.repeats == 3
    cells = {(j.algorithm, b, j.accel, j.cores) for j in plan.jobs for b in j.runs()}
    for cipher in crypto.CIPHERS:
        assert (cipher, 16, True, 1) in cells and (cipher, 16384, True, 1) in cells
    assert ("aes-128-gcm", 16384, False, 1) in cells
    assert ("aes-256-gcm", 16384, True, 2) in cells and ("rsa2048", None, True, 2) in cells
    assert {a for a, b, *_ in cells if b is None} == set(crypto.ASYMMETRIC)
    assert {b for _, b, *_ in cells if b is not None} <= set(crypto.BLOCK_SIZES)


def test_a_single_core_machine_gets_no_multi_core_runs() -> None:
    assert all(j.cores == 1 for j in crypto.default_plan(1).jobs)


def test_the_quick_plan_takes_about_ten_seconds() -> None:
    assert crypto.quick_plan(2).estimated_s <= 10


def test_the_no_aesni_mask_clears_exactly_aes_ni_and_pclmulqdq_and_keeps_leaf_7() -> None:
    mask, leaf7 = crypto.NO_AESNI_IA32CAP.lstrip("~").split(":")
    assert int(mask, 16) == (1 << 57) | (1 << 33)
    assert leaf7 == "~0"
    assert crypto.FULL_IA32CAP == "~0:~0"


def test_speed_argv_asks_for_elapsed_machine_readable_and_the_right_options() -> None:
    job = crypto.SpeedJob("aes-256-cbc", (16384,), direction="decrypt", cores=2)
    argv = crypto.speed_argv(job, 16384, 1)
    assert argv == [
        crypto.OPENSSL,
        "speed",
        "-elapsed",
        "-mr",
        "-seconds",
        "1",
        "-multi",
        "2",
        "-bytes",
        "16384",
        "-decrypt",
        "-evp",
        "aes-256-cbc",
    ]
    assert crypto.speed_argv(crypto.SpeedJob("rsa2048"), None, 1)[-1] == "rsa2048"


# ---------------------------------------------------------- orchestration with a fake openssl


class FakeOpenssl:
    """Answers `openssl speed` argv with -mr text; each call is 1% faster than the last so that
    repeats differ."""

    def __init__(self, children: int | None = None) -> None:
        self.calls: list[tuple[list[str], Mapping[str, str] | None]] = []
        self.children = children

    def __call__(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, **_: Any
    ) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.calls.append((argv, env))
        factor = 1 + 0.01 * len(self.calls)
        cores = int(argv[argv.index("-multi") + 1]) if "-multi" in argv else 1
        children = self.children if self.children is not None else cores
        accel = env is not None and env.get("OPENSSL_ia32cap") == crypto.FULL_IA32CAP
        if "-evp" in argv:
            name, block = argv[-1].upper(), int(argv[argv.index("-bytes") + 1])
            per = (1000.0 if accel else 100.0) * 1e6 * factor
            record = f"+F:25:{name}:{per * cores:.2f}"
            header = f"+H:{block}"
            lines = [header, record] if cores == 1 else []
            if cores > 1:
                for i in range(children):
                    lines += [f"Got: {header} from {i}", f"Got: +F:25:{name}:{per:.2f} from {i}"]
                lines.append(record)
        else:
            bits = int(argv[-1].removeprefix("rsa")) if argv[-1].startswith("rsa") else 256
            code = 2 if argv[-1].startswith("rsa") else 4
            sign, verify = 1000.0 * factor, 20000.0 * factor
            lines = [f"Got: +F{code}:2:{bits}:{sign}:{verify} from {i}" for i in range(children)]
            if cores == 1:
                lines = []
            lines.append(f"+F{code}:2:{bits}:{sign * cores}:{verify * cores}")
        return subprocess.CompletedProcess(argv, 0, "\n".join(lines) + "\n", "")


def test_measuring_runs_repeats_round_robin_and_aggregates_mean_and_stdev(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeOpenssl()
    monkeypatch.setattr(crypto.measure, "run", fake)
    plan = crypto.Plan(
        (
            crypto.SpeedJob("aes-128-gcm", (16, 16384)),
            crypto.SpeedJob("aes-128-gcm", (16384,), accel=False),
            crypto.SpeedJob("rsa2048", cores=2),
        ),
        repeats=3,
        seconds=1,
        quick=False,
    )
    messages: list[str] = []
    ciphers, asym = crypto.measure_speeds(plan, messages.append)

    assert len(fake.calls) == 4 * 3 == len(messages)
    # Round robin: the first four calls are one of each run, not three of the first.
    assert [c[0][-1] for c in fake.calls[:4]] == ["aes-128-gcm"] * 3 + ["rsa2048"]
    off = next(c for c in ciphers if not c.accel)
    assert off.mb_per_s.n == 3 and off.mb_per_s.stdev is not None and off.mb_per_s.stdev > 0
    assert fake.calls[2][1] == {"OPENSSL_ia32cap": crypto.NO_AESNI_IA32CAP}
    on = next(c for c in ciphers if c.accel and c.block_bytes == 16384)
    assert on.mb_per_s.mean == pytest.approx(1000.0 * (1.02 + 1.06 + 1.10) / 3)
    assert asym[0].cores == 2 and asym[0].sign_per_s.mean == pytest.approx(2000.0 * 1.08)


def test_a_multi_core_run_that_lost_a_child_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crypto.measure, "run", FakeOpenssl(children=1))
    plan = crypto.Plan((crypto.SpeedJob("aes-256-gcm", (16384,), cores=2),), 1, 1, False)
    with pytest.raises(ToolError, match="1 of 2 openssl processes"):
        crypto.measure_speeds(plan)


def test_output_for_another_cipher_than_asked_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong(argv: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(argv), 0, "+H:16384\n+F:25:AES-128-CBC:1.0\n", "")

    monkeypatch.setattr(crypto.measure, "run", wrong)
    plan = crypto.Plan((crypto.SpeedJob("aes-128-gcm", (16384,)),), 1, 1, False)
    with pytest.raises(ToolError, match="could not read openssl speed output"):
        crypto.measure_speeds(plan)


# ------------------------------------------------------------------------ JSON and Markdown


def small_capacity_json() -> dict[str, Any]:
    def cipher(
        name: str,
        accel: bool,
        block: int,
        mean: float,
        sd: float | None,
        cores: int = 1,
        direction: str = "encrypt",
    ) -> dict[str, Any]:
        return {
            "cipher": name,
            "accel": accel,
            "cores": cores,
            "direction": direction,
            "block_bytes": block,
            "mb_per_s_mean": mean,
            "mb_per_s_stdev": sd,
            "n": 3,
        }

    return {
        "ciphers": [
            cipher("aes-128-gcm", True, 16, 45.5, 0.5),
            cipher("aes-128-gcm", True, 1024, 1840.0, 10.0),
            cipher("aes-128-gcm", True, 16384, 4400.0, 40.0),
            cipher("aes-128-gcm", False, 16, 20.0, 0.25),
            cipher("aes-128-gcm", False, 16384, 320.0, 3.0),
            cipher("aes-256-cbc", True, 16384, 1030.0, None),
            cipher("aes-256-cbc", True, 16384, 8100.0, 50.0, direction="decrypt"),
            cipher("aes-128-gcm", True, 16384, 8800.0, 80.0, cores=2),
        ],
        "asymmetric": [
            {
                "algorithm": "rsa2048",
                "accel": True,
                "cores": 1,
                "sign_per_s_mean": 4130.0,
                "sign_per_s_stdev": 5.0,
                "verify_per_s_mean": 61400.0,
                "verify_per_s_stdev": 300.0,
                "n": 3,
            },
            {
                "algorithm": "rsa2048",
                "accel": True,
                "cores": 2,
                "sign_per_s_mean": 7900.0,
                "sign_per_s_stdev": 20.0,
                "verify_per_s_mean": 118000.0,
                "verify_per_s_stdev": 900.0,
                "n": 3,
            },
        ],
        "cpu_flags": {
            "model": "AMD EPYC",
            "aes": True,
            "vaes": True,
            "sha_ni": True,
            "pclmulqdq": True,
            "avx512": True,
        },
        "openssl": {
            "version_text": "OpenSSL 3.0.19 27 Jan 2026",
            "accel_off_ia32cap": crypto.NO_AESNI_IA32CAP,
        },
        "linked": {
            "mariadbd": {
                "found": True,
                "same_libcrypto_as_openssl": True,
                "libs": [
                    {
                        "soname": "libcrypto.so.3",
                        "real_path": "/usr/lib/libcrypto.so.3",
                        "package": "libssl3:amd64",
                        "package_version": "3.0.19-1",
                    }
                ],
            },
            "sysbench": {"found": False, "libs": []},
        },
        "nproc": 2,
        "elapsed_s": 100.0,
    }


def test_markdown_shows_throughput_with_and_without_aes_ni_and_the_speed_up() -> None:
    md = render_markdown(small_capacity_json())
    assert (
        "| aes-128-gcm | 4,400 ± 40.0 | 320 ± 3.00 | 13.8× | 45.5 ± 0.50 | 20.0 ± 0.25 | 2.3× |"
        in md
    )
    assert "| aes-256-cbc | 1,030 | — | — | — | — | — |" in md
    assert "| aes-256-cbc (decrypt) | 8,100 ± 50.0 | — | — | — | — | — |" in md


def test_markdown_shows_the_block_size_curve_when_middle_sizes_were_measured() -> None:
    md = render_markdown(small_capacity_json())
    assert "| cipher | 16 B | 1 KiB | 16 KiB |" in md
    assert "| aes-128-gcm | 45.5 | 1,840 | 4,400 |" in md


def test_markdown_shows_public_key_rates_and_multi_core_scaling() -> None:
    md = render_markdown(small_capacity_json())
    assert "| rsa2048 | 4,130 ± 5.00 | 61,400 ± 300 |" in md
    assert "| aes-128-gcm 16 KiB MB/s | 2 | 4,400 | 8,800 | 2.0× |" in md
    assert "| rsa2048 sign/s | 2 | 4,130 | 7,900 | 1.9× |" in md


def test_markdown_names_cpu_flags_versions_and_linked_libraries() -> None:
    md = render_markdown(small_capacity_json())
    assert "- CPU: AMD EPYC (2 cores); aes yes, pclmulqdq yes, vaes yes, sha_ni yes" in md
    assert "OpenSSL 3.0.19 27 Jan 2026; AES-NI off = OPENSSL_ia32cap=~0x200000200000000:~0" in md
    assert "- mariadbd: /usr/lib/libcrypto.so.3 (libssl3:amd64 3.0.19-1); same libcrypto" in md
    assert "- sysbench: not installed" in md


def test_markdown_of_an_empty_result_does_not_fail() -> None:
    assert render_markdown({}).startswith("### CPU and libraries")


def test_cipher_lookup_finds_the_exact_measured_cell() -> None:
    cap = small_capacity_json()
    assert crypto.cipher_mb_per_s(cap, "aes-128-gcm", 16384) == 4400.0
    assert crypto.cipher_mb_per_s(cap, "AES-128-GCM", 16384, accel=False) == 320.0
    assert crypto.cipher_mb_per_s(cap, "aes-128-gcm", 16384, cores=2) == 8800.0
    assert crypto.cipher_mb_per_s(cap, "aes-128-gcm", 64) is None
    assert crypto.cipher_mb_per_s(cap, "aes-256-ctr", 16384) is None


def test_cipher_lookup_for_decryption_falls_back_to_encryption_except_for_cbc() -> None:
    cap = small_capacity_json()
    assert crypto.cipher_mb_per_s(cap, "aes-128-gcm", 16384, direction="decrypt") == 4400.0
    assert crypto.cipher_mb_per_s(cap, "aes-256-cbc", 16384, direction="decrypt") == 8100.0
    cap["ciphers"] = [c for c in cap["ciphers"] if c["direction"] == "encrypt"]
    assert crypto.cipher_mb_per_s(cap, "aes-256-cbc", 16384, direction="decrypt") is None


def test_capacity_json_is_plain_json_with_units_in_the_keys() -> None:
    stat = crypto.Stat(4400.0, 40.0, 3)
    cap = crypto.CryptoCapacity(
        ciphers=(crypto.CipherResult("aes-128-gcm", True, 1, "encrypt", 16384, stat),),
        asymmetric=(crypto.AsymResult("rsa2048", True, 1, stat, stat),),
        cpu_flags=crypto.parse_cpu_flags(golden("cpuinfo_processor0.txt")),
        openssl=crypto.parse_openssl_version(golden("version.txt")),
        linked={"mariadbd": crypto.LinkedBinary("/usr/sbin/mariadbd", found=False)},
        plan=crypto.quick_plan(2).to_json(),
        nproc=2,
        elapsed_s=8.5,
        contention=crypto.Contention(0.01, 0.0),
    )
    data = json.loads(json.dumps(cap.to_json()))
    assert data["ciphers"][0]["mb_per_s_mean"] == 4400.0
    assert data["asymmetric"][0]["sign_per_s_stdev"] == 40.0
    assert data["openssl"]["accel_off_ia32cap"] == crypto.NO_AESNI_IA32CAP
    assert data["linked"]["mariadbd"]["found"] is False
    assert (data["other_cpu_share"], data["steal_share"]) == (0.01, 0.0)
    assert crypto.cipher_mb_per_s(data, "aes-128-gcm", 16384) == 4400.0
    assert "aes-128-gcm" in render_markdown(data)


# ------------------------------------------------------------------------------ real openssl


def cpu_has_aes() -> bool:
    try:
        return crypto.parse_cpu_flags(Path("/proc/cpuinfo").read_text()).aes
    except OSError:
        return False


@pytest.mark.integration
def test_a_quick_real_measurement_shows_aes_ni_speeds_up_aes_gcm() -> None:
    if not Path(crypto.OPENSSL).exists():
        pytest.skip(f"{crypto.OPENSSL} is not installed")
    cap = crypto.measure_capacity(quick=True).to_json()
    assert cap["elapsed_s"] < 20
    assert cap["ciphers"] and cap["asymmetric"]
    for entry in cap["ciphers"]:
        assert entry["mb_per_s_mean"] > 0 and entry["n"] >= 2
    for entry in cap["asymmetric"]:
        assert entry["sign_per_s_mean"] > 0 and entry["verify_per_s_mean"] > 0
    assert cap["openssl"]["version"]
    assert cap["other_cpu_share"] is not None and cap["steal_share"] is not None
    assert "### CPU and libraries" in render_markdown(cap)
    if not cpu_has_aes():
        pytest.skip("this CPU has no aes flag, so there is no AES-NI to switch off")
    on = crypto.cipher_mb_per_s(cap, "aes-128-gcm", 16384, accel=True)
    off = crypto.cipher_mb_per_s(cap, "aes-128-gcm", 16384, accel=False)
    assert on is not None and off is not None
    assert off < on
