"""The TUI's Providers panel against a real runtime with the openai_compatible plugin and a
vendor stand-in on loopback: add a provider with its key checked before saving (a rejected
key saves nothing), make it active, re-check a key, and edit the fallback chain by keys and
mouse; bad input gives notices."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from textual.widgets import Input

import atomic_agent.plugins.openai_compatible as openai_plugin
from atomic_agent.api import dotenv_file, runtime_for_test
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset

from .vendor_server import Reply, VendorServer, chat_reply

GOOD_KEY = "sk-good-0123456789"
REJECTED = Reply(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})


async def _runtime(state: Path, vendor: VendorServer):
    llm = {"providers": [{"id": "local", "kind": "llama-server"},
                         {"id": "a", "kind": "openai-compatible", "preset": "custom", "baseUrl": vendor.url + "/v1",
                          "model": "m-a", "apiKeyEnv": "A_KEY"}],
           "activeTextProvider": "a"}
    return await runtime_for_test(state, plugins={"openai_compatible": openai_plugin}, config={"llm": llm},
                                  environ={"A_KEY": GOOD_KEY})


def _cells(app: PanelHost, table_id: str) -> list[list[str]]:
    table = app.query_one(table_id)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _llm(state: Path) -> dict:
    return json.loads((state / "config.json").read_text())["llm"]


async def _add(app: PanelHost, pilot, **fields: str) -> None:
    await pilot.press("n")
    await pilot.pause()
    for name, value in fields.items():
        app.screen.query_one(f"#provider-{name.replace('_', '-')}", Input).value = value
    await pilot.press("ctrl+s")
    await app.settle(pilot)


async def test_a_verified_provider_is_saved_made_active_and_chained(tmp_path: Path, vendor: VendorServer) -> None:
    state = tmp_path / "state"
    runtime = await _runtime(state, vendor)
    try:
        app = PanelHost(panel_of(runtime, "providers"), runtime)
        async with app.run_test(size=(160, 45)) as pilot:
            assert [r[:2] for r in _cells(app, "#providers-list")] == [["", "local"], ["*", "a"]]
            assert _cells(app, "#providers-list")[1][5] == "$A_KEY set"
            assert [r[1:] for r in _cells(app, "#providers-chain")] == [["a", "active (primary)"],
                                                                         ["local", "local last resort"]]
            vendor.script(chat_reply("pong"))
            await _add(app, pilot, id="b", preset="custom", model="m-b", base_url=vendor.url + "/v1", key=GOOD_KEY)
            assert vendor.seen and vendor.seen[-1].headers.get("Authorization") == f"Bearer {GOOD_KEY}"
            assert [e["id"] for e in _llm(state)["providers"]] == ["local", "a", "b"]
            values, _ = dotenv_file.parse_dotenv((state / ".env").read_text())
            assert values["B_API_KEY"] == GOOD_KEY and stat.S_IMODE(os.stat(state / ".env").st_mode) == 0o600
            assert GOOD_KEY not in (state / "config.json").read_text()
            assert GOOD_KEY not in "\n".join(app.messages() + app.job_titles)
            assert any("Added provider b (key check: ok" in m for m in app.messages()), app.notices

            table = app.query_one("#providers-list")
            await pilot.click("#providers-list", offset=row_offset(table, 2))  # select b
            await pilot.press("a")  # into the chain, before the local last resort
            assert [r[1] for r in _cells(app, "#providers-chain")] == ["a", "b", "local"]
            await pilot.click("#providers-list", offset=row_offset(table, 2))  # second click: make b active
            assert _llm(state)["activeTextProvider"] == "b"
            assert _cells(app, "#providers-list")[2][0] == "*"
            assert [r[1] for r in _cells(app, "#providers-chain")] == ["b", "a", "local"]

            await pilot.press("tab")  # to the chain
            chain = app.query_one("#providers-chain")
            assert app.focused is chain
            await pilot.click("#providers-chain", offset=row_offset(chain, 1))  # a
            await pilot.press("K")  # a cannot pass the active head
            assert any("already as far up" in m for m in app.messages()), app.notices
            await pilot.click("#providers-chain", offset=row_offset(chain, 2))  # local
            await pilot.press("x")  # the local last resort stays
            assert any("Cannot remove local" in m for m in app.messages("error"))
            await pilot.click("#providers-chain", offset=row_offset(chain, 1))
            await pilot.press("x")
            assert [r[1] for r in _cells(app, "#providers-chain")] == ["b", "local"]
            assert _llm(state)["fallback"]["chain"] == ["b"]
    finally:
        await runtime.close()


async def test_a_rejected_key_saves_nothing_and_bad_forms_are_notices(tmp_path: Path, vendor: VendorServer) -> None:
    state = tmp_path / "state"
    runtime = await _runtime(state, vendor)
    try:
        before = (state / "config.json").read_text()
        app = PanelHost(panel_of(runtime, "providers"), runtime)
        async with app.run_test(size=(160, 45)) as pilot:
            # a hostile endpoint echoes the key in its refusal: the notice must not carry it
            vendor.script(Reply(401, {"error": {"message": "key sk-bad-secret-999 is not valid"}}))
            await _add(app, pilot, id="c", preset="custom", model="m-c", base_url=vendor.url + "/v1",
                       key="sk-bad-secret-999")
            errors = app.messages("error")
            assert len(errors) == 1 and "c was not saved" in errors[0] and "invalid_key" in errors[0], app.notices
            assert "sk-bad-secret-999" not in errors[0] and "key <key> is not valid" in errors[0]
            assert (state / "config.json").read_text() == before and not (state / ".env").exists()
            assert [r[1] for r in _cells(app, "#providers-list")] == ["local", "a"]

            await _add(app, pilot, id="a", preset="custom", model="m", base_url=vendor.url + "/v1", key="k")
            await _add(app, pilot, id="d", preset="nonsense")
            await _add(app, pilot, id="", preset="openai")
            await _add(app, pilot, id="e", preset="custom", model="m", base_url="ftp://nowhere", key="k")
            errors = app.messages("error")[1:]
            assert len(errors) == 4, app.notices
            assert "already exists" in errors[0] and "unknown preset 'nonsense'" in errors[1]
            assert "needs an id" in errors[2] and "http(s) URL" in errors[3]
            assert (state / "config.json").read_text() == before

            vendor.script(REJECTED)  # the configured key was revoked since
            await pilot.press("down", "v")
            await app.settle(pilot)
            assert any(m.startswith("a: invalid_key") for m in app.messages("error")), app.notices
            await pilot.press("up", "v")  # local has no key to check
            await app.settle(pilot)
            assert any("Cannot check local" in m for m in app.messages("error"))
    finally:
        await runtime.close()
