"""`atomic-agent providers ...` end to end through the real typer app and config file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import attrs
import pytest

from .vendor_server import Reply, chat_reply


@attrs.frozen
class Ran:
    code: int
    output: str


@pytest.fixture
def providers_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    import atomic_agent.plugins.openai_compatible as openai_plugin
    from atomic_agent.cli.cli_state import CliState
    from atomic_agent.cli.main import build_app
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.testing.runtime_kit import fresh_plugin_host

    state_dir = tmp_path / "state"
    monkeypatch.setenv("TEST_VENDOR_KEY", "")

    def run(*args: str, stdin: str | None = None) -> Ran:
        host = fresh_plugin_host()
        host.register(openai_plugin, "openai_compatible")
        ctx = boot(state_dir, environ=dict(os.environ), host=host)
        app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
        result = CliRunner().invoke(app, list(args), input=stdin)
        return Ran(result.exit_code, result.output)

    run.state_dir = state_dir  # type: ignore[attr-defined]
    return run


def config(state_dir: Path) -> dict:
    return json.loads((state_dir / "config.json").read_text())


def write_llm(state_dir: Path, llm: dict) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "config.json").write_text(json.dumps({"version": 2, "llm": llm}))


def test_presets_and_offline_search(providers_cli):
    presets = json.loads(providers_cli("providers", "presets", "--json").output)
    assert {"openrouter", "anthropic", "gemini", "ollama"} <= {p["preset"] for p in presets}
    found = json.loads(providers_cli("providers", "search", "cheap", "tools", "--json").output)
    assert found and all("tools" in r["capabilities"] for r in found)
    assert "no model" in providers_cli("providers", "search", "zzzz-nothing").output


def test_add_verifies_the_key_then_saves_entry_and_key(providers_cli, vendor):
    vendor.script(chat_reply("x", finish="length"))
    ran = providers_cli("providers", "add", "v1", "--base-url", vendor.url + "/v1", "--model", "m-1",
                        "--key-env", "TEST_VENDOR_KEY", "--api-key-stdin", "--use", stdin="sk-fresh-key\n")
    assert ran.code == 0, ran.output
    assert "ok:" in ran.output and "sk-fresh-key" not in ran.output
    llm = config(providers_cli.state_dir)["llm"]
    assert llm["activeTextProvider"] == "v1"
    assert llm["providers"] == [{"id": "v1", "kind": "openai-compatible", "preset": "custom", "model": "m-1",
                                 "baseUrl": vendor.url + "/v1", "apiKeyEnv": "TEST_VENDOR_KEY"}]
    dotenv = providers_cli.state_dir / ".env"
    assert "TEST_VENDOR_KEY=sk-fresh-key" in dotenv.read_text()
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    assert vendor.seen[0].headers["Authorization"] == "Bearer sk-fresh-key"


def test_a_rejected_key_blocks_the_save(providers_cli, vendor):
    vendor.script(Reply(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}))
    ran = providers_cli("providers", "add", "v1", "--base-url", vendor.url + "/v1", "--model", "m-1",
                        "--key-env", "TEST_VENDOR_KEY", "--api-key-stdin", stdin="sk-bad\n")
    assert ran.code == 2 and "invalid_key" in ran.output
    assert "llm" not in config(providers_cli.state_dir) or not config(providers_cli.state_dir)["llm"].get("providers")
    assert not (providers_cli.state_dir / ".env").exists()


def test_an_unreachable_endpoint_still_saves_and_reports(providers_cli):
    from atomic_agent.plugins.llama_server.server_process import free_loopback_port

    ran = providers_cli("providers", "add", "off", "--base-url", f"http://127.0.0.1:{free_loopback_port()}/v1",
                        "--model", "m", "--key-env", "TEST_VENDOR_KEY", "--api-key-stdin", stdin="sk-k\n")
    assert ran.code == 0 and "unreachable" in ran.output
    assert config(providers_cli.state_dir)["llm"]["providers"][0]["id"] == "off"


def test_list_shows_key_state_never_the_key(providers_cli, monkeypatch):
    write_llm(providers_cli.state_dir, {"providers": [
        {"id": "or", "kind": "openai-compatible", "preset": "openrouter"},
        {"id": "sub", "kind": "subscription-cli", "subscriptionCli": {"cli": "claude"}}], "activeTextProvider": "sub"})
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-secret")
    ran = providers_cli("providers", "list", "--json")
    rows = {r["id"]: r for r in json.loads(ran.output)}
    assert rows["or"]["key"] == "$OPENROUTER_API_KEY set" and rows["sub"]["active"] and rows["sub"]["model"] == "claude"
    assert "sk-or-secret" not in ran.output


def test_list_without_llm_shows_the_synthesised_local_entry(providers_cli):
    rows = json.loads(providers_cli("providers", "list", "--json").output)
    assert [(r["id"], r["kind"], r["active"]) for r in rows] == [("local", "llama-server", True)]


def test_use_switches_the_active_provider_through_the_validated_path(providers_cli):
    write_llm(providers_cli.state_dir, {"providers": [{"id": "a", "kind": "openai-compatible"},
                                                      {"id": "b", "kind": "openai-compatible"}]})
    assert providers_cli("providers", "use", "b").code == 0
    assert config(providers_cli.state_dir)["llm"]["activeTextProvider"] == "b"
    bad = providers_cli("providers", "use", "ghost")
    assert bad.code == 2 and "activeTextProvider" in bad.output
    assert config(providers_cli.state_dir)["llm"]["activeTextProvider"] == "b"


def test_verify_exits_nonzero_unless_ok(providers_cli, vendor, monkeypatch):
    write_llm(providers_cli.state_dir, {"providers": [{"id": "v", "kind": "openai-compatible",
                                                       "baseUrl": vendor.url + "/v1", "model": "m",
                                                       "apiKeyEnv": "TEST_VENDOR_KEY"}]})
    monkeypatch.setenv("TEST_VENDOR_KEY", "sk-x")
    vendor.script(Reply(402, {"error": {"message": "Insufficient credits", "code": 402}}))
    ran = providers_cli("providers", "verify", "v", "--json")
    assert ran.code == 1 and json.loads(ran.output)["status"] == "no_balance"
    vendor.script(chat_reply("x"))
    assert providers_cli("providers", "verify", "v").code == 0


CHAIN_LLM = {"providers": [{"id": "a", "kind": "openai-compatible"}, {"id": "b", "kind": "openai-compatible"},
                           {"id": "c", "kind": "openai-compatible"}, {"id": "local", "kind": "llama-server"}],
             "activeTextProvider": "a", "fallback": {"chain": ["a"], "failureThreshold": 5}}


def chain_of(providers_cli) -> list[str]:
    return [r["id"] for r in json.loads(providers_cli("providers", "fallback", "show", "--json").output)["chain"]]


def test_fallback_show_tags_the_head_and_the_appended_local(providers_cli):
    write_llm(providers_cli.state_dir, CHAIN_LLM)
    shown = json.loads(providers_cli("providers", "fallback", "show", "--json").output)
    assert [(r["id"], r["tag"]) for r in shown["chain"]] == [
        ("a", "active (primary)"), ("local", "local last resort (appendLocal)")]
    assert shown["addable"] == ["b", "c"]


def test_fallback_add_move_remove_persist_without_doubling_local(providers_cli):
    write_llm(providers_cli.state_dir, CHAIN_LLM)
    assert providers_cli("providers", "fallback", "add", "b").code == 0
    assert providers_cli("providers", "fallback", "add", "c").code == 0
    assert chain_of(providers_cli) == ["a", "b", "c", "local"]
    assert providers_cli("providers", "fallback", "move", "c", "up").code == 0
    assert chain_of(providers_cli) == ["a", "c", "b", "local"]
    assert providers_cli("providers", "fallback", "move", "b", "down").code == 0  # clamped: local stays last
    assert chain_of(providers_cli) == ["a", "c", "b", "local"]
    assert providers_cli("providers", "fallback", "remove", "c").code == 0
    stored = config(providers_cli.state_dir)["llm"]["fallback"]
    assert stored["chain"] == ["a", "b"] and stored["failureThreshold"] == 5  # hand-set knobs survive


def test_fallback_head_and_local_tail_cannot_be_moved_or_removed(providers_cli):
    write_llm(providers_cli.state_dir, CHAIN_LLM)
    assert providers_cli("providers", "fallback", "remove", "a").code == 2
    assert providers_cli("providers", "fallback", "move", "local", "up").code == 2
    assert providers_cli("providers", "fallback", "add", "ghost").code == 2
    assert chain_of(providers_cli) == ["a", "local"]


def test_a_key_for_an_entry_without_a_key_variable_gets_one_named_after_the_entry(providers_cli, vendor):
    ran = providers_cli("providers", "add", "my-box", "--base-url", vendor.url + "/v1", "--model", "m",
                        "--api-key-stdin", stdin="sk-box\n")
    assert ran.code == 0, ran.output
    assert config(providers_cli.state_dir)["llm"]["providers"][0]["apiKeyEnv"] == "MY_BOX_API_KEY"
    assert "MY_BOX_API_KEY=sk-box" in (providers_cli.state_dir / ".env").read_text()


def test_key_command_checks_then_stores_the_key(providers_cli, vendor):
    write_llm(providers_cli.state_dir, {"providers": [{"id": "v", "kind": "openai-compatible",
                                                       "baseUrl": vendor.url + "/v1", "model": "m",
                                                       "apiKeyEnv": "TEST_VENDOR_KEY"}]})
    vendor.script(Reply(401, {"error": {"message": "invalid x-api-key"}}))
    assert providers_cli("providers", "key", "v", stdin="sk-wrong\n").code == 2
    assert not (providers_cli.state_dir / ".env").exists()
    vendor.script(chat_reply("x"))
    assert providers_cli("providers", "key", "v", stdin="sk-right\n").code == 0
    assert "TEST_VENDOR_KEY=sk-right" in (providers_cli.state_dir / ".env").read_text()


def test_llm_fallback_is_the_same_chain_editor_as_providers_fallback(providers_cli):
    write_llm(providers_cli.state_dir, CHAIN_LLM)
    assert providers_cli("llm", "fallback", "add", "b").code == 0
    assert chain_of(providers_cli) == ["a", "b", "local"]
    shown = json.loads(providers_cli("llm", "fallback", "show", "--json").output)
    assert [r["id"] for r in shown["chain"]] == ["a", "b", "local"]
