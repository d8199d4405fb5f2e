"""Each study's options are its own section of the profile, registered by the one list of
studies: read typed, given defaults when left out, and checked beside their model."""

from __future__ import annotations

import pytest

from encbench import studies
from encbench.profiles import profile
from encbench.studies.at_rest.options import MeasureSpec, measure_options
from encbench.studies.in_transit.options import TransitSpec, transit_options
from tests.profiles.test_profile_checks import refusal


def test_every_study_with_options_has_its_section_in_a_parsed_profile() -> None:
    prof = profile.parse('name = "x"\n', "p.toml")
    for study in studies.STUDIES:
        assert study.settings.key is not None and study.settings.model is not None
        assert isinstance(study.settings.rule(prof), study.settings.model)
        assert study.settings.rule(prof) == study.settings.model()  # left out: its defaults


def test_a_section_is_read_as_its_own_type_and_a_wrong_type_is_refused() -> None:
    prof = profile.parse('name = "x"\n[transit]\nrtt_ms = [0, 40]\n', "p.toml")
    assert transit_options(prof).rtt_ms == [0, 40]
    assert isinstance(measure_options(prof), MeasureSpec)
    with pytest.raises(TypeError, match="'transit' is TransitSpec"):
        prof.section("transit", MeasureSpec)
    with pytest.raises(TypeError, match="'nosuch' is NoneType"):
        prof.section("nosuch", TransitSpec)


def test_a_profile_lists_no_study_that_is_not_registered() -> None:
    names = [s.name for s in studies.STUDIES]
    choices = ", ".join(f'"{n}"' for n in names)
    assert refusal('studies = ["at-rest", "at-reset"]\n') == (
        f'p.toml: studies.1: "at-reset" is not one of the choices; did you mean "at-rest"? '
        f"choose from {choices}"
    )


def test_a_profile_that_lists_no_study_measures_the_first_registered() -> None:
    assert profile.parse('name = "x"\n', "p.toml").studies == [studies.STUDIES[0].name]


@pytest.mark.parametrize("study", [s for s in studies.STUDIES if s.settings.key is not None])
def test_every_section_refuses_fewer_rounds_than_its_minimum_in_the_same_words(
    study: studies.StudyDefinition,
) -> None:
    key = study.settings.key
    assert refusal(f'studies = ["{study.name}"]\n[{key}]\nmin_rounds = 8\nmax_rounds = 4\n') == (
        f"p.toml: {key}.min_rounds is larger than {key}.max_rounds; "
        f"lower {key}.min_rounds or raise {key}.max_rounds"
    )


def test_a_section_of_an_unlisted_study_is_still_checked_against_the_rest() -> None:
    # server.shapes are the at-rest study's alone: refused when it is not listed.
    toml = 'studies = ["in-transit"]\n[[server.shapes]]\nname = "a"\ncpus = 1\n'
    assert refusal(toml) == (
        "p.toml: server.shapes confine the at-rest study's servers and studies does not "
        'list "at-rest": add it, or remove server.shapes'
    )


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            "[transit]\nrate_mbit = 100\n",
            "p.toml: transit.rate_mbit limits the emulated link, which only rows with "
            "transit.rtt_ms > 0 use: add a distance or remove the rate",
        ),
        (
            '[transit]\nbulk_ciphers = ["AES256-SHA"]\n',
            "p.toml: transit.bulk_ciphers: 'AES256-SHA' is a TLS 1.2 suite: it needs "
            'transit.tls_version = "TLSv1.2", not "TLSv1.3"',
        ),
        (
            '[target]\nuser = "u"\n',
            "p.toml: target: give either host (and port) or socket, not both",
        ),
        (
            '[target]\nhost = "db"\nuser = "u"\nssl_cert = "c.pem"\n',
            "p.toml: target: ssl_cert and ssl_key go together; give both",
        ),
        (
            'studies = ["rejoin"]\ncalibration = true\n',
            'p.toml: the rejoin study has no A/A calibration yet; remove "rejoin" from '
            "studies to calibrate",
        ),
        (
            'calibration = true\n[target]\nhost = "db"\nuser = "u"\n',
            "p.toml: an A/A calibration measures this machine's sandboxes, not a target: "
            "remove the target",
        ),
    ],
)
def test_checks_across_keys_keep_their_words(toml: str, message: str) -> None:
    assert refusal(toml) == message


def test_profile_py_names_no_study() -> None:
    source = profile.__file__
    with open(source, encoding="utf-8") as f:
        text = f.read()
    for study in studies.STUDIES:
        assert f'"{study.name}"' not in text
        assert f'"{study.settings.key}"' not in text
