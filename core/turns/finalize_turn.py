"""The one finalizer of a running turn, and what happens when its write fails.

A finalize that fails (a locked or full disk) would leave the turn `running` in the ledger,
and since a turn starts only as the oldest live turn of its lane, the whole session would be
stuck until a restart. So a failed finalize is tried once more (the failure may have been
transient; the write is one transaction, so a rolled-back first try left nothing), and if
that fails too the turn is moved to `interrupted` by a smaller, fresh transaction (no
transcript rows): the lane is free, and a restart answers what the turn owed. The caller
still gets the original error either way — the turn's answer was not made durable.
"""

from __future__ import annotations

import sys

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.store_errors import StaleWriterError
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.turns.turn_repository import TurnRepository

UNFINALIZED_REASON = "the turn's final write failed"


def finalize_or_interrupt(ledger: TurnRepository, guard: TurnGuard, session: SessionState, row: TranscriptEntry,
                          state: str, category: str | None, reply: str) -> None:
    """`ledger.finalize`, retried once; on a second failure the turn ends `interrupted`."""
    try:
        ledger.finalize(guard, session, [row], state, row.reason, category, reply)
        return
    except StaleWriterError:
        raise  # fenced out: someone else already decided this turn
    except Exception as first:
        try:
            ledger.finalize(guard, session, [row], state, row.reason, category, reply)
            return
        except StaleWriterError:
            turn = ledger.get(guard.turn_id)
            if turn is not None and turn.state == state and turn.generation == guard.generation:
                return  # the first try did commit; only its answer was lost
            raise first from None  # recovery fenced it meanwhile: the lane is not stuck
        except Exception:
            pass
        try:
            ledger.interrupt_unfinalized(guard, f"{UNFINALIZED_REASON}: {type(first).__name__}")
        except Exception as exc:  # still running in the ledger: a restart interrupts it
            print(f"atomic-agent: turn {guard.turn_id} could not be finalized or marked interrupted "
                  f"({type(exc).__name__}: {exc}); it stays running until the next restart", file=sys.stderr)
        raise first
