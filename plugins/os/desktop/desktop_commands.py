"""Which desktop helper to run for a notification or the clipboard, on this machine.

Pure decisions over the environment and PATH, so they are testable without a display:
each returns an argv, or an `Unavailable` that tells the user what to install or why
it cannot work here (no display session).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Mapping

import attrs

Which = Callable[[str], str | None]
#: what a desktop helper needs to find the user's session; passed through the env filter
DESKTOP_ENV = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY")


@attrs.frozen
class Unavailable:
    reason: str


@attrs.frozen
class DesktopCommand:
    argv: tuple[str, ...]
    feeds_stdin: bool = False  # the payload goes on stdin (clipboard write)
    forks_owner: bool = False  # leaves a helper running that owns the selection


def _no_session(environ: Mapping[str, str]) -> bool:
    return not environ.get("DISPLAY") and not environ.get("WAYLAND_DISPLAY")


def notify_command(title: str, body: str, urgency: str, environ: Mapping[str, str], which: Which = shutil.which,
                   platform: str = sys.platform) -> DesktopCommand | Unavailable:
    if platform == "darwin":
        if not which("osascript"):
            return Unavailable("unavailable here: osascript is missing")
        quoted = [s.replace("\\", "\\\\").replace('"', '\\"') for s in (body or title, title)]
        return DesktopCommand(("osascript", "-e", f'display notification "{quoted[0]}" with title "{quoted[1]}"'))
    if not which("notify-send"):
        return Unavailable("unavailable here: install notify-send (package libnotify-bin on Debian/Ubuntu, "
                           "libnotify on Fedora/Arch)")
    if _no_session(environ) and not environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return Unavailable("unavailable here: no desktop session (DISPLAY, WAYLAND_DISPLAY and "
                           "DBUS_SESSION_BUS_ADDRESS are unset), so there is nowhere to show a notification")
    argv = ["notify-send", f"--urgency={urgency}", "--app-name=atomic-agent", "--", title]
    if body:
        argv.append(body)
    return DesktopCommand(tuple(argv))


def clipboard_command(action: str, environ: Mapping[str, str], which: Which = shutil.which,
                      platform: str = sys.platform) -> DesktopCommand | Unavailable:
    """`action` is "read" or "write"."""
    write = action == "write"
    if platform == "darwin":
        tool = "pbcopy" if write else "pbpaste"
        return DesktopCommand((tool,), feeds_stdin=write) if which(tool) else Unavailable(f"unavailable here: {tool} "
                                                                                           "is missing")
    if environ.get("WAYLAND_DISPLAY"):
        tool = "wl-copy" if write else "wl-paste"
        if which(tool):
            return DesktopCommand((tool,) if write else (tool, "--no-newline"), feeds_stdin=write, forks_owner=write)
    if environ.get("DISPLAY"):
        if which("xclip"):
            argv: tuple[str, ...] = ("xclip", "-selection", "clipboard", "-in" if write else "-out")
            return DesktopCommand(argv, feeds_stdin=write, forks_owner=write)
        if which("xsel"):
            argv = ("xsel", "--clipboard", "--input" if write else "--output")
            return DesktopCommand(argv, feeds_stdin=write, forks_owner=write)
    if _no_session(environ):
        return Unavailable("unavailable here: no display session (DISPLAY and WAYLAND_DISPLAY are unset), so there is "
                           "no clipboard to use")
    return Unavailable("unavailable here: install xclip or xsel (X11) or wl-clipboard (Wayland)")
