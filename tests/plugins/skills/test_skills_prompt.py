"""`### skills` in the stable prefix and `### loaded-skills` at the head of the tail.

Golden: the catalog block for two skills, and how enable / disable moves the stable prefix:
disabling a skill gives exactly the bytes of a state dir that never had it, enabling it again
gives the original bytes back, and nothing else in the prefix moves.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import atomic_agent.plugins.skills as skills_plugin
from atomic_agent.api import runtime_for_test
from atomic_agent.plugins.skills.skills_contract import SKILLS_SERVICE
from atomic_agent.prompt.build_stable_prefix import SKILLS_SERVICE as CORE_SKILLS_SERVICE
from tests.golden_files import assert_matches_golden
from tests.plugins.skills.skill_fixtures import write_skill

GOLDEN = Path(__file__).parent / "golden"


def skills_block(prefix: str) -> str:
    start = prefix.index("### skills\n")
    return prefix[start:prefix.index("### tools\n")]


async def stable_prefix(state: Path, disabled: list[str], ws: Path) -> str:
    runtime = await runtime_for_test(state, plugins={"skills": skills_plugin},
                                     config={"skills": {"seedStarters": False, "disabled": disabled}})
    try:
        plan = await runtime.prompt_plan()
        return plan.stable_prefix_for(ws)
    finally:
        await runtime.close()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_core_and_the_plugin_name_the_service_alike() -> None:
    assert SKILLS_SERVICE == CORE_SKILLS_SERVICE


async def test_enable_disable_changes_the_skills_block_and_the_prefix_hash_exactly(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    write_skill(state / "skills", "release-notes", "Draft release notes from the git log since the last tag.")
    write_skill(state / "skills", "backup-check", "Check that last night's backup exists and restores.")
    both = await stable_prefix(state, [], ws)
    assert both == await stable_prefix(state, [], ws)  # byte-stable across runtimes
    assert_matches_golden(GOLDEN / "skills_block_two.txt", skills_block(both))
    # the order of the stable prefix: rules, then skills, then tools
    assert both.index("### rules\n") < both.index("### skills\n") < both.index("### tools\n")

    one = await stable_prefix(state, ["backup-check"], ws)
    assert_matches_golden(GOLDEN / "skills_block_one.txt", skills_block(one))
    assert sha(one) != sha(both)
    assert one.replace(skills_block(one), "") == both.replace(skills_block(both), "")  # nothing else moved

    moved = tmp_path / "elsewhere"
    shutil.move(str(state / "skills" / "backup-check"), moved)
    assert await stable_prefix(state, [], ws) == one  # disabled == never installed, to the byte
    shutil.move(str(moved), state / "skills" / "backup-check")
    assert await stable_prefix(state, [], ws) == both  # enabled again: the original bytes

    none = await stable_prefix(state, ["backup-check", "release-notes"], ws)
    assert "### skills" not in none


async def test_loaded_skills_open_the_tail_and_share_the_token_budget(tmp_path: Path) -> None:
    state, ws = tmp_path / "state", tmp_path / "ws"
    ws.mkdir()
    write_skill(state / "skills", "alpha", body="ALPHA-BODY line\n" + "more alpha instructions\n" * 200)
    write_skill(state / "skills", "beta", body="BETA-BODY")
    runtime = await runtime_for_test(state, plugins={"skills": skills_plugin},
                                     config={"skills": {"seedStarters": False, "loadedCap": 2},
                                             "agent": {"tokenBudget": 300}})
    try:
        service = runtime.service(SKILLS_SERVICE)
        session = runtime.open_session(None, ws)
        assert runtime.memory_sections(session.id, "") == []
        service.loaded.add(session.id, "beta")
        service.loaded.add(session.id, "alpha")
        preview = await runtime.preview_prompt(session.id, "hi")
        tail = preview.text[preview.text.index("### loaded-skills"):]
        assert tail.index("## beta") < tail.index("## alpha") < tail.index("### world")
        names = [name for name, _text, _tokens in preview.sections]
        assert names[1] == "loaded-skills"  # right after the stable prefix
        loaded = dict((n, t) for n, t, _ in preview.sections)["loaded-skills"]
        assert "[truncated]" in loaded and len(loaded) < 300 * 4  # the shared budget cut alpha's long body

        service.loaded.add(session.id, "gamma-not-installed")  # unknown names are skipped, cap evicts beta
        assert service.loaded.names(session.id) == ["alpha", "gamma-not-installed"]
        body = runtime.memory_sections(session.id, "")[0].body
        assert body.startswith("## alpha") and "BETA" not in body
    finally:
        await runtime.close()


def test_the_shared_budget_keeps_whole_sections_then_cuts_one() -> None:
    from atomic_agent.api import PromptSection, estimate_tokens
    from atomic_agent.prompt.build_prompt import fit_shared_budget

    a = PromptSection("loaded-skills", "short body", slot="loaded")
    b = PromptSection("other", "\n".join(f"line {i} of a long body" for i in range(200)), slot="loaded")
    kept = fit_shared_budget([a, b], 100, estimate_tokens)
    assert kept[0] == a and kept[1].body.endswith("[truncated]")
    assert sum(estimate_tokens(s.body) for s in kept) <= 100
    assert fit_shared_budget([a, b], 0, estimate_tokens) == []
