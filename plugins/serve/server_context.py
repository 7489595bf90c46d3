"""What every route reaches: the runtime, the parked-steer store, the event hub, approvals,
the turns in flight, and the server's settings."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import PendingApprovals, RuntimeHost, RuntimeView
from atomic_agent.plugins.serve.chat_turn import CURRENT_TURN, ChatTurn
from atomic_agent.plugins.serve.client_identity import principal_of_client
from atomic_agent.plugins.serve.event_hub import EventHub
from atomic_agent.plugins.serve.undelivered_steers import UndeliveredSteerStore

USER_SESSIONS = 1024  # `user` -> session map, oldest forgotten first
OWNED_SESSIONS = 8192  # session -> starting clients, oldest forgotten first


@attrs.frozen
class ServeSettings:
    model_name: str = "atomic-agent"
    working_dir: Path = attrs.field(factory=Path.cwd)
    approval_timeout_s: float = 480.0
    grants_allowed: bool = True  # only when bound to loopback
    max_body_bytes: int = 4 * 1024 * 1024
    api_key: str | None = None
    shutdown_grace_s: float = 10.0  # serve.shutdownGraceS: how long running turns get to reach a step boundary
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    workspace_roots: tuple[Path, ...] = ()  # besides working_dir, where clients may open sessions
    operator_token: str | None = None  # X-Atomic-Operator; None: no operator surface over HTTP


class ServeContext(RuntimeHost):
    def __init__(self, settings: ServeSettings) -> None:
        self.settings = settings
        self.hub = EventHub()
        self.parked = UndeliveredSteerStore(on_drop=lambda steer_id: self.runtime.dismiss_steer(steer_id))
        # a remote client approves one call at a time: grants only when bound to loopback
        self.approvals = PendingApprovals(self.emit_event, settings.approval_timeout_s, CURRENT_TURN.get,
                                          grants_allowed=settings.grants_allowed,
                                          grants_refused_why="this server is not bound to loopback")
        self.turns: dict[str, ChatTurn] = {}
        self.user_sessions: OrderedDict[str, str] = OrderedDict()
        # session -> the X-Atomic-Client ids that started turns in it: whose events those are
        self.session_clients: OrderedDict[str, set[str]] = OrderedDict()
        self.started_at = int(time.time())
        self.stopped = asyncio.Event()  # a graceful stop began: no new turns, event streams end
        self._drain: asyncio.Task[Any] | None = None
        self._webhook_deliveries: Any = None

    def bind(self, runtime: RuntimeView) -> None:
        super().bind(runtime)
        # answers commit to the gate's durable records: the first from any surface wins
        gate = runtime.gate
        self.approvals.records = gate.records
        self.approvals.surface = "serve"
        gate.surface = "serve"
        gate.record_ttl_s = self.settings.approval_timeout_s

    def webhook_deliveries(self) -> Any:
        """The durable record of accepted webhook deliveries (opened on the first webhook call):
        in the fleet's PostgreSQL when storage.url names one (a delivery retried to another
        host is claimed once), else this state dir's webhooks.sqlite."""
        if self._webhook_deliveries is None:
            from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

            shared = self.runtime.service(SHARED_DATABASE_SERVICE, None)
            if shared is not None:
                from atomic_agent.plugins.serve.pg_webhook_deliveries import PgWebhookDeliveries

                self._webhook_deliveries = PgWebhookDeliveries(shared)
            else:
                from atomic_agent.plugins.serve.webhook_deliveries import WebhookDeliveries

                self._webhook_deliveries = WebhookDeliveries(Path(self.runtime.state_dir))
        return self._webhook_deliveries

    def emit_event(self, event: dict[str, Any], turn_id: str | None = None) -> None:
        self.hub.publish(event)
        turn = self.turns.get(turn_id) if turn_id else None
        if turn is not None:
            turn.push(event)

    def start_turn(self, session_id: str, text: str, *, request_key: Any = None,
                   resend_steer_id: str | None = None, client: str | None = None,
                   tool_choice: str | None = None) -> ChatTurn:
        turn = ChatTurn(self, session_id, text, request_key=request_key, resend_steer_id=resend_steer_id,
                        client=client, tool_choice=tool_choice)
        self.turns[turn.turn_id] = turn
        if client is not None:
            if self._runtime is not None:  # the client whose turn asks may answer its records
                self.runtime.gate.allow_answerers(session_id, [principal_of_client(client)])
            self.session_clients.setdefault(session_id, set()).add(client)
            self.session_clients.move_to_end(session_id)
            while len(self.session_clients) > OWNED_SESSIONS:
                self.session_clients.popitem(last=False)
        return turn.start()

    @property
    def stopping(self) -> bool:
        return self.stopped.is_set()

    def remember_user_session(self, user: str, session_id: str) -> None:
        self.user_sessions[user] = session_id
        self.user_sessions.move_to_end(user)
        while len(self.user_sessions) > USER_SESSIONS:
            self.user_sessions.popitem(last=False)

    def begin_stop(self) -> None:
        """SIGTERM/SIGINT: stop admitting and start the drain (idempotent). Running turns get
        `shutdown_grace_s` to reach a step boundary and are parked there; queued ones stay
        queued; each waiting client gets its envelope (503 `turn_parked`) as its turn parks."""
        if self.stopped.is_set():
            return
        self.stopped.set()
        if self._runtime is not None:
            self._drain = asyncio.ensure_future(self._runtime.drain(self.settings.shutdown_grace_s))

    def hurry(self) -> None:
        """A second signal: end the grace period now (the steps in flight are abandoned, parked)."""
        self.begin_stop()
        if self._runtime is not None and self._runtime.stopping:
            self._runtime.park_now()

    async def shutdown(self) -> None:
        """Drain (if no signal began it), deny pending approvals, wait for every turn's task
        (each ends answered, parked or interrupted, its client told), close the runtime."""
        self.begin_stop()
        if self._drain is not None:
            await asyncio.gather(self._drain, return_exceptions=True)
        self.approvals.close()
        tasks = [t.task for t in list(self.turns.values()) if t.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._webhook_deliveries is not None:
            self._webhook_deliveries.close()
        await self.release()
