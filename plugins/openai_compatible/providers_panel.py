"""The TUI's Providers panel: the configured LLM providers (cloud and other OpenAI-compatible
endpoints) and the fallback chain.

On the provider list: n adds one (a form; the key is typed masked and checked before
anything is saved), Enter (or u) makes the selected one active, v re-checks its key,
a appends it to the fallback chain. On the chain (Tab moves between the lists): x removes
the selected link, K / J move it up / down. Mouse: the first click on a row selects it, a
second click on the selected row does what Enter does (the same binding).
Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, Static

from atomic_agent.api import ConfigError

from .providers_panel_orchestrator import PRESET_IDS, ProviderRejected, ProvidersPanelOrchestrator

RESTART_NOTE = "Restart the agent for running sessions to use it."


class AddProviderScreen(ModalScreen[dict[str, str] | None]):
    BINDINGS = [Binding("ctrl+s", "submit", "Add"), Binding("escape", "cancel", "Cancel")]
    FIELDS = (("id", "id, e.g. openrouter-mini", False), ("preset", f"preset: {', '.join(PRESET_IDS)}", False),
              ("model", "model (empty: the preset's default)", False),
              ("base_url", "base URL (only for preset custom)", False), ("key", "API key (masked)", True))

    def compose(self) -> ComposeResult:
        with Vertical(id="provider-add"):
            yield Label("Add a provider. The key is checked with one tiny request before anything is saved; "
                        "Enter moves on, Ctrl+S adds, Esc cancels.", markup=False)
            for name, placeholder, secret in self.FIELDS:
                yield Input(id=f"provider-{name.replace('_', '-')}", placeholder=placeholder, password=secret)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        inputs = list(self.query(Input))
        at = inputs.index(event.input)
        if at + 1 < len(inputs):
            inputs[at + 1].focus()
        else:
            self.action_submit()

    def action_submit(self) -> None:
        self.dismiss({name: self.query_one(f"#provider-{name.replace('_', '-')}", Input).value
                      for name, _p, _s in self.FIELDS})

    def action_cancel(self) -> None:
        self.dismiss(None)


class ProvidersPanel(Widget):
    BINDINGS = [Binding("n", "add", "Add provider"), Binding("r", "reload", "Reload"),
                Binding("u", "use", "Use"), Binding("v", "verify", "Verify key"),
                Binding("a", "chain_add", "Add to chain"), Binding("x", "chain_remove", "Remove link"),
                Binding("K", "chain_up", "Move up"), Binding("J", "chain_down", "Move down")]
    # each list's own keys work while that list has the focus (the footer shows only those)
    LIST_KEYS = {"use": "providers-list", "verify": "providers-list", "chain_add": "providers-list",
                 "chain_remove": "providers-chain", "chain_up": "providers-chain", "chain_down": "providers-chain"}
    DEFAULT_CSS = ("ProvidersPanel { height: 1fr; } ProvidersPanel #providers-list { height: 1fr; } "
                   "ProvidersPanel #providers-chain { height: auto; max-height: 12; }")

    def __init__(self, context: Any) -> None:
        super().__init__(id="providers-panel")
        self.context = context
        self.orchestrator = ProvidersPanelOrchestrator(context.runtime)
        self.busy = False  # one key check at a time

    def compose(self) -> ComposeResult:
        yield Static("Providers (* active)", markup=False)
        providers = self.context.rows(id="providers-list")
        providers.add_columns("", "provider", "kind", "model", "preset", "key")
        yield providers
        yield Static("Fallback chain (tried in order when the active provider is unavailable)", markup=False)
        chain = self.context.rows(id="providers-chain")
        chain.add_columns("#", "provider", "")
        yield chain

    def on_mount(self) -> None:
        self.action_reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        wanted = self.LIST_KEYS.get(action)
        return wanted is None or getattr(self.app.focused, "id", None) == wanted

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self.refresh_bindings()  # the footer shows the keys of the list that has the focus

    def _table(self, table_id: str) -> DataTable[Text]:
        return self.query_one(f"#{table_id}", DataTable)

    def _selected(self, table_id: str) -> str | None:
        table = self._table(table_id)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _error(self, what: str, exc: Exception) -> None:
        self.context.notify(f"{what}: {exc}", severity="error")

    def action_reload(self) -> None:
        try:
            providers, chain = self.orchestrator.providers(), self.orchestrator.chain()
        except (ValueError, ConfigError) as exc:
            self._error("Cannot read the llm settings", exc)
            return
        self._fill(self._table("providers-list"), [(r.id, ("*" if r.active else "", r.id, r.kind, r.model, r.preset,
                                                          r.key)) for r in providers])
        self._fill(self._table("providers-chain"), [(r.id, (str(n + 1), r.id, r.tag)) for n, r in enumerate(chain)])

    def _fill(self, table: DataTable[Text], rows: list[tuple[str, tuple[str, ...]]]) -> None:
        keep = self._selected(str(table.id))
        table.clear()
        for key, cells in rows:
            table.add_row(*(Text(c) for c in cells), key=key)
        keys = [k for k, _c in rows]
        if keep in keys:
            table.move_cursor(row=keys.index(keep))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "providers-list":
            self.action_use()

    # -- providers -------------------------------------------------------------------------
    def action_add(self) -> None:
        if not self.busy:
            self.app.push_screen(AddProviderScreen(), self._added)

    def _added(self, form: dict[str, str] | None) -> None:
        if form is None:
            return
        name = form["id"].strip() or "the provider"

        async def job() -> None:
            try:
                verdict = await self.orchestrator.add(form["id"], form["preset"] or "custom", form["model"],
                                                      form["base_url"], form["key"])
            except ProviderRejected as exc:
                self.context.notify(f"{name} was not saved: {exc}. Fix the key or its credit and add it again.",
                                    severity="error")
                return
            except (ValueError, ConfigError) as exc:
                self._error(f"Cannot add {name}", exc)
                return
            finally:
                self.busy = False
                self.action_reload()
            checked = "" if verdict is None else f" (key check: {verdict.status}: {verdict.detail})"
            self.context.notify(f"Added provider {name}{checked}. Enter on it makes it active.",
                                severity="information" if verdict is None or verdict.status == "ok" else "warning")

        self.busy = True
        self.context.run_job(f"Checking the key of {name}", job)

    def action_use(self) -> None:
        provider_id = self._selected("providers-list")
        if provider_id is None:
            return
        try:
            self.orchestrator.use(provider_id)
        except (ValueError, ConfigError) as exc:
            self._error(f"Cannot make {provider_id} active", exc)
            return
        self.context.notify(f"Active provider: {provider_id}. {RESTART_NOTE}")
        self.action_reload()

    def action_verify(self) -> None:
        provider_id = self._selected("providers-list")
        if provider_id is None or self.busy:
            return

        async def job() -> None:
            try:
                verdict = await self.orchestrator.verify(provider_id)
            except (ValueError, ConfigError) as exc:
                self._error(f"Cannot check {provider_id}", exc)
                return
            finally:
                self.busy = False
            self.context.notify(f"{provider_id}: {verdict.status}: {verdict.detail}",
                                severity="information" if verdict.status == "ok" else "error")

        self.busy = True
        self.context.run_job(f"Checking the key of {provider_id}", job)

    # -- the fallback chain ----------------------------------------------------------------
    def _chain_edit(self, what: str, change: Any) -> None:
        try:
            change()
        except (ValueError, ConfigError) as exc:
            self._error(what, exc)
            return
        self.action_reload()

    def action_chain_add(self) -> None:
        provider_id = self._selected("providers-list")
        if provider_id is not None:
            self._chain_edit(f"Cannot add {provider_id} to the chain", lambda: self.orchestrator.chain_add(provider_id))

    def action_chain_remove(self) -> None:
        provider_id = self._selected("providers-chain")
        if provider_id is not None:
            self._chain_edit(f"Cannot remove {provider_id}", lambda: self.orchestrator.chain_remove(provider_id))

    def _move(self, step: int) -> None:
        table = self._table("providers-chain")
        provider_id = self._selected("providers-chain")
        if provider_id is None:
            return
        try:
            moved = self.orchestrator.chain_move(provider_id, step)
        except (ValueError, ConfigError) as exc:
            self._error(f"Cannot move {provider_id}", exc)
            return
        if not moved:
            self.context.notify(f"{provider_id} is already as far {'up' if step < 0 else 'down'} as it can go.")
            return
        self.action_reload()
        keys = [r.id for r in self.orchestrator.chain()]
        table.move_cursor(row=keys.index(provider_id))

    def action_chain_up(self) -> None:
        self._move(-1)

    def action_chain_down(self) -> None:
        self._move(1)


def build_providers_panel(context: Any) -> Widget:
    return ProvidersPanel(context)
