"""The Tools tab: every registered tool with its tier, resource class and approval category;
Enter (or a second click) shows its argument schema."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from atomic_agent.plugins.tui.mouse_interaction import RowList


class ToolsOrchestrator:
    def __init__(self, context: Any) -> None:
        self.runtime = context.runtime

    def tools(self) -> list[Any]:
        return sorted(self.runtime.registry.specs(), key=lambda s: s.name)

    def schema(self, name: str) -> str:
        spec = self.runtime.registry.get(name)
        if spec is None:
            return f"{name} is no longer registered"
        lines = [f"{spec.name} — {spec.summary}", f"plugin {spec.plugin or '?'} · tier {spec.tier.value} · "
                 f"{spec.resource_class.value} · approval {spec.approval_category or 'never asks'}", "",
                 json.dumps(dict(spec.args_schema), indent=2, ensure_ascii=False, default=str)]
        if spec.example:
            lines += ["", f"example: {spec.example}"]
        return "\n".join(lines)


class ToolsPanel(Vertical):
    DEFAULT_CSS = """
    ToolsPanel RowList { height: 1fr; }
    ToolsPanel #tool-schema-box { height: 1fr; border-top: solid $accent; }
    ToolsPanel .hint { height: 1; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self.orchestrator = ToolsOrchestrator(context)

    def compose(self) -> ComposeResult:
        yield Static("Enter or a second click shows the schema", classes="hint")
        yield RowList(id="tools-table")
        with VerticalScroll(id="tool-schema-box"):
            yield Static("", id="tool-schema", markup=False)

    def on_mount(self) -> None:
        table = self.query_one(RowList)
        table.add_columns("tool", "tier", "class", "approval")
        for spec in self.orchestrator.tools():
            table.add_row(spec.name, spec.tier.value, spec.resource_class.value, spec.approval_category or "—",
                          key=spec.name)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.query_one("#tool-schema", Static).update(self.orchestrator.schema(str(event.row_key.value)))
