"""The key provider: each release reads its own keys unless the profile names them."""

import pytest

from encbench.errors import BadInput
from encbench.profiles import profile as profiles
from encbench.studies.at_rest import cells as at_rest_cells
from encbench.studies.at_rest import plan as at_rest_plan


def _profile(server: str) -> profiles.Profile:
    return profiles.parse(f'name = "k"\nstudies = ["at-rest"]\n[server]\n{server}', "k.toml")


@pytest.mark.parametrize(
    ("server", "provider"),
    [
        ("", "key-file"),
        ('install = "mysql"\n', "keyring-file"),
        ('key_provider = "key-file"\n', "key-file"),
        ('key_provider = "key-server"\n', "key-server"),
    ],
)
def test_each_release_reads_its_own_keys_unless_the_profile_names_them(
    server: str, provider: str
) -> None:
    prof = _profile(server)
    assert prof.server.keys == provider
    assert {c.key_provider for c in at_rest_cells.configurations(prof)} == {provider}
    [line] = at_rest_plan.key_lines(prof)
    assert f'key_provider = "{provider}"' in line and "mode 0600" in line


@pytest.mark.parametrize(
    ("server", "words"),
    [
        ('install = "mysql"\nkey_provider = "key-file"\n', 'set key_provider = "keyring-file"'),
        ('key_provider = "keyring-file"\n', 'set key_provider = "key-file"'),
        ('install = "mysql"\nkey_provider = "key-server"\n', 'set key_provider = "keyring-file"'),
        (
            'key_provider = "key-server"\nencryption_algorithm = ["AES_CTR"]\n',
            "encryption_algorithm AES_CTR: with a key server .* "
            'set encryption_algorithm = \\["AES_CBC"\\]',
        ),
    ],
)
def test_a_key_provider_the_release_cannot_read_is_refused_with_the_fix(
    server: str, words: str
) -> None:
    with pytest.raises(BadInput, match=words) as refused:
        _profile(server)
    assert "\n" not in str(refused.value)


def test_the_filesystem_layer_alone_needs_no_tde_key() -> None:
    assert at_rest_plan.key_lines(_profile('encryption_layer = "fs"\n')) == []


def test_a_key_server_sets_the_cipher_its_plugin_leaves_to_the_server() -> None:
    """hashicorp_key_management gives keys only: MariaDB then encrypts with AES-CBC, which a
    profile naming a key server gets unless it names a cipher (one it cannot have is
    refused above); doctor asks for the plugin and the key server."""
    from encbench.studies import at_rest

    prof = _profile('key_provider = "key-server"\n')
    assert prof.server.encryption_algorithm == ["AES_CBC"]
    names = {c.name for c in at_rest.STUDY.machine_needs(prof)}
    assert {"hashicorp_key_management plugin", "OpenBao (bao)"} <= names
    assert "OpenBao (bao)" not in {c.name for c in at_rest.STUDY.machine_needs(_profile(""))}
