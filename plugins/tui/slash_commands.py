"""The slash commands the editor understands, and how a line is split into one.

The same table feeds /help and the command palette (Ctrl+P), so the two cannot drift.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class SlashCommand:
    name: str
    usage: str
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "/help", "list the slash commands"),
    SlashCommand("steer", "/steer [MESSAGE]", "steer the running turn with MESSAGE; bare: Enter steers from now on"),
    SlashCommand("queue", "/queue [MESSAGE|mode|run|clear]",
                 "queue MESSAGE for its own turn; mode: Enter queues; run: send the held queue; clear: drop it; "
                 "bare: list the queue"),
    SlashCommand("tool", "/tool NAME MESSAGE", "send MESSAGE with its first step made to call tool NAME"),
    SlashCommand("stop", "/stop", "stop the running turn (Esc)"),
    SlashCommand("mouse", "/mouse on|off|select", "mouse reporting on or off (saved), or 10 s to select text"),
    SlashCommand("level", "/level 1-5", "set the approval level (saved); 5 asks for nothing"),
    SlashCommand("new", "/new", "start a new session"),
    SlashCommand("session", "/session ID", "continue session ID"),
    SlashCommand("tab", "/tab NAME", "show a tab (chat, sessions, tools, privacy, logs, ...)"),
    SlashCommand("quit", "/quit", "leave the app (Ctrl+Q)"),
)
BY_NAME = {c.name: c for c in COMMANDS}


class SlashCommandError(ValueError):
    """A line that starts with / but names no command."""


def parse_slash(line: str) -> tuple[str, str] | None:
    """(command, argument) for a slash command line; None for a message (a leading "//"
    sends a message that starts with "/")."""
    text = line.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, arg = text[1:].partition(" ")
    name = name.lower()
    if name not in BY_NAME:
        raise SlashCommandError(f"unknown command /{name}; /help lists the commands (start with // to send a "
                                "message that begins with /)")
    return name, arg.strip()


def message_text(line: str) -> str:
    """The message a non-command line sends ("//x" sends "/x")."""
    stripped = line.lstrip()
    return stripped[1:] if stripped.startswith("//") else line
