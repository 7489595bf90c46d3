"""Notify and clipboard: the helper chosen per platform, and "unavailable here" without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.os.desktop.desktop_commands import Unavailable, clipboard_command, notify_command
from atomic_agent.plugins.os.desktop.desktop_tools import desktop_tool_specs


def which_of(*present: str):  # noqa: ANN201
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_notify_uses_notify_send_with_the_title_after_a_separator() -> None:
    command = notify_command("-rf build done", "all green", "low", {"DISPLAY": ":0"}, which_of("notify-send"),
                             "linux")
    assert command.argv == ("notify-send", "--urgency=low", "--app-name=atomic-agent", "--", "-rf build done",
                            "all green")


def test_notify_without_notify_send_says_what_to_install() -> None:
    command = notify_command("t", "", "normal", {"DISPLAY": ":0"}, which_of(), "linux")
    assert isinstance(command, Unavailable) and "install notify-send" in command.reason


def test_notify_without_a_session_is_unavailable() -> None:
    command = notify_command("t", "", "normal", {}, which_of("notify-send"), "linux")
    assert isinstance(command, Unavailable) and "no desktop session" in command.reason


def test_notify_on_macos_escapes_quotes_for_osascript() -> None:
    command = notify_command('say "hi"', "", "normal", {}, which_of("osascript"), "darwin")
    assert command.argv[2] == 'display notification "say \\"hi\\"" with title "say \\"hi\\""'


@pytest.mark.parametrize("environ,present,read,write", [
    ({"WAYLAND_DISPLAY": "wayland-0"}, ("wl-copy", "wl-paste"), ("wl-paste", "--no-newline"), ("wl-copy",)),
    ({"DISPLAY": ":0"}, ("xclip",), ("xclip", "-selection", "clipboard", "-out"),
     ("xclip", "-selection", "clipboard", "-in")),
    ({"DISPLAY": ":0"}, ("xsel",), ("xsel", "--clipboard", "--output"), ("xsel", "--clipboard", "--input")),
])
def test_clipboard_helper_is_chosen_by_session_and_path(environ: dict[str, str], present: tuple[str, ...],
                                                        read: tuple[str, ...], write: tuple[str, ...]) -> None:
    assert clipboard_command("read", environ, which_of(*present), "linux").argv == read
    writer = clipboard_command("write", environ, which_of(*present), "linux")
    assert writer.argv == write and writer.feeds_stdin and writer.forks_owner


def test_clipboard_on_macos_uses_pbcopy_and_pbpaste() -> None:
    assert clipboard_command("read", {}, which_of("pbpaste"), "darwin").argv == ("pbpaste",)
    assert clipboard_command("write", {}, which_of("pbcopy"), "darwin").argv == ("pbcopy",)


def test_clipboard_with_a_display_but_no_helper_says_what_to_install() -> None:
    command = clipboard_command("read", {"DISPLAY": ":0"}, which_of(), "linux")
    assert isinstance(command, Unavailable) and "install xclip or xsel" in command.reason


async def test_tools_report_unavailable_here_on_this_headless_machine(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(name, raising=False)

    class Bare:
        config = None

    tools = {s.name: s for s in desktop_tool_specs(Bare())}
    ctx = make_tool_context(tmp_path)
    for name, args in (("os.notify", {"title": "t"}), ("os.clipboard.read", {}), ("os.clipboard.write", {"text": "x"})):
        result = await tools[name].run(args, ctx)
        assert result.status == "error" and "unavailable here" in result.summary and result.details["unavailable"]


def test_desktop_tool_resource_classes() -> None:
    class Bare:
        config = None

    classes = {s.name: s.resource_class.value for s in desktop_tool_specs(Bare())}
    assert classes == {"os.notify": "memory_write", "os.clipboard.read": "pure_read",
                       "os.clipboard.write": "memory_write"}
