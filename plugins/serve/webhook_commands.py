"""`atomic-agent webhook list|add|remove|test`: the endpoints `POST /api/webhooks/{name}` of
`serve` accepts (config.json `webhooks.endpoints`), and their secrets (the state dir's
`.env`, mode 0600; a secret never goes into config.json or onto the command line).

`add` writes both, then says what the endpoint's doctor check says; `test` signs a sample
body exactly as a sender must and posts it to the serve of this state dir on loopback (it
creates a task, as a real call does). A running serve reads endpoints and secrets when it
starts: restart it after `add` or `remove`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json

webhook_app = typer.Typer(no_args_is_help=True, add_completion=False)
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MIN_SECRET_CHARS = 16
DOTENV = ".env"


def _endpoints(boot: Any) -> dict[str, Any]:
    from atomic_agent.plugins.serve.webhook_config import WEBHOOKS_BLOCK

    block = boot.config.blocks.get(WEBHOOKS_BLOCK)
    return dict(block.endpoints) if block is not None else {}


def _check_name(name: str) -> None:
    if not NAME.fullmatch(name):
        fail(f"webhook name {name!r} must be 1-64 letters, digits, '_' or '-' (it is the last part of the URL "
             "path /api/webhooks/NAME)")


def secret_var(name: str) -> str:
    return f"ATOMIC_AGENT_WEBHOOK_{re.sub(r'[^A-Z0-9]', '_', name.upper())}_SECRET"


def _secret_value(state_dir: Path, var: str) -> str | None:
    import os

    from atomic_agent.api import dotenv_file

    if os.environ.get(var):
        return os.environ[var]
    try:
        values, _problems = dotenv_file.parse_dotenv((state_dir / DOTENV).read_text(encoding="utf-8"))
    except OSError:
        return None
    return values.get(var) or None


def _warnings(state_dir: Path, name: str | None = None) -> list[Any]:
    from atomic_agent.plugins.serve.webhook_findings import webhook_findings

    return [f for f in webhook_findings(state_dir) if f.level != "ok" and (name is None or f.check == f"webhook {name}")]


@webhook_app.command("list")
def list_command(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Every endpoint: URL path, credential, whether its secret is set, session mode, template."""
    from atomic_agent.api import print_table

    boot = current_cli_state(ctx).require()
    rows = []
    for name, endpoint in sorted(_endpoints(boot).items()):
        envs = [v for v in (endpoint.hmac_secret_env, endpoint.secret_env) if v]
        auth = " + ".join(kind for kind, var in (("signature", endpoint.hmac_secret_env),
                                                  ("shared secret", endpoint.secret_env)) if var) or "NONE"
        rows.append({"name": name, "path": f"/api/webhooks/{name}", "auth": auth,
                     "secretSet": bool(envs) and all(_secret_value(boot.state_dir, v) for v in envs),
                     "secretEnv": endpoint.secret_env or None, "hmacSecretEnv": endpoint.hmac_secret_env or None,
                     "sessionMode": endpoint.session_mode, "messageTemplate": endpoint.message_template})
    if json_out:
        print_json(rows)
        return
    if not rows:
        print("no webhooks; add one with `atomic-agent webhook add NAME --template TEXT`")
        return
    print_table(["name", "path", "auth", "secret", "session", "template"],
                [[r["name"], r["path"], r["auth"], "set" if r["secretSet"] else "MISSING", r["sessionMode"],
                  r["messageTemplate"][:50]] for r in rows])
    for warning in _warnings(boot.state_dir):
        print(f"warning: {warning.check} {warning.detail}", file=sys.stderr)


def _read_secret(from_stdin: bool, generate: bool) -> tuple[str, bool]:
    import getpass
    import secrets

    if generate:
        return secrets.token_hex(32), True
    if from_stdin:
        secret = sys.stdin.readline().strip()
    elif not sys.stdin.isatty():
        fail("no terminal to ask for the secret on: pipe it with --stdin, or let --generate make one")
    else:
        secret = getpass.getpass("webhook secret (not echoed): ").strip()
    if len(secret) < MIN_SECRET_CHARS:
        fail(f"the secret must be at least {MIN_SECRET_CHARS} characters (got {len(secret)}); nothing was written. "
             "--generate makes a strong one")
    if any(c.isspace() for c in secret):
        fail("the secret must not contain spaces or line breaks; nothing was written")
    return secret, False


@webhook_app.command("add")
def add_command(ctx: typer.Context, name: str = typer.Argument(..., help="Endpoint name: POST /api/webhooks/NAME."),
                template: str = typer.Option(..., "--template", help="The task's message; {{body.a.b}} is filled "
                                                                     "from the JSON body."),
                shared_secret: bool = typer.Option(False, "--shared-secret",
                                                   help="Check X-Webhook-Secret instead of a signature (for senders "
                                                        "that cannot sign; a captured call can be replayed)."),
                session_mode: str = typer.Option("new", "--session-mode", help="new: a fresh session per call; "
                                                                               "persistent: one for the endpoint."),
                from_stdin: bool = typer.Option(False, "--stdin", help="Read the secret from the first line of stdin."),
                generate: bool = typer.Option(False, "--generate", help="Make a random secret and print it once."),
                replace: bool = typer.Option(False, "--replace", help="Replace an endpoint of the same name.")) -> None:
    """Add an endpoint and store its secret in the state dir's .env (asked without echo)."""
    from atomic_agent.api import ConfigError, config_file, dotenv_file, read_raw_config

    _check_name(name)
    if session_mode not in ("new", "persistent"):
        fail(f"--session-mode must be new or persistent, got {session_mode!r}")
    if not template.strip():
        fail("--template must not be empty: it is the message the agent gets for each call")
    if from_stdin and generate:
        fail("give --stdin or --generate, not both")
    boot = current_cli_state(ctx).require()
    if name in _endpoints(boot) and not replace:
        fail(f"webhook {name!r} exists; pass --replace to overwrite it (its secret too)")
    secret, generated = _read_secret(from_stdin, generate)
    var = secret_var(name)
    endpoint = {"messageTemplate": template, "sessionMode": session_mode,
                ("secretEnv" if shared_secret else "hmacSecretEnv"): var}
    try:
        raw = read_raw_config(boot.config.path)
        webhooks = raw.setdefault("webhooks", {})
        webhooks.setdefault("endpoints", {})[name] = endpoint
        config_file.save_raw_config(boot.config.path, raw, boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    dotenv_file.set_dotenv_key(boot.state_dir / DOTENV, var, secret)
    kind = "a shared secret (X-Webhook-Secret)" if shared_secret else "a signature (X-Webhook-Signature)"
    print(f"webhook {name}: POST /api/webhooks/{name} needs {kind}; secret stored as {var} in "
          f"{boot.state_dir / DOTENV}")
    if generated:
        print(f"secret (shown this once): {secret}")
    print("restart a running serve to use it; `atomic-agent webhook test " + name + "` sends a signed sample")
    for warning in _warnings(boot.state_dir, name):
        print(f"warning: {warning.check} {warning.detail}", file=sys.stderr)


def _drop_dotenv_key(path: Path, key: str) -> bool:
    from atomic_agent.api import write_atomic

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    kept = [line for line in lines if line.strip().startswith("#") or line.strip().partition("=")[0].strip() != key]
    if len(kept) == len(lines):
        return False
    write_atomic(path, "\n".join(kept) + ("\n" if kept else ""), mode=0o600)
    return True


@webhook_app.command("remove")
def remove_command(ctx: typer.Context, name: str = typer.Argument(..., help="Endpoint name.")) -> None:
    """Remove an endpoint, and its secret from .env when `webhook add` stored it and no other
    endpoint uses it."""
    from atomic_agent.api import ConfigError, config_file, read_raw_config

    boot = current_cli_state(ctx).require()
    endpoints = _endpoints(boot)
    if name not in endpoints:
        fail(f"no webhook named {name!r}; `atomic-agent webhook list` shows them")
    gone = endpoints.pop(name)
    try:
        raw = read_raw_config(boot.config.path)
        raw.get("webhooks", {}).get("endpoints", {}).pop(name, None)
        config_file.save_raw_config(boot.config.path, raw, boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    still_used = {v for e in endpoints.values() for v in (e.secret_env, e.hmac_secret_env) if v}
    for var in {gone.secret_env, gone.hmac_secret_env} - {""} - still_used:
        if var == secret_var(name) and _drop_dotenv_key(boot.state_dir / DOTENV, var):
            print(f"removed {var} from {boot.state_dir / DOTENV}")
    print(f"removed webhook {name} (restart a running serve to drop it there)")


def sample_body(template: str) -> dict[str, Any]:
    """A body that has every path the template names, so the sample renders."""
    from atomic_agent.plugins.serve.webhook_template import PLACEHOLDER

    body: dict[str, Any] = {"sample": True}
    for match in PLACEHOLDER.finditer(template):
        parts = [p for p in match.group(1).split(".") if p]
        if not parts:
            continue
        node = body
        for part in parts[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node.setdefault(parts[-1], f"sample {'.'.join(parts)}")
    return body


def signed_headers(endpoint: Any, raw: bytes, secret: str | None, hmac_key: str | None, now: float) -> dict[str, str]:
    from atomic_agent.plugins.serve.webhook_auth import (
        SECRET_HEADER,
        SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
        signature_for,
    )

    headers = {"Content-Type": "application/json"}
    if secret:
        headers[SECRET_HEADER] = secret
    if hmac_key:
        stamp = str(int(now))
        headers[TIMESTAMP_HEADER] = stamp
        headers[SIGNATURE_HEADER] = signature_for(hmac_key, raw, stamp)
    return headers


@webhook_app.command("test")
def test_command(ctx: typer.Context, name: str = typer.Argument(..., help="Endpoint name."),
                 body: str = typer.Option(None, "--body", help="JSON body to send (default: a sample that fills "
                                                               "every {{body...}} of the template)."),
                 json_out: bool = typer.Option(False, "--json", help="Print the request and answer as JSON.")) -> None:
    """Send a correctly signed call to this state dir's running serve (it creates a task)."""
    import time

    import httpx

    from atomic_agent.plugins.serve.local_serve import running_serve

    boot = current_cli_state(ctx).require()
    endpoint = _endpoints(boot).get(name)
    if endpoint is None:
        fail(f"no webhook named {name!r}; `atomic-agent webhook list` shows them")
    secret = _secret_value(boot.state_dir, endpoint.secret_env) if endpoint.secret_env else None
    hmac_key = _secret_value(boot.state_dir, endpoint.hmac_secret_env) if endpoint.hmac_secret_env else None
    missing = [var for var, value in ((endpoint.secret_env, secret), (endpoint.hmac_secret_env, hmac_key))
               if var and not value]
    if not (endpoint.secret_env or endpoint.hmac_secret_env):
        fail(f"webhook {name} has no credential, so serve refuses every call to it; "
             f"`atomic-agent webhook add {name} --replace` stores one")
    if missing:
        fail(f"the secret {', '.join(missing)} is set neither in the environment nor in {boot.state_dir / DOTENV}")
    serve = running_serve(boot.state_dir, boot.config)
    if serve is None:
        fail(f"no serve of {boot.state_dir} is running; start `atomic-agent serve` and test again")
    try:
        payload = json.loads(body) if body is not None else sample_body(endpoint.message_template)
    except json.JSONDecodeError as exc:
        fail(f"--body is not JSON: {exc.msg} at character {exc.pos}")
    raw = json.dumps(payload, separators=(",", ":")).encode()
    url = f"{serve.url}/api/webhooks/{name}"
    headers = signed_headers(endpoint, raw, secret, hmac_key, time.time())
    try:
        response = httpx.post(url, content=raw, headers=headers, timeout=10)
    except httpx.HTTPError as exc:
        fail(f"could not reach serve at {url}: {exc}")
    try:
        answer: Any = response.json()
    except ValueError:
        answer = response.text
    shown = {k: ("<secret>" if k.lower() == "x-webhook-secret" else v) for k, v in headers.items()}
    if json_out:
        print_json({"url": url, "headers": shown, "body": payload, "status": response.status_code, "answer": answer})
    else:
        print(f"POST {url} -> {response.status_code}")
        print(json.dumps(answer, ensure_ascii=False) if not isinstance(answer, str) else answer)
    if response.status_code == 404:
        print(f"serve does not know webhook {name}: restart it so it reads the endpoint", file=sys.stderr)
    if response.status_code >= 300:
        raise typer.Exit(1)
