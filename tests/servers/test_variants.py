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
