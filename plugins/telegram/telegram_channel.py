"""The Telegram channel: lifecycle, the polling loop, the owed replies and live control.

Always built when the plugin is loaded (the `telegram` service; the registered channel is
the same object), so live control works while it is disabled; only polling is gated on
`enabled`. A missing token, a revoked one (401) or a lost network is a `down` status with
a reason, never an exception into the runtime; the one exception is a second runtime on
the same state dir, which fails fast at start with `lock_held`.

The polling loop is the channel's one periodic loop (the carve-out): each update is
handled in its own task, so the loop never waits on a turn and /cancel works mid-turn. At
every cycle it also re-reads its settings when config.json or .env changed (so the CLI's
changes reach a running channel) and sends the replies still owed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .approval_bridge import ApprovalBridge
from .bot_api import BotApi, BotApiError
from .bot_token import read_token, scrub
from .channel_live_control import ChannelLiveControl
from .channel_metrics import ChannelMetrics, metrics_registry
from .channel_outbound import ChannelOutbound
from .channel_states import DISABLED, DISABLED_REASON, DOWN, MISSING_TOKEN, STARTING, STOPPED, UP
from .delivery_store import DeliveryStore
from .inbound_handler import COMMANDS, InboundHandler
from .instance_lock import InstanceLock, LockHeldError
from .outbound_sender import OutboundSender
from .session_pointer import read_pointer, write_pointer
from .telegram_config import HTML, TelegramConfig, telegram_config
from .update_offsets import UpdateOffsets

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
STOP_SEND_GRACE_S = 10.0  # how long a stop waits for Telegram to answer the sends on the wire


class TelegramChannel(ChannelLiveControl, ChannelOutbound):
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime
        self.state_dir: Path = Path(runtime.state_dir)
        self.settings: TelegramConfig = telegram_config(runtime)
        self.metrics = ChannelMetrics(metrics_registry(runtime))
        self._store: DeliveryStore | None = None
        self.sender: OutboundSender | None = None
        self._settled = asyncio.Event()  # an update in flight settled: the offset may move
        self.offsets = UpdateOffsets(self._settled.set)
        self.inbound = InboundHandler(self)
        self.lock = InstanceLock(self.state_dir)
        self.api: BotApi | None = None
        self.bridge = ApprovalBridge(lambda: self.api, lambda: self.owner_user_id, lambda: self.outbound, self.metrics,
                                     lambda: self.settings.approval_timeout_ms / 1000.0, lambda: self._store,
                                     lambda: self.runtime.service("approval_gate").records)
        self._approval_host = self.bridge.ask  # one object: the gate unroutes only its own route
        self.state = DISABLED
        self.reason = ""
        self.bot_id = 0
        self.bot_username = ""
        self._token: str | None = None
        self._poll_task: asyncio.Task[None] | None = None
        self._generation = 0  # each polling run's number: a loop whose run ended returns
        self._tasks: set[asyncio.Task[Any]] = set()
        self._routed: str | None = None
        self._stamps: tuple[float, float] = self._file_stamps()
        self.started_at: float | None = None
        self.owner_user_id: int | None = self.settings.owner_user_id

    # -- pieces built on first use ------------------------------------------------------------
    @property
    def store(self) -> DeliveryStore:
        if self._store is None:
            self._store = DeliveryStore(self.state_dir)
            self._store.settle_interrupted()  # what a dead process left mid-send is uncertain
        return self._store

    @property
    def outbound(self) -> OutboundSender:
        if self.sender is None:
            self.sender = OutboundSender(self.store, self.metrics, lambda: self.settings.parse_mode == HTML)
        return self.sender

    def scrub(self, text: str) -> str:
        return scrub(text, self._token)

    # -- Channel protocol ---------------------------------------------------------------------
    async def start(self) -> None:
        """Start polling when enabled; raise LockHeldError when another runtime already polls."""
        _ = self.store  # open the records and settle what a dead process left, enabled or not
        if not self.settings.enabled:
            self._set(DISABLED, DISABLED_REASON)
            return
        await self._start_polling(raise_lock=True)

    async def stop(self) -> None:
        await self._stop_polling(STOPPED, "the runtime is stopping")

    async def _stop_polling(self, state: str, reason: str) -> None:
        task, self._poll_task = self._poll_task, None
        self._generation += 1
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self.sender is not None:  # a message Telegram is answering now is recorded, not left uncertain
            await self.sender.settle(STOP_SEND_GRACE_S)
        await self._release(state, reason)

    async def close(self) -> None:
        """The service closes (after the turns ended): finish the last sends, close the records."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._store is not None:
            self._store.close()
            self._store = None

    def status(self) -> dict[str, Any]:
        store_counts = self.store.counts()
        return {"state": self.state, "reason": self.scrub(self.reason), "enabled": self.settings.enabled,
                "hasToken": read_token(self.state_dir) is not None, "ownerUserId": self.owner_user_id,
                "bot": self.bot_username, "sessionId": read_pointer(self.state_dir),
                "parseMode": self.settings.parse_mode, "pairingOpen": self.pairing_open(),
                "pendingApprovals": len(self.bridge.pending), "deliveries": store_counts,
                "metrics": self.metrics.snapshot()}

    # -- polling ------------------------------------------------------------------------------
    async def _start_polling(self, raise_lock: bool = False) -> None:
        if self._poll_task is not None:
            return
        token = read_token(self.state_dir)
        if token is None:
            self._set(DOWN, MISSING_TOKEN)
            return
        try:
            self.lock.acquire()
        except LockHeldError as exc:
            self._set(DOWN, str(exc))
            if raise_lock:
                raise
            return
        self._token = token
        self._set(STARTING, "")
        self.api = BotApi(self.settings.api_base, token)
        self.offsets = UpdateOffsets(self._settled.set)
        try:
            me = await self.api.get_me()
        except BotApiError as exc:
            if not exc.transient:
                await self._release(DOWN, self._why(exc))
                return
            self._set(DOWN, self._why(exc))  # the loop retries
        else:
            self._got_me(me)
            await self._set_commands()
            self._set(UP, "")
            self.metrics.inc("up")
        self._route_session()
        self.started_at = time.time()
        self._generation += 1
        self._poll_task = asyncio.ensure_future(self._poll_loop(self._generation))

    def _got_me(self, me: Any) -> None:
        if isinstance(me, dict):
            self.bot_id = int(me.get("id", 0) or 0)
            self.bot_username = str(me.get("username", ""))

    async def _release(self, state: str, reason: str) -> None:
        self.bridge.deny_all()
        if self._routed is not None:
            self.runtime.service("approval_gate").unroute_session(self._routed, self._approval_host)
            self._routed = None
        api, self.api = self.api, None
        if api is not None:
            await api.close()
        self.lock.release()
        self._set(state, reason)

    def _why(self, exc: BotApiError) -> str:
        if exc.unauthorized:
            return f"unauthorized: Telegram refused the token ({exc.description}); set a new one"
        if exc.conflict:
            return f"conflict: another client polls this bot ({exc.description})"
        return self.scrub(f"unreachable: {exc}")

    def _current(self, generation: int) -> bool:
        return generation == self._generation and self.api is not None

    async def _poll_loop(self, generation: int) -> None:
        failures = 0
        while True:
            await self._refresh_settings()
            if not self._current(generation):
                return
            self._send_owed()
            api = self.api
            if api is None:  # _current saw a client; nothing awaited since, so this never ends the loop
                return
            try:
                if not self.bot_id:
                    self._got_me(await api.get_me())
                    await self._set_commands()
                self._settled.clear()  # before asking: a settle while the call runs is not missed
                updates = await api.get_updates(self.offsets.next_offset, self.settings.poll_timeout_s)
            except BotApiError as exc:
                if not self._current(generation):
                    return
                if exc.unauthorized:  # a revoked token: down with the reason, polling ends
                    self.metrics.inc("down", reason="unauthorized")
                    self._end_run()
                    await self._release(DOWN, self._why(exc))
                    return
                self._set(DOWN, self._why(exc))
                self.metrics.inc("down", reason="conflict" if exc.conflict else "unreachable")
                await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                failures += 1
                continue
            if not self._current(generation):
                return
            failures = 0
            if self.state != UP:
                self._set(UP, "")
                self.metrics.inc("up")
            fresh = [u for u in updates if isinstance(u.get("update_id"), int) and self.offsets.admit(u["update_id"])]
            for update in fresh:
                self.spawn(self.inbound.handle(update))
            if updates and not fresh:  # only updates still in flight came back: wait for one to settle
                try:
                    await asyncio.wait_for(self._settled.wait(), 1.0)
                except asyncio.TimeoutError:
                    pass

    async def _set_commands(self) -> None:
        if self.api is None:
            return
        try:
            await self.api.set_my_commands(list(COMMANDS))
        except BotApiError as exc:
            print(f"atomic-agent: telegram setMyCommands failed: {self.scrub(str(exc))}", file=sys.stderr)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            print(f"atomic-agent: telegram task failed: {self.scrub(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)

    # -- the channel's session ----------------------------------------------------------------
    def session_id(self) -> str:
        from atomic_agent.api import SessionNotFoundError

        current = read_pointer(self.state_dir)
        if current is not None:
            try:
                self.runtime.sessions.load(current)
            except SessionNotFoundError:
                current = None
        if current is None:
            current = self.runtime.open_session(None).id
            write_pointer(self.state_dir, current)
        if self._routed != current:
            self._route_to(current)
        return current

    def rotate_session(self) -> str:
        new = self.runtime.open_session(None).id
        write_pointer(self.state_dir, new)
        self._route_to(new)
        return new

    def _route_session(self) -> None:
        self.session_id()

    def _route_to(self, session_id: str) -> None:
        gate = self.runtime.service("approval_gate")
        if self._routed is not None:
            gate.unroute_session(self._routed, self._approval_host)
        gate.route_session(session_id, self._approval_host, surface="telegram")
        self._routed = session_id

    # -- status -------------------------------------------------------------------------------
    def _set(self, state: str, reason: str) -> None:
        self.state, self.reason = state, self.scrub(reason)

    def status_text(self) -> str:
        session = read_pointer(self.state_dir) or "-"
        running = self.runtime.running_turn_id(session) if session != "-" else None
        counts = self.store.counts()
        owed = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        return "\n".join([f"Channel: {self.state}", f"Session: {session}",
                          f"Turn: {'running ' + running if running else 'idle'}",
                          f"Approvals waiting: {len(self.bridge.pending)}",
                          f"Deliveries: {owed or 'none'}"])
