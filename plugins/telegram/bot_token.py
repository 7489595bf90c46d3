"""The bot token: read from, written to and removed from `<state>/.env` (mode 0600) only.

It is never copied into config.json, never put in a status, event, log line or error: every
text that may have seen it passes `scrub` first. A Bot API URL carries the token in its
path (`/bot<token>/method`), so even an httpx error message names it; `scrub` also hides
anything shaped like a bot token, in case an old one is still in a message.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TOKEN_KEY = "TELEGRAM_BOT_TOKEN"
DOTENV_FILE = ".env"
REDACTED = "<redacted>"
_TOKEN_SHAPE = re.compile(r"\b\d{5,}:[A-Za-z0-9_-]{20,}\b")


def dotenv_path(state_dir: Path) -> Path:
    return state_dir / DOTENV_FILE


def read_token(state_dir: Path) -> str | None:
    """The token stored in `<state>/.env`, or None (missing file, missing or empty key)."""
    from atomic_agent.api import dotenv_file

    try:
        text = dotenv_path(state_dir).read_text(encoding="utf-8")
    except OSError:
        return None
    values, _problems = dotenv_file.parse_dotenv(text)
    token = values.get(TOKEN_KEY, "").strip()
    return token or None


def bot_id_of(token: str) -> int:
    """A bot token is `<bot id>:<secret>`: the id, without asking Telegram (0 when it is not there)."""
    head = token.split(":", 1)[0]
    return int(head) if head.isdigit() else 0


def check_token_shape(token: str) -> str:
    """The token stripped, or ValueError (without echoing it) when it cannot be a bot token."""
    token = token.strip()
    if not _TOKEN_SHAPE.fullmatch(token):
        raise ValueError("that is not a Telegram bot token (expected <digits>:<letters, digits, - and _>)")
    return token


def store_token(state_dir: Path, token: str) -> None:
    """Write the token into `<state>/.env` (atomic, 0600), keeping every other line."""
    from atomic_agent.api import dotenv_file

    dotenv_file.set_dotenv_key(dotenv_path(state_dir), TOKEN_KEY, check_token_shape(token))


def clear_token(state_dir: Path) -> bool:
    """Remove the token's line(s) from `<state>/.env`; False when there was none."""
    from atomic_agent.api import write_atomic

    path = dotenv_path(state_dir)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return False
    kept = [line for line in lines
            if line.strip().startswith("#") or line.strip().partition("=")[0].strip() != TOKEN_KEY]
    if len(kept) == len(lines):
        return False
    write_atomic(path, "".join(f"{line}\n" for line in kept), mode=0o600)
    return True


def dotenv_mode_problem(state_dir: Path) -> str | None:
    """Why the `.env` holding the token is readable by others, or None."""
    path = dotenv_path(state_dir)
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        return None
    return None if mode & 0o077 == 0 else f"{path} has mode {mode:o}; it holds the bot token and must be 0600"


def scrub(text: str, token: str | None) -> str:
    """`text` with the token (and anything shaped like a bot token) replaced by <redacted>."""
    if token:
        text = text.replace(token, REDACTED)
    return _TOKEN_SHAPE.sub(REDACTED, text)
