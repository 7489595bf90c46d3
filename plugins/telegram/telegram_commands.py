"""`atomic-agent telegram status|enable|disable|token|clear-token|clear-owner|restart|pair|run`.

Every change is persisted first (config.json, or `.env` for the token). A runtime that is
polling in another process picks up config.json and `.env` changes at its next polling
cycle (disable, owner, parse mode, token); `enable` and `restart` of a channel that is not
polling take effect when a host starts (`telegram run`, serve, sidecar) — a host that owns
the runtime applies them live through the `telegram` service. `pair` opens the pairing
window the running channel reads, and waits for the first private DM to claim the bot.
"""

from __future__ import annotations

import getpass
import sys
import time
from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail

telegram_app = typer.Typer(no_args_is_help=True, add_completion=False)


def _boot(ctx: typer.Context) -> Any:
    return current_cli_state(ctx).require()


def _persist(ctx: typer.Context, **changes: Any) -> None:
    from .telegram_config import persist_settings

    boot = _boot(ctx)
    persist_settings(Path(boot.config.path), boot.config_blocks, **changes)


def offline_status(state_dir: Path, config: Any, shared: Any = None) -> dict[str, Any]:
    """What the files say (no runtime needed), writing nothing: settings, token presence, the
    polling pid, the token's bot's deliveries by state and the ones that need a look, or
    `deliveriesUnread` saying why they were not read (none yet; an older build's records, which
    the next start upgrades). On one host telegram.sqlite is read as it is, never created or
    migrated. With `shared` (the fleet's database, storage.url) the records are the fleet's
    (no schema step, no lease), and `polledBy` names the process that took the bot's poller
    lease last, `live` whether some process holds that lease right now. SessionStoreError or
    TelegramStoreError when the fleet's database cannot be read, TelegramStoreNewerError for a
    newer build's telegram.sqlite."""
    from .bot_token import bot_id_of, read_token
    from .delivery_database import db_path
    from .delivery_look import look_at_fleet, look_at_state_dir
    from .instance_lock import holder_pid
    from .pairing_window import window_open
    from .session_pointer import read_pointer
    from .telegram_config import TELEGRAM_BLOCK, TelegramConfig

    block = config.blocks.get(TELEGRAM_BLOCK) or TelegramConfig()
    token = read_token(state_dir)
    bot_id = bot_id_of(token) if token else 0
    if shared is None:
        look = look_at_state_dir(db_path(state_dir), bot_id)
        pid = holder_pid(state_dir)
    else:
        look = look_at_fleet(shared, bot_id)
        pid = look.poller["pid"] if look.poller is not None and look.poller["live"] else None
    return {"enabled": block.enabled, "hasToken": token is not None,
            "ownerUserId": block.owner_user_id, "parseMode": block.parse_mode,
            "polledByPid": pid, "polledBy": look.poller, "sessionId": read_pointer(state_dir),
            "pairingOpen": window_open(state_dir), "deliveries": look.counts,
            "deliveriesUnread": look.unread, "needsAttention": [d.as_dict() for d in look.attention]}


def polling_line(status: dict[str, Any]) -> str:
    """Who polls, as `telegram status` prints it: on a fleet, the process that took the lease
    last and whether it still holds it (a dead poller stays named until another takes over)."""
    fleet = status["polledBy"]
    if fleet is not None:
        named = f"polled by pid {fleet['pid']} on {fleet['host']} since {fleet['since']}"
        return named + (" (lease held)" if fleet["live"] else " (lease free: no live poller)")
    pid = status["polledByPid"]
    return f"polled by pid {pid}" if pid else "no runtime polls now"


def status_lines(state_dir: Path, config: Any, plugin_host: Any = None) -> list[dict[str, Any]]:
    """The Telegram line of `atomic-agent status` (what the files say; nothing is polled). On a
    fleet host (storage.url set) the records are the fleet's, read without writing anything."""
    from atomic_agent.api import SessionStoreError
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    from .delivery_database import DB_FILE, TelegramStoreNewerError
    from .delivery_look import NO_DELIVERIES
    from .delivery_store import TelegramStoreError
    from .telegram_config import TELEGRAM_BLOCK, TelegramConfig

    block = config.blocks.get(TELEGRAM_BLOCK) or TelegramConfig()
    off = {"section": "channels", "name": "telegram", "state": "off",
           "summary": "disabled (`atomic-agent telegram enable`)", "detail": {"enabled": False}}
    try:
        shared = (None if plugin_host is None
                  else plugin_host.command_service(state_dir, config, SHARED_DATABASE_SERVICE))
        if not block.enabled and (shared is not None or not (state_dir / DB_FILE).exists()):
            return [off]  # nothing to read: this host runs no channel
        status = offline_status(state_dir, config, shared)
    except (SessionStoreError, TelegramStoreError) as exc:
        return [{"section": "channels", "name": "telegram", "state": "error",
                 "summary": f"the fleet's Telegram records could not be read: {exc}",
                 "problems": ["see `atomic-agent doctor` (storage.postgresql)"]}]
    except TelegramStoreNewerError as exc:
        return [{"section": "channels", "name": "telegram", "state": "error", "summary": str(exc),
                 "problems": ["see `atomic-agent doctor` (telegram.sqlite)"]}]
    fleet = status["polledBy"]
    pid = status["polledByPid"]
    attention = [f"telegram delivery #{d['id']} {d['kind']} {d['state']}: {d['error'] or 'check the chat'}"
                 for d in status["needsAttention"]]
    if not status["enabled"]:
        state, summary = "off", "disabled (`atomic-agent telegram enable`)"
    elif not status["hasToken"]:
        state, summary = "error", "enabled but no bot token (`atomic-agent telegram token --stdin`)"
    elif pid:
        where = f" on {fleet['host']}" if fleet is not None else ""
        state, summary = "ok", f"polling (pid {pid}{where}), owner {status['ownerUserId'] or 'not paired'}"
    else:
        state, summary = "warn", ("enabled, but no host polls it: start `atomic-agent telegram run` (or serve, "
                                  "sidecar, scheduler)")
    if status["enabled"] and not status["ownerUserId"]:
        attention.append("telegram has no owner: `atomic-agent telegram pair`")
    if status["deliveriesUnread"] and status["deliveriesUnread"] != NO_DELIVERIES:
        attention.append(status["deliveriesUnread"])
    return [{"section": "channels", "name": "telegram", "state": state, "summary": summary, "problems": attention,
             "detail": status}]


def _shared_database(boot: Any) -> Any:
    """The fleet's PostgreSQL the records live in when storage.url names one, else None."""
    from atomic_agent.api import SessionStoreError
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    try:
        return boot.host.command_service(boot.state_dir, boot.config, SHARED_DATABASE_SERVICE)
    except SessionStoreError as exc:
        fail(str(exc))


@telegram_app.command("status")
def status_command(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Settings, whether a runtime polls, and deliveries by state (uncertain ones listed)."""
    from atomic_agent.api import SessionStoreError, print_json

    from .delivery_database import TelegramStoreNewerError
    from .delivery_store import TelegramStoreError

    boot = _boot(ctx)
    try:
        status = offline_status(boot.state_dir, boot.config, _shared_database(boot))
    except (SessionStoreError, TelegramStoreError, TelegramStoreNewerError) as exc:
        fail(str(exc))
    if json_out:
        print_json(status)
        return
    print(f"enabled: {status['enabled']}  token: {'set' if status['hasToken'] else 'missing'}  "
          f"owner: {status['ownerUserId'] or 'none (run `atomic-agent telegram pair`)'}  "
          f"parse mode: {status['parseMode']}")
    print(f"polling: {polling_line(status)}  session: {status['sessionId'] or '-'}")
    print("deliveries: " + (status["deliveriesUnread"]
                            or ", ".join(f"{k} {v}" for k, v in status["deliveries"].items())))
    for item in status["needsAttention"]:
        print(f"  #{item['id']} {item['kind']} {item['state']}: turn {item['turn_id'] or '-'}, "
              f"{item['chunks_sent']}/{item['chunks_total']} chunk(s) sent — {item['error'] or ''}")


@telegram_app.command("enable")
def enable_command(ctx: typer.Context) -> None:
    """Turn the channel on (polling starts with the next host: `telegram run`, serve, sidecar)."""
    _persist(ctx, enabled=True)
    print("telegram enabled")


@telegram_app.command("disable")
def disable_command(ctx: typer.Context) -> None:
    """Turn the channel off; a running channel stops polling at its next cycle."""
    _persist(ctx, enabled=False)
    print("telegram disabled")


@telegram_app.command("token")
def token_command(ctx: typer.Context,
                  from_stdin: bool = typer.Option(False, "--stdin", help="Read the token from stdin.")) -> None:
    """Store the bot token in <state>/.env (0600); it is never printed or put in config.json."""
    from .bot_token import store_token

    token = sys.stdin.readline() if from_stdin else getpass.getpass("Telegram bot token (hidden): ")
    try:
        store_token(_boot(ctx).state_dir, token)
    except ValueError as exc:
        fail(str(exc))
    print("token stored in .env (0600)")


@telegram_app.command("clear-token")
def clear_token_command(ctx: typer.Context) -> None:
    """Remove the bot token from <state>/.env."""
    from .bot_token import clear_token

    print("token removed" if clear_token(_boot(ctx).state_dir) else "no token was stored")


@telegram_app.command("clear-owner")
def clear_owner_command(ctx: typer.Context) -> None:
    """Forget the owner: the bot ignores everyone until paired again."""
    _persist(ctx, ownerUserId=None)
    print("owner cleared")


@telegram_app.command("restart")
def restart_command(ctx: typer.Context) -> None:
    """Ask a polling runtime to reconnect (it re-reads config and token at its next cycle)."""
    from .instance_lock import holder_pid

    boot = _boot(ctx)
    pid = holder_pid(boot.state_dir)
    if not pid:
        fail("no runtime polls this bot now; start one with `atomic-agent telegram run`", code=1)
    (boot.state_dir / ".env").touch(mode=0o600, exist_ok=True)  # its new mtime is the restart request
    print(f"pid {pid} reloads its Telegram settings at its next polling cycle")


@telegram_app.command("pair")
def pair_command(ctx: typer.Context,
                 seconds: float = typer.Option(60.0, "--seconds", min=5, max=600, help="How long the window stays open."),
                 wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for the claim.")) -> None:
    """Open a pairing window: the first private DM to the bot claims ownership."""
    from .instance_lock import holder_pid
    from .pairing_window import close_window, open_window
    from .telegram_config import read_settings

    boot = _boot(ctx)
    if not holder_pid(boot.state_dir):
        fail("no runtime polls this bot now; start `atomic-agent telegram run` first", code=1)
    before = read_settings(Path(boot.config.path), boot.config_blocks).owner_user_id
    until = open_window(boot.state_dir, seconds)
    print(f"pairing open for {seconds:.0f} s: send your bot a private message now")
    if not wait:
        return
    while time.time() < until:
        owner = read_settings(Path(boot.config.path), boot.config_blocks).owner_user_id
        if owner is not None and owner != before:
            print(f"paired with Telegram user {owner}")
            return
        time.sleep(0.5)
    close_window(boot.state_dir)
    fail("nobody claimed the bot in time", code=1)


@telegram_app.command("run")
def run_command(ctx: typer.Context) -> None:
    """Run the agent with its Telegram channel in the foreground until Ctrl-C / SIGTERM."""
    import asyncio

    from .foreground_host import run_foreground
    from .instance_lock import LockHeldError

    try:
        asyncio.run(run_foreground(_boot(ctx)))
    except KeyboardInterrupt:
        pass
    except LockHeldError as exc:
        fail(str(exc), code=1)
