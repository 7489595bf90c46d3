"""The promises of seed 003, checked after every run against independent records.

The records: the acknowledgement log (what callers were told), the side-effect log (what
the world saw), the append-only `turn_audit` table and the transcript as a fresh process
reads it. No check leans on a constraint the code relies on: duplicates are counted, not
assumed impossible. `check_world` returns every violation (empty: all promises kept).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from atomic_agent.turns.turn_states import response_hash
from tests.chaos.chaos_life import ChaosWorld
from tests.chaos.durable_view import DurableView, read_state

FINAL = {"completed", "failed", "stopped", "cancelled", "interrupted", "merged"}
_KEY = ("turn_index", "step", "batch_index")


def check_effects(world: ChaosWorld) -> list[str]:
    """No non-durable side effect ran twice (the world's own log, not the transcript)."""
    counts = Counter(e["id"] for e in world.effects.read())
    return [f"side effect {i} ran {n} times" for i, n in sorted(counts.items()) if n > 1]


def _sends_begun_after_an_acknowledgement_follow_it(acks: list[dict[str, Any]], sid: str, position: dict[str, int],
                                                    users: list[str]) -> list[str]:
    """FIFO for owners in separate processes: each owner's group commit fsyncs on its own, so
    two overlapping sends from two processes may be acknowledged in either order; the promise
    a caller can observe is that a send begun after another's acknowledgement runs after it."""
    out: list[str] = []
    acked_at: dict[str, int] = {}
    begun_at: dict[str, int] = {}
    for i, a in enumerate(acks):
        if a.get("session") != sid or a.get("text") not in position:
            continue
        if a["kind"] == "sending" and a["text"] not in acked_at:
            begun_at[a["text"]] = i  # the last send before its acknowledgement is the one admitted
        if a["kind"] == "admitted" and a["text"] not in acked_at:
            acked_at[a["text"]] = i
    for x, x_acked in acked_at.items():
        for y, y_begun in begun_at.items():
            if y in acked_at and x_acked < y_begun and position[y] < position[x]:
                out.append(f"{sid}: {y} was sent after {x} was acknowledged but runs before it; "
                           f"conversation {users}")
    return out


def _check_messages(view: DurableView, acks: list[dict[str, Any]], sessions: list[str],
                    fifo: bool | str) -> list[str]:
    out: list[str] = []
    acked: dict[str, set[str]] = defaultdict(set)
    maybe_absent: set[str] = set()  # the caller withdrew it: it must never be answered
    cancel_asked: set[str] = set()  # the caller asked to cancel it: once or not at all
    for a in acks:
        if a["kind"] in ("admitted", "steered"):
            acked[a["session"]].add(a["text"])
        if a["kind"] == "withdrawn":
            maybe_absent.add(a["text"])
        if a["kind"] == "cancel_asked":
            cancel_asked.add(a["text"])
    admitted_as = {a["text"]: a.get("turn_id") for a in acks if a["kind"] == "admitted"}
    withdrawn_turns = {r["turn_id"] for r in view.audit if r["from_state"] == "queued" and r["to_state"] == "cancelled"}
    for sid in sessions:
        users = view.virtual_users(sid)
        counts = Counter(users)
        for text, n in sorted(counts.items()):
            if n > 1:
                out.append(f"{sid}: message {text} is in the conversation {n} times")
        for text in sorted(acked[sid]):
            if text in maybe_absent:
                if counts[text]:
                    out.append(f"{sid}: withdrawn message {text} reached the conversation")
            elif text in cancel_asked and counts[text] == 0 and admitted_as.get(text) in withdrawn_turns:
                pass  # withdrawn before it started, and the process died before saying so
            elif counts[text] != 1:
                out.append(f"{sid}: acknowledged message {text} is in the conversation {counts[text]} times")
        position = {t: i for i, t in enumerate(users)}
        sends = [a["text"] for a in acks if a["kind"] == "admitted" and a["session"] == sid and a["text"] in position]
        if fifo == "after_acknowledgement":
            out += _sends_begun_after_an_acknowledgement_follow_it(acks, sid, position, users)
        elif fifo and [position[t] for t in sends] != sorted(position[t] for t in sends):
            out.append(f"{sid}: sends are out of admission order: admitted {sends}, conversation {users}")
        by_target: dict[str, list[str]] = defaultdict(list)
        for a in acks:
            if a["kind"] == "steered" and a["session"] == sid and a["text"] in position:
                by_target[str(a.get("target"))].append(a["text"])
        for target, texts in by_target.items():
            if [position[t] for t in texts] != sorted(position[t] for t in texts):
                out.append(f"{sid}: steers to turn {target} are out of order: {texts} vs {users}")
    return out


def _check_calls(view: DurableView, sessions: list[str]) -> list[str]:
    out: list[str] = []
    for sid in sessions:
        rows = view.transcript.get(sid, [])
        calls = Counter(tuple(r[k] for k in _KEY) for r in rows if r["kind"] == "assistant_tool_call")
        results = Counter(tuple(r[k] for k in _KEY) for r in rows if r["kind"] == "tool_result")
        for key in sorted(set(calls) | set(results), key=str):
            if calls[key] != 1 or results[key] != 1:
                out.append(f"{sid}: call {key} has {calls[key]} call row(s) and {results[key]} result row(s)")
    return out


def _check_finished(view: DurableView, acks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    audited = defaultdict(list)
    for row in view.audit:
        audited[row["turn_id"]].append(row)
    for a in acks:
        if a["kind"] == "admitted" and a.get("turn_id") not in view.turns:
            out.append(f"admission of {a['text']} was acknowledged (turn {a.get('turn_id')}) but is not durable")
        if a["kind"] != "finished" or not a.get("turn_id"):
            continue
        turn = view.turns.get(a["turn_id"])
        if turn is None:
            out.append(f"turn {a['turn_id']} was reported {a['state']} but is not in the ledger")
            continue
        if a["state"] and a["state"] != turn["state"]:
            out.append(f"turn {a['turn_id']} was reported {a['state']} but is durably {turn['state']}")
        finals = [r for r in audited[a["turn_id"]] if r["to_state"] == a["state"]]
        if a["state"] in FINAL and a["state"] != "merged" and not finals:
            out.append(f"turn {a['turn_id']} was reported {a['state']}; the audit never recorded it")
        if a["state"] == "completed":
            if turn["response_hash"] != response_hash(a["reply"]):
                out.append(f"turn {a['turn_id']}: the reported reply does not match the frozen response hash")
            if a["reply"] not in view.replies(turn["session_id"]):
                out.append(f"turn {a['turn_id']} was reported completed but its reply {a['reply']!r} is not durable")
    return out


def _check_audit(view: DurableView) -> list[str]:
    out: list[str] = []
    history = defaultdict(list)
    for row in view.audit:
        history[row["turn_id"]].append(row)
    for turn_id, rows in history.items():
        runs = [r for r in rows if r["to_state"] == "running"]
        if len(runs) > 1:
            out.append(f"turn {turn_id} started {len(runs)} times (a replay)")
        seen_final = False
        for r in rows:
            if seen_final and r["to_state"] != r["from_state"]:
                out.append(f"turn {turn_id} moved {r['from_state']} -> {r['to_state']} after it was final")
            seen_final = seen_final or r["to_state"] in FINAL
        turn = view.turns.get(turn_id)
        if turn is not None and rows[-1]["to_state"] != turn["state"]:
            out.append(f"turn {turn_id} is {turn['state']} but its audit ends at {rows[-1]['to_state']}")
    for turn_id in view.turns:
        if turn_id not in history:
            out.append(f"turn {turn_id} has no audit row")
    return out


def _check_settled(view: DurableView) -> list[str]:
    out = [f"turn {t['turn_id']} ({t['text']}) is still {t['state']}" for t in view.turns.values()
           if t["state"] in ("queued", "running")]
    out += [f"steer {s['text']} is still queued" for s in view.steers]
    return out


def check_world(world: ChaosWorld, sessions: list[str], *, settled: bool = True,
                fifo: bool | str = True) -> list[str]:
    view = read_state(world.state_dir, world.database)
    acks = world.acks.read()
    out = [] if view.integrity == "ok" else [f"integrity_check: {view.integrity}"]
    out += check_effects(world)
    out += _check_messages(view, acks, sessions, fifo)
    out += _check_calls(view, sessions)
    out += _check_finished(view, acks)
    out += _check_audit(view)
    if settled:
        out += _check_settled(view)
    return out


def describe(world: ChaosWorld, sessions: list[str]) -> str:
    """A dump for a failure message: each session's conversation rows."""
    view = read_state(world.state_dir, world.database)
    lines = []
    for sid in sessions:
        lines.append(f"-- {sid}")
        for r in view.transcript.get(sid, []):
            lines.append(f"  {r['seq']:>3} {r['kind']:<20} {json.dumps(r['text'])[:80]} {r['tool'] or ''} "
                         f"{r['status'] or ''} {(r['turn_index'], r['step'], r['batch_index'])}")
    return "\n".join(lines)
