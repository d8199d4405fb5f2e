"""The user's guide and its docs: short enough to read, complete (every built-in profile,
every CLI option, every profile key), links that resolve, and no word that means nothing to a
reader (a local path, a commit, an issue number, the name of a former profile)."""

import re
import typing
from collections.abc import Iterator
from pathlib import Path

import click
import click.testing
import pytest
from pydantic import BaseModel

from encbench.cli import main
from encbench.commands import catalog
from encbench.profiles import profile
from encbench.profiles.options import Rounds
from encbench.studies import STUDIES
from tests.helpers import REPO

ROOT = REPO
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
PAGES = [README, *DOCS]
PROFILES_PAGE = ROOT / "docs" / "profiles.md"

FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose(page: Path) -> Iterator[tuple[int, str]]:
    """The page's lines outside fenced code blocks, numbered from 1."""
    fenced = False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose(page):
        match = HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def all_text() -> str:
    return "\n".join(page.read_text() for page in PAGES)


def test_the_readme_is_a_guide_of_at_most_300_lines() -> None:
    assert len(README.read_text().splitlines()) <= 300


def test_every_listed_built_in_profile_and_no_other_has_a_row_in_the_profiles_table() -> None:
    text = README.read_text()
    section = text.split("\n## Profiles\n", 1)[1].split("\n## ", 1)[0]
    rows = {
        match.group(1) for match in re.finditer(r"^\| `([\w.-]+)`", section, flags=re.MULTILINE)
    }
    assert rows == set(profile.listed_names())
    assert not set(profile.FORMER_NAMES) & rows


def test_the_readme_says_what_each_profile_needs_root_for_as_encbench_profiles_does() -> None:
    text = README.read_text()
    section = text.split("\n## Profiles\n", 1)[1].split("\n## ", 1)[0]
    said = {
        match.group(1): match.group(2)
        for match in re.finditer(r"^\| `([\w.-]+)`.*\| ([^|]+) \|$", section, flags=re.MULTILINE)
    }
    assert said == {e.name: e.root for e in catalog.entries()}


def _commands(group: click.Group) -> Iterator[click.Command]:
    yield group
    for command in group.commands.values():
        if isinstance(command, click.Group):
            yield from _commands(command)
        else:
            yield command


def test_every_option_of_every_command_is_documented() -> None:
    text = all_text()
    missing = []
    for command in _commands(main):
        with click.Context(command) as context:
            help_option = command.get_help_option(context)
        options = [p for p in command.params if isinstance(p, click.Option)]
        for option in [*options, *([help_option] if help_option else [])]:
            for name in [*option.opts, *option.secondary_opts]:
                if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                    missing.append(f"{command.name} {name}")
    assert not missing, f"undocumented options: {missing}"


def _section_blocks() -> dict[str, str]:
    """The profile reference's text under each `### \\`[section]\\`` heading."""
    text = PROFILES_PAGE.read_text()
    blocks = {}
    for part in re.split(r"^### ", text, flags=re.MULTILINE)[1:]:
        title, _, body = part.partition("\n")
        blocks[title.strip().strip("`")] = body.split("\n## ", 1)[0]
    return blocks


def _nested_models(annotation: object) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append(annotation)
    for argument in typing.get_args(annotation):
        found.extend(_nested_models(argument))
    return found


def _sections() -> Iterator[tuple[str, type[BaseModel]]]:
    """Every table a profile can have, by its TOML name, with its model."""
    for name, field in profile.Profile.model_fields.items():
        for model in _nested_models(field.annotation):
            yield f"[{name}]", model
            for inner, inner_field in model.model_fields.items():
                for item in _nested_models(inner_field.annotation):
                    yield f"[[{name}.{inner}]]", item
    for study in STUDIES:
        if study.settings.key is not None and study.settings.model is not None:
            yield f"[{study.settings.key}]", study.settings.model


def test_every_key_of_every_profile_section_is_in_the_profile_reference() -> None:
    blocks = _section_blocks()
    shared = blocks["Keys every study section has"]
    missing = [
        f"top level: {key}"
        for key, field in profile.Profile.model_fields.items()
        if not _nested_models(field.annotation) and f"| `{key}` |" not in blocks["Top level"]
    ]
    for title, model in _sections():
        block = blocks.get(title, "")
        for key in model.model_fields:
            where = shared if key in Rounds.model_fields else block
            if f"| `{key}` |" not in where:
                missing.append(f"{title} {key}")
    assert not missing, f"keys missing from docs/profiles.md: {missing}"


def _links() -> Iterator[tuple[Path, int, str]]:
    for page in PAGES:
        for number, line in prose(page):
            for match in LINK.finditer(line):
                yield page, number, match.group(1)


def test_every_relative_link_between_the_docs_resolves_to_a_file_and_heading() -> None:
    broken = []
    for page, number, target in _links():
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.is_file() or (
            anchor and destination.suffix == ".md" and anchor not in anchors(destination)
        ):
            broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
    assert not broken, f"broken links: {broken}"


def test_the_docs_link_to_each_other_at_all() -> None:
    assert sum(1 for _ in _links()) > 10


# A code value the user types (`aesni = ["seed-mask"]`) and a key type are not what they look
# like: the word "seed" in the one, a commit-like hex word in the other.
ALLOWED = re.compile(r"seed-mask|ed25519")
FORBIDDEN = {
    "a local path": re.compile(r"/work/|/tmp/"),
    "a commit": re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"),
    "an issue number": re.compile(r"(?<![\w&])#\d+\b|\bissues?\s+#?\d+", re.IGNORECASE),
    "the word seed": re.compile(r"seed", re.IGNORECASE),
}


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_no_guide_or_docs_line_names(what: str) -> None:
    pattern = FORBIDDEN[what]
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in PAGES
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if pattern.search(ALLOWED.sub("", line))
    ]
    assert not found, "\n".join(found)


def test_the_forbidden_patterns_catch_what_they_are_for() -> None:
    assert FORBIDDEN["a local path"].search("see /work/bench21/quick")
    assert FORBIDDEN["a commit"].search("since `b3d5504`")
    assert not FORBIDDEN["a commit"].search("1000000 rows, 0x200000200000000")
    assert FORBIDDEN["an issue number"].search("(issue #9, item 7)")
    assert FORBIDDEN["an issue number"].search("Issue 10 item 6")
    assert FORBIDDEN["the word seed"].search("The seed's claims")
    assert not FORBIDDEN["the word seed"].search(ALLOWED.sub("", 'aesni = ["seed-mask"]'))


def test_the_readme_and_encbench_help_give_the_same_exit_statuses() -> None:
    from encbench.cli import EXIT_STATUSES

    text = README.read_text()
    section = text.split("\n## The CLI\n", 1)[1].split("\n## ", 1)[0]
    table = dict(re.findall(r"^\| (\d+) \| (.+) \|$", section, flags=re.MULTILINE))
    assert set(table) == {str(code) for code, _ in EXIT_STATUSES}
    help_text = click.testing.CliRunner().invoke(main, ["--help"]).output
    for code, _ in EXIT_STATUSES:
        assert re.search(rf"^ +{code} +\w", help_text, flags=re.MULTILINE), code
    # What exits 1 is named in both.
    for cause in ("doctor", "--fail-above", "could not drop"):
        assert cause in table["1"] and cause in dict(EXIT_STATUSES)[1]


FINDINGS = ROOT / "docs" / "findings.md"
DEVELOPMENT_LOG = ROOT / "docs" / "development-log.md"


def _readme_quick_result() -> str:
    """The README's measured example: from "A real result" to the next heading."""
    text = README.read_text()
    return "A real result" + text.split("A real result", 1)[1].split("\n## ", 1)[0]


def test_the_readme_quick_table_is_a_table_of_the_findings_row_for_row() -> None:
    rows = [line for line in _readme_quick_result().splitlines() if line.startswith("|")]
    assert len(rows) >= 10, "the README's quick table (header, rule and 8 cells) was not found"
    findings = FINDINGS.read_text().splitlines()
    missing = [row for row in rows if row not in findings]
    assert not missing, "README rows not in docs/findings.md:\n" + "\n".join(missing)
    # All in one findings table, in the README's order: the same run, not a mix of runs.
    assert any(findings[i : i + len(rows)] == rows for i in range(len(findings))), (
        "no table in docs/findings.md holds the README's quick rows in their order"
    )


FIGURE = re.compile(r"\d+ min \d+ s|[−+]?\d[\d,.]*(?:[…–][−+]?\d[\d,.]*)?%|\d{4}-\d\d-\d\d")


def test_every_figure_of_the_readme_quick_result_is_in_the_findings() -> None:
    findings = FINDINGS.read_text()
    missing = sorted(
        {figure for figure in FIGURE.findall(_readme_quick_result()) if figure not in findings}
    )
    assert not missing, f"README figures not in docs/findings.md: {missing}"


# The team's process and its machines mean nothing to a reader; they belong in the
# development log. Words of TLS and SQL ("TLS session", "SHOW SESSION STATUS") are not these.
TEAM_WORDS = {
    "this VM": re.compile(r"\bthis VM\b"),
    "mends": re.compile(r"\bmend(s|ed|ing)?\b", re.IGNORECASE),
    "a review": re.compile(r"\breview", re.IGNORECASE),
    "q3": re.compile(r"\bq3\b", re.IGNORECASE),
    "the kernel it is developed on": re.compile(r"\bdeveloped on\b", re.IGNORECASE),
    "engineers at work": re.compile(r"\b(two|other|another) engineers?\b|\bengineer's\b", re.I),
    "a working session": re.compile(
        r"\b(first|second|another|each|one|this|that|a single|the same) session\b"
        r"|\bsessions? (that|before|measured)\b|\bbetween sessions\b",
        re.IGNORECASE,
    ),
    "the team": re.compile(r"\b(we|our|the team)\b", re.IGNORECASE),
    "not built yet": re.compile(r"\bnot (yet )?built( yet)?\b", re.IGNORECASE),
    "measured before this was so": re.compile(r"measured before this was so", re.IGNORECASE),
}
USER_PAGES = [page for page in PAGES if page != DEVELOPMENT_LOG]


def test_no_user_page_speaks_of_the_team_or_its_machines() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}: {what}: {line.strip()}"
        for page in USER_PAGES
        for number, line in enumerate(page.read_text().splitlines(), 1)
        for what, pattern in TEAM_WORDS.items()
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_team_words_catch_what_they_are_for() -> None:
    def caught(line: str) -> bool:
        return any(pattern.search(line) for pattern in TEAM_WORDS.values())

    for line in (
        "on this VM the steal rises",
        "after the review's mends",
        "an earlier run (q3) found",
        "the kernel encbench is developed on has none",
        "but two engineers editing code",
        "in the first session",
        "**Not built yet**: threads",
        "were measured before this was so",
    ):
        assert caught(line), line
    for line in ("a TLS session is resumed", "SHOW SESSION STATUS", "a tunnel holds a session"):
        assert not caught(line), line


def test_the_development_log_is_linked_from_the_developers_guide_only() -> None:
    assert "development-log.md" in (ROOT / "docs" / "developing.md").read_text()
    for page in (README, FINDINGS):
        assert "development-log" not in page.read_text(), page.name
