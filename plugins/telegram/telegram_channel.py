"""The Telegram channel: the Channel protocol and the `telegram` service, assembled from
collaborators that each own their state and are handed what they use:

- `ChannelSettings`: the `telegram` block as last read; the CLI's changes, by file stamps.
- `PollingLink`: the bot client, the instance lock, the polling loop and the up/down state.
  On a fleet's PostgreSQL database (the `shared_database` service) the records are the
  fleet's (the same DeliveryStore on the shared database's engine) and the lock is the fleet-wide poller lease (FleetPollerLease):
  one host polls, the others stand by and take over.
- `SessionRoute`: the channel's session and the approval route to the owner's phone.
- `ApprovalBridge`: approval questions as inline keyboards, and their answers.
- `OwnerPairing`: the owner and the pairing window.
- `ChannelOutbound`: notices, durable deliveries, the replies still owed, task reports.
- `ChannelLiveControl`: enable/disable, token, restart (persisted first, then applied).
- `ChannelTasks`: the background tasks (one per update, per delivery).

Always built when the plugin is loaded (the `telegram` service; the registered channel is
the same object), so live control works while it is disabled; only polling is gated on
`enabled`. The delivery records and the sender are opened on first use.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

from .approval_bridge import ApprovalBridge
from .bot_api import BotApi
from .bot_token import bot_id_of, read_token
from .channel_live_control import ChannelLiveControl
from .channel_metrics import ChannelMetrics, metrics_registry
from .channel_outbound import ChannelOutbound
from .channel_settings import ChannelSettings
from .channel_states import DISABLED, DISABLED_REASON, STOPPED
from .channel_tasks import ChannelTasks
from .delivery_store import Delivery, DeliveryStore
from .fleet_poller_lease import FleetPollerLease
from .inbound_handler import InboundHandler
from .instance_lock import InstanceLock
from .outbound_sender import OutboundSender
from .owner_pairing import OwnerPairing
from .pairing_window import DEFAULT_WINDOW_S
from .polling_link import PollingLink
from .session_pointer import read_pointer
from .session_route import SessionRoute
from .telegram_config import HTML, TelegramConfig
from .update_offsets import UpdateOffsets

if TYPE_CHECKING:
    import asyncio

    from atomic_agent.api import RuntimeView


class TelegramChannel:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime
        self.state_dir: Path = Path(runtime.state_dir)
        self._settings = ChannelSettings(runtime, self.state_dir)
        self.metrics = ChannelMetrics(metrics_registry(runtime))
        self._shared = runtime.service(SHARED_DATABASE_SERVICE, None)  # None: telegram.sqlite, the flock
        self._store: DeliveryStore | None = None
        self.sender: OutboundSender | None = None
        self.tasks = ChannelTasks(self.scrub)
        self.bridge = ApprovalBridge(lambda: self.link.api, lambda: self._settings.owner_user_id,
                                     lambda: self.outbound, self.metrics,
                                     lambda: self._settings.current.approval_timeout_ms / 1000.0, lambda: self._store,
                                     lambda: runtime.service("approval_gate").records)
        self.route = SessionRoute(runtime, self.state_dir, self.bridge.ask)
        self.inbound = InboundHandler(self)
        # the link calls back into two collaborators built after it (they need the link)
        self.link = PollingLink(self.state_dir, self._settings, self.metrics, self.bridge, self.route,
                                on_update=self.inbound.handle, spawn=self.tasks.spawn,
                                on_cycle=lambda: self.live.follow_files(),
                                send_owed=lambda: self.deliveries.send_owed(), settle_sends=self._settle_sends,
                                store_of=lambda: self.store,
                                lock=None if self._shared is None else FleetPollerLease(
                                    self._shared, lambda: self.store, self.state_dir))
        self.pairing = OwnerPairing(self.state_dir, self._settings, self.bridge, self.link)
        self.deliveries = ChannelOutbound(runtime, self.link, self.route, lambda: self.store, lambda: self.outbound,
                                          lambda: self._settings.owner_user_id, self.tasks.spawn)
        self.live = ChannelLiveControl(self.state_dir, self._settings, self.link, self.pairing, self.status)

    # -- pieces built on first use ------------------------------------------------------------
    @property
    def store(self) -> DeliveryStore:
        if self._store is None:
            self._store = (DeliveryStore.of_state_dir(self.state_dir, self._delivery_bot) if self._shared is None
                           else DeliveryStore.of_fleet(self._shared, self._delivery_bot))
            self._store.settle_interrupted()  # what a dead process left mid-send is uncertain
        return self._store

    def _delivery_bot(self) -> int:
        """The bot whose deliveries the channel records and sends: the running link's (its
        client sends them), else the stored token's (a report recorded while the channel is
        down is owed by the bot that will send it)."""
        if self.link.api is not None and self.link.bot_key:
            return self.link.bot_key
        token = read_token(self.state_dir)
        return bot_id_of(token) if token else 0

    @property
    def outbound(self) -> OutboundSender:
        if self.sender is None:
            self.sender = OutboundSender(self.store, self.metrics, lambda: self._settings.current.parse_mode == HTML)
        return self.sender

    async def _settle_sends(self, grace_s: float) -> None:
        if self.sender is not None:
            await self.sender.settle(grace_s)

    # -- what the inbound handler, hosts and tests read -------------------------------------------
    @property
    def settings(self) -> TelegramConfig:
        return self._settings.current

    @property
    def owner_user_id(self) -> int | None:
        return self._settings.owner_user_id

    @property
    def api(self) -> BotApi | None:
        return self.link.api

    @property
    def offsets(self) -> UpdateOffsets:
        return self.link.offsets

    @property
    def lock(self) -> InstanceLock | FleetPollerLease:
        return self.link.lock

    @property
    def state(self) -> str:
        return self.link.state

    @property
    def reason(self) -> str:
        return self.link.reason

    @property
    def bot_id(self) -> int:
        return self.link.bot_id

    @property
    def bot_key(self) -> int:
        """The bot the token names (known before getMe answers): what its handled updates are keyed by."""
        return self.link.bot_key

    @property
    def bot_username(self) -> str:
        return self.link.bot_username

    @property
    def started_at(self) -> float | None:
        return self.link.started_at

    def scrub(self, text: str) -> str:
        return self.link.scrub(text)

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        return self.tasks.spawn(work)

    # -- Channel protocol ---------------------------------------------------------------------
    async def start(self) -> None:
        """Start polling when enabled; raise LockHeldError when another runtime already polls."""
        _ = self.store  # open the records and settle what a dead process left, enabled or not
        if not self.settings.enabled:
            self.link.set(DISABLED, DISABLED_REASON)
            return
        await self.link.start(raise_lock=True)

    async def stop(self) -> None:
        await self.link.stop(STOPPED, "the runtime is stopping")

    async def close(self) -> None:
        """The service closes (after the turns ended): finish the last sends, close the records."""
        await self.tasks.wait_all()
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
                "polledBy": self.link.lock.holder(), "fleet": self._shared is not None,
                "metrics": self.metrics.snapshot()}

    def status_text(self) -> str:
        session = read_pointer(self.state_dir) or "-"
        running = self.runtime.running_turn_id(session) if session != "-" else None
        counts = self.store.counts()
        owed = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        return "\n".join([f"Channel: {self.state}", f"Session: {session}",
                          f"Turn: {'running ' + running if running else 'idle'}",
                          f"Approvals waiting: {len(self.bridge.pending)}",
                          f"Deliveries: {owed or 'none'}"])

    # -- the channel's session ----------------------------------------------------------------
    def session_id(self) -> str:
        return self.route.session_id()

    def rotate_session(self) -> str:
        return self.route.rotate()

    # -- outbound -----------------------------------------------------------------------------
    async def send_notice(self, chat_id: int, text: str) -> None:
        await self.deliveries.send_notice(chat_id, text)

    async def deliver(self, delivery: Delivery) -> Delivery:
        return await self.deliveries.deliver(delivery)

    def wake_owed(self) -> None:
        self.deliveries.send_owed()

    async def send_report(self, target: str, text: str) -> Delivery:
        return await self.deliveries.send_report(target, text)

    # -- owner, pairing and live control ------------------------------------------------------
    def pairing_open(self) -> bool:
        return self.pairing.is_open()

    def start_pairing(self, seconds: float = DEFAULT_WINDOW_S) -> float:
        return self.pairing.start(seconds)

    def cancel_pairing(self) -> None:
        self.pairing.cancel()

    async def claim_owner(self, user_id: int) -> None:
        await self.pairing.claim(user_id)

    async def set_owner(self, user_id: int | None) -> None:
        await self.pairing.set_owner(user_id)

    async def set_enabled(self, enabled: bool) -> dict[str, Any]:
        return await self.live.set_enabled(enabled)

    async def set_token(self, token: str | None) -> dict[str, Any]:
        return await self.live.set_token(token)

    async def restart(self) -> dict[str, Any]:
        return await self.live.restart()

    async def control(self, action: str, *, token: str | None = None, seconds: float | None = None) -> dict[str, Any]:
        return await self.live.control(action, token=token, seconds=seconds)
