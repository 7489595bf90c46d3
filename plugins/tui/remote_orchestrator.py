"""The chat tab's link to a running `serve` (`atomic-agent tui --attach`): the same surface as
the in-process ChatOrchestrator, over serve's HTTP API, as the operator.

- The live feed is `/api/events` (every session: the operator sees Telegram's, the
  scheduler's and other clients' turns); the events of the open session go to the chat.
  When the stream drops it is reopened (0.5 s doubling to 5 s) with one notice for the loss
  and one for the return; serve replays the approvals still pending on every connect.
- A message is a chat completion in the open session (a new session is created first with
  POST /api/sessions, so its events are recognised from the first one). The reply arrives
  through the event stream like any other session's; the completion's own answer only
  matters when it fails.
- While a turn runs on the open session (this TUI's or anyone's), Enter steers it (POST
  /api/sessions/{id}/steer) or queues the message per `tui.whileBusySubmit`; a refused steer
  is queued at the front, as in-process. Queued messages are sent when the turn finishes.
- serve has no route that stops a turn: Esc holds the queue and says so.
- A failed send (serve gone, a refusal) keeps the message at the head of the queue, paused;
  /queue run sends it again with the same Idempotency-Key, so a message whose answer was
  lost on the wire runs once. A turn that ran and failed is said as such, and not re-queued
  (the message is in the session, as in-process).
- Approvals and questions from the stream (and GET /api/approvals on each connect, for
  records another process asks) are handed to `RemoteApprovals`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import attrs

from atomic_agent.plugins.tui.chat_host import TranscriptLine
from atomic_agent.plugins.tui.feed_lines import preview
from atomic_agent.plugins.tui.message_queue import STEER_CHARS, ChatSink, Pending, checked_mode, put_in_front, sendable
from atomic_agent.plugins.tui.serve_attachment import ServeAttachment, refusal

RECONNECT_FIRST_S, RECONNECT_MAX_S = 0.5, 5.0
READ_TIMEOUT_S = 45.0  # serve sends a keep-alive every 15 s: three missed ones mean the link is dead
TURN_TIMEOUT_S = 3600.0  # a chat completion lasts as long as its turn (approvals included)
APPROVAL_EVENTS = ("approval_request", "approval_resolved")
APPROVALS_POLL_S = 2.0


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """The JSON payloads of a text/event-stream, one per event (comments and keep-alives skipped)."""
    data: list[str] = []
    async for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            try:
                payload = json.loads("\n".join(data))
            except ValueError:
                payload = None
            data = []
            if isinstance(payload, dict):
                yield payload


def _body(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


@attrs.define
class RemoteOrchestrator:
    attachment: ServeAttachment
    sink: ChatSink
    spawn: Callable[[Coroutine[Any, Any, None]], Any]
    approvals: Any = None  # RemoteApprovals: takes approval events (set by the app)
    session_id: str | None = None
    mode: str = "steer"
    pending: deque[Pending] = attrs.field(factory=deque)
    paused: bool = False
    sending: bool = False  # this TUI's chat completion is in flight
    running: set[str] = attrs.field(factory=set)  # sessions with a turn running, from the event stream
    connected: bool = False
    ever_connected: bool = False
    closed: bool = False
    _client: Any = None

    @property
    def busy(self) -> bool:
        return self.sending or (self.session_id is not None and self.session_id in self.running)

    @property
    def client(self) -> Any:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.attachment.url, headers=self.attachment.headers,
                                             timeout=httpx.Timeout(10.0, read=READ_TIMEOUT_S))
        return self._client

    async def close(self) -> None:
        self.closed = True
        if self._client is not None:
            await self._client.aclose()

    # -- submission (the same rules as in-process) --------------------------------------------
    def submit(self, text: str, how: str | None = None, tool_choice: str | None = None) -> bool:
        if not sendable(text, self.sink):
            return False
        if tool_choice is not None:
            self.sink.chat_notice("/tool is not available when attached to serve; send the message without it",
                                  "warning")
            return False
        if not self.busy:
            self.pending.append(Pending(text))
            self.paused = False
            self.sink.state_changed()
            self._start()
            return True
        if (how or self.mode) == "steer" and self.session_id is not None and len(text) <= STEER_CHARS:
            self.sink.user_message(text, "steer: sending…")
            self.spawn(self._steer(self.session_id, text))
        else:
            self.pending.append(Pending(text))
            self.sink.user_message(text, f"queued, #{len(self.pending)}")
            self.sink.state_changed()
        return True

    async def _steer(self, session_id: str, text: str) -> None:
        import httpx

        try:
            response = await self.client.post(f"/api/sessions/{session_id}/steer", json={"text": text})
        except httpx.HTTPError as exc:
            self._front(text, f"serve did not answer ({type(exc).__name__})")
            return
        if response.status_code == 200:
            self.sink.chat_notice("steer accepted: it lands at the next step")
            return
        body = _body(response)
        code = (body.get("error") or {}).get("code") if isinstance(body, dict) else None
        why = {"no_running_turn": "the turn is not taking steers at this moment",
               "full": "the running turn has 16 steers waiting"}.get(str(code), refusal(response.status_code, body))
        self._front(text, why)

    def _front(self, text: str, why: str) -> None:
        """A steer that did not land: first in the queue (behind steers already put back)."""
        put_in_front(self.pending, text)
        self.sink.chat_notice(f"steer not taken: {why}; it is sent right after this turn", "warning")
        self.sink.state_changed()
        self._start()

    # -- queue control -----------------------------------------------------------------------
    def set_mode(self, mode: str) -> None:
        self.mode = checked_mode(mode)
        self.sink.state_changed()

    def resume(self) -> None:
        self.paused = False
        self.sink.state_changed()
        self._start()

    def clear_queue(self) -> list[Pending]:
        dropped = list(self.pending)
        self.pending.clear()
        self.sink.state_changed()
        return dropped

    def stop(self) -> bool:
        if not self.busy:
            return False
        self.paused = bool(self.pending)
        self.sink.chat_notice("stopping a turn is not available when attached: serve has no stop route (stop it "
                              "where it was started, or stop serve)"
                              + (f"; the {len(self.pending)} queued message(s) are held — /queue run sends them"
                                 if self.pending else ""), "warning")
        self.sink.state_changed()
        return True

    def open_session(self, session_id: str | None) -> None:
        if self.sending:
            raise RuntimeError("a message is being sent; wait for its turn to finish before switching sessions")
        self.session_id = session_id
        self.sink.state_changed()

    def load_transcript(self, session_id: str, show: Callable[[list[TranscriptLine]], None]) -> None:
        async def load() -> None:
            import httpx

            try:
                response = await self.client.get(f"/api/sessions/{session_id}")
            except httpx.HTTPError as exc:
                self.sink.chat_notice(f"could not read session {session_id} from serve ({type(exc).__name__})",
                                      "error")
                return
            if response.status_code != 200:
                forgot = response.status_code == 404 and self.session_id == session_id and not self.sending
                if forgot:  # a wrong id: the next message must not go to it
                    self.session_id = None
                    self.sink.state_changed()
                self.sink.chat_notice(f"could not read session {session_id}: "
                                      f"{refusal(response.status_code, _body(response))}"
                                      + ("; the next message starts a new session" if forgot else ""), "error")
                return
            if response.json().get("busy"):
                self.running.add(session_id)
                self.sink.state_changed()
            show([(str(e["kind"]), str(e["text"])) for e in response.json().get("entries", [])
                  if e.get("kind") in ("user", "assistant_reply") and e.get("text")])

        self.spawn(load())

    async def sessions(self) -> list[dict[str, Any]]:
        """serve's sessions, most recent first (httpx errors when serve is gone; RuntimeError with serve's words when it refuses)."""
        response = await self.client.get("/api/sessions", params={"limit": "200"})
        if response.status_code != 200:
            raise RuntimeError(refusal(response.status_code, _body(response)))
        return list(response.json().get("data", []))

    # -- sending -----------------------------------------------------------------------------
    def _start(self) -> None:
        if self.busy or self.paused or not self.pending:
            return
        self.sending = True
        self.spawn(self._send(self.pending.popleft()))

    async def _send(self, item: Pending) -> None:
        import uuid

        import httpx

        if not item.request_key:  # kept across re-sends: serve answers a retried message from its first turn
            item = attrs.evolve(item, request_key=f"tui-{uuid.uuid4()}")
        self.sink.user_message(item.text, "")
        self.sink.state_changed()
        try:
            if self.session_id is None:
                created = await self.client.post("/api/sessions", json={})
                if created.status_code != 201:
                    raise RuntimeError(refusal(created.status_code, _body(created)))
                self.session_id = str(created.json()["id"])
                self.sink.state_changed()
            response = await self.client.post(
                "/v1/chat/completions", json={"model": "atomic-agent", "messages": [{"role": "user", "content": item.text}]},
                headers={"X-Atomic-Session": self.session_id, "Idempotency-Key": item.request_key},
                timeout=httpx.Timeout(10.0, read=TURN_TIMEOUT_S))
            if response.status_code != 200 and response.headers.get("x-atomic-ledger-turn"):
                # the turn ran and failed: the message is in the session, so it is not sent again
                self.sink.chat_notice(f"the turn failed: {preview(refusal(response.status_code, _body(response)), 300)}"
                                      f". Your message is kept in session {self.session_id}; send again to retry",
                                      "error")
            elif response.status_code != 200:
                raise RuntimeError(refusal(response.status_code, _body(response)))
        except (httpx.HTTPError, RuntimeError) as exc:
            words = f"serve did not answer ({type(exc).__name__})" if isinstance(exc, httpx.HTTPError) else str(exc)
            self.pending.appendleft(item)
            self.paused = True
            self.sink.chat_notice(f"the message was not sent: {words}. It is kept at the head of the queue; "
                                  "/queue run tries again", "error")
        finally:
            self.sending = False
            self.sink.state_changed()
        self._start()

    # -- the event stream --------------------------------------------------------------------
    async def watch(self) -> None:
        """Follow /api/events until closed, reconnecting when the stream drops."""
        import httpx

        delay = RECONNECT_FIRST_S
        lost_said = False
        while not self.closed:
            problem = ""
            try:
                async with self.client.stream("GET", "/api/events") as response:
                    if response.status_code != 200:
                        await response.aread()
                        problem = refusal(response.status_code, _body(response))
                    else:
                        self._connected(lost_said)
                        lost_said, delay = False, RECONNECT_FIRST_S
                        await self._sync_approvals()
                        async for event in sse_events(response.aiter_lines()):
                            self._dispatch(event)
                        problem = "the event stream ended"
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}"
            if self.closed:
                return
            self.connected = False
            if not lost_said:
                self.sink.chat_notice(f"lost the link to serve at {self.attachment.url} ({problem}); reconnecting — "
                                      "what you type is kept", "warning")
                lost_said = True
            self.running.clear()
            self.sink.state_changed()
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_S)

    def _connected(self, after_loss: bool) -> None:
        first = not self.ever_connected
        self.connected = self.ever_connected = True
        if first:
            self.sink.chat_notice(f"attached to serve at {self.attachment.url}: F2 lists its sessions (every "
                                  "channel); approvals from all of them are asked here")
        elif after_loss:
            held = f"; /queue run sends the {len(self.pending)} held message(s)" if self.pending and self.paused else ""
            self.sink.chat_notice(f"reconnected to serve at {self.attachment.url}{held}")
        self.sink.state_changed()

    async def _sync_approvals(self) -> None:
        """Records another process asks (a CLI turn, a parked turn) are not on the stream: the
        list is read on each connect and every APPROVALS_POLL_S while connected (`poll_approvals`)."""
        import httpx

        if self.approvals is None:
            return
        asked_at = time.monotonic()
        try:
            response = await self.client.get("/api/approvals")
        except httpx.HTTPError:
            return
        if response.status_code == 200:
            self.approvals.sync(list(response.json().get("data", [])), asked_at)

    def poll_approvals(self) -> None:
        if self.connected and not self.closed:
            self.spawn(self._sync_approvals())

    def _dispatch(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "error":  # serve stopping, or this client fell behind: the stream ends next
            self.sink.chat_notice(f"serve: {preview(str(event.get('message', '')), 200)}", "warning")
            return
        if kind in APPROVAL_EVENTS:
            if self.approvals is not None:
                self.approvals.take(event)
            return
        session = event.get("sessionId")
        if not isinstance(session, str):
            return
        if kind == "turn_started":
            self.running.add(session)
        elif kind == "turn_finished":
            self.running.discard(session)
        if session == self.session_id:
            self.sink.turn_event(event)
            if kind == "turn_finished":
                self.sink.state_changed()
                self._start()
            elif kind == "turn_started":
                self.sink.state_changed()
