"""`atomic-agent tui`: the app — a Chat tab and one tab per contributed panel.

The app is the panels' `TuiContext`: `runtime`, `notify` (a Textual notice), `run_job`
(a worker with a progress notice whose failure becomes an error notice, never a traceback)
and `rows` (the one rows widget, under the mouse contract).
Every tab, the core ones included, arrives as a `TuiPanel` service, so a third-party plugin
adds a tab the same way. The chat tab talks to the runtime only through its orchestrator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane, Tabs

from atomic_agent.api import TUI_PANEL_SERVICE, TuiPanel
from atomic_agent.plugins.tui.approval_modal import SettledElsewhereModal
from atomic_agent.plugins.tui.chat_host import ChatHost, TranscriptLine
from atomic_agent.plugins.tui.chat_orchestrator import ChatOrchestrator
from atomic_agent.plugins.tui.chat_view import ChatView
from atomic_agent.plugins.tui.event_log import EventLog
from atomic_agent.plugins.tui.feed_lines import feed_line, preview, safe_lines
from atomic_agent.plugins.tui.mouse_interaction import MouseSwitch, RowList
from atomic_agent.plugins.tui.remote_orchestrator import APPROVALS_POLL_S, RemoteOrchestrator
from atomic_agent.plugins.tui.serve_attachment import ServeAttachment
from atomic_agent.plugins.tui.shared_approvals import POLL_S as SHARED_POLL_S
from atomic_agent.plugins.tui.shared_approvals import SURFACE, SharedApprovals
from atomic_agent.plugins.tui.slash_commands import COMMANDS, SlashCommandError, message_text, parse_slash
from atomic_agent.plugins.tui.status_bar import StatusBar, StatusFacts
from atomic_agent.plugins.tui.steering_editor import SteeringEditor
from atomic_agent.plugins.tui.tui_config import TuiConfig, persist_tui_setting, tui_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

CHAT_TAB = "chat"


def tab_id(panel_name: str) -> str:
    return f"panel-{panel_name}"


class AtomicTui(App[None]):
    TITLE = "atomic-agent"
    # the screen focuses this when it starts (Textual's default "*" picks the first focusable
    # widget, the chat view): what the person types first must land in the editor
    AUTO_FOCUS = "#editor"
    CSS = """
    #chat-pane { height: 1fr; }
    #editor-meta { height: 1; color: $text-muted; padding: 0 1; }
    TabbedContent { height: 1fr; }
    TabPane { padding: 0; }
    """
    BINDINGS = [
        Binding("ctrl+t", "toggle_mode", "steer/queue"),
        Binding("f1", "show_tab('chat')", "chat", show=False),
        Binding("f9", "select_text", "select text"),
        Binding("ctrl+q", "quit", "quit", priority=True),
    ]

    def __init__(self, runtime: RuntimeView | None, *, session_id: str | None = None, mouse: bool | None = None,
                 working_dir: Path | None = None, approver: Any = None, attachment: ServeAttachment | None = None,
                 config: TuiConfig | None = None) -> None:
        """In-process with `runtime`, or attached to a running serve (`attachment`, runtime None)."""
        super().__init__()
        self.runtime = runtime
        self.attachment = attachment
        config = config or (tui_config(runtime) if runtime is not None else TuiConfig())
        self.mouse_switch = MouseSwitch(self, config.mouse if mouse is None else mouse)
        self.event_log = EventLog()
        self.facts = StatusFacts(level=runtime.gate.level if runtime is not None else 0, session=session_id,
                                 mode=config.while_busy_submit)
        self.approving: list[Any] = []  # requests whose modal is open
        self.approver = approver
        self.orchestrator: ChatHost
        self.remote: RemoteOrchestrator | None = None
        self.shared_approvals: SharedApprovals | None = None
        if runtime is not None:
            self.orchestrator = ChatOrchestrator(runtime, self, self._spawn_turns, session_id=session_id,
                                                 working_dir=working_dir or Path.cwd(), mode=config.while_busy_submit)
            self.panels = self._collect_panels()
            if approver is not None:
                approver.attach(self)
                runtime.gate.set_surface(SURFACE)  # the records say an answer given here came from the TUI
            self.shared_approvals = SharedApprovals(self, approver)
        else:
            if attachment is None:
                raise ValueError("AtomicTui needs a runtime or a serve attachment")
            from atomic_agent.plugins.tui.attached_sessions_panel import ATTACHED_PANELS
            from atomic_agent.plugins.tui.remote_approvals import RemoteApprovals
            from atomic_agent.plugins.tui.tui_approver import TuiApprover

            self.remote = RemoteOrchestrator(attachment, self, self._spawn_turns, session_id=session_id,
                                             mode=config.while_busy_submit)
            self.orchestrator = self.remote
            self.approver = approver or TuiApprover()
            self.approver.attach(self)
            self.remote.approvals = RemoteApprovals(self, self.approver, self.remote)
            self.panels = list(ATTACHED_PANELS)
        self.panel_keys = {p.key: tab_id(p.name) for p in self.panels if p.key}

    # -- panels ------------------------------------------------------------------------------
    def _collect_panels(self) -> list[TuiPanel]:
        assert self.runtime is not None
        panels = []
        for service in self.runtime.services(TUI_PANEL_SERVICE):
            # the registry keeps one service per plugin and name, so a plugin with several
            # tabs (this one) offers them as a sequence
            for item in service if isinstance(service, (list, tuple)) else [service]:
                if isinstance(item, TuiPanel):
                    panels.append(item)
                    continue
                self.event_log.add("notice", f"ignored a {TUI_PANEL_SERVICE} service that is not a TuiPanel: "
                                             f"{type(item).__name__}")
        seen: set[str] = set()
        unique = []
        for panel in sorted(panels, key=lambda p: (p.order, p.name)):
            if panel.name in seen or panel.name == CHAT_TAB:
                self.event_log.add("notice", f"a second panel named {panel.name!r} was left out")
                continue
            seen.add(panel.name)
            unique.append(panel)
        return unique

    def _build(self, panel: TuiPanel) -> Any:
        try:
            return panel.build(self)
        except Exception as exc:  # one broken panel must not take the app down
            self.event_log.add("notice", f"panel {panel.name} failed to build: {type(exc).__name__}: {exc}")
            return Static(f"The {panel.title} panel could not be built: {type(exc).__name__}: {exc}\n"
                          "The other tabs work; see the Logs tab.", markup=False)

    # -- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with TabbedContent(id="tabs", initial=CHAT_TAB):
            with TabPane("Chat", id=CHAT_TAB):
                yield ChatView(id="chat-view")
                yield Static(id="editor-meta")
                yield SteeringEditor(id="editor")
            for panel in self.panels:
                with TabPane(panel.title, id=tab_id(panel.name)):
                    yield self._build(panel)
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.mouse_switch.set(self.mouse_switch.enabled)  # the app always starts able to report; apply the choice
        self.query_one(SteeringEditor).focus()
        self.state_changed()
        if self.remote is not None:
            self.run_worker(self.remote.watch(), group="serve-events", exit_on_error=False)
            self.set_interval(APPROVALS_POLL_S, self.remote.poll_approvals)
            self.facts.provider, self.facts.model = "attached", self.remote.attachment.url
        else:
            self.run_worker(self._read_model(), group="status", exit_on_error=False)
        if self.shared_approvals is not None and self.shared_approvals.enabled:  # approvals other surfaces raised appear here too
            self.set_interval(SHARED_POLL_S, self.shared_approvals.poll)
        if self.orchestrator.session_id:
            self._show_history(self.orchestrator.session_id)

    async def on_unmount(self) -> None:
        if self.remote is not None:
            await self.remote.close()

    async def _read_model(self) -> None:
        assert self.runtime is not None
        provider = self.runtime.provider
        self.facts.provider = str(getattr(provider, "mode", type(provider).__name__))
        try:
            facts = await provider.describe()
            self.facts.model = str(facts.get("model_alias") or "?")
        except Exception as exc:  # a server that is not up yet: the status says so, the app goes on
            self.facts.model = "model not reachable"
            self.event_log.add("notice", f"could not describe the model: {type(exc).__name__}: {exc}")
        self.state_changed()

    # -- TuiContext --------------------------------------------------------------------------
    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        self.event_log.add("notice", f"{severity}: {message}")
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)  # type: ignore[arg-type]

    def run_job(self, title: str, job: Callable[[], Awaitable[Any]]) -> None:
        async def work() -> None:
            self.notify(f"{title}…", timeout=3)
            try:
                await job()
            except Exception as exc:
                self.event_log.add("job", f"{title} failed: {type(exc).__name__}: {exc}")
                self.notify(f"{title} failed: {exc}", severity="error", timeout=10)
                return
            self.notify(f"{title}: done")

        self.run_worker(work(), group="jobs", exit_on_error=False)

    def rows(self, *, id: str | None = None) -> RowList:
        return RowList(id=id)

    # -- the chat sink -----------------------------------------------------------------------
    def _spawn_turns(self, coro: Coroutine[Any, Any, None]) -> None:
        self.run_worker(coro, group="turns", exit_on_error=False)

    def user_message(self, text: str, how: str) -> None:
        self.query_one(ChatView).add_user(text, how)

    def turn_event(self, event: dict[str, Any]) -> None:
        self.event_log.add_event(event)
        view = self.query_one(ChatView)
        kind = event.get("type")
        if kind == "turn_started":
            view.begin_turn()
            self.state_changed()
        elif kind == "reasoning_delta":
            view.add_reasoning(str(event.get("delta", "")))
        elif kind == "assistant_reply":
            view.add_reply(str(event.get("text", "")))
        elif kind == "turn_notice":  # a plugin's word to the person under the reply (a worktree's diffstat)
            view.add_notice(safe_lines(str(event.get("text", ""))))
        elif kind == "step_finished":
            self._step_costs(event)
        else:
            line = feed_line(event)
            if line is not None:
                view.add_line(line)
        if kind == "turn_finished":
            self.state_changed()

    def _step_costs(self, event: dict[str, Any]) -> None:
        """The status bar's slot, cache reuse and prompt size come from the last step."""
        def count(name: str) -> int | None:
            value = event.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

        f = self.facts
        f.slot, f.cache_tokens, f.prompt_tokens = count("slotId"), count("cacheN"), count("promptN")
        self.state_changed()

    def chat_notice(self, text: str, severity: str = "information") -> None:
        self.query_one(ChatView).add_notice(text, severity)
        self.event_log.add("notice", f"{severity}: {text}")

    def state_changed(self) -> None:
        orch = self.orchestrator
        f = self.facts
        f.session, f.queued, f.busy, f.mode, f.paused = (orch.session_id, len(orch.pending), orch.busy, orch.mode,
                                                          orch.paused)
        if self.runtime is not None:
            f.level = self.runtime.gate.level
        f.mouse = self.mouse_switch.enabled
        if not self.is_mounted_app:
            return
        self.query_one(StatusBar).show(f)
        meta = (f"⏎ {orch.mode} while the turn runs · Ctrl+T switches · Esc stops" if orch.busy
                else "⏎ send · Ctrl+J new line · /help · Ctrl+P commands")
        self.query_one("#editor-meta", Static).update(meta)

    @property
    def is_mounted_app(self) -> bool:
        try:
            self.query_one(StatusBar)
        except Exception:
            return False
        return True

    # -- approvals (the approver shows the modal; the app only tracks it) --------------------
    def approval_shown(self, request: Any) -> None:
        self.approving.append(request)
        self.event_log.add("notice", f"approval asked: {request.label} — {preview(request.summary, 120)}")

    def approval_closed(self, request: Any) -> None:
        if request in self.approving:
            self.approving.remove(request)

    # -- the editor --------------------------------------------------------------------------
    def on_steering_editor_submitted(self, message: SteeringEditor.Submitted) -> None:
        line = message.text
        try:
            command = parse_slash(line)
        except SlashCommandError as exc:
            self.notify(str(exc), severity="warning")
            return  # the text stays in the editor to fix
        if command is not None:
            if self.run_slash(*command):
                message.editor.clear()
            return
        if not line.strip():
            return
        if self.orchestrator.submit(message_text(line)):
            message.editor.clear()

    def on_steering_editor_stop_requested(self, _message: SteeringEditor.StopRequested) -> None:
        self.action_stop()

    def run_slash(self, name: str, arg: str) -> bool:
        """Run a slash command; True when it was taken (the editor is cleared)."""
        orch = self.orchestrator
        if name == "help":
            self.chat_notice("\n".join(f"{c.usage} — {c.help}" for c in COMMANDS))
        elif name == "steer" or name == "queue":
            if not arg or (name == "queue" and arg in ("mode", "run", "clear")):
                return self._mode_command(name, arg)
            return orch.submit(arg, how=name)
        elif name == "tool":
            tool, _, text = arg.partition(" ")
            if not tool or not text.strip():
                self.notify("/tool takes a tool name and a message, e.g. /tool os.fs.write save a note", severity="warning")
                return False
            return self.orchestrator.submit(text.strip(), tool_choice=tool)
        elif name == "stop":
            self.action_stop()
        elif name == "mouse":
            return self._mouse_command(arg)
        elif name == "level":
            return self._level_command(arg)
        elif name == "new":
            return self.open_session(None)
        elif name == "session":
            if not arg:
                self.notify("/session takes a session id (the Sessions tab lists them)", severity="warning")
                return False
            return self.open_session(arg)
        elif name == "tab":
            return self.action_show_tab(arg.lower() or CHAT_TAB)
        elif name == "quit":
            self.exit()
        return True

    def _mode_command(self, name: str, arg: str) -> bool:
        orch = self.orchestrator
        if name == "steer" or arg == "mode":
            self.set_submit_mode("steer" if name == "steer" else "queue")
        elif arg == "run":
            orch.resume()
        elif arg == "clear":
            dropped = orch.clear_queue()
            self.chat_notice(f"dropped {len(dropped)} queued message(s)")
        else:  # bare /queue only lists: it changes nothing
            listing = [f"{i + 1}. {preview(p.text, 100)}" for i, p in enumerate(orch.pending)]
            self.chat_notice("queue: " + ("\n".join(listing) if listing else "empty")
                             + (" (held: /queue run sends it)" if orch.paused and listing else ""))
        return True

    def _mouse_command(self, arg: str) -> bool:
        if arg in ("on", "off"):
            self.mouse_switch.set(arg == "on")
            self.persist("mouse", arg == "on")
            self.notify(f"mouse {arg}" + ("" if arg == "on" else ": the terminal selects text; /mouse on to click"))
            self.state_changed()
        elif arg == "select":
            self.mouse_switch.suspend()
        else:
            self.notify("/mouse takes on, off or select", severity="warning")
            return False
        return True

    def _level_command(self, arg: str) -> bool:
        from atomic_agent.plugins.tui.privacy_panel import PrivacyOrchestrator

        if self.runtime is None:
            self.notify("/level is not available when attached to serve: the level belongs to serve's runtime "
                        "(`atomic-agent config set` and a serve restart change it)", severity="warning")
            return False
        try:
            PrivacyOrchestrator(self).set_level(arg)
        except ValueError as exc:
            self.notify(str(exc), severity="warning")
            return False
        return True

    # -- actions -----------------------------------------------------------------------------
    def action_toggle_mode(self) -> None:
        self.set_submit_mode("queue" if self.orchestrator.mode == "steer" else "steer")

    def set_submit_mode(self, mode: str) -> None:
        self.orchestrator.set_mode(mode)
        self.persist("whileBusySubmit", mode)
        self.notify(f"while a turn runs, Enter {'steers it' if mode == 'steer' else 'queues the message'}")

    def persist(self, field: str, value: Any) -> None:
        """Save a tui setting; a state dir that cannot be written keeps it for this run only."""
        if self.runtime is None:
            return  # attached: the setting applies to this run (config is written by the in-process TUI)
        try:
            persist_tui_setting(self.runtime, field, value)
        except Exception as exc:
            self.notify(f"could not save tui.{field} ({exc}); it applies until you quit", severity="warning",
                        timeout=8)

    def action_stop(self) -> None:
        if not self.orchestrator.stop():
            self.notify("no turn is running")

    def action_select_text(self) -> None:
        self.mouse_switch.suspend()

    def action_show_tab(self, name: str) -> bool:
        tabs = self.query_one(TabbedContent)
        wanted = CHAT_TAB if name == CHAT_TAB else tab_id(name)
        known = [CHAT_TAB, *(tab_id(p.name) for p in self.panels)]
        if wanted not in known:
            names = ", ".join([CHAT_TAB, *(p.name for p in self.panels)])
            self.notify(f"no tab {name!r}; the tabs are {names}", severity="warning")
            return False
        tabs.active = wanted
        if wanted == CHAT_TAB:
            self.query_one(SteeringEditor).focus()
        else:
            pane = self.query_one(f"#{wanted}", TabPane)
            focusable = [w for w in pane.query("*") if w.focusable]
            if focusable:
                focusable[0].focus()
            else:  # focus must leave the hidden chat editor, or the tabs switch back to it
                tabs.query_one(Tabs).focus()
        return True

    def on_settled_elsewhere_modal_typed_on(self, message: SettledElsewhereModal.TypedOn) -> None:
        """A key typed while an answered modal was still closing: the chat editor gets it, in
        order, as if the modal had already gone."""
        editor = self.screen_stack[0].query_one(SteeringEditor)
        editor.focus()
        editor.post_message(message.key)

    def on_key(self, event: events.Key) -> None:
        wanted = self.panel_keys.get(event.key)
        if wanted is not None:
            event.stop()
            self.action_show_tab(wanted.removeprefix("panel-"))

    # -- sessions ----------------------------------------------------------------------------
    def open_session(self, session_id: str | None) -> bool:
        try:
            self.orchestrator.open_session(session_id)
        except Exception as exc:  # a wrong id, a running turn
            self.notify(str(exc), severity="error")
            return False
        view = self.query_one(ChatView)
        view.remove_children()
        view.feed = None
        if session_id is None:
            self.chat_notice("new session: the next message starts it")
        else:
            self._show_history(session_id)
        self.action_show_tab(CHAT_TAB)
        return True

    def _show_history(self, session_id: str, last: int = 20) -> None:
        def show(shown: list[TranscriptLine]) -> None:
            view = self.query_one(ChatView)
            if len(shown) > last:
                view.add_notice(f"… {len(shown) - last} earlier messages (atomic-agent sessions show {session_id})")
            for kind, text in shown[-last:]:
                if kind == "user":
                    view.add_user(text)
                else:
                    view.add_reply(text)
            view.add_notice(f"continuing session {session_id}")

        self.orchestrator.load_transcript(session_id, show)

    # -- mouse gate and the command palette --------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.MouseEvent) and not isinstance(event, events.Enter | events.Leave):
            try:
                target, _ = self.screen.get_widget_at(event.screen_x, event.screen_y)
            except Exception:
                target = None
            if not self.mouse_switch.admit(event, target):
                return
        await super().on_event(event)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for command in COMMANDS:
            if command.name in ("help", "stop", "new", "quit"):
                yield SystemCommand(command.usage, command.help,
                                    lambda name=command.name: self.run_slash(name, ""))
        yield SystemCommand("Toggle steer / queue", "what Enter does while a turn runs (Ctrl+T)",
                            self.action_toggle_mode)
        yield SystemCommand("Mouse on", "clickable rows and wheel (saved)", lambda: self._mouse_command("on"))
        yield SystemCommand("Mouse off", "the terminal selects text (saved)", lambda: self._mouse_command("off"))
        yield SystemCommand("Select text for 10 s", "the terminal's own selection, then the mouse comes back",
                            self.action_select_text)
        for panel in [None, *self.panels]:
            name, title = (CHAT_TAB, "Chat") if panel is None else (panel.name, panel.title)
            yield SystemCommand(f"Show {title}", f"switch to the {title} tab",
                                lambda n=name: self.action_show_tab(n))
