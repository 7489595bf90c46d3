"""Durable approval records: committed before shown, answered exactly once from any surface
(two connections racing), late answers told who won, changed calls and unauthorised
principals refused, newer records left alone, expiry settles them; and the gate on top:
a record per ask, an answer from another process, the approved call consumed once. Each
holds on both backends: the state dir's approvals.sqlite and the fleet's PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from atomic_agent.approval.approval_answers import ApprovalRequest
from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate, CallIdentity
from atomic_agent.approval.approval_records import (
    APPROVAL,
    APPROVED,
    DENIED,
    EXPIRED,
    OPERATOR,
    PENDING,
    AlreadyAnsweredError,
    ApprovalExpiredError,
    ApprovalRecord,
    ApprovalRecords,
    CallChangedError,
    FrozenCall,
    InvalidAnswerError,
    NewerRecordError,
    NotAllowedToAnswerError,
)
from atomic_agent.approval.approval_repository import ApprovalRepository
from atomic_agent.approval.pending_approvals import ApprovalNotPendingError, PendingApprovals
from atomic_agent.storage.sqlite_migrations import NewerSchemaError
from tests.approval.approval_backends import ApprovalBackend


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def frozen(args: str = '{"command":"rm -rf build"}') -> FrozenCall:
    return FrozenCall("os.shell", args, "/work", ("rm", "-rf", "build"), (("/bin/rm", "abc"),))


def make(store: ApprovalRepository, ttl_s: float = 60.0, **kw: object) -> ApprovalRecord:
    return store.create(kind=APPROVAL, session_id="s1", category="shell", level=1, summary="rm -rf build",
                        frozen=frozen(), ttl_s=ttl_s, call_key="s1/0/1/0", **kw)  # type: ignore[arg-type]


def test_record_is_committed_before_it_is_returned(approval_backend: ApprovalBackend) -> None:
    record = make(approval_backend.open())
    row = approval_backend.execute("select state, fingerprint from approval_records where id = ?",  # another process
                                   [record.id])
    assert [tuple(r) for r in row] == [(PENDING, frozen().fingerprint)]


def test_first_answer_wins_and_the_late_one_hears_who_and_when(approval_backend: ApprovalBackend) -> None:
    store = approval_backend.open()
    record = make(store)
    won = store.answer(record.id, "once", principal=OPERATOR, surface="cli")
    assert won.state == APPROVED and won.answered_by == OPERATOR and won.surface == "cli"
    other = approval_backend.open()
    with pytest.raises(AlreadyAnsweredError) as late:
        other.answer(record.id, "deny", principal=OPERATOR, surface="serve")
    assert "already answered 'once' by operator via cli at" in late.value.message
    assert store.get(record.id).state == APPROVED


def test_two_surfaces_in_the_same_millisecond_exactly_one_wins(approval_backend: ApprovalBackend) -> None:
    clock = Clock()  # SQLite: both answers carry the very same timestamp (PostgreSQL reads its own clock)
    record = make(approval_backend.open(clock))
    stores = [approval_backend.open(clock) for _ in range(8)]  # eight processes (hosts, on PostgreSQL)
    start = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def answer(store: ApprovalRepository, n: int) -> None:
        start.wait()
        try:
            store.answer(record.id, "once" if n % 2 else "deny", principal=OPERATOR,
                         surface=f"surface{n}")
            outcomes.append("won")
        except AlreadyAnsweredError as exc:
            assert "already answered" in exc.message and "by operator via surface" in exc.message
            outcomes.append("late")

    threads = [threading.Thread(target=answer, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["late"] * 7 + ["won"]


def test_consume_lets_an_approved_call_run_once(approval_backend: ApprovalBackend) -> None:
    store = approval_backend.open()
    record = make(store)
    assert not store.consume(record.id)  # pending: nothing to run
    store.answer(record.id, "once", principal=OPERATOR, surface="cli")
    assert store.consume(record.id)
    assert not approval_backend.open().consume(record.id)


def test_consume_races_across_processes_and_exactly_one_runs_the_call(approval_backend: ApprovalBackend) -> None:
    record = make(approval_backend.open())
    approval_backend.open().answer(record.id, "once", principal=OPERATOR, surface="cli")
    stores = [approval_backend.open() for _ in range(6)]
    start = threading.Barrier(len(stores))
    ran: list[bool] = []

    def consume(store: ApprovalRepository) -> None:
        start.wait()
        ran.append(store.consume(record.id))

    threads = [threading.Thread(target=consume, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ran) == [False] * 5 + [True]


def test_changed_call_unauthorised_principal_and_bad_decisions_are_refused(approval_backend: ApprovalBackend) -> None:
    store = approval_backend.open()
    record = make(store, answerers=("client:alice",))
    with pytest.raises(CallChangedError, match="changed since it was shown"):
        store.answer(record.id, "once", principal=OPERATOR, surface="cli",
                     fingerprint=frozen('{"command":"rm -rf /"}').fingerprint)
    with pytest.raises(NotAllowedToAnswerError, match="client:mallory may not answer"):
        store.answer(record.id, "once", principal="client:mallory", surface="serve")
    with pytest.raises(InvalidAnswerError, match="decision must be one of"):
        store.answer(record.id, "yes please", principal=OPERATOR, surface="cli")
    assert store.get(record.id).state == PENDING
    assert store.answer(record.id, "deny", principal="client:alice",
                        surface="serve").state == DENIED


def test_expiry_settles_the_record_and_late_answers_say_expired(tmp_path: Path) -> None:
    clock = Clock()
    store = ApprovalRecords(tmp_path / "a.sqlite", clock=clock)
    record = make(store)
    clock.now += 61
    with pytest.raises(ApprovalExpiredError, match="expired at"):
        store.answer(record.id, "once", principal=OPERATOR, surface="cli")
    assert store.get(record.id).state == EXPIRED


def test_a_record_past_its_expiry_takes_no_answer_on_either_backend(approval_backend: ApprovalBackend) -> None:
    store = approval_backend.open()
    record = make(store, ttl_s=1.0)  # pending when read back at once, even on a loaded machine
    assert [r.id for r in store.pending_now()] == [record.id]
    deadline = time.monotonic() + 30  # a hung-test net: the expiry itself comes after 1 s
    while store.pending_now():
        assert time.monotonic() < deadline, "the record never expired"
        time.sleep(0.05)
    with pytest.raises(ApprovalExpiredError, match="expired at"):
        approval_backend.open().answer(record.id, "once", principal=OPERATOR,
                                       surface="cli")
    assert store.get(record.id).state == EXPIRED


def test_a_newer_record_is_shown_but_never_answered(approval_backend: ApprovalBackend) -> None:
    store = approval_backend.open()
    record = make(store, ttl_s=0.2)
    approval_backend.execute("update approval_records set schema = 99 where id = ?", [record.id])
    with pytest.raises(NewerRecordError, match="record schema 99"):
        store.answer(record.id, "once", principal=OPERATOR, surface="cli")
    time.sleep(0.3)
    assert store.expire_due() == []  # its expiry too is that build's to decide
    assert store.get(record.id).state == PENDING


def test_a_newer_file_is_refused_untouched(tmp_path: Path) -> None:
    ApprovalRecords(tmp_path / "a.sqlite").close()
    conn = sqlite3.connect(tmp_path / "a.sqlite")
    conn.execute("pragma user_version = 7")
    conn.close()
    with pytest.raises(NewerSchemaError, match="newer atomic-agent"):
        ApprovalRecords(tmp_path / "a.sqlite")


def gate_with(backend: ApprovalBackend, ask: object, **kw: object) -> ApprovalGate:
    return ApprovalGate(STANDARD_CATEGORIES, 1, ask, audit=backend.audit(),  # type: ignore[arg-type]
                        records=backend.open(), **kw)  # type: ignore[arg-type]


async def test_gate_answer_from_another_process_wins_over_the_host(approval_backend: ApprovalBackend) -> None:
    shown: list[ApprovalRequest] = []
    never = asyncio.Event()

    async def slow_host(request: ApprovalRequest) -> str:
        shown.append(request)
        await never.wait()  # the terminal prompt nobody answers
        return "n"

    gate = gate_with(approval_backend, slow_host)
    call = CallIdentity(0, 1, 0, {"command": "make"})
    asking = asyncio.ensure_future(gate.request("s1", "os.shell", "shell", "make", call=call))
    while not shown:
        await asyncio.sleep(0.01)
    assert shown[0].approval_id is not None
    approval_backend.open().answer(shown[0].approval_id, "once", principal=OPERATOR, surface="cli")
    decision = await asyncio.wait_for(asking, 30)
    assert decision.approved
    record = approval_backend.open().get(shown[0].approval_id)
    assert record.used_at is not None and record.surface == "cli"
    audit = approval_backend.audit().read()
    assert [e["reason"] for e in audit] == ["asked", "user"]
    assert audit[1]["surface"] == "cli" and audit[1]["approvalId"] == record.id


async def test_gate_resumes_a_call_from_its_record_once(approval_backend: ApprovalBackend) -> None:
    asked: list[ApprovalRequest] = []

    async def host(request: ApprovalRequest) -> str:
        asked.append(request)
        return "y"

    call = CallIdentity(2, 1, 0, {"command": "make"})
    first = gate_with(approval_backend, None)  # the dead process: it committed the record and nothing else
    record = first.records.create(kind=APPROVAL, session_id="s1", category="shell", level=1, summary="make",  # type: ignore[union-attr]
                                  frozen=first._frozen("os.shell", None, call, None), ttl_s=60, call_key=call.key("s1"))
    first.records.answer(record.id, "once", principal=OPERATOR, surface="cli")  # type: ignore[union-attr]
    restarted = gate_with(approval_backend, host)
    assert (await restarted.request("s1", "os.shell", "shell", "make", call=call)).approved
    again = await restarted.request("s1", "os.shell", "shell", "make", call=call)
    assert not again.approved and again.reason == "already-ran"
    changed = CallIdentity(2, 1, 0, {"command": "make install"})
    assert (await restarted.request("s1", "os.shell", "shell", "make install", call=changed)).approved
    assert len(asked) == 1  # only the changed call was asked again


async def test_pending_approvals_commit_the_answer_and_tell_late_clients(approval_backend: ApprovalBackend) -> None:
    events: list[dict[str, object]] = []
    approvals = PendingApprovals(lambda e, _t: events.append(e), 5.0, lambda: None)
    gate = gate_with(approval_backend, approvals.ask)
    approvals.records = gate.records
    gate.allow_answerers("s1", ["client:a"])
    asking = asyncio.ensure_future(gate.request("s1", "os.shell", "shell", "make", call=CallIdentity(0, 1, 0)))
    while not approvals.pending():
        await asyncio.sleep(0.01)
    approval_id = approvals.pending()[0]["approvalId"]
    assert approvals.answer(approval_id, "once", principal="client:a") is True
    assert (await asyncio.wait_for(asking, 30)).approved
    with pytest.raises(ApprovalNotPendingError) as late:
        approvals.answer(approval_id, "deny")
    assert late.value.reason == "answered" and "by client:a via serve" in late.value.message


async def test_a_session_grant_given_through_a_record_is_kept_with_its_bounds(approval_backend: ApprovalBackend) -> None:
    from atomic_agent.approval.approval_answers import ApprovalAnswer

    gate = gate_with(approval_backend, lambda _r: _answer(ApprovalAnswer.session(ttl_s=60, uses=2)))
    assert (await gate.request("s1", "os.shell", "shell", "make", call=CallIdentity(0, 1, 0))).approved
    assert gate.grants_snapshot("s1")[0]["usesLeft"] == 2


async def _answer(value: object) -> object:
    return value


async def test_a_question_asked_again_after_a_restart_gets_its_one_answer(approval_backend: ApprovalBackend) -> None:
    question = {"prompt": "Which region?", "reason": "external_authority", "evidence": "the contract names two",
                "allowFreeText": True, "options": [{"id": "eu", "label": "EU"}]}
    call = CallIdentity(3, 1, 0, {"prompt": "Which region?"})
    first = gate_with(approval_backend, None)
    asking = asyncio.ensure_future(first.ask_question("s1", "ask_user", question, call=call))
    store = approval_backend.open()
    while not store.find((PENDING,)):
        await asyncio.sleep(0.01)
    asking.cancel()  # the process dies while the question waits
    await asyncio.gather(asking, return_exceptions=True)
    (record,) = store.find((PENDING,))
    with pytest.raises(InvalidAnswerError, match="not an option"):
        store.answer(record.id, "us", principal=OPERATOR, surface="cli")
    store.answer(record.id, "text", principal=OPERATOR, surface="cli", text="Frankfurt, per the DPA")
    again = await gate_with(approval_backend, None).ask_question("s1", "ask_user", question, call=call)
    assert (again.id, again.state, again.answer_text) == (record.id, "answered", "Frankfurt, per the DPA")
    assert len(store.find()) == 1  # asked once, answered once


_QUESTION = {"prompt": "Delete the backups?", "reason": "irreversible_commitment", "evidence": "only copies",
             "allowFreeText": False, "options": [{"id": "yes", "label": "Delete"}, {"id": "no", "label": "Keep"}]}


async def test_a_terminal_answer_to_a_question_is_committed_to_its_record_as_the_terminals(approval_backend: ApprovalBackend) -> None:
    import io

    from atomic_agent.approval.stdin_approver import stdin_approver

    out = io.StringIO()
    gate = gate_with(approval_backend, stdin_approver(stdin=io.StringIO("2\n"), out=out))
    record = await gate.ask_question("s1", "ask_user", _QUESTION, call=CallIdentity(0, 1, 0))
    assert (record.state, record.decision, record.surface, record.answered_by) == ("answered", "no", "terminal",
                                                                                 OPERATOR)
    assert "Delete the backups?" in out.getvalue()
    audit = approval_backend.audit().read()
    assert audit[-1]["kind"] == "question" and audit[-1]["surface"] == "terminal" and audit[-1]["answer"] == "no"


async def test_a_question_answered_elsewhere_first_keeps_that_answer_over_the_terminals(approval_backend: ApprovalBackend) -> None:
    import io

    from atomic_agent.approval.stdin_approver import TerminalPrompt

    typed = threading.Event()

    class SlowStdin(io.StringIO):
        def readline(self, *_a: object) -> str:  # type: ignore[override]
            typed.wait(5)  # the person types only after another surface answered
            return "yes\n"

    prompt = TerminalPrompt(None, SlowStdin(), io.StringIO())

    gate = gate_with(approval_backend, prompt.ask)
    asking = asyncio.ensure_future(gate.ask_question("s1", "ask_user", _QUESTION, call=CallIdentity(0, 1, 0)))
    store = approval_backend.open()
    while not store.find((PENDING,)):
        await asyncio.sleep(0.01)
    (pending,) = store.find((PENDING,))
    store.answer(pending.id, "no", principal=OPERATOR, surface="telegram")
    record = await asyncio.wait_for(asking, 30)
    typed.set()
    assert (record.decision, record.surface) == ("no", "telegram")
    with pytest.raises(AlreadyAnsweredError, match="already answered 'no' by operator via telegram at"):
        store.answer(pending.id, "yes", principal=OPERATOR, surface="terminal")
