"""sshd's privilege-separation directory, shared by every sshd of ours on the machine: the one
that made it must not remove it from under another that still runs (the ssh target test's
failure beside a tunnel test under parallel workers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from encbench.net import tunnels

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="made only for an sshd run as root")


def test_made_when_missing_and_removed_by_its_maker_alone(tmp_path: Path) -> None:
    path = tmp_path / "sshd"
    with tunnels._privsep_dir(path):
        assert path.is_dir()
    assert not path.exists()


def test_one_that_was_there_before_stays(tmp_path: Path) -> None:
    path = tmp_path / "sshd"
    path.mkdir()
    with tunnels._privsep_dir(path):
        pass
    assert path.is_dir()


def test_its_maker_leaving_first_does_not_remove_it_from_under_another_user(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sshd"
    maker, other = tunnels._privsep_dir(path), tunnels._privsep_dir(path)
    maker.__enter__()
    other.__enter__()
    maker.__exit__(None, None, None)
    assert path.is_dir()  # the other sshd still runs in it
    other.__exit__(None, None, None)


def test_one_removed_between_uses_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "sshd"
    with tunnels._privsep_dir(path):
        pass
    with tunnels._privsep_dir(path):
        assert path.is_dir()
    assert not path.exists()
