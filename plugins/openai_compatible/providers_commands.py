"""`atomic-agent providers list|presets|add|key|verify|use|search` (and `providers fallback ...`)."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

from .fallback_commands import fallback_app
from .key_variables import default_key_env as _default_key_env
from .key_variables import key_env as _key_env

providers_app = typer.Typer(no_args_is_help=True)
providers_app.add_typer(fallback_app, name="fallback", help="Show and edit the provider fallback chain.")
KIND = "openai-compatible"


def _cli_name(entry: dict[str, Any]) -> str:
    cli = entry.get("subscriptionCli")
    return str(cli.get("cli", "")) if isinstance(cli, dict) else ""


def _key_state(entry: dict[str, Any]) -> str:
    if entry.get("kind") != KIND:
        return "-"
    env = _key_env(entry)
    if not env:
        return "not needed"
    return f"${env} set" if os.environ.get(env, "").strip() else f"${env} missing"


@providers_app.command("list")
def list_command(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The configured providers; `*` marks the active text provider. Keys are never shown."""
    from atomic_agent.api import llm_config

    llm = llm_config.read_llm_config(current_cli_state(ctx).config)
    entries = [dict(e) for e in llm.providers] or [{"id": "local", "kind": "llama-server", "synthesised": True}]
    active = llm.active_text_provider or entries[0]["id"]
    rows = [{"id": e["id"], "kind": e["kind"], "active": e["id"] == active,
             "model": e.get("model") or _cli_name(e),
             "preset": e.get("preset", ""), "baseUrl": e.get("baseUrl", ""), "key": _key_state(e),
             "embeddings": e["id"] == llm.active_embedding_provider} for e in entries]
    if as_json:
        print_json(rows)
        return
    print_table(["", "id", "kind", "model", "preset", "key"],
                [["*" if r["active"] else "", r["id"], r["kind"], r["model"], r["preset"], r["key"]] for r in rows])


@providers_app.command("presets")
def presets_command(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The vendor presets an `openai-compatible` entry can start from."""
    from .vendor_presets import PRESETS

    rows = [{"preset": p.id, "label": p.label, "baseUrl": p.base_url, "keyEnv": p.api_key_env,
             "defaultModel": p.default_model, "local": p.local} for p in PRESETS]
    if as_json:
        print_json(rows)
        return
    print_table(["preset", "label", "base url", "key variable", "default model"],
                [[r["preset"], r["label"], r["baseUrl"], r["keyEnv"], r["defaultModel"]] for r in rows])


def _read_key_from_stdin() -> str:
    key = sys.stdin.readline().strip()
    if not key:
        fail("no API key on stdin; pipe it in, e.g. `printenv MY_KEY | atomic-agent providers key ID`")
    return key


def _verdict_for(entry: dict[str, Any], key: str | None) -> Any:
    import asyncio

    from .endpoint_entry import EntryError, resolve_endpoint
    from .verify_key import VerifyTarget, verify_provider_key

    env_name = _key_env(entry)
    environ = dict(os.environ)
    if key is not None and env_name:
        environ[env_name] = key
    try:
        ep = resolve_endpoint(entry, environ)
    except EntryError as exc:
        fail(str(exc))
    target = VerifyTarget(ep.base_url, ep.model, ep.api_key, ep.api_key_header, ep.headers, ep.preset)
    return asyncio.run(verify_provider_key(target))


def _report(verdict: Any) -> None:
    print(f"{verdict.status}: {verdict.detail}" + (f" (HTTP {verdict.http_status}, model {verdict.model})"
                                                   if verdict.http_status else ""))


@providers_app.command("add")
def add_command(
    ctx: typer.Context,
    provider_id: str = typer.Argument(..., metavar="ID", help="A name for the entry, e.g. openrouter-mini."),
    preset: str = typer.Option("custom", "--preset", help="A vendor preset (see `providers presets`)."),
    model: str = typer.Option("", "--model", help="The model id (default: the preset's)."),
    base_url: str = typer.Option("", "--base-url", help="The API base URL, e.g. https://host/v1."),
    key_env: str = typer.Option("", "--key-env", help="The variable holding the key (default: the preset's)."),
    key_stdin: bool = typer.Option(False, "--api-key-stdin", help="Read the API key from stdin; kept in .env."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Save without checking the key first."),
    use: bool = typer.Option(False, "--use", help="Make it the active text provider."),
) -> None:
    """Add an openai-compatible provider; the key is checked before anything is saved."""
    from atomic_agent.api import dotenv_file

    from .llm_block_edit import load_llm_block, save_llm_block
    from .vendor_presets import PRESETS_BY_ID

    if preset not in PRESETS_BY_ID:
        fail(f"unknown preset {preset!r}; see `atomic-agent providers presets`")
    entry: dict[str, Any] = {"id": provider_id, "kind": KIND, "preset": preset}
    for field, value in (("model", model), ("baseUrl", base_url), ("apiKeyEnv", key_env)):
        if value:
            entry[field] = value
    boot, raw, llm = load_llm_block(ctx)
    if any(isinstance(e, dict) and e.get("id") == provider_id for e in llm.get("providers") or []):
        fail(f"a provider with id {provider_id!r} already exists; remove it from config.json or pick another id")
    key = _read_key_from_stdin() if key_stdin else None
    if key is not None and not _key_env(entry):
        entry["apiKeyEnv"] = _default_key_env(provider_id)  # the entry must name where its key lives
    if not no_verify and not PRESETS_BY_ID[preset].local:
        verdict = _verdict_for(entry, key)
        _report(verdict)
        if verdict.blocking:
            fail(f"not saved: the key check said {verdict.status}; fix the key or its credit and try again")
    llm["providers"] = [*(llm.get("providers") or []), entry]
    if use:
        llm["activeTextProvider"] = provider_id
    save_llm_block(boot, raw, llm)
    if key is not None:
        dotenv_file.set_dotenv_key(boot.state_dir / ".env", _key_env(entry), key)
    print(f"added provider {provider_id!r}" + (" (active)" if use else ""))


@providers_app.command("key")
def key_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID"),
                no_verify: bool = typer.Option(False, "--no-verify", help="Store without checking it first.")) -> None:
    """Store a provider's API key, read from stdin, in the state dir's .env (0600), after checking it."""
    from atomic_agent.api import dotenv_file, llm_config

    state = current_cli_state(ctx)
    entry = llm_config.read_llm_config(state.config).entry(provider_id)
    if entry is None or entry.get("kind") != KIND:
        fail(f"no openai-compatible provider {provider_id!r} is configured (see `atomic-agent providers list`)")
    env_name = _key_env(entry)
    if not env_name:
        fail(f"provider {provider_id!r} has no key variable; set `apiKeyEnv` in its entry")
    key = _read_key_from_stdin()
    if not no_verify:
        verdict = _verdict_for(entry, key)
        _report(verdict)
        if verdict.blocking:
            fail(f"not stored: the key check said {verdict.status}")
    dotenv_file.set_dotenv_key(state.require().state_dir / ".env", env_name, key)
    print(f"stored the key for {provider_id!r} as {env_name} in .env")


@providers_app.command("verify")
def verify_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID"),
                   as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check a configured provider's key with one 1-token completion (exit 1 unless ok)."""
    from atomic_agent.api import llm_config

    entry = llm_config.read_llm_config(current_cli_state(ctx).config).entry(provider_id)
    if entry is None or entry.get("kind") != KIND:
        fail(f"no openai-compatible provider {provider_id!r} is configured (see `atomic-agent providers list`)")
    verdict = _verdict_for(entry, None)
    if as_json:
        print_json({"status": verdict.status, "detail": verdict.detail, "httpStatus": verdict.http_status,
                    "model": verdict.model, "blocking": verdict.blocking})
    else:
        _report(verdict)
    if verdict.status != "ok":
        raise typer.Exit(1)


@providers_app.command("use")
def use_command(ctx: typer.Context, provider_id: str = typer.Argument(..., metavar="ID")) -> None:
    """Make ID the active text provider (written to config.json)."""
    from .llm_block_edit import edit_llm_block

    edit_llm_block(ctx, lambda llm: llm.__setitem__("activeTextProvider", provider_id))
    print(f"active text provider: {provider_id}")


@providers_app.command("search")
def search_command(terms: list[str] = typer.Argument(..., help="Words to match (all must match)."),
                   limit: int = typer.Option(20, "--limit", min=1, help="Show at most this many."),
                   as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Search the bundled offline OpenRouter catalog, e.g. `providers search cheap tools 128k`."""
    from .model_details import capability_display, context_display, price_display
    from .model_search import search_models
    from .openrouter_catalog import SNAPSHOT_DATE

    found = search_models(" ".join(terms))[:limit]
    rows = [{"id": m.id, "context": context_display(m.context), "price": price_display(m),
             "capabilities": capability_display(m)} for m in found]
    if as_json:
        print_json(rows)
        return
    if not rows:
        print(f"no model in the offline catalog ({SNAPSHOT_DATE}) matches {' '.join(terms)!r}")
        return
    print_table(["model", "context", "price", "capabilities"],
                [[r["id"], r["context"], r["price"], r["capabilities"]] for r in rows])
