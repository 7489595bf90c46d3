"""The channel's link to Telegram: the bot client, the instance lock, the polling loop and
the state it reports (up, down with a reason, disabled, stopped).

The polling loop is the channel's one periodic loop (the carve-out): each update is handed
to `on_update` as its own task, so the loop never waits on a turn and /cancel works
mid-turn. Every cycle first runs `on_cycle` (the channel re-reads settings another process
changed, which may end this run) and `send_owed` (the replies still owed). A missing token,
a revoked one (401) or a lost network is `down` with a reason; only a second runtime on the
same state dir raises (LockHeldError, at start).

On a fleet's database the lock is the fleet-wide poller lease (fleet_poller_lease): a host
that does not get it is `standby`, and a watch task tries the lease every `retry_s` while
standing by, and checks it still holds it while polling (a lost lease stops the polling at
once). The next getUpdates offset is kept in the delivery records, so a new poller starts
where the last one confirmed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from .approval_bridge import ApprovalBridge
from .bot_api import BotApi, BotApiError
from .bot_token import bot_id_of, read_token, scrub
from .channel_metrics import ChannelMetrics
from .channel_settings import ChannelSettings
from .channel_states import DISABLED, DOWN, LEASE_LOST, MISSING_TOKEN, STANDBY, STARTING, UP
from .delivery_store import DeliveryStore
from .fleet_poller_lease import FleetPollerLease
from .inbound_handler import COMMANDS
from .instance_lock import InstanceLock, LockHeldError
from .session_route import SessionRoute
from .update_offsets import UpdateOffsets

BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
STOP_SEND_GRACE_S = 10.0  # how long a stop waits for Telegram to answer the sends on the wire


class PollingLink:
    def __init__(self, state_dir: Path, settings: ChannelSettings, metrics: ChannelMetrics, bridge: ApprovalBridge,
                 route: SessionRoute, *, on_update: Callable[[dict[str, Any]], Coroutine[Any, Any, Any]],
                 spawn: Callable[[Coroutine[Any, Any, Any]], Any], on_cycle: Callable[[], Awaitable[None]],
                 send_owed: Callable[[], None], settle_sends: Callable[[float], Awaitable[None]],
                 store_of: Callable[[], DeliveryStore], lock: InstanceLock | FleetPollerLease | None = None) -> None:
        self._state_dir = state_dir
        self._settings = settings
        self._metrics = metrics
        self._bridge = bridge
        self._route = route
        self._on_update = on_update
        self._spawn = spawn
        self._on_cycle = on_cycle
        self._send_owed = send_owed
        self._settle_sends = settle_sends
        self._settled = asyncio.Event()  # an update in flight settled: the offset may move
        self.offsets = UpdateOffsets(self._settled.set)
        self._store_of = store_of
        self.lock = lock if lock is not None else InstanceLock(state_dir)
        self._watch_task: asyncio.Task[None] | None = None  # the fleet lease's standby/holder check
        self._saved_offset: int | None = None
        self.bot_key = 0  # the bot id the token names: the key of its saved offset and handled updates
        self._awaiting_lease = False  # standing by, or the database was unreachable: the watch retries
        self.api: BotApi | None = None
        self.state = DISABLED
        self.reason = ""
        self.bot_id = 0
        self.bot_username = ""
        self.token: str | None = None
        self.started_at: float | None = None
        self._poll_task: asyncio.Task[None] | None = None
        self._generation = 0  # each polling run's number: a loop whose run ended returns

    @property
    def polling(self) -> bool:
        return self._poll_task is not None

    def scrub(self, text: str) -> str:
        return scrub(text, self.token)

    def set(self, state: str, reason: str) -> None:
        self.state, self.reason = state, self.scrub(reason)

    # -- start and stop -----------------------------------------------------------------------
    async def start(self, raise_lock: bool = False) -> None:
        if self._poll_task is not None:
            return
        token = read_token(self._state_dir)
        if token is None:
            self.set(DOWN, MISSING_TOKEN)
            return
        if self.lock.standby:
            self._watch()
            self._awaiting_lease = True
            acquiring = asyncio.ensure_future(asyncio.to_thread(self.lock.acquire))
            try:
                await asyncio.shield(acquiring)
            except asyncio.CancelledError:
                # cancelled (a stop cancels the watch that retries this): the thread cannot be
                # stopped, and a lease it took after the stop's release would be held by a host
                # that does not poll, keeping every standby of the fleet out
                await asyncio.gather(acquiring, return_exceptions=True)
                self.lock.release()
                raise
            except LockHeldError as exc:
                self.set(STANDBY, str(exc))
                return
            except Exception as exc:  # the fleet's database cannot be used: the watch tries again
                self.set(DOWN, f"the fleet's database cannot be used for the poller lease: {exc}")
                return
            self._awaiting_lease = False
        else:
            try:
                self.lock.acquire()
            except LockHeldError as exc:
                self.set(DOWN, str(exc))
                if raise_lock:
                    raise
                return
        self.token = token
        self.set(STARTING, "")
        self.api = BotApi(self._settings.current.api_base, token)
        self.bot_key = bot_id_of(token)
        self._saved_offset = self._store_of().saved_offset(self.bot_key) if self.bot_key else None
        self.offsets = UpdateOffsets(self._settled.set, self._saved_offset)
        try:
            me = await self.api.get_me()
        except BotApiError as exc:
            if not exc.transient:
                await self.release(DOWN, self._why(exc))
                return
            self.set(DOWN, self._why(exc))  # the loop retries
        else:
            self._got_me(me)
            await self._set_commands()
            self.set(UP, "")
            self._metrics.inc("up")
        self._route.session_id()
        self.started_at = time.time()
        self._generation += 1
        self._poll_task = asyncio.ensure_future(self._poll_loop(self._generation))

    async def stop(self, state: str, reason: str) -> None:
        watch, self._watch_task = self._watch_task, None
        if watch is not None:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        await self._end_polling(state, reason)

    async def _end_polling(self, state: str, reason: str) -> None:
        task, self._poll_task = self._poll_task, None
        self._generation += 1
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        # a message Telegram is answering now is recorded, not left uncertain
        await self._settle_sends(STOP_SEND_GRACE_S)
        await self.release(state, reason)

    def end_run(self) -> None:
        """Called from inside the polling loop: its run is over (it is not cancelled)."""
        self._poll_task = None
        self._generation += 1

    async def release(self, state: str, reason: str) -> None:
        self._bridge.deny_all()
        self._route.unroute()
        api, self.api = self.api, None
        if api is not None:
            await api.close()
        self.lock.release()
        self.set(state, reason)

    # -- the fleet lease ----------------------------------------------------------------------
    def _watch(self) -> None:
        if self._watch_task is None:
            self._watch_task = asyncio.ensure_future(self._watch_loop())

    async def _watch_loop(self) -> None:
        """Standing by: try the lease every interval. Polling: check it is still ours; a lost
        lease ends the polling at once (another host may poll now)."""
        assert isinstance(self.lock, FleetPollerLease)
        while True:
            await asyncio.sleep(self.lock.retry_s)
            if self._poll_task is not None:
                try:
                    ours = await asyncio.to_thread(self.lock.still_held)
                except Exception:  # the database is unreachable: exclusivity cannot be known
                    ours = False
                if not ours:
                    self.lock.release()
                    self._awaiting_lease = True
                    await self._end_polling(STANDBY, LEASE_LOST)
            elif self._awaiting_lease:
                await self.start()

    # -- the loop -----------------------------------------------------------------------------
    def _got_me(self, me: Any) -> None:
        if isinstance(me, dict):
            self.bot_id = int(me.get("id", 0) or 0)
            self.bot_username = str(me.get("username", ""))

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
            await self._on_cycle()
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
                offset = self.offsets.next_offset
                if offset is not None and offset != self._saved_offset and self.bot_key:
                    self._store_of().save_offset(self.bot_key, offset)  # where the next poller starts
                    self._saved_offset = offset
                updates = await api.get_updates(offset, self._settings.current.poll_timeout_s)
            except BotApiError as exc:
                if not self._current(generation):
                    return
                if exc.unauthorized:  # a revoked token: down with the reason, polling ends
                    self._metrics.inc("down", reason="unauthorized")
                    self.end_run()
                    await self.release(DOWN, self._why(exc))
                    return
                self.set(DOWN, self._why(exc))
                self._metrics.inc("down", reason="conflict" if exc.conflict else "unreachable")
                await asyncio.sleep(BACKOFF_S[min(failures, len(BACKOFF_S) - 1)])
                failures += 1
                continue
            if not self._current(generation):
                return
            failures = 0
            if self.state != UP:
                self.set(UP, "")
                self._metrics.inc("up")
            fresh = [u for u in updates if isinstance(u.get("update_id"), int) and self.offsets.admit(u["update_id"])]
            for update in fresh:
                self._spawn(self._on_update(update))
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
