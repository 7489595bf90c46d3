"""The chat tab's one link to the runtime: turns, steers, the queue of waiting messages, stop.

While a turn runs, a submitted message is either steered into it or queued for a turn of
its own (the `tui.whileBusySubmit` mode, or /steer and /queue for one message). A steer is
offered to the runtime first; whatever it refuses is queued at the front, ahead of
messages typed later, so the operator's order survives. A steer the turn accepted but ended
before folding in comes back on the turn's result and is sent next as its own turn
(re-sending its durable copy, so it is never answered twice) — every accepted steer is
applied or handed back where the person can see it.

Esc stops the running turn and pauses the queue: what was waiting stays listed until the
person sends it (/queue run, or by submitting again) or drops it (/queue clear).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import SteerOutcome
from atomic_agent.plugins.tui.feed_lines import preview
from atomic_agent.plugins.tui.message_queue import STEER_CHARS, ChatSink, Pending, checked_mode, put_in_front, sendable


@attrs.define
class ChatOrchestrator:
    runtime: Any
    sink: ChatSink
    spawn: Callable[[Coroutine[Any, Any, None]], Any]
    session_id: str | None = None
    working_dir: Path = attrs.field(factory=Path.cwd)
    mode: str = "steer"
    pending: deque[Pending] = attrs.field(factory=deque)
    busy: bool = False
    paused: bool = False
    _cancelled: asyncio.Event | None = None
    last_result: Any = None

    # -- submission --------------------------------------------------------------------------
    def submit(self, text: str, how: str | None = None, tool_choice: str | None = None) -> bool:
        """Take a message from the editor; `how` is "steer" or "queue" for one message
        (/steer, /queue), else the mode. False when the text is refused (it stays in the editor)."""
        if not sendable(text, self.sink):
            return False
        if tool_choice is not None and self.runtime.registry.get(tool_choice) is None:
            self.sink.chat_notice(f"no tool named {tool_choice!r}; the Tools tab lists them", "error")
            return False
        if not self.busy:
            self.pending.append(Pending(text, tool_choice=tool_choice))
            self.paused = False
            self.sink.state_changed()
            self._start()
            return True
        if (how or self.mode) == "steer" and tool_choice is None:
            self._steer(text)
        else:
            self.pending.append(Pending(text, tool_choice=tool_choice))
            self.sink.user_message(text, f"queued, #{len(self.pending)}")
            self.sink.state_changed()
        return True

    def _steer(self, text: str) -> None:
        outcome = None
        if self.session_id is not None and len(text) <= STEER_CHARS:
            try:
                outcome = self.runtime.steer(self.session_id, text)
            except Exception as exc:  # a failed durable write: nothing was accepted
                self.sink.chat_notice(f"the steer could not be stored ({exc}); it is queued instead", "warning")
        if outcome is SteerOutcome.ACCEPTED:
            self.sink.user_message(text, "steer: lands at the next step")
            return
        if outcome is SteerOutcome.DUPLICATE:
            self.sink.chat_notice("that steer was already delivered", "warning")
            return
        # the window is shut, not open yet, full, or the text is too long for a steer: it
        # goes first in the queue (behind steers already put back) as a turn of its own
        if outcome is SteerOutcome.FULL:
            why = "the running turn has 16 steers waiting"
        elif outcome is SteerOutcome.NO_RUNNING_TURN:
            why = "the turn is not taking steers at this moment"
        else:
            why = "it is too long for a steer" if len(text) > STEER_CHARS else "the turn has not started yet"
        put_in_front(self.pending, text)
        self.sink.user_message(text, f"steer: {why}; sent right after this turn")
        self.sink.state_changed()

    # -- queue control -----------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        self.mode = checked_mode(mode)
        self.sink.state_changed()

    def resume(self) -> None:
        self.paused = False
        self.sink.state_changed()
        if not self.busy:
            self._start()

    def clear_queue(self) -> list[Pending]:
        dropped = list(self.pending)
        self.pending.clear()
        for item in dropped:
            if item.steer_id:  # the person saw it and dropped it: it must not come back as a turn
                self.runtime.dismiss_steer(item.steer_id)
        self.sink.state_changed()
        return dropped

    def stop(self) -> bool:
        """Esc: stop the running turn on this lane and hold the queue."""
        if not self.busy:
            return False
        stopped = self.session_id is not None and self.runtime.stop(self.session_id)
        if not stopped and self._cancelled is not None:  # still waiting for its lane: withdraw it
            self._cancelled.set()
        if self.pending:
            self.paused = True
            self.sink.chat_notice(f"stopped; {len(self.pending)} queued message(s) kept — /queue run sends them, "
                             "/queue clear drops them", "warning")
        self.sink.state_changed()
        return True

    def open_session(self, session_id: str | None) -> None:
        if self.busy:
            raise RuntimeError("a turn is running; stop it (Esc) before switching sessions")
        if session_id is not None:
            self.runtime.open_session(session_id)  # SessionNotFoundError for a wrong id
        self.session_id = session_id
        self.sink.state_changed()

    def load_transcript(self, session_id: str, show: Callable[[list[tuple[str, str]]], None]) -> None:
        try:
            entries = self.runtime.sessions.entries(session_id)
        except Exception as exc:
            self.sink.chat_notice(f"could not read session {session_id}: {exc}", "error")
            return
        show([(e.kind, e.text) for e in entries if e.kind in ("user", "assistant_reply") and e.text])

    # -- running -----------------------------------------------------------------------------
    def _start(self) -> None:
        if self.busy or self.paused or not self.pending:
            return
        self.busy = True
        self.spawn(self._drain())

    async def _drain(self) -> None:
        try:
            while self.pending and not self.paused:
                item = self.pending.popleft()
                self.sink.user_message(item.text, "re-sent steer" if item.steer_id else "")
                self.sink.state_changed()
                if not await self._run(item):
                    break
        finally:
            self.busy = False
            self._cancelled = None
            self.sink.state_changed()

    async def _run(self, item: Pending) -> bool:
        """One turn; False when it could not run (the message goes back to the queue's head)."""
        self._cancelled = asyncio.Event()
        try:
            result = await self.runtime.run_turn(item.text, session_id=self.session_id, on_event=self._on_event,
                                                 working_dir=self.working_dir, cancelled=self._cancelled,
                                                 origin="tui", resend_steer_id=item.steer_id or None,
                                                 tool_choice=item.tool_choice)
        except Exception as exc:  # the store, the state dir, a stopping runtime: say so, keep the text
            self.pending.appendleft(item)
            self.paused = True
            self.sink.chat_notice(f"the message was not sent: {type(exc).__name__}: {exc}. It is kept at the head of the "
                             "queue; /queue run tries again", "error")
            return False
        self.last_result = result
        self.session_id = result.session_id
        handed = result.handed_back()
        for text, steer_id in reversed(handed):  # at the front, in the order they were typed
            self.pending.appendleft(Pending(text, steer_id, front=True))
        if handed:
            self.sink.chat_notice(f"{len(handed)} steer(s) arrived after the turn's last step; each is sent next as its "
                             "own message", "warning")
        if result.status == "failed":
            self.sink.chat_notice(f"the turn failed [{result.category}]: {preview(result.error or '', 300)}. Your message "
                             f"is kept in session {result.session_id}; send again to retry", "error")
        elif result.status == "interrupted":
            self.sink.chat_notice("the turn was parked before it finished; your message is kept in the session", "warning")
        return True

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "turn_started" and event.get("sessionId"):
            self.session_id = str(event["sessionId"])  # a new session: steers can name it from now on
        self.sink.turn_event(event)
