"""README's "Everyday use" table lists exactly the command groups `atomic-agent --help` shows,
each row links a page of docs/ that exists, and docs/index.md lists every page of docs/.

The README table is the list: a new command group (a plugin's `register_commands`) gets a
row there, and this test says which are missing or stale."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.run_cli import run_cli

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def _help_groups() -> set[str]:
    result = run_cli(["--help"], env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    listing = result.stdout.split("Commands:", 1)[1]
    return {m.group(1) for m in re.finditer(r"^\s{2}([a-z][a-z0-9-]*)\s", listing, re.MULTILINE)}


def _readme_rows() -> dict[str, str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Everyday use\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"^\| `([a-z][a-z0-9-]*)` \|.*\| \[[^\]]+\]\((docs/[^)]+)\) \|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_the_readme_lists_every_command_group_and_no_other():
    groups, rows = _help_groups(), _readme_rows()
    assert groups, "no command groups parsed from --help"
    missing, stale = sorted(groups - set(rows)), sorted(set(rows) - groups)
    assert not missing, f"add these to README.md's Everyday use table: {missing}"
    assert not stale, f"README.md's Everyday use table lists commands --help does not: {stale}"


def test_every_row_links_an_existing_docs_page():
    for group, page in _readme_rows().items():
        assert (REPO / page).is_file(), f"{group}: {page} does not exist"


def test_the_docs_index_lists_every_page():
    index = (DOCS / "index.md").read_text()
    linked = set(re.findall(r"\]\(([a-z0-9-]+\.md)\)", index))
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert linked == pages, f"docs/index.md misses {sorted(pages - linked)}, or lists gone {sorted(linked - pages)}"
