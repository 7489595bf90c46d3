"""The gate: the single live switch, the category x level ladder, labels, fail-closed hosts, audit."""

from __future__ import annotations

import pytest

from atomic_agent.api import ApprovalAnswer
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_gate import LEVEL_NAMES, STANDARD_CATEGORIES, ApprovalGate
from tests.approval.gate_kit import make_gate

# the product decision: from which level each category stops asking (cumulative)
LADDER = {
    "fs_write_workspace": 2, "fs_write_home": 3, "fs_trash": 3, "http": 3, "shell": 4, "script": 4,
    "proc_kill": 4, "browser_nonweb": 5, "trust_config": 5, "other": 5,
}


@pytest.mark.parametrize("category", sorted(LADDER))
@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
async def test_category_level_matrix(category: str, level: int) -> None:
    gate, asker = make_gate(level)
    decision = await gate.request("s", "t", category, "x")
    silent = level >= LADDER[category]
    assert decision.approved is silent
    assert decision.reason == ("level" if silent else "denied")
    assert len(asker.requests) == (0 if silent else 1)


def test_standard_categories_are_exactly_the_ladder_table() -> None:
    assert {c.name: c.auto_approve_level for c in STANDARD_CATEGORIES} == LADDER
    assert LEVEL_NAMES == {1: "paranoid", 2: "workspace", 3: "home", 4: "operator", 5: "full trust"}


def test_category_labels_are_human_and_distinct() -> None:
    labels = {c.name: c.label for c in STANDARD_CATEGORIES}
    assert labels["fs_write_home"] == "file write · home"
    assert labels["fs_write_workspace"] == "file write · workspace"
    assert len(set(labels.values())) == len(labels)


async def test_gate_is_the_single_live_switch() -> None:
    gate, asker = make_gate(1)
    assert not (await gate.request("s", "os.fs.write", "fs_write_home", "w")).approved
    gate.set_level(5)  # a live change flips the same registered tool without re-registering it
    assert (await gate.request("s", "os.fs.write", "fs_write_home", "w")).approved
    gate.set_level(1)
    assert not (await gate.request("s", "os.fs.write", "fs_write_home", "w")).approved
    assert len(asker.requests) == 2


@pytest.mark.parametrize("asked", [0, -3, 7, 99, 4.5, 4.0, True, "3", None])
def test_a_level_off_the_ladder_is_refused_not_clamped(asked: object) -> None:
    gate, _ = make_gate(2)
    with pytest.raises(ValueError, match="integer 1..5"):
        gate.set_level(asked)  # type: ignore[arg-type]
    assert gate.level == 2
    with pytest.raises(ValueError, match="integer 1..5"):
        ApprovalGate(STANDARD_CATEGORIES, asked)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_every_rung_of_the_ladder_is_accepted(level: int) -> None:
    gate, _ = make_gate(2)
    assert gate.set_level(level) == level and ApprovalGate(STANDARD_CATEGORIES, level).level == level


async def test_unknown_category_asks_as_other() -> None:
    gate, asker = make_gate(4, [ApprovalAnswer.once()])
    decision = await gate.request("s", "mcp.x.y", "made_up", "do it")
    assert decision.approved and decision.category == "other" and asker.requests[0].label == "other action"


async def test_no_host_means_no() -> None:
    gate = ApprovalGate(STANDARD_CATEGORIES, 1, None)
    decision = await gate.request("s", "t", "fs_write_workspace", "x")
    assert not decision.approved and decision.reason == "no-host"


async def test_a_host_that_raises_never_approves() -> None:
    async def broken(_request: object) -> bool:
        raise RuntimeError("socket closed")

    gate = ApprovalGate(STANDARD_CATEGORIES, 1, broken)
    decision = await gate.request("s", "t", "shell", "x")
    assert not decision.approved and decision.reason == "host-error"


@pytest.mark.parametrize(("answer", "approved"), [(True, True), (False, False), ("y", True), ("n", False),
                                                  ("", False), ("maybe", False), (None, False), (1, False)])
async def test_host_answers_are_normalised_fail_closed(answer: object, approved: bool) -> None:
    gate, _ = make_gate(1, [answer])
    assert (await gate.request("s", "t", "http", "GET x")).approved is approved


async def test_prompt_carries_category_and_label_to_the_host() -> None:
    gate, asker = make_gate(1, [True])
    await gate.request("s", "os.fs.write", "fs_write_home", "write ~/x")
    request = asker.requests[0]
    assert (request.category, request.label, request.tool, request.level) == (
        "fs_write_home", "file write · home", "os.fs.write", 1)


async def test_every_decision_is_appended_to_the_audit_log(tmp_path) -> None:
    log = ApprovalAuditLog(tmp_path / "audit" / "approvals.ndjson")
    gate, _ = make_gate(2, [ApprovalAnswer.session(), False], audit=log)
    await gate.request("s1", "os.fs.write", "fs_write_workspace", "ws write")  # level
    await gate.request("s1", "os.shell.run", "shell", "ls")  # user, grants shell
    await gate.request("s1", "os.shell.run", "shell", "ls -l")  # grant
    await gate.request("s1", "os.fs.write", "trust_config", "config.json")  # denied
    rows = log.read()
    assert [(r["who"], r["reason"], r["approved"]) for r in rows] == [
        ("level", "level", True), ("user", "user", True), ("grant", "grant", True), ("user", "denied", False)]
    assert rows[1]["grant"] == "category:shell" and rows[2]["grant"] == "category:shell"
    assert all(r["level"] == 2 and r["sessionId"] == "s1" and r["ts"] for r in rows)
    assert (tmp_path / "audit" / "approvals.ndjson").stat().st_mode & 0o777 == 0o600


async def test_audit_log_only_grows(tmp_path) -> None:
    path = tmp_path / "approvals.ndjson"
    log = ApprovalAuditLog(path)
    gate, _ = make_gate(5, audit=log)
    await gate.request("s", "t", "shell", "one")
    first = path.read_bytes()
    await gate.request("s", "t", "shell", "two")
    assert path.read_bytes().startswith(first) and len(log.read()) == 2
