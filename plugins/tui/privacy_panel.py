"""The Privacy tab: the approval ladder (levels 1–5, what each stops asking for) and the
session grants now in force, each with a revoke.

Keys: 1–5 pick a level, ←/→ step it, Enter (or a second click) applies the selected row;
level 5 asks for a confirm that states its cost. In the grants list, Enter or x revokes.
`PrivacyOrchestrator` is the only part that changes the level or the grants: the level is
saved to config.json first and then applied, so a state dir that cannot be written leaves
the running level as it was and says so.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from atomic_agent.api import approval_gate
from atomic_agent.plugins.tui.confirm_modal import ConfirmModal
from atomic_agent.plugins.tui.mouse_interaction import RowList

FULL_TRUST_COST = ("Level 5 (full trust) asks for nothing: shell commands, scripts, process kills, writes anywhere, "
                   "non-web browser URLs and changes to the agent's own trust config all run without a question. "
                   "A model misled by a web page, a file or an MCP server can then do anything you can.")


class PrivacyOrchestrator:
    def __init__(self, context: Any) -> None:
        self.context = context
        self.runtime = context.runtime

    @property
    def level(self) -> int:
        return int(self.runtime.gate.level)

    def stops_asking(self, level: int) -> list[str]:
        """Labels of the categories this level auto-approves (the ladder is cumulative)."""
        cats = self.runtime.gate.categories.values()
        return [c.label for c in sorted(cats, key=lambda c: (c.auto_approve_level, c.name))
                if not c.always_asks and c.auto_approve_level <= level]

    def set_level(self, value: object) -> int:
        """Save and apply; ValueError for anything but 1..5. A failed save is a notice."""
        text = str(value).strip()
        if not text.isdigit() or int(text) not in approval_gate.LEVEL_NAMES:
            ladder = ", ".join(f"{k} {v}" for k, v in approval_gate.LEVEL_NAMES.items())
            raise ValueError(f"the approval level is 1..5 ({ladder}), not {value!r}")
        level = int(text)
        try:
            approval_gate.set_approval_level(self.runtime.state_dir, self.runtime.config_blocks, self.runtime.gate, level)
        except Exception as exc:  # a read-only state dir: nothing changed
            self.context.notify(f"the level stays {self.level}: could not save agent.approvalLevel ({exc})",
                                severity="error", timeout=10)
            return self.level
        self.context.notify(f"approval level {level} {approval_gate.LEVEL_NAMES[level]}",
                            severity="warning" if level == 5 else "information")
        refresh = getattr(self.context, "state_changed", None)
        if refresh is not None:
            refresh()
        return level

    def grants(self) -> list[dict[str, Any]]:
        return list(self.runtime.gate.grants_snapshot())

    def revoke(self, grant: dict[str, Any]) -> bool:
        return bool(self.runtime.gate.revoke_grant(str(grant["sessionId"]), str(grant["kind"]), str(grant["value"])))


class PrivacyPanel(Vertical):
    DEFAULT_CSS = """
    PrivacyPanel #ladder { height: 9; }
    PrivacyPanel #grants { height: 1fr; }
    PrivacyPanel .hint { height: auto; color: $text-muted; padding: 0 1; }
    PrivacyPanel #level-cost { color: $error; padding: 0 1; height: auto; margin-bottom: 1; }
    """
    BINDINGS = [Binding("1", "pick(1)", show=False), Binding("2", "pick(2)", show=False),
                Binding("3", "pick(3)", show=False), Binding("4", "pick(4)", show=False),
                Binding("5", "pick(5)", show=False), Binding("left", "step(-1)", "level down", show=False),
                Binding("right", "step(1)", "level up", show=False), Binding("x", "revoke", "revoke grant"),
                Binding("r", "reload", "reload")]

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self.orchestrator = PrivacyOrchestrator(context)

    def compose(self) -> ComposeResult:
        yield Static("approval ladder · 1–5 or ←/→ pick · Enter/second click applies", classes="hint")
        yield RowList(id="ladder")
        yield Static("", id="level-cost")
        yield Static("session grants · Enter/x revokes · r reloads", classes="hint")
        yield RowList(id="grants")

    def on_mount(self) -> None:
        ladder = self.query_one("#ladder", RowList)
        ladder.add_columns("", "level", "stops asking for")
        grants = self.query_one("#grants", RowList)
        grants.add_columns("session", "grant", "category", "uses left")
        self.action_reload()

    def on_show(self) -> None:
        self.action_reload()  # the tab shows what is true now (turns and grants change meanwhile)

    def action_reload(self) -> None:
        ladder = self.query_one("#ladder", RowList)
        ladder.clear()
        current = self.orchestrator.level
        previous: list[str] = []
        for level, name in approval_gate.LEVEL_NAMES.items():
            labels = self.orchestrator.stops_asking(level)
            added = [label for label in labels if label not in previous] or ["nothing: every gated action asks"]
            previous = labels
            ladder.add_row("●" if level == current else "", f"{level} {name}", ", ".join(added), key=str(level))
        ladder.move_cursor(row=current - 1)
        self.query_one("#level-cost", Static).update(FULL_TRUST_COST)  # the cost is stated whatever the level
        grants = self.query_one("#grants", RowList)
        grants.clear()
        self._grants = self.orchestrator.grants()
        for i, grant in enumerate(self._grants):
            grants.add_row(str(grant["sessionId"])[:12], f"{grant['kind']}:{grant['value']}", str(grant["category"]),
                           "∞" if grant.get("usesLeft") is None else str(grant["usesLeft"]), key=str(i))

    def action_pick(self, level: int) -> None:
        self.query_one("#ladder", RowList).move_cursor(row=level - 1)
        self.apply(level)

    def action_step(self, delta: int) -> None:
        self.action_pick(min(max(self.orchestrator.level + delta, 1), 5))

    def apply(self, level: int) -> None:
        if level == self.orchestrator.level:
            return
        if level == 5:
            def answered(yes: bool | None) -> None:
                if yes:
                    self.orchestrator.set_level(5)
                self.action_reload()

            self.app.push_screen(ConfirmModal(FULL_TRUST_COST + "\n\nSwitch to level 5?"), answered)
            return
        self.orchestrator.set_level(level)
        self.action_reload()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "ladder":
            self.apply(int(str(event.row_key.value)))
        else:
            self.action_revoke()

    def action_revoke(self) -> None:
        key = self.query_one("#grants", RowList).selected_key()
        if key is None:
            self.context.notify("no grant selected (there may be none)", severity="warning")
            return
        grant = self._grants[int(key)]
        if self.orchestrator.revoke(grant):
            self.context.notify(f"revoked {grant['kind']}:{grant['value']}; the next such call asks again")
        self.action_reload()
