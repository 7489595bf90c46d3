"""One seeded power-loss run: the product's SessionStore, TurnLedger and SteerQueue, unchanged,
on an apsw connection over PowerLossVFS; the power goes out at a random I/O call; then a
fresh sqlite3 connection reads what the platter kept and every acknowledgement is checked.

The acknowledgement record is this process's memory (a list written only after a call
returned), never the database under test. With `group_commit` the player does what the
turn lifecycle does: admissions and finalizes are committed inside `deferred_sync()` and
acknowledged only after the store's group sync (an fsync of the WAL, here through the
VFS), and a start is committed relaxed and acknowledged to nobody. `synchronous` other than None overrides the
product's pragma after the store is built — the deliberately non-durable mode that proves
this tier can fail.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED, USER, TranscriptEntry
from atomic_agent.storage import sqlite_file as sqlite_file_module
from atomic_agent.storage.group_commit import GroupSync, deferred_sync
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_states import COMPLETED, QUEUED, response_hash
from tests.chaos.apsw_connection import ApswConnection
from tests.chaos.durable_view import read_state
from tests.chaos.power_loss_vfs import PowerLossVFS

OWNER = "power-owner"
ADMIT, START, STEER, CONSUME, FINISH, CHECKPOINT = "admit", "start", "steer", "consume", "finish", "checkpoint"


@attrs.define
class Acks:
    """What callers were told, in order: (kind, key, detail)."""

    log: list[tuple[str, str, Any]] = attrs.field(factory=list)
    handing_back: set[str] = attrs.field(factory=set)  # steers whose hand-back was under way at the cut

    def add(self, kind: str, key: str, detail: Any = None) -> None:
        self.log.append((kind, key, detail))

    def of(self, kind: str) -> dict[str, Any]:
        return {key: detail for k, key, detail in self.log if k == kind}


@attrs.define
class PowerOutcome:
    seed: int
    violations: list[str]
    acks: int
    io_calls: int
    cut_at: int | None


@contextlib.contextmanager
def store_on(vfs: PowerLossVFS, state_dir: Path) -> Iterator[SessionStore]:
    """A SessionStore built by its own __init__ (its pragmas, its migrations), with the
    storage layer's `sqlite3.connect` answered by an apsw connection on `vfs` for the duration."""
    shim = types.SimpleNamespace(**{k: getattr(sqlite3, k) for k in dir(sqlite3) if not k.startswith("__")})
    shim.connect = lambda path, **_kw: ApswConnection(str(path), vfs.vfs_name)
    real = sqlite_file_module.sqlite3
    sqlite_file_module.sqlite3 = shim  # type: ignore[assignment]
    try:
        store = SessionStore(state_dir)
    finally:
        sqlite_file_module.sqlite3 = real  # type: ignore[assignment]
    assert isinstance(store.conn, ApswConnection), "SessionStore no longer opens through storage.sqlite_file"
    store.group = GroupSync(lambda: vfs.fsync(str(state_dir / "sessions.sqlite-wal")))  # the WAL's fsync, modelled
    yield store


class Player:
    """A single-owner workload: admissions, starts, steers, their consumption, finishes."""

    def __init__(self, store: SessionStore, session_id: str, rng: random.Random, acks: Acks,
                 group_commit: bool = False) -> None:
        self.store = store
        self.group_commit = group_commit
        self.session_id = session_id
        self.rng = rng
        self.acks = acks
        self.ledger = TurnLedger(store, OWNER)
        self.steers = SteerQueue(store, OWNER)
        self.running: Any = None  # (started turn, session state) while a turn runs
        self.pending: list[int] = []  # accepted steer ids not yet consumed
        self.n = 0

    def deferred(self) -> contextlib.AbstractContextManager[None]:
        return deferred_sync() if self.group_commit else contextlib.nullcontext()

    def synced(self) -> None:
        if self.group_commit:
            self.store.sync_now()

    def choose(self) -> str:
        if self.rng.random() < 0.05:
            return CHECKPOINT
        if self.running is None:
            queued = self.ledger.lane(self.session_id, (QUEUED,))
            return START if queued and self.rng.random() < 0.4 else ADMIT
        return self.rng.choice((ADMIT, STEER, STEER, CONSUME, FINISH))

    def step(self) -> None:
        op = self.choose()
        self.n += 1
        text = f"{op}-{self.n}"
        if op == ADMIT:
            with self.deferred():
                ticket = self.ledger.admit(self.session_id, text, "cli")
            self.synced()
            self.acks.add(ADMIT, ticket.turn_id, text)
        elif op == START:
            oldest = self.ledger.lane(self.session_id, (QUEUED,))[0]
            session = self.store.load(self.session_id)
            with self.deferred():  # the lifecycle tells nobody of a start: the next durable commit covers it
                started = self.ledger.start(oldest.turn_id, session)
            assert started is not None, "a single owner's oldest queued turn must start"
            if not self.group_commit:
                self.acks.add(START, oldest.turn_id, oldest.text)
            self.running = (started, session)
        elif op == STEER:
            started, _ = self.running
            steer_id = self.steers.enqueue(self.session_id, started.turn_id, text)
            self.pending.append(steer_id)
            self.acks.add(STEER, str(steer_id), text)
        elif op == CONSUME:
            started, session = self.running
            fenced = self.store.fenced(started.guard)
            texts = self.steers.consume(self.pending, lambda ts: fenced.append(
                session, [TranscriptEntry(USER, started.turn_index, text=t) for t in ts]))
            for steer_id in self.pending:
                self.acks.add(CONSUME, str(steer_id), texts)
            self.pending = []
        elif op == FINISH:
            started, session = self.running
            reply = f"reply to {started.turn_id}"
            # as the step executor writes it: not fsynced, the finalize's durable commit covers it
            self.store.fenced(started.guard).append(session, [TranscriptEntry(REPLY, started.turn_index, text=reply)],
                                                    durable=False)
            if self.pending:  # handed back, as the inbox does when a turn ends
                self.acks.handing_back = {str(i) for i in self.pending}
                self.steers.hand_back(self.pending, started.turn_id)
                self.acks.handing_back = set()
                for steer_id in self.pending:
                    self.acks.add("hand_back", str(steer_id))
                self.pending = []
            row = TranscriptEntry(TURN_FINISHED, started.turn_index, status="done", reason="reply")
            with self.deferred():
                self.ledger.finalize(started.guard, session, [row], COMPLETED, "reply", None, reply)
            self.synced()
            self.acks.add(FINISH, started.turn_id, response_hash(reply))
            self.running = None
        elif op == CHECKPOINT:  # what any connection's auto-checkpoint does; copies WAL pages home
            self.store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


def check(state_dir: Path, acks: Acks) -> list[str]:
    try:
        view = read_state(state_dir)
    except sqlite3.DatabaseError as exc:  # synchronous=OFF is allowed to corrupt; FULL never is
        return [f"the database did not survive the power cut: {exc}"]
    out = [] if view.integrity == "ok" else [f"integrity_check: {view.integrity}"]
    audited: dict[str, list[dict[str, Any]]] = {}
    for row in view.audit:
        audited.setdefault(row["turn_id"], []).append(row)
    for turn_id, text in acks.of(ADMIT).items():
        if turn_id not in view.turns:
            out.append(f"acknowledged admission of {text} (turn {turn_id}) was lost")
        elif not any(r["to_state"] == QUEUED and r["from_state"] is None for r in audited.get(turn_id, [])):
            out.append(f"turn {turn_id} survived without its admission audit row (a torn transaction)")
    for turn_id in acks.of(START):
        if turn_id in view.turns and view.turns[turn_id]["state"] == QUEUED:
            out.append(f"acknowledged start of turn {turn_id} was lost (it is queued again)")
    for turn_id, digest in acks.of(FINISH).items():
        turn = view.turns.get(turn_id)
        if turn is None or turn["state"] != COMPLETED or turn["response_hash"] != digest:
            out.append(f"acknowledged completion of turn {turn_id} was lost ({turn and turn['state']})")
    users = [r["text"] for rows in view.transcript.values() for r in rows if r["kind"] == USER]
    queued_steers = {str(s["steer_id"]) for s in view.steers}
    marked = {str(s["steer_id"]) for s in view.steers if s.get("handed_back")}
    consumed, handed_back = acks.of(CONSUME), acks.of("hand_back")
    for steer_id, text in acks.of(STEER).items():
        delivered = users.count(text)
        if steer_id in consumed and (delivered != 1 or steer_id in queued_steers):
            out.append(f"acknowledged consumption of steer {text} was lost (delivered {delivered}, "
                       f"queued {steer_id in queued_steers})")
        elif steer_id in handed_back and (delivered or steer_id not in marked):
            out.append(f"acknowledged hand-back of steer {text} was lost (it must stay queued, marked, "
                       "until its caller re-sends it)")
        elif steer_id in acks.handing_back and not delivered and steer_id in queued_steers:
            pass  # the power took the hand-back mid-commit: marked or not, it is still queued
        elif steer_id not in consumed and steer_id not in handed_back and delivered + (steer_id in queued_steers) != 1:
            out.append(f"acknowledged steer {text} is delivered {delivered} times and queued "
                       f"{steer_id in queued_steers} (exactly one of the two was promised)")
    for turn_id, turn in view.turns.items():
        rows = audited.get(turn_id, [])
        if not rows or rows[-1]["to_state"] != turn["state"]:
            out.append(f"turn {turn_id} is {turn['state']} but its audit says {rows[-1]['to_state'] if rows else None}")
    return out


def run_power_seed(seed: int, ops: int = 40, synchronous: str | None = None, root: Path | None = None,
                   group_commit: bool = False) -> PowerOutcome:
    rng = random.Random(seed)
    keep = 0.0 if seed % 2 == 0 else 0.5  # odd seeds: the disk wrote back some unsynced pages on its own
    acks = Acks()
    vfs = PowerLossVFS()
    with tempfile.TemporaryDirectory(prefix=f"power{seed}-") as tmp:
        state_dir = Path(root or tmp)
        state_dir.mkdir(parents=True, exist_ok=True)
        try:
            with store_on(vfs, state_dir) as store:
                session_id = store.create(state_dir).id  # setup: made durable before the power is at risk
                if synchronous is not None:
                    store.conn.execute(f"PRAGMA synchronous={synchronous}")
                player = Player(store, session_id, rng, acks, group_commit)
                vfs.arm(rng.randint(1, ops * 8), rng, keep)  # about 8 I/O calls per operation
                try:
                    for _ in range(ops):
                        player.step()
                except Exception:  # an I/O error from the cut, or whatever it caused on the way up
                    if not vfs.dead:
                        raise  # not the power: a real failure of the run
                if not vfs.dead:
                    vfs.power_cut()  # the cut came after the last operation
                with contextlib.suppress(Exception):  # closing a dead machine's connection writes nothing
                    store.close()
        finally:
            vfs.unregister()
        with contextlib.suppress(FileNotFoundError):
            (state_dir / "sessions.sqlite-shm").unlink()  # shared memory does not survive a power cut
        violations = check(state_dir, acks)
    return PowerOutcome(seed, violations, len(acks.log), vfs.io_calls, vfs.cut_at)

