"""Paths in option files: what encbench writes is what mariadbd, sshd and stunnel read back.

The rules were measured against the real readers; these tests keep measuring them (with
my_print_defaults and `sshd -T`, skipped where the program is missing) so that a new version
that reads differently fails here, not in a run that writes outside its directory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from encbench import proc
from encbench.errors import BadInput
from encbench.net import tunnels
from encbench.servers.local import check_path
from encbench.servers.mariadb.options import cnf_value, render_cnf
from encbench.servers.pki import Pki

# Every character a MariaDB, OpenSSH or stunnel parser treats specially, but whitespace
# (refused: mariadb-install-db splits at it).
AWKWARD = "/tmp/re#sults;'q\"b\\s%u${HOME}$(id)`id`*?[x]é/run"


def read_back_with_my_print_defaults(tmp_path: Path, options: dict[str, str]) -> list[str]:
    binary = proc.which("my_print_defaults")
    if binary is None:
        pytest.skip("my_print_defaults not installed: apt-get install mariadb-client-core")
    cnf = tmp_path / "my.cnf"
    cnf.write_text(render_cnf(options))
    out = subprocess.run(
        [binary, f"--defaults-file={cnf}", "mariadbd"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.splitlines()


@pytest.mark.parametrize(
    "value",
    [
        "/results/run#1/data",
        "/results/with space/data",
        " /leading and trailing blanks ",
        '/results/a "quoted" name/data',
        "/results/back\\slash\\/data\\",
        "/results/it's/data",
        AWKWARD,
        "",
    ],
)
def test_my_print_defaults_reads_back_every_value_render_cnf_writes(
    tmp_path: Path, value: str
) -> None:
    assert read_back_with_my_print_defaults(tmp_path, {"datadir": value, "port": "3307"}) == [
        f"--datadir={value}",
        "--port=3307",
    ]


def test_a_hash_in_a_path_is_quoted_so_it_does_not_start_a_comment() -> None:
    text = render_cnf({"datadir": "/r/run#1/data"})
    assert 'datadir="/r/run#1/data"\n' in text


def test_quotes_and_backslashes_are_escaped_inside_the_quotes() -> None:
    assert cnf_value('/a\\b"c') == '"/a\\\\b\\"c"'


def test_plain_values_stay_bare_for_reading() -> None:
    assert render_cnf({"innodb_buffer_pool_size": "64M", "datadir": "/r/x-1/data"}) == (
        "[mariadbd]\ninnodb_buffer_pool_size=64M\ndatadir=/r/x-1/data\n"
    )


def test_a_line_break_is_never_written_into_my_cnf() -> None:
    with pytest.raises(ValueError, match="line break"):
        render_cnf({"datadir": "/r/a\n[client]\nuser=root"})


# -- check_path -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "char"),
    [
        ("/r/with space", "' '"),
        ("/r/tab\there", "'\\t'"),
        ("/r/new\nline", "'\\n'"),
        ("/r/carriage\rreturn", "'\\r'"),
        ("/r/bell\x07", "'\\x07'"),
    ],
)
def test_check_path_refuses_what_no_option_file_or_install_script_carries(
    path: str, char: str
) -> None:
    with pytest.raises(BadInput, match="choose a path without it") as caught:
        check_path(Path(path))
    assert str(caught.value).startswith("results directory ")
    assert f": {char} " in str(caught.value)


def test_check_path_names_mariadb_install_db_for_a_space() -> None:
    with pytest.raises(BadInput, match="mariadb-install-db"):
        check_path(Path("/r/with space"))


def test_check_path_refuses_a_path_that_is_not_utf8() -> None:
    with pytest.raises(BadInput, match="not UTF-8"):
        check_path(Path(b"/r/\xff".decode("utf-8", "surrogateescape")))


def test_check_path_checks_the_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spaced = tmp_path / "a b"
    spaced.mkdir()
    monkeypatch.chdir(spaced)
    with pytest.raises(BadInput, match="a b"):
        check_path(Path("results"))


def test_check_path_accepts_every_quotable_character() -> None:
    check_path(Path(AWKWARD))


# -- sshd and stunnel -----------------------------------------------------------------------
def test_sshd_reads_back_the_quoted_paths(tmp_path: Path) -> None:
    sshd = proc.which("sshd")
    if sshd is None or proc.which("ssh-keygen") is None:
        pytest.skip("sshd not installed: apt-get install openssh-server")
    directory = tmp_path / "re#sults;'q\"b\\s%u%%${HOME}"
    directory.mkdir()
    host_key = directory / "host"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
    config = tmp_path / "sshd_config"
    config.write_text(
        tunnels.sshd_config(
            listen=("127.0.0.1", 2222),
            host_key=host_key,
            authorized_keys=directory / "authorized_keys",
            cipher="aes128-ctr",
            user="root",
            db=("127.0.0.1", 3306),
        )
    )
    with tunnels._privsep_dir():
        out = subprocess.run(
            [sshd, "-T", "-f", str(config)], capture_output=True, text=True, check=True
        ).stdout
    settings = dict(line.split(" ", 1) for line in out.splitlines())
    assert settings["hostkey"] == str(host_key)
    # sshd -T shows AuthorizedKeysFile before token expansion, in which %% is one %.
    assert settings["authorizedkeysfile"] == str(directory / "authorized_keys").replace("%", "%%")
    assert settings["permitopen"] == "127.0.0.1:3306"
    assert settings["allowtcpforwarding"] == "local"
    assert settings["permittunnel"] == "no"
    assert settings["forcecommand"] == tunnels.SSH_SESSION_COMMAND


def test_the_client_key_may_only_forward_to_the_server_and_run_the_session_command() -> None:
    line = tunnels.authorized_key("ssh-ed25519 AAAAC3Nz encbench\n", ("10.213.0.1", 3306))
    assert line == (
        'restrict,pty,port-forwarding,permitopen="10.213.0.1:3306",'
        f'command="{tunnels.SSH_SESSION_COMMAND}" ssh-ed25519 AAAAC3Nz encbench\n'
    )


def test_stunnel_conf_writes_paths_verbatim_and_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = Path("re#s;u'l\"t\\s%${HOME}")
    pki = Pki(
        key_type="rsa2048",
        directory=relative,
        ca_cert=relative / "ca.pem",
        server_cert=relative / "server-cert.pem",
        server_key=relative / "server-key.pem",
        client_cert=relative / "client-cert.pem",
        client_key=relative / "client-key.pem",
        server_ips=("127.0.0.1",),
    )
    text = tunnels.stunnel_conf(
        client=False,
        accept=("127.0.0.1", 4001),
        connect=("127.0.0.1", 3306),
        pki=pki,
        log=relative / "server.log",
    )
    assert f"output = {tmp_path / relative / 'server.log'}\n" in text
    assert f"CAfile = {tmp_path / relative / 'ca.pem'}\n" in text
    assert f"key = {tmp_path / relative / 'server-key.pem'}\n" in text
