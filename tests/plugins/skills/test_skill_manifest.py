"""SKILL.md parsing and the registry: the format, and each kind of bad input named clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.skills.skill_manifest import MAX_SKILL_FILE_BYTES, SkillFormatError, read_manifest
from atomic_agent.plugins.skills.skill_registry import SkillNotFoundError, SkillRegistry
from atomic_agent.plugins.skills.starter_skills import seed_starter_skills, starter_names
from tests.plugins.skills.skill_fixtures import write_skill


def test_front_matter_fields_inline_and_block_lists(tmp_path: Path) -> None:
    d = tmp_path / "gh"
    d.mkdir()
    (d / "SKILL.md").write_text("---\nname: gh\ndescription: \"GitHub: issues and PRs\"\nenv: [GITHUB_TOKEN, GH_HOST]\n"
                                "scripts:\n  - scripts/a.py\n  - scripts/b.sh\nmetadata:\n  owner: me\n---\n# GH\nbody\n")
    m = read_manifest(d)
    assert (m.name, m.description, m.env, m.scripts) == ("gh", "GitHub: issues and PRs", ("GITHUB_TOKEN", "GH_HOST"),
                                                         ("scripts/a.py", "scripts/b.sh"))
    assert m.body == "# GH\nbody" and not m.truncated


@pytest.mark.parametrize(("text", "expected"), [
    ("# just markdown\n", "no front matter"),
    ("---\nname: x\n", "never closed"),
    ("---\ndescription: d\n---\nbody\n", "needs 'name: <text>'"),
    ("---\nname: Bad_Name\ndescription: d\n---\nbody\n", "lowercase letters"),
    ("---\nname: x\ndescription: d\nenv: [A-B]\n---\nbody\n", "plain variable names"),
    ("---\nname: x\ndescription: d\nscripts: [../../bin/sh]\n---\nbody\n", "'..' component"),
    ("---\nname: x\ndescription: d\nscripts: [/etc/passwd]\n---\nbody\n", "absolute path"),
    ("---\nname: x\ndescription: d\n---\n\n", "body after the front matter is empty"),
    ("---\nname: x\nname: y\ndescription: d\n---\nb\n", "given twice"),
    ("---\nname x\n---\nb\n", "expected 'key: value'"),
])
def test_bad_skill_files_are_refused_with_what_to_fix(tmp_path: Path, text: str, expected: str) -> None:
    d = tmp_path / "x"
    d.mkdir()
    (d / "SKILL.md").write_text(text)
    with pytest.raises(SkillFormatError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        read_manifest(d)


def test_a_huge_skill_file_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    d = write_skill(tmp_path, "big", body="line of instructions\n" * 40_000)  # ~840 KB
    m = read_manifest(d)
    assert m.truncated and len(m.body.encode()) < MAX_SKILL_FILE_BYTES


def test_registry_reports_duplicates_and_broken_skills_and_filters_disabled(tmp_path: Path) -> None:
    state, extra = tmp_path / "state", tmp_path / "extra"
    write_skill(state / "skills", "alpha")
    write_skill(state / "skills", "beta")
    write_skill(extra, "alpha", "another alpha")  # same name in a later root: reported, not used
    (extra / "broken").mkdir()
    (extra / "broken" / "SKILL.md").write_text("no front matter\n")
    registry = SkillRegistry(state, [extra], disabled=["beta"])
    scan = registry.scan()
    assert [s.name for s in scan.skills] == ["alpha", "beta"]
    assert scan.skills[0].directory == state / "skills" / "alpha"
    problems = {Path(p.where).name: p.problem for p in scan.problems}
    assert "duplicate skill name 'alpha'" in problems["alpha"] and "no front matter" in problems["broken"]
    assert [s.name for s in registry.list()] == ["alpha"]
    assert registry.catalog_lines() == ["alpha: the alpha skill"]
    with pytest.raises(SkillNotFoundError, match="no enabled skill named 'beta'"):
        registry.get("beta")
    assert (state / "skills" / "beta" / "SKILL.md").exists()  # disabling never touches files


def test_starters_seed_once_and_a_removed_starter_stays_removed(tmp_path: Path) -> None:
    assert seed_starter_skills(tmp_path) == starter_names() == ["disk-usage", "log-triage"]
    edited = tmp_path / "skills" / "log-triage" / "SKILL.md"
    edited.write_text(edited.read_text() + "my own note\n")
    assert seed_starter_skills(tmp_path) == []
    assert edited.read_text().endswith("my own note\n")
    import shutil

    shutil.rmtree(tmp_path / "skills" / "disk-usage")
    assert seed_starter_skills(tmp_path) == [] and not (tmp_path / "skills" / "disk-usage").exists()
    assert [s.name for s in SkillRegistry(tmp_path).list()] == ["log-triage"]
