"""proc.run_together, the two clients of a duet round: started at once, each output kept,
and on a timeout every child stopped, none left behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from encbench import proc
from encbench.errors import ToolError


def test_commands_run_at_the_same_time_and_each_keeps_its_output(tmp_path: Path) -> None:
    # Each waits for the other's file: only two commands running at once can both finish.
    a, b = tmp_path / "a", tmp_path / "b"
    wait_for = "for i in $(seq 100); do [ -e {} ] && break; sleep 0.05; done; [ -e {} ]"
    commands = [
        proc.Command(
            ["sh", "-c", f"touch {mine}; {wait_for.format(theirs, theirs)}; echo {name} done"],
            phase=name,
            timeout_s=30,
            log=tmp_path / f"{name}.log",
        )
        for name, mine, theirs in (("a", a, b), ("b", b, a))
    ]
    done = proc.run_together(commands)
    assert [d.returncode for d in done] == [0, 0]
    assert [d.stdout.strip() for d in done] == ["a done", "b done"]


def test_a_failed_command_is_reported_not_raised(tmp_path: Path) -> None:
    done = proc.run_together(
        [
            proc.Command(["sh", "-c", "exit 3"], "x", 30, tmp_path / "x.log"),
            proc.Command(["true"], "y", 30, tmp_path / "y.log"),
        ]
    )
    assert [d.returncode for d in done] == [3, 0]


def test_a_timeout_stops_every_command(tmp_path: Path) -> None:
    pid_files = [tmp_path / "p1", tmp_path / "p2"]
    commands = [
        proc.Command(["sh", "-c", f"echo $$ > {p}; exec sleep 60"], "sleeper", 1, tmp_path / "l")
        for p in pid_files
    ]
    started = time.monotonic()
    with pytest.raises(ToolError, match="did not finish within 1 s"):
        proc.run_together(commands)
    assert time.monotonic() - started < 30
    for p in pid_files:
        assert not proc.pid_alive(int(p.read_text()))


def test_a_missing_tool_stops_what_already_started(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not found"):
        proc.run_together(
            [
                proc.Command(["sleep", "60"], "s", 30, tmp_path / "a"),
                proc.Command(["/nonexistent/tool"], "t", 30, tmp_path / "b"),
            ]
        )
    assert proc.descendants(os.getpid()) == []
