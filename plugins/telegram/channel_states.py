"""The states a Telegram channel reports, and the reasons every surface shows verbatim."""

from __future__ import annotations

DISABLED, STARTING, UP, DOWN, STOPPED = "disabled", "starting", "up", "down", "stopped"
STANDBY = "standby"  # on a fleet's database: another host polls the bot; this one takes over when it stops
LEASE_LOST = "the poller lease moved to another host (or the database was lost); standing by"
MISSING_TOKEN = "missing TELEGRAM_BOT_TOKEN"
DISABLED_REASON = "telegram.enabled is false"
