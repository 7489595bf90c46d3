"""The states a Telegram channel reports, and the reasons every surface shows verbatim."""

from __future__ import annotations

DISABLED, STARTING, UP, DOWN, STOPPED = "disabled", "starting", "up", "down", "stopped"
MISSING_TOKEN = "missing TELEGRAM_BOT_TOKEN"
DISABLED_REASON = "telegram.enabled is false"
